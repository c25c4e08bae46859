// A `WHERE ts BETWEEN` over a large trace: answered by a binary search per
// track (pushdown) versus the same filter SQLite has to evaluate on every
// slice (`ts + 0`, which hides the column from xBestIndex). docs/query.md
// states the ratio.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "src/model/trace.h"
#include "src/model/trace_builder.h"
#include "src/query/query_engine.h"

namespace aiprof {
namespace {

// 2,000,000 slices on 16 threads, 1 us apart per thread, 800 ns long.
const Trace& LargeTrace() {
  static const std::unique_ptr<Trace> trace = [] {
    auto t = std::make_unique<Trace>();
    TraceBuilder b(t.get());
    const StringId cat = b.Intern("cpu_op");
    StringId names[8];
    for (int i = 0; i < 8; ++i) names[i] = b.Intern("aten::op" + std::to_string(i));
    constexpr int kTracks = 16, kPerTrack = 125000;
    for (int tid = 0; tid < kTracks; ++tid) {
      uint32_t track = b.ThreadTrack(IdValue::Num(1), IdValue::Num(tid));
      for (int i = 0; i < kPerTrack; ++i) {
        b.AddSlice(track, int64_t{i} * 1000 + tid, 800, names[i % 8], cat, kNoCorrelation, b.ArgCursor(), 0);
      }
    }
    if (!b.Finalize().ok()) std::abort();
    return t;
  }();
  return *trace;
}

void RunQuery(benchmark::State& state, const std::string& sql) {
  auto engine = QueryEngine::Open(LargeTrace());
  if (!engine.ok()) return state.SkipWithError(engine.status().message().c_str());
  QueryLimits limits;
  limits.timeout_s = 0;
  (void)(*engine)->Execute(sql, limits, "warm-up");  // the one-time order check
  for (auto _ : state) {
    auto r = (*engine)->Execute(sql, limits, "benchmark");
    if (!r.ok()) return state.SkipWithError(r.status().message().c_str());
    benchmark::DoNotOptimize(r);
  }
  state.counters["slices"] = static_cast<double>(LargeTrace().slices.size());
}

// A 1 ms window (about 16,000 slices of 2,000,000).
void BM_QueryTsRangePushdown(benchmark::State& state) {
  RunQuery(state, "SELECT count(*), sum(dur) FROM slices WHERE ts BETWEEN 60000000 AND 61000000");
}
BENCHMARK(BM_QueryTsRangePushdown)->Unit(benchmark::kMillisecond);

void BM_QueryTsRangeFullScan(benchmark::State& state) {
  RunQuery(state, "SELECT count(*), sum(dur) FROM slices WHERE ts + 0 BETWEEN 60000000 AND 61000000");
}
BENCHMARK(BM_QueryTsRangeFullScan)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace aiprof
