// The attribution tree (src/analysis/attribution) against the summary on the
// same input: the ResNet50 num_workers=0 sample (test/data, 45k slices, 6
// steps) imported once, and synthetic traces of N steps for the scaling
// (Google Benchmark's Complexity fit: the tree is meant to be linear).
// Compare the two as interleaved runs:
//   aiprof_benchmarks --benchmark_filter='Attribution|Summary'
//     --benchmark_repetitions=10 --benchmark_enable_random_interleaving=true
// Figures in README.md (Performance).
//
// Issue 22 item 5 (attribution and critical path add at most 0.5x the
// summary's time on the 606 MiB benchmark trace): with
// AIPROF_BENCH_LARGE_TRACE=FILE (bench/make_large_trace.py FILE --mb 600, or
// smaller: the ratio is the same per slice), the Large family runs the
// summary, the attribution tree and the critical path (graph + walk, as the
// session computes them: with the analysis window) on that trace, imported
// once; run it interleaved and take the ratios of the medians:
//   AIPROF_BENCH_LARGE_TRACE=large.json aiprof_benchmarks --benchmark_filter='Large'
//     --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>

#include "src/analysis/attribution/attribution.h"
#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/summary/summary.h"
#include "src/analysis/window/analysis_window.h"
#include "src/importers/common/importer_registry.h"
#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

const Trace& Resnet() {
  static std::unique_ptr<Trace> trace = [] {
    auto r = ImportTrace(AIPROF_BENCH_DATA_DIR "/resnet50_num_workers_0.pt.trace.json.gz");
    return r.ok() ? std::move(r).value() : nullptr;
  }();
  return *trace;
}

void BM_SummaryResnet50(benchmark::State& state) {
  const Trace& t = Resnet();
  for (auto _ : state) benchmark::DoNotOptimize(ComputeSummary(t).ops.size());
  state.counters["slices/s"] = benchmark::Counter(static_cast<double>(t.slices.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_SummaryResnet50)->Unit(benchmark::kMillisecond);

void BM_AttributionResnet50(benchmark::State& state) {
  const Trace& t = Resnet();
  const AnalysisWindow w = ComputeAnalysisWindow(t);
  for (auto _ : state) benchmark::DoNotOptimize(ComputeAttribution(t, &w).nodes.size());
  state.counters["slices/s"] = benchmark::Counter(static_cast<double>(t.slices.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_AttributionResnet50)->Unit(benchmark::kMillisecond);

// The same with the opt-in breakdown of ops by input shape (what `aiprof
// diff` computes): its cost is the ratio to BM_AttributionResnet50.
void BM_AttributionResnet50OpShapes(benchmark::State& state) {
  const Trace& t = Resnet();
  const AnalysisWindow w = ComputeAnalysisWindow(t);
  const AttributionOptions o{.op_shapes = true};
  for (auto _ : state) benchmark::DoNotOptimize(ComputeAttribution(t, &w, o).op_shapes.size());
  state.counters["slices/s"] = benchmark::Counter(static_cast<double>(t.slices.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_AttributionResnet50OpShapes)->Unit(benchmark::kMillisecond);

const Trace* Large() {
  static std::unique_ptr<Trace> trace = []() -> std::unique_ptr<Trace> {
    const char* path = std::getenv("AIPROF_BENCH_LARGE_TRACE");
    if (path == nullptr) return nullptr;
    auto r = ImportTrace(path);
    return r.ok() ? std::move(r).value() : nullptr;
  }();
  return trace.get();
}

const AnalysisWindow& LargeWindow() {
  static const AnalysisWindow w = ComputeAnalysisWindow(*Large());
  return w;
}

void BM_LargeSummary(benchmark::State& state) {
  const Trace* t = Large();
  if (t == nullptr) return state.SkipWithError("set AIPROF_BENCH_LARGE_TRACE");
  for (auto _ : state) benchmark::DoNotOptimize(ComputeSummary(*t).ops.size());
  state.counters["slices"] = static_cast<double>(t->slices.size());
}
BENCHMARK(BM_LargeSummary)->Unit(benchmark::kMillisecond);

void BM_LargeAttribution(benchmark::State& state) {
  const Trace* t = Large();
  if (t == nullptr) return state.SkipWithError("set AIPROF_BENCH_LARGE_TRACE");
  const AnalysisWindow& w = LargeWindow();
  for (auto _ : state) benchmark::DoNotOptimize(ComputeAttribution(*t, &w).nodes.size());
}
BENCHMARK(BM_LargeAttribution)->Unit(benchmark::kMillisecond);

void BM_LargeCriticalPath(benchmark::State& state) {
  const Trace* t = Large();
  if (t == nullptr) return state.SkipWithError("set AIPROF_BENCH_LARGE_TRACE");
  CriticalPathOptions o;
  o.window = &LargeWindow();
  size_t segments = 0, edges = 0;
  for (auto _ : state) {
    CriticalPathResult r = ComputeCriticalPath(*t, o);
    segments = r.segments.size(), edges = r.edges.size();
    benchmark::DoNotOptimize(r.window_path_ns);
  }
  state.counters["segments"] = static_cast<double>(segments);
  state.counters["edges"] = static_cast<double>(edges);
}
BENCHMARK(BM_LargeCriticalPath)->Unit(benchmark::kMillisecond);

// N steps of a module → op → runtime call → kernel chain, 8 module instances
// per step, on one main thread and one device stream.
std::unique_ptr<Trace> SyntheticSteps(int64_t steps) {
  auto trace = std::make_unique<Trace>();
  TraceBuilder b(trace.get());
  const StringId step_cat = b.Intern("user_annotation"), py = b.Intern("python_function"), op = b.Intern("cpu_op");
  const StringId rt = b.Intern("cuda_runtime"), kcat = b.Intern("kernel");
  const StringId conv = b.Intern("aten::conv2d"), launch = b.Intern("cudaLaunchKernel"), kern = b.Intern("implicit_convolve_sgemm");
  const uint32_t main = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  const uint32_t stream = b.ThreadTrack(IdValue::Num(0), IdValue::Num(7));
  b.SetTrackRole(stream, TrackKind::kDeviceStream, Layer::kDevice, 0);
  StringId modules[8];
  for (int m = 0; m < 8; ++m) modules[m] = b.Intern("nn.Module: Conv2d_" + std::to_string(m));
  int64_t ts = 0, corr = 1;
  for (int64_t s = 0; s < steps; ++s) {
    b.AddSlice(main, ts, 1'000'000, b.Intern("ProfilerStep#" + std::to_string(s)), step_cat, -1, 0, 0);
    for (int m = 0; m < 8; ++m) {
      int64_t at = ts + 10'000 + m * 100'000;
      b.AddSlice(main, at, 90'000, modules[m], py, -1, 0, 0);
      b.AddSlice(main, at + 5'000, 80'000, conv, op, -1, 0, 0);
      b.AddSlice(main, at + 10'000, 10'000, launch, rt, corr, 0, 0);
      b.AddSlice(stream, at + 30'000, 60'000, kern, kcat, corr, 0, 0);
      ++corr;
    }
    ts += 1'000'000;
  }
  if (!b.Finalize().ok()) return nullptr;
  return trace;
}

void BM_AttributionSynthetic(benchmark::State& state) {
  std::unique_ptr<Trace> t = SyntheticSteps(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(ComputeAttribution(*t, nullptr).nodes.size());
  state.SetComplexityN(static_cast<int64_t>(t->slices.size()));
}
BENCHMARK(BM_AttributionSynthetic)->RangeMultiplier(4)->Range(256, 16384)->Complexity()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace aiprof
