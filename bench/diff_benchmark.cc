// The structural diff (src/analysis/diff) against the attribution trees it
// aligns, on the ResNet50 pair of test/data (num_workers=0 → 4: 45 k and
// 42 k slices, 6 steps each): the two ComputeAttribution calls, the diff
// with its default statistics (the step and the 20 largest changes, validate's
// test and bootstrap per node), and the alignment alone (no per-node
// statistics). Run interleaved and read them as ratios:
//   aiprof_benchmarks --benchmark_filter='Diff' --benchmark_repetitions=8
//     --benchmark_enable_random_interleaving=true
// Figures in README.md (Performance).
#include <benchmark/benchmark.h>

#include <memory>

#include "src/analysis/attribution/attribution.h"
#include "src/analysis/diff/attribution_diff.h"
#include "src/analysis/window/analysis_window.h"
#include "src/importers/common/importer_registry.h"

namespace aiprof {
namespace {

struct Run {
  std::unique_ptr<Trace> trace;
  AnalysisWindow window;
  AttributionResult attribution;
};

const Run& Load(int which) {
  static std::unique_ptr<Run> runs[2];
  if (!runs[which]) {
    auto r = ImportTrace(std::string(AIPROF_BENCH_DATA_DIR) + (which == 0 ? "/resnet50_num_workers_0.pt.trace.json.gz"
                                                                            : "/resnet50_num_workers_4.pt.trace.json.gz"));
    runs[which] = std::make_unique<Run>();
    if (r.ok()) {
      runs[which]->trace = std::move(r).value();
      runs[which]->window = ComputeAnalysisWindow(*runs[which]->trace);
      runs[which]->attribution = ComputeAttribution(*runs[which]->trace, &runs[which]->window);
    }
  }
  return *runs[which];
}

void BM_DiffAttributionBoth(benchmark::State& state) {
  const Run &a = Load(0), &b = Load(1);
  for (auto _ : state) {
    benchmark::DoNotOptimize(ComputeAttribution(*a.trace, &a.window).nodes.size());
    benchmark::DoNotOptimize(ComputeAttribution(*b.trace, &b.window).nodes.size());
  }
}
BENCHMARK(BM_DiffAttributionBoth)->Unit(benchmark::kMillisecond);

void DiffWith(benchmark::State& state, size_t top_n) {
  const Run &a = Load(0), &b = Load(1);
  DiffOptions o;
  o.top_n = top_n;
  for (auto _ : state) {
    AttributionDiff d = DiffAttribution(*a.trace, a.attribution, *b.trace, b.attribution, o);
    benchmark::DoNotOptimize(d.nodes.size());
  }
}

void BM_DiffResnet50(benchmark::State& state) { DiffWith(state, 20); }
BENCHMARK(BM_DiffResnet50)->Unit(benchmark::kMillisecond);

void BM_DiffResnet50AlignmentOnly(benchmark::State& state) { DiffWith(state, 0); }
BENCHMARK(BM_DiffResnet50AlignmentOnly)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace aiprof
