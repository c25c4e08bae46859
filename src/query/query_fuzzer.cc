// libFuzzer harness for SQL over a trace (`aiprof query`, serve's and MCP's
// query tools, Trace.sql in Python): arbitrary text run by a QueryEngine
// over a small hand-made trace (labelled: written for this harness) with
// steps, host ops on two threads, kernel launches with flows, args of every
// type, instants and counters, so that every virtual table has rows and
// every pushed-down constraint (id, track, ts ranges, IN) finds some.
// The limits are the servers' (rows, time, heap, result and value bytes),
// tightened so an input cannot run long.
//
// Properties checked (a failure aborts, and libFuzzer keeps the input): an
// error has a message; a result keeps at most max_rows rows, each with one
// cell per column; the database is read-only (its schema is the same after
// every input); and the pushed-down time window agrees with the same filter
// evaluated by SQLite on every row (`ts + 0`) for a window the input's
// first bytes choose.
// Seeds: docs/query.md's examples, every standard view, and queries that
// push down each constraint (scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "src/query/query_engine.h"
#include "test/fuzz/fuzz_trace.h"

namespace aiprof {
namespace {

// µs.
constexpr char kTrace[] = R"json({"traceEvents":[
  {"ph":"M","name":"process_name","pid":1,"args":{"name":"python"}},
  {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}},
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":200},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":40,"args":{"Input Dims":[[8,16],[16,4]],"Input type":["float","float"],"seq":7,"ratio":0.5,"flag":true,"none":null,"big":18446744073709551615}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":5,"args":{"correlation":1}},
  {"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":20,"dur":30,"args":{"device":0,"stream":7,"correlation":1}},
  {"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":60,"dur":20},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":62,"dur":4,"args":{"correlation":2}},
  {"ph":"X","cat":"kernel","name":"vectorized_elementwise_kernel","pid":0,"tid":7,"ts":70,"dur":8,"args":{"device":0,"stream":7,"correlation":2}},
  {"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pageable)","pid":0,"tid":8,"ts":90,"dur":6,"args":{"device":0,"stream":8}},
  {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":2,"ts":30,"dur":50},
  {"ph":"X","cat":"python_function","name":"train.py(12): step","pid":1,"tid":2,"ts":25,"dur":70},
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":200,"dur":210},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":210,"dur":42,"args":{"Input Dims":[[8,16],[16,4]]}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":212,"dur":5,"args":{"correlation":3}},
  {"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":222,"dur":31,"args":{"device":0,"stream":7,"correlation":3}},
  {"ph":"i","s":"t","name":"marker","pid":1,"tid":1,"ts":100,"args":{"note":"<b>x</b>"}},
  {"ph":"C","name":"memory","pid":1,"ts":0,"args":{"allocated":1024}},
  {"ph":"C","name":"memory","pid":1,"ts":300,"args":{"allocated":4096}},
  {"ph":"s","id":9,"cat":"fwdbwd","name":"fwdbwd","pid":1,"tid":1,"ts":10},
  {"ph":"f","id":9,"cat":"fwdbwd","name":"fwdbwd","pid":1,"tid":2,"ts":30,"bp":"e"}
]})json";

[[noreturn]] void Fail(const char* what, std::string_view sql) {
  std::fprintf(stderr, "query_fuzzer: %s\n--- SQL ---\n%.*s\n", what,
               static_cast<int>(std::min<size_t>(sql.size(), 2000)), sql.data());
  std::abort();
}

struct Harness {
  std::unique_ptr<Trace> trace;
  std::unique_ptr<QueryEngine> engine;
  std::string schema;
  QueryLimits limits;
};

Harness& Get() {
  static Harness h = [] {
    Harness x;
    x.trace = fuzz::ImportScratchTrace("query.json", kTrace);
    StatusOr<std::unique_ptr<QueryEngine>> e = QueryEngine::Open(*x.trace);
    if (!e.ok()) Fail("cannot open the query engine over the harness's trace", "");
    x.engine = std::move(e).value();
    x.schema = x.engine->Schema();
    x.limits.max_rows = 50;
    x.limits.timeout_s = 1;
    x.limits.max_memory_bytes = 64 << 20;
    x.limits.max_result_bytes = 1 << 20;
    x.limits.max_value_bytes = 1 << 20;
    return x;
  }();
  return h;
}

int64_t Count(Harness& h, const std::string& sql) {
  StatusOr<QueryResult> r = h.engine->Execute(sql, h.limits, "harness");
  if (!r.ok() || r->rows.size() != 1 || r->rows[0].size() != 1 || !std::holds_alternative<int64_t>(r->rows[0][0])) {
    Fail("the harness's own count query failed", sql);
  }
  return std::get<int64_t>(r->rows[0][0]);
}

}  // namespace
}  // namespace aiprof

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aiprof;
  Harness& h = Get();
  const std::string_view sql(reinterpret_cast<const char*>(data), std::min<size_t>(size, 4096));
  StatusOr<QueryResult> r = h.engine->Execute(sql, h.limits, "fuzz");
  if (!r.ok()) {
    if (r.status().message().empty()) Fail("an error without a message", sql);
  } else {
    if (r->rows.size() > h.limits.max_rows) Fail("more rows than max_rows", sql);
    for (const auto& row : r->rows) {
      if (row.size() != r->columns.size()) Fail("a row without one cell per column", sql);
    }
  }
  if (h.engine->Schema() != h.schema) Fail("the schema changed: the database is not read-only", sql);
  // The pushed-down ts window against the same filter on every row. The
  // window's ends (ns) from the input's first bytes, around the trace's span.
  if (size >= 2) {
    const int64_t lo = (static_cast<int64_t>(data[0]) - 16) * 2000, hi = lo + static_cast<int64_t>(data[1]) * 2000;
    const std::string window = std::to_string(lo) + " AND " + std::to_string(hi);
    for (const char* table : {"slices", "samples"}) {
      const std::string base = std::string("SELECT count(*) FROM ") + table + " WHERE ";
      if (Count(h, base + "ts BETWEEN " + window) != Count(h, base + "ts + 0 BETWEEN " + window)) {
        Fail("the pushed-down ts window and the scan disagree", window);
      }
    }
  }
  return 0;
}
