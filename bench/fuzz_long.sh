#!/usr/bin/env bash
# A longer fuzzing run: every libFuzzer target for SECONDS each (default 600),
# corpora kept in build-fuzz/corpus/ between runs and a random mutation seed
# (so each run explores anew). See scripts/fuzz.sh.
#   bench/fuzz_long.sh [SECONDS] [FUZZER...]
AIPROF_FUZZ_KEEP_CORPUS=1 AIPROF_FUZZ_SEED=${AIPROF_FUZZ_SEED:-0} exec "$(dirname "$0")/../scripts/fuzz.sh" "${1:-600}" "${@:2}"
