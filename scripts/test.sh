#!/usr/bin/env bash
# Builds aiprof and runs the whole test suite: a release build, then the same
# suite under AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
JOBS=$(nproc)
# Tests and benchmarks are named ON: scripts/run-sample.sh configures the same
# build folder without them, and a cached OFF must not silently drop the suite.
# The unit-test binaries (aiprof_<lib>_tests) run in the sanitizer build
# below, under ASan and UBSan; this release build leaves them out when that
# build follows (AIPROF_UNIT_TESTS=OFF). Here they repeated what the stricter
# build checks: 22 joined sources of 10-50 s each and 15 links (their build
# was not timed on its own), and 143 s of summed test time in a release run
# (about 1.2 minutes at -j2). With AIPROF_SKIP_SANITIZERS=1 they are built here,
# as unity builds (AIPROF_UNITY_TESTS; the libraries and the program stay
# file by file, which checks that each file includes what it uses).
UNIT_TESTS=OFF
if [ "${AIPROF_SKIP_SANITIZERS:-0}" = 1 ]; then UNIT_TESTS=ON; fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DAIPROF_WERROR=ON \
      -DAIPROF_BUILD_TESTS=ON -DAIPROF_BUILD_BENCHMARKS=ON -DAIPROF_UNITY_TESTS=ON -DAIPROF_UNIT_TESTS=$UNIT_TESTS
cmake --build build -j "$JOBS"
SANITIZE=1
if [ "${AIPROF_SKIP_SANITIZERS:-0}" = 1 ]; then SANITIZE=0; fi
if [ $SANITIZE = 1 ]; then
  # A unity build (CMake joins each target's sources eight to a translation
  # unit): the release build above compiles every file on its own, which
  # checks that each includes what it uses; this one only needs the same code
  # instrumented, and joined it compiles in 0.58 of the time (cold, 2 cores:
  # 1,005 s one by one, 581 s joined; docs/ARCHITECTURE.md, "Unity builds").
  # File-local names must therefore be unique within a library and its tests.
  # -no-pie: the instrumented programs carry about a million relative
  # relocations (26 MB of .rela.dyn in aiprof_analysis_tests), which the
  # loader applied at every start: the sanitizer aiprof started in 0.34 s,
  # 0.17 s linked at a fixed address, and this suite starts it thousands of
  # times (e2e_cli_contract 19 -> 12 s, two interleaved runs of each,
  # 2026-12-05). The release build, the one users run, stays position-independent.
  # clang, with libFuzzer's coverage (fuzzer-no-link) and the fuzzers: one
  # instrumented build serves the tests here and the fuzzing below, where the
  # fuzzers had a clang build of their own (the libraries compiled a third
  # time). clang compiles a joined source in 0.63 of g++'s CPU under the same
  # sanitizers (aiprof_analysis' unity_2: 22.5 s against 35.8 s, one run each,
  # 2026-12-05); the coverage makes CPU-bound tests slower (CalibrationTest
  # 25-30 s -> 39-40 s, two interleaved pairs), the suite less so: it is
  # mostly process starts. Its UBSan also checks float-to-integer overflow,
  # which g++'s leaves out (it found one in duration flags).
  # AIPROF_CHUNK_SHIFT=12: 4 Ki-element column blocks (src/base/chunked_vector.h;
  # the release build keeps 64 Ki): under ASan a larger block is an mmap and
  # munmap each (the fuzzers ran 1.6-2.6x fewer inputs, scripts/fuzz.sh), and
  # small blocks put block boundaries inside the tests' small traces.
  # AIPROF_UNIT_TEST_SHARDS=4: each unit-test binary is 4 ctest entries (gtest
  # shards, one process each) instead of one process per test: ~980 sanitized
  # process starts cost ~0.08 s CPU each (aiprof_model_tests: 26.9 s CPU one
  # process per test, 24.2 s in one process; helper ci, 2026-12-06).
  # A folder configured with g++ before (as this build was until 2026-12-05)
  # cannot switch compilers in place.
  if [ -f build-asan/CMakeCache.txt ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' build-asan/CMakeCache.txt; then
    rm -rf build-asan
  fi
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
        -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_EXE_LINKER_FLAGS=-no-pie \
        -DCMAKE_UNITY_BUILD=ON -DAIPROF_SANITIZE=address,undefined,fuzzer-no-link -DAIPROF_BUILD_FUZZERS=ON -DAIPROF_CHUNK_SHIFT=12 \
        -DAIPROF_BUILD_TESTS=ON -DAIPROF_UNIT_TESTS=ON -DAIPROF_UNIT_TEST_SHARDS=4 -DAIPROF_BUILD_BENCHMARKS=OFF -DAIPROF_BUILD_PYTHON=OFF
fi
# Each test runs in one pass. The sanitizer pass runs every test not labelled
# heavy (the unit tests, the end-to-end checks), so the release pass runs the
# rest: the heavy ones, and what only its build has (the Python package, the
# benchmarks). Tests labelled both_passes run in both (the importers on every
# real fixture: figures from the g++ build users run, memory errors from the
# instrumented one). The golden outputs (heavy) compare the release binary's
# outputs byte for byte on every real fixture. Running the sanitizer pass's
# tests here as well cost 431 s of summed test time (about 3.6 minutes at
# -j2; the ctest cost data of the development VM, 2026-12-07) for no check
# the other pass lacks; AIPROF_SKIP_SANITIZERS=1 runs them all here.
# ctest -N lists a configured folder's tests before anything is built.
RELEASE_ONLY=()
if [ $SANITIZE = 1 ]; then
  # Test names are letters, digits, '_', '-', '/' and '.' (gtest's); the dots
  # are escaped for ctest's regular expression.
  ONCE=$(ctest --test-dir build-asan -N -LE 'heavy|both_passes' | sed -n 's/^ *Test *#[0-9]*: \([^ ]*\).*/\1/p' |
         sed 's/\./\\./g' | paste -sd'|')
  if [ -n "$ONCE" ]; then RELEASE_ONLY=(-E "^($ONCE)\$"); fi
fi
# --timeout: a test that hangs fails after 10 minutes instead of holding CI
# (tests that need longer set their own TIMEOUT property).
ctest --test-dir build --output-on-failure --no-tests=error --timeout 600 -j "$JOBS" "${RELEASE_ONLY[@]}"
if [ $SANITIZE = 1 ]; then
  cmake --build build-asan -j "$JOBS"
  # Tests labelled 'heavy' (browser, mpirun, torch end-to-end runs, the what-if
  # accuracy sets after the first) drive whole programs or repeat what another
  # test covers; the release run above covers them, the sanitizer run
  # covers everything else, the unit tests included. The Python extension is not built here: an
  # instrumented module cannot load into an uninstrumented interpreter.
  # scripts/lsan.supp: leaks inside Graphviz and its font libraries (theirs).
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp \
    ctest --test-dir build-asan --output-on-failure --no-tests=error --timeout 600 -j "$JOBS" -LE heavy
fi
# Fuzzing: each libFuzzer target for a bounded time under ASan and UBSan
# (AIPROF_FUZZ_SECONDS each, default 14), nproc targets at a time
# (scripts/fuzz.sh): 13 targets in about 1.7 minutes on 2 cores (15 since
# the HTTP server's and SQL's: about 1.9, worked out from the 13's, not timed). One at a
# time, 12 s each, they took 2.6 minutes with one core idle; side by side a
# target runs 1.09-1.15x slower, which the 2 s more make up.
if [ "${AIPROF_SKIP_FUZZ:-0}" != 1 ]; then
  if [ "${AIPROF_SKIP_SANITIZERS:-0}" != 1 ]; then
    AIPROF_FUZZ_BUILD=build-asan AIPROF_FUZZ_CONFIGURED=1 scripts/fuzz.sh "${AIPROF_FUZZ_SECONDS:-14}"
  else
    scripts/fuzz.sh "${AIPROF_FUZZ_SECONDS:-14}"
  fi
fi
