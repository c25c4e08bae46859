#!/bin/sh
# Peak memory and time of `aiprof analyze` on one trace, two builds
# interleaved (bench/import_memory.py with --cmd), then whether the two
# builds' JSON outputs are byte-identical (a memory change must not move a
# figure).
#
# Usage: bench/analyze_memory.sh OLD/aiprof NEW/aiprof TRACE [ROUNDS] [THREADS]
#   THREADS: aiprof --threads (analyses run side by side on that many
#   workers, so the peak grows with it; default: the machine's cores).
#
# A large input: `AIPROF_OUTPUT=big.sdk LD_LIBRARY_PATH=build
# build/test/sdk_c_program threads 1 13500000` (13.5 M spans, 432 MB), then
# `aiprof import big.sdk -o big.aiprof` (the native file: analyze then
# measures the analyses, not the import).
set -eu
[ $# -ge 3 ] || { sed -n '2,15p' "$0"; exit 2; }
old=$(realpath "$1") new=$(realpath "$2") trace=$(realpath "$3")
rounds=${4:-3}
threads=${5:+--threads $5}
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AIPROF_CALIBRATE=0 XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data"
python3 "$here/import_memory.py" --before "$old" --after "$new" --input "$trace" --rounds "$rounds" \
  --cmd "$threads analyze {input} --format json -o {out}"
"$old" $threads analyze "$trace" --format json -o "$tmp/before.json"
"$new" $threads analyze "$trace" --format json -o "$tmp/after.json"
if cmp -s "$tmp/before.json" "$tmp/after.json"; then
  echo "analyze --format json: byte-identical"
else
  echo "analyze --format json: outputs DIFFER"
  diff "$tmp/before.json" "$tmp/after.json" | head -20
  exit 1
fi
