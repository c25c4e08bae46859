#!/usr/bin/env bash
# `aiprof view --timeline` on large traces: builds the benchmark trace at two
# sizes with bench/make_large_trace.py, imports each to .aiprof (so the
# import does not blur the view's own time), renders the timeline (best of
# three, with AIPROF_VIEW_TIMING=1's per-part times), prints the page size,
# and loads the larger page in headless Chromium (bench/timeline_load.js).
#   bench/timeline_benchmark.sh [BUILD_DIR] [SMALL_MB] [LARGE_MB] [SOURCE_TRACE]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
SMALL=${2:-150}
LARGE=${3:-600}
SRC=${4:-../shared/fixtures/torch-cpu/resnet18_bs1_full.kineto.json}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for mb in "$SMALL" "$LARGE"; do
  python3 bench/make_large_trace.py "$WORK/t$mb.json" --mb "$mb" --src "$SRC" >&2
  "$BUILD/aiprof" import "$WORK/t$mb.json" -o "$WORK/t$mb.aiprof" >&2
  rm "$WORK/t$mb.json"
  for run in 1 2 3; do
    echo "== $mb MB, run $run" >&2
    AIPROF_VIEW_TIMING=1 /usr/bin/time -f "wall %e s, peak RSS %M KB" \
      "$BUILD/aiprof" view "$WORK/t$mb.aiprof" --timeline -o "$WORK/t$mb.html" --timing
  done
  echo "page: $(stat -c %s "$WORK/t$mb.html") bytes" >&2
done
NODE_PATH="$BUILD/browser/node_modules" node bench/timeline_load.js "$WORK/t$LARGE.html" 3
