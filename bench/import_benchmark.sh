#!/usr/bin/env bash
# Import at the hardware's pace (issue 17): on a large real-shaped trace
# (bench/make_large_trace.py from the torch-cpu fixture with stacks, shapes
# and memory events) prints, best of RUNS with a warm page cache:
#   1. `aiprof summary` from the JSON with --threads 1..MAX (scaling table);
#   2. `aiprof analyze` from the JSON and its ratio to summary;
#   3. summary and analyze from the .aiprof, and the speed-up over the JSON;
#   4. gzip and zstd inputs beside their decompressors alone (zlib's gzread
#      in a 15-line C program built here; `zstd -dc`).
# Usage: bench/import_benchmark.sh [BUILD_DIR] [MB] [MAX_THREADS] [RUNS]
# MAX_THREADS defaults to the cores available; on a 16-core machine
#   bench/import_benchmark.sh build 600 16
# gives the 1-16 worker table in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
MB=${2:-600}
MAX=${3:-$(nproc)}
RUNS=${4:-3}
AIPROF=$(realpath "$BUILD/aiprof")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 bench/make_large_trace.py "$WORK/large.json" --mb "$MB" >&2
"$AIPROF" import "$WORK/large.json" -o "$WORK/large.aiprof" >&2
gzip -1 -c "$WORK/large.json" > "$WORK/large.json.gz"
zstd -q -3 -c "$WORK/large.json" > "$WORK/large.json.zst"
BYTES=$(stat -c %s "$WORK/large.json")
for f in large.json large.aiprof large.json.gz large.json.zst; do cat "$WORK/$f" > /dev/null; done

# best WALL_S RSS_KB of RUNS runs of "$@"
best() {
  local b=""
  for _ in $(seq "$RUNS"); do
    local line
    line=$(/usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -1)
    if [ -z "$b" ] || awk -v a="${line%% *}" -v c="${b%% *}" 'BEGIN{exit !(a<c)}'; then b=$line; fi
  done
  echo "$b"
}
row() {  # label wall rss
  awk -v l="$1" -v w="$2" -v r="$3" -v b="$BYTES" \
    'BEGIN{printf "| %-44s | %7.3f s | %6.0f MB/s | %4.0f MB |\n", l, w, b/1e6/w, r/1024}'
}

echo "trace: $(numfmt --to=iec "$BYTES")B of JSON; $(nproc) cores here"
echo
echo "| command | wall | JSON MB/s | peak RSS |"
echo "|---|---:|---:|---:|"
declare -A SUMMARY
for t in $(seq 1 "$MAX"); do
  r=$(best "$AIPROF" --threads "$t" summary "$WORK/large.json" --format json -o "$WORK/out.json")
  SUMMARY[$t]=${r%% *}
  row "summary large.json --threads $t" ${r%% *} ${r##* }
done
r=$(best "$AIPROF" analyze "$WORK/large.json" -o "$WORK/out.json"); analyze_json=${r%% *}
row "analyze large.json" ${r%% *} ${r##* }
r=$(best "$AIPROF" summary "$WORK/large.aiprof" --format json -o "$WORK/out.json"); summary_native=${r%% *}
row "summary large.aiprof" ${r%% *} ${r##* }
r=$(best "$AIPROF" analyze "$WORK/large.aiprof" -o "$WORK/out.json")
row "analyze large.aiprof" ${r%% *} ${r##* }
r=$(best "$AIPROF" summary "$WORK/large.json.gz" --format json -o "$WORK/out.json")
row "summary large.json.gz (gzip -1)" ${r%% *} ${r##* }
# zlib's own speed: gzread (inflate) into a 4 MiB buffer, nothing else.
cc -O2 -x c -o "$WORK/inflate" - -lz <<'C'
#include <stdio.h>
#include <zlib.h>
int main(int argc, char** argv) {
  static char buf[4 << 20];
  gzFile f = gzopen(argv[1], "rb");
  if (!f) return 1;
  gzbuffer(f, 1 << 20);
  long long total = 0;
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) total += n;
  gzclose(f);
  return total > 0 ? 0 : 1;
}
C
r=$(best "$WORK/inflate" "$WORK/large.json.gz")
row "  zlib inflate alone (gzread, C)" ${r%% *} ${r##* }
r=$(best "$AIPROF" summary "$WORK/large.json.zst" --format json -o "$WORK/out.json")
row "summary large.json.zst (zstd -3)" ${r%% *} ${r##* }
r=$(best sh -c "zstd -dc '$WORK/large.json.zst' > /dev/null")
row "  zstd -dc alone" ${r%% *} ${r##* }
echo
awk -v a="$analyze_json" -v s="${SUMMARY[$MAX]}" -v n="$summary_native" 'BEGIN{
  printf "analyze / summary (JSON, %s threads): %.2fx; summary JSON / native: %.1fx\n", "'"$MAX"'", a/s, s/n}'
