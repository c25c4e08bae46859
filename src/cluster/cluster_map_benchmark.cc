// The cluster map of one rank (MapTrace: the rank's trace, already imported,
// to its digest) on real Kineto ranks of ../shared/fixtures, each imported
// once: /0 the HTA df_index_resolver rank (216,092 events, 2,020 NCCL
// kernels, 5 steps), /1 HTA's trace_filter sampled_rank-0 (4,855 events,
// 10 NCCL kernels, 2 steps). Import is left out: `aiprof cluster map` adds
// it, and it is the importers' benchmark. Run before/after pairs
// interleaved:
//   aiprof_benchmarks --benchmark_filter=ClusterMap --benchmark_repetitions=5
//     --benchmark_enable_random_interleaving=true  (one line)
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "src/cluster/cluster_map.h"
#include "src/importers/common/importer_registry.h"

namespace aiprof {
namespace {

std::unique_ptr<Trace> Load(const char* name) {
  auto r = ImportTrace(std::string(AIPROF_SOURCE_DIR) + "/../shared/fixtures/kineto/" + name);
  return r.ok() ? std::move(r).value() : nullptr;
}

const Trace* Input(int64_t which) {
  static std::unique_ptr<Trace> large =
      Load("HolisticTraceAnalysis__tests__data__df_index_resolver__df_index_resolver.json.gz");
  static std::unique_ptr<Trace> small =
      Load("HolisticTraceAnalysis__tests__data__trace_filter__sampled_rank-0.json.gz");
  return which == 0 ? large.get() : small.get();
}

void BM_ClusterMap(benchmark::State& state) {
  const Trace* t = Input(state.range(0));
  if (t == nullptr) return state.SkipWithError("input trace not found (../shared/fixtures/kineto)");
  size_t collectives = 0;
  for (auto _ : state) {
    RankDigest d = MapTrace(*t, "bench", "host");
    collectives = d.collectives.size();
    benchmark::DoNotOptimize(d);
  }
  if (collectives == 0) state.SkipWithError("no collectives mapped");
  state.counters["slices"] = static_cast<double>(t->slices.size());
  state.counters["collectives"] = static_cast<double>(collectives);
}
BENCHMARK(BM_ClusterMap)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace aiprof
