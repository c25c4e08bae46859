#!/usr/bin/env bash
# Does each analysis scale linearly? Builds the same trace at two sizes with
# bench/make_large_trace.py, runs `aiprof analyze --timing` on both (best of
# three), and prints each analysis's time per million events at each size and
# the ratio (≈ 1.0 for linear time). Usage:
#   bench/analyze_scaling.sh [BUILD_DIR] [SMALL_MB] [LARGE_MB] [SOURCE_TRACE]
# Default source: the CPU resnet18 fixture; pass a GPU trace (e.g. the HTA
# nccl_data fixture) to exercise kernels, launches and collectives.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
SMALL=${2:-150}
LARGE=${3:-600}
SRC=${4:-../shared/fixtures/torch-cpu/resnet18_bs1_full.kineto.json}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for mb in "$SMALL" "$LARGE"; do
  python3 bench/make_large_trace.py "$WORK/t$mb.json" --mb "$mb" --src "$SRC" | tee "$WORK/t$mb.made" >&2
  cat "$WORK/t$mb.json" > /dev/null
  for run in 1 2 3; do
    "$BUILD/aiprof" --threads 1 analyze "$WORK/t$mb.json" --timing -o "$WORK/out.txt" 2> "$WORK/t$mb.timing.$run"
  done
done
python3 - "$WORK" "$SMALL" "$LARGE" <<'PY'
import re, sys
work, sizes = sys.argv[1], sys.argv[2:]
def events(mb):
    return int(re.search(r'(\d+) events', open(f'{work}/t{mb}.made').read()).group(1))
def best(mb):
    out = {}
    for run in (1, 2, 3):
        for line in open(f'{work}/t{mb}.timing.{run}'):
            m = re.match(r'aiprof:\s+(\S+)\s+([\d.]+) ms', line)
            if m:
                out[m.group(1)] = min(out.get(m.group(1), float('inf')), float(m.group(2)))
    return out
(ns, nl), (ts, tl) = [events(m) for m in sizes], [best(m) for m in sizes]
print(f"{'phase':<14}{'ms @ %.2fM ev' % (ns / 1e6):>16}{'ms @ %.2fM ev' % (nl / 1e6):>16}{'ms/M ev small':>15}{'ms/M ev large':>15}{'ratio':>8}")
for k in ts:
    a, b = ts[k] / ns * 1e6, tl[k] / nl * 1e6
    print(f"{k:<14}{ts[k]:>16.1f}{tl[k]:>16.1f}{a:>15.2f}{b:>15.2f}{(b / a if a > 0 else float('nan')):>8.2f}")
PY
