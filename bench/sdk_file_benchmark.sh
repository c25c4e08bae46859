#!/usr/bin/env bash
# The SDK's file, end to end, for two builds side by side (issue 21: the SDK
# records events, importers/sdk builds the model at load time):
#   write: `sdk_c_program threads T N` (T threads x N spans, 2 events each),
#          wall time of the whole program: recording plus the file written at
#          exit;
#   load:  `aiprof query FILE "select count(*) from slices"`, wall time: the
#          import (the native reader before, the event importer and
#          TraceBuilder::Finalize after) plus a trivial query;
# each the best of RUNS, the two builds interleaved run by run, with the
# file's size and the ratio after/before.
# Usage: bench/sdk_file_benchmark.sh BEFORE_BUILD AFTER_BUILD [THREADS] [SPANS] [RUNS]
# A build folder needs aiprof and test/sdk_c_program (with its
# libaiprof_sdk.so beside it, as in a build tree).
set -euo pipefail
BEFORE=$(realpath "$1")
AFTER=$(realpath "$2")
THREADS=${3:-4}
SPANS=${4:-500000}
RUNS=${5:-3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

wall() {  # seconds of "$@"
  local t0 t1
  t0=$(date +%s.%N)
  "$@" > /dev/null
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}
min() { printf '%s\n' "$@" | sort -g | head -1; }

declare -A WRITE LOAD
for run in $(seq "$RUNS"); do
  for build in BEFORE AFTER; do
    dir=${!build}
    f="$WORK/$build.aiprof"
    WRITE[$build]+=" $(AIPROF_OUTPUT=$f LD_LIBRARY_PATH=$dir wall "$dir/test/sdk_c_program" threads "$THREADS" "$SPANS")"
    LOAD[$build]+=" $(wall "$dir/aiprof" query "$f" "select count(*) from slices")"
  done
done
printf '%s threads x %s spans (%s events), best of %s\n' "$THREADS" "$SPANS" $((THREADS * SPANS * 2)) "$RUNS"
printf '%-8s %12s %12s %14s\n' build write_s load_s file_bytes
for build in BEFORE AFTER; do
  printf '%-8s %12.3f %12.3f %14s\n' "$build" "$(min ${WRITE[$build]})" "$(min ${LOAD[$build]})" \
    "$(stat -c %s "$WORK/$build.aiprof")"
done
printf '%-8s %12.2f %12.2f\n' ratio "$(echo "$(min ${WRITE[AFTER]}) / $(min ${WRITE[BEFORE]})" | bc -l)" \
  "$(echo "$(min ${LOAD[AFTER]}) / $(min ${LOAD[BEFORE]})" | bc -l)"
