#!/usr/bin/env bash
# End-to-end benchmark of `aiprof summary` on a large trace built from the
# fixtures (bench/make_large_trace.py). Prints wall time, MB/s and peak RSS
# for the JSON, its gzip, and the native file. Usage:
#   bench/summary_benchmark.sh [BUILD_DIR] [MB]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
MB=${2:-600}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 bench/make_large_trace.py "$WORK/large.json" --mb "$MB"
gzip -1 -c "$WORK/large.json" > "$WORK/large.json.gz"
"$BUILD/aiprof" import "$WORK/large.json" -o "$WORK/large.aiprof"
bytes=$(stat -c %s "$WORK/large.json")
for input in large.json large.json.gz large.aiprof; do
  cat "$WORK/$input" > /dev/null  # warm page cache
  best=""
  for run in 1 2 3; do
    line=$(/usr/bin/time -f "%e %M" "$BUILD/aiprof" summary "$WORK/$input" --format json -o "$WORK/out.json" 2>&1 | tail -1)
    if [ -z "$best" ] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN{exit !(a<b)}'; then best=$line; fi
  done
  wall=${best%% *}
  rss_kb=${best##* }
  awk -v f="$input" -v w="$wall" -v r="$rss_kb" -v b="$bytes" \
    'BEGIN{printf "%-14s wall %.2f s  %6.0f MB/s of JSON  peak RSS %.0f MB\n", f, w, b/1e6/w, r/1024}'
done
