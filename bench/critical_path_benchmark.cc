// The critical path (graph + every step's walk) against the summary on the
// same input, for the ratio issue #22 asks for (critical path time /
// summary time). Inputs: the shipped CPU sample (AIPROF_SAMPLE_TRACE) and the
// ResNet50 GPU trace of ../shared/fixtures (AIPROF_BENCH_GPU_TRACE overrides
// it), each imported once. Run the two families interleaved:
//   build/bench/aiprof_benchmarks --benchmark_filter='CriticalPath|WhatIfReplay|SummaryOf'
//     --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true  (one line)
// Figures in README.md ("Performance").
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/summary/summary.h"
#include "src/analysis/whatif/whatif.h"
#include "src/importers/common/importer_registry.h"

namespace aiprof {
namespace {

std::unique_ptr<Trace> Load(const std::string& path) {
  auto r = ImportTrace(path);
  return r.ok() ? std::move(r).value() : nullptr;
}

const Trace* Input(int which) {
  static std::unique_ptr<Trace> cpu = Load(AIPROF_SAMPLE_TRACE);
  static std::unique_ptr<Trace> gpu = [] {
    const char* env = std::getenv("AIPROF_BENCH_GPU_TRACE");
    return Load(env ? env
                    : std::string(AIPROF_SOURCE_DIR) +
                          "/../shared/fixtures/kineto/"
                          "kineto__tb_plugin__samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz");
  }();
  return which == 0 ? cpu.get() : gpu.get();
}

void BM_CriticalPath(benchmark::State& state) {
  const Trace* t = Input(static_cast<int>(state.range(0)));
  if (t == nullptr) return state.SkipWithError("input trace not found");
  for (auto _ : state) {
    CriticalPathResult r = ComputeCriticalPath(*t);
    benchmark::DoNotOptimize(r.window_path_ns);
  }
  state.counters["slices"] = static_cast<double>(t->slices.size());
}
BENCHMARK(BM_CriticalPath)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The what-if replay alone (the graph built once outside the loop), for a
// scenario that changes every data-loading span: one replay per suggestion.
void BM_WhatIfReplay(benchmark::State& state) {
  const Trace* t = Input(static_cast<int>(state.range(0)));
  if (t == nullptr) return state.SkipWithError("input trace not found");
  const CriticalPathResult path = ComputeCriticalPath(*t);
  const Scenario sc = ParseScenario("remove-idle data_loading").value();
  for (auto _ : state) {
    WhatIfResult r = PredictWhatIf(*t, path, sc);
    benchmark::DoNotOptimize(r.predicted_ns);
  }
  state.counters["slices"] = static_cast<double>(t->slices.size());
}
BENCHMARK(BM_WhatIfReplay)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_SummaryOf(benchmark::State& state) {
  const Trace* t = Input(static_cast<int>(state.range(0)));
  if (t == nullptr) return state.SkipWithError("input trace not found");
  for (auto _ : state) {
    Summary s = ComputeSummary(*t);
    benchmark::DoNotOptimize(&s);
  }
  state.counters["slices"] = static_cast<double>(t->slices.size());
}
BENCHMARK(BM_SummaryOf)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace aiprof
