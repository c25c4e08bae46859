#!/usr/bin/env bash
# A longer fuzzing run: every libFuzzer target for SECONDS each (default 600),
# corpora kept in build-fuzz/corpus/ between runs. See scripts/fuzz.sh.
#   bench/fuzz_long.sh [SECONDS] [FUZZER...]
exec "$(dirname "$0")/../scripts/fuzz.sh" "${1:-600}" "${@:2}"
