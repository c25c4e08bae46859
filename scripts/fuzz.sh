#!/usr/bin/env bash
# Builds the libFuzzer targets (one per input kind: Chrome JSON, torch_npu
# folder files, msprof, Nsight SQLite, native/SDK file, validation samples,
# rule YAML, cluster digest, what-if scenario, diff name map, a whole session,
# HTTP requests to the server of serve and monitor, SQL over a trace) with clang and -fsanitize=fuzzer,address,undefined
# in build-fuzz/, seeds each from the fixtures, and runs each for SECONDS
# (default 15; scripts/test.sh runs this last with 14 s each, two at a time on
# 2 cores: about 1.7 minutes in all).
# A crash, leak, timeout (10 s per input) or out-of-memory (2 GiB) fails the
# run; the input is kept under build-fuzz/crashes/<fuzzer>/ — make it a
# regression test beside the importer. A longer run: bench/fuzz_long.sh.
# The mutation seed is fixed (AIPROF_FUZZ_SEED), and the corpus starts from the
# seeds each time, so a run explores a prefix of what a longer run with the same
# seed explores: run `scripts/fuzz.sh 600` before landing and CI (14 s, slower
# machine) meets no input that run did not.
# AIPROF_FUZZ_BUILD names another build folder (default build-fuzz), so that
# two people sharing a work tree do not rebuild each other's fuzzers.
# AIPROF_FUZZ_CONFIGURED=1 takes that folder as configured already, with
# clang, the fuzzers on and -fsanitize=...,fuzzer-no-link: scripts/test.sh's
# sanitizer build, which then serves its tests and the fuzzers alike.
# Both use 4 Ki-element column blocks (AIPROF_CHUNK_SHIFT=12,
# src/base/chunked_vector.h): ASan maps and unmaps every chunk over 128 KiB,
# and with 64 Ki-element blocks the JSON fuzzer ran 1.6-2.6x fewer inputs in
# the same time (15 s, 2 interleaved pairs, 2026-12-06: 92/150 against 240/239;
# peak RSS 121 -> 199 MB).
#   scripts/fuzz.sh [SECONDS] [FUZZER...]
#   scripts/fuzz.sh --list      (the fuzzers it runs by default, one a line)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# Every src/**/*_fuzzer.cc, as CMakeLists.txt globs them (a new fuzzer is its
# file alone; its seeds, if any, are added below).
mapfile -t ALL < <(find src -name '*_fuzzer.cc' -printf '%f\n' | sed 's/\.cc$//' | LC_ALL=C sort)
[ ${#ALL[@]} -gt 0 ] || { echo "fuzz.sh: no src/**/*_fuzzer.cc found" >&2; exit 1; }
if [ "${1:-}" = --list ]; then printf '%s\n' "${ALL[@]}"; exit 0; fi
BF=${AIPROF_FUZZ_BUILD:-build-fuzz}
SECONDS_EACH=${1:-15}
shift || true
FIXTURES=${AIPROF_FIXTURES:-$ROOT/../shared/fixtures}
JOBS=${AIPROF_FUZZ_JOBS:-$(nproc)}
if [ $# -gt 0 ]; then FUZZERS=("$@"); else FUZZERS=("${ALL[@]}"); fi

[ "${AIPROF_FUZZ_CONFIGURED:-0}" = 1 ] || cmake -S . -B "$BF" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_UNITY_BUILD=ON \
      -DAIPROF_SANITIZE=address,undefined,fuzzer-no-link -DAIPROF_BUILD_FUZZERS=ON -DAIPROF_CHUNK_SHIFT=12 \
      -DAIPROF_BUILD_TESTS=OFF -DAIPROF_BUILD_BENCHMARKS=OFF -DAIPROF_BUILD_PYTHON=OFF >/dev/null
cmake --build "$BF" -j "$JOBS" --target "${FUZZERS[@]}"

SEEDS=$ROOT/$BF/seeds
rm -rf "$SEEDS"
for fuzzer in "${ALL[@]}"; do mkdir -p "$SEEDS/$fuzzer"; done

# Chrome JSON: the small plain-text traces.
cp test/data/convnet_bs8_channels_last.kineto.json "$SEEDS/chrome_json_fuzzer/"
for f in "$FIXTURES"/kineto/*trace_compare*.json.gz "$FIXTURES"/kineto/*triton_example*.json.gz; do
  [ -f "$f" ] && gzip -dc "$f" > "$SEEDS/chrome_json_fuzzer/$(basename "${f%.gz}")"
done
# torch's legacy autograd-profiler export (a bare event array, no "cat", pid
# "CPU functions"; operators and record_function ranges): its first 300 events.
python3 - test/data/periodic/plain_train_loop.pt.trace.json "$SEEDS/chrome_json_fuzzer/plain_train_loop.legacy300.json" <<'PY'
import json, sys
json.dump(json.load(open(sys.argv[1]))[:300], open(sys.argv[2], "w"))
PY

# Compressed input: the reader-choice byte in front of small gzip and zstd
# files (one member; two members; zero padding; a zstd frame).
python3 - "$SEEDS/compressed_fuzzer" <<'PY'
import gzip, os, subprocess, sys
d = sys.argv[1]
text = b'{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]}\n'
seeds = {"one.gz": gzip.compress(text), "two.gz": gzip.compress(text) + gzip.compress(b"more\n"),
         "padded.gz": gzip.compress(text) + bytes(64)}
try:
    zst = subprocess.run(["zstd", "-q", "-c"], input=text, capture_output=True)
    if zst.returncode == 0:
        seeds["one.zst"] = zst.stdout
except OSError:
    pass  # no zstd program: the gzip seeds only
for i, (name, body) in enumerate(sorted(seeds.items())):
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes([i * 37 % 256]) + body)
PY

# Folder importers: the selector byte (the index in the fuzzer's kFiles) in front.
seed_with_byte() {  # DIR INDEX FILE
  [ -f "$3" ] || return 0
  { printf "\\$(printf '%03o' "$2")"; head -c 262144 "$3"; } > "$1/$2-$(basename "$3")"
}
PT=$FIXTURES/ascend-pt/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT
i=0
for name in trace_view.json kernel_details.csv step_trace_time.csv op_statistic.csv api_statistic.csv \
            memory_record.csv npu_module_mem.csv operator_memory.csv l2_cache.csv communication.json \
            communication_matrix.json operator_details.csv; do
  seed_with_byte "$SEEDS/ascend_pt_fuzzer" $i "$PT/$name"
  i=$((i + 1))
done
A=$FIXTURES/ascend
seed_with_byte "$SEEDS/msprof_fuzzer" 0 "$A/Ascend__msprof-analyze__test__ut__advisor__timeline_advice__trace_view.json"
seed_with_byte "$SEEDS/msprof_fuzzer" 1 "$A/Ascend__msinsight__test__data__pytorch__text__level1__rank0_ascend_pt__ASCEND_PROFILER_OUTPUT__kernel_details.csv"
seed_with_byte "$SEEDS/msprof_fuzzer" 2 "$A/Ascend__msinsight__test__data__pytorch__text__level1__rank0_ascend_pt__ASCEND_PROFILER_OUTPUT__op_statistic.csv"
seed_with_byte "$SEEDS/msprof_fuzzer" 3 "$A/Ascend__msinsight__test__data__pytorch__text__level1__rank0_ascend_pt__ASCEND_PROFILER_OUTPUT__api_statistic.csv"
seed_with_byte "$SEEDS/msprof_fuzzer" 4 "$A/Ascend__msinsight__test__data__pytorch__text__level1__rank0_ascend_pt__ASCEND_PROFILER_OUTPUT__step_trace_time.csv"

# Nsight: the real export, and a small database in the documented layout.
cp "$FIXTURES"/nsys/*.sqlite "$SEEDS/nsys_sqlite_fuzzer/" 2>/dev/null || true
python3 - "$SEEDS/nsys_sqlite_fuzzer/small.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("""
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, correlationId INTEGER, demangledName INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, globalTid INTEGER, text TEXT, textId INTEGER);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'gemm');
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1000, 1500, 71213075, 11, 1);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (2000, 5000, 0, 7, 11, 2);
INSERT INTO NVTX_EVENTS VALUES (900, 6000, 59, 71213075, 'ProfilerStep#1', NULL);
""")
db.commit()
PY

# Native files: `aiprof import` of two samples (when a release build is there).
if [ -x build/aiprof ]; then
  build/aiprof import test/data/alexnet_a100_kineto.json.gz -o "$SEEDS/native_file_fuzzer/alexnet.aiprof" >/dev/null
  build/aiprof import "$SEEDS/nsys_sqlite_fuzzer/small.sqlite" -o "$SEEDS/native_file_fuzzer/nsys.aiprof" >/dev/null
  mkdir -p $BF/digests
  build/aiprof cluster map test/data/alexnet_a100_kineto.json.gz -o $BF/digests >/dev/null 2>&1 || true
  cp $BF/digests/*.digest "$SEEDS/digest_fuzzer/" 2>/dev/null || true
fi
# SDK event files: what the SDK's test program writes (when built).
if [ -x build/test/sdk_c_program ]; then
  for mode in "steps 3" "requests 4" misuse; do
    AIPROF_OUTPUT="$SEEDS/sdk_event_fuzzer/${mode%% *}.aiprof" build/test/sdk_c_program $mode >/dev/null 2>&1 || true
  done
fi

# Validation samples: one of each kind the reader knows.
S=$SEEDS/sample_file_fuzzer
printf '12.5\n13.1\n12.9\n# comment\n14.0 ms\n' > "$S/list.txt"
printf 'iteration,latency_ms\n1,12.5\n2,13.1\n3,12.9\n' > "$S/table.csv"
printf '{"results":[{"command":"./run","times":[0.0125,0.0131,0.0129],"mean":0.0128}]}' > "$S/hyperfine.json"
printf '{"benchmarks":[{"name":"BM_x","run_name":"BM_x","run_type":"iteration","real_time":12.5,"time_unit":"ms","items_per_second":80}]}' > "$S/gbench.json"

# Rules: the shipped rule files.
cp rules/*.yaml "$SEEDS/rules_yaml_fuzzer/"

# What-if scenarios: the pairs' scenarios and one of each clause of docs/whatif.md.
python3 - test/data/pairs/pairs.yaml "$SEEDS/whatif_scenario_fuzzer" <<'PY'
import os, re, sys
scenarios = [m.group(1).strip() for m in re.finditer(r"^\s*scenario:\s*(.+)$", open(sys.argv[1]).read(), re.M)]
scenarios += ["remove-idle data_loading", "overlap-data-loading 4", "graph-launch", "remove-idle host_bound",
              "remove-idle sync; remove-idle other", "scale ampere_sgemm 0.5", "every 10 checkpoint",
              "fuse aten::mm aten::relu", "overlap-comm", "remove-comm", "remove-page-faults",
              "device H100-SXM5-80GB from A100-SXM4-80GB", "scale  x .10;remove y"]
for i, text in enumerate(scenarios):
    with open(os.path.join(sys.argv[2], f"{i:02d}.txt"), "w") as f:
        f.write(text)
PY

# Diff name maps: docs/diff.md's layout, plain names and regexes.
printf 'map:\n  - a: aten::cudnn_convolution\n    b: aten::miopen_convolution\n  - a: /^sm90_xmma_gemm_/\n    b: /^Cijk_/\n' \
  > "$SEEDS/name_map_fuzzer/map.yaml"
printf '# run A -> run B\nmap:\n  - a: /(a|b)*c{2,5}/\n    b: "x"\n' > "$SEEDS/name_map_fuzzer/regex.yaml"

# Whole sessions: the first events (under 48 KB of JSON, the harness reads
# at most 64 KB) of real traces that drive the analyses: CPU pairs with a
# planted cast round trip, a checkpoint region and a data loader, an LLM
# decode loop, the ResNet50 GPU trace and torch_npu's text-form op args.
python3 - "$SEEDS/session_fuzzer" test/data/pairs/cast_roundtrip_before.pt.trace.json.gz \
  test/data/pairs/checkpoint_every_step_before.pt.trace.json.gz test/data/pairs/dataloader_workers_before.pt.trace.json.gz \
  test/data/llm_cpu/nested_decode_loop.pt.trace.json.gz \
  "$FIXTURES/kineto/kineto__tb_plugin__samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz" \
  "$FIXTURES/ascend-pt/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json" <<'PY'
import gzip, json, os, sys
for path in sys.argv[2:]:
    if not os.path.exists(path):
        continue
    doc = json.load(gzip.open(path, "rt") if path.endswith(".gz") else open(path))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    timed = sorted((e for e in events if "ts" in e), key=lambda e: float(e["ts"]))
    kept, size = [e for e in events if "ts" not in e][:50], 0
    for e in timed:
        size += len(json.dumps(e)) + 1
        if size > 40000:
            break
        kept.append(e)
    name = os.path.basename(path).split(".")[0][:60] + ".json"
    with open(os.path.join(sys.argv[1], name), "w") as f:
        json.dump({"traceEvents": kept}, f)
PY

# The fuzzers run JOBS at a time (AIPROF_FUZZ_JOBS, default nproc), each on
# a core of its own: every target does its work on one thread (per-thread CPU
# of the first 13 read from /proc during a run: the main thread only; libFuzzer's
# RSS thread 0 ticks; http_server_fuzzer's client and server threads take
# turns, one waiting while the other works). Side by side they cost each other some speed: a fixed
# number of inputs took 1.09-1.15x the CPU when two ran at once (rules_yaml
# 6,000 and digest 30,000 runs, two pairs, 2026-12-06), which
# scripts/test.sh makes up with 14 s each instead of 12. The 13 targets at 12
# s took 189-216 s one at a time, 105-121 s two at a time (2 cores, loaded VM).
# Results are printed in the order of FUZZERS whatever the order they end in.
# HTTP requests (the first byte chooses the size of each send): serve's API and
# pages, monitor's webhook, an upload with a body, a chunked one, HEAD, a
# browser's cross-site POST, and malformed heads.
python3 - "$SEEDS/http_server_fuzzer" <<'PY'
import os, sys
reqs = [
    b"GET /api/runs?name=a%20b&tag=x HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n",
    b"HEAD / HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"POST /api/runs?name=t.json HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 11\r\nAuthorization: Bearer x\r\n\r\n{\"a\": [1]}\n",
    b"POST /alert HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nTrailer: 1\r\n\r\n",
    b"POST /small HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99\r\nExpect: 100-continue\r\n\r\n",
    b"POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello",
    b"POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\nSec-Fetch-Site: cross-site\r\nContent-Length: 0\r\n\r\n",
    b"GET /refuse HTTP/1.0\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
    b"DELETE /api/runs/3 HTTP/1.1\r\nHost: [::1]:80\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx",
]
for i, r in enumerate(reqs):
    with open(os.path.join(sys.argv[1], "%02d.req" % i), "wb") as f:
        f.write(bytes([i * 7]) + r)
PY

# SQL: docs/query.md's examples, every standard view by name, and queries
# that push down each constraint (id, track, ts ranges, IN) or join on ids.
python3 - docs/query.md "$SEEDS/query_fuzzer" <<'PY'
import os, re, sys
doc = open(sys.argv[1]).read()
queries = [q.strip() for block in re.findall(r"```sql\n(.*?)```", doc, re.S) for q in block.split(";") if q.strip()]
views = re.findall(r"^\| `(\w+)`(?:, `(\w+)`)? \|", doc[doc.index("## Standard views"):], re.M)
queries += ["SELECT * FROM %s LIMIT 5" % v for pair in views for v in pair if v]
queries += [
    "SELECT id, ts, dur FROM slices WHERE track = 1 AND ts BETWEEN 10000 AND 90000 ORDER BY id",
    "SELECT count(*) FROM slices WHERE id IN (1, 3, 5) OR id > 10",
    "SELECT s.name, p.name FROM slices s LEFT JOIN slices p ON p.id = s.parent WHERE s.ts >= 0 AND s.ts < 300000",
    "SELECT key, type, value FROM args WHERE id BETWEEN 0 AND 20",
    "SELECT json_extract(args, '$.Input Dims'), self_ns FROM slices WHERE kind = 'cpu_op'",
    "SELECT * FROM samples WHERE track >= 0 AND ts <= 1000000",
    "SELECT f.flow_id, d.name FROM flows f JOIN slices d ON d.id = f.to_slice",
    "SELECT printf('%-20s|%.3f', name, dur / 1e3) FROM slices",
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x FROM n LIMIT 100",
    "SELECT * FROM counters c JOIN tracks t ON t.id = c.track WHERE c.ts > -1",
    "SELECT name, number, ts, dur FROM steps ORDER BY ts DESC",
    "INSERT INTO slices(name) VALUES ('x')",
    "PRAGMA table_info(slices); SELECT 1",
]
for i, q in enumerate(queries):
    with open(os.path.join(sys.argv[2], "%02d.sql" % i), "w") as f:
        f.write(q)
PY

fuzz_one() {  # FUZZER: its run, its log in $BF/FUZZER.log, its status
  local fuzzer=$1 corpus=$BF/corpus/$1 crashes=$BF/crashes/$1
  [ "${AIPROF_FUZZ_KEEP_CORPUS:-0}" = 1 ] || rm -rf "$corpus"
  mkdir -p "$corpus" "$crashes"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    LSAN_OPTIONS=suppressions=$ROOT/scripts/lsan.supp \
    "$BF/$fuzzer" "$corpus" "$SEEDS/$fuzzer" -max_total_time="$SECONDS_EACH" -timeout=10 \
      -seed="${AIPROF_FUZZ_SEED:-20261202}" \
      -rss_limit_mb=2048 -max_len=1048576 -artifact_prefix="$crashes/" -print_final_stats=1 \
      >"$BF/$fuzzer.log" 2>&1
}
declare -A PIDS
for fuzzer in "${FUZZERS[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  fuzz_one "$fuzzer" &
  PIDS[$fuzzer]=$!
done
status=0
for fuzzer in "${FUZZERS[@]}"; do
  echo "== $fuzzer: ${SECONDS_EACH}s"
  if ! wait "${PIDS[$fuzzer]}"; then
    echo "FAILED: $fuzzer (log: $BF/$fuzzer.log; inputs: $BF/crashes/$fuzzer/)"
    tail -30 "$BF/$fuzzer.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$BF/$fuzzer.log" | tr '\n' ' '
    echo
  fi
done
exit $status
