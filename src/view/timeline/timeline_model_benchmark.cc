// The timeline's model and page on synthetic traces: 4 threads, each a
// repeated tree of one 1 ms op holding 8 ops of 100 µs, each holding 4 ops
// of 5 µs (41 slices per tree), with a detail budget of a tenth of the slices
// (so every size merges most slices into density bins, as large traces do). Google Benchmark fits the time against the
// slice count (Complexity): the view is meant to be linear. Figures in
// README.md.
#include <benchmark/benchmark.h>

#include "src/model/trace_builder.h"
#include "src/view/timeline/timeline_html.h"
#include "src/view/timeline/timeline_model.h"

namespace aiprof {
namespace {

std::unique_ptr<Trace> SyntheticThreads(int64_t trees_per_thread, int64_t faults_per_thread = 0) {
  auto trace = std::make_unique<Trace>();
  TraceBuilder b(trace.get());
  const StringId cat = b.Intern("cpu_op");
  const StringId top = b.Intern("aten::linear"), mid = b.Intern("aten::matmul"), leaf = b.Intern("aten::add_");
  for (int th = 0; th < 4; ++th) {
    const uint32_t track = b.ThreadTrack(IdValue::Num(1), IdValue::Num(th + 1));
    int64_t ts = th * 777;
    for (int64_t i = 0; i < trees_per_thread; ++i, ts += 1'100'000) {
      b.AddSlice(track, ts, 1'000'000, top, cat, -1, 0, 0);
      for (int m = 0; m < 8; ++m) {
        int64_t ms = ts + 10'000 + m * 120'000;
        b.AddSlice(track, ms, 100'000, mid, cat, -1, 0, 0);
        for (int l = 0; l < 4; ++l) b.AddSlice(track, ms + 2'000 + l * 20'000, 5'000, leaf, cat, -1, 0, 0);
      }
    }
    const StringId fcat = b.Intern("aiprof_page_fault"), fname = b.Intern("minor page fault");
    for (int64_t i = 0; i < faults_per_thread; ++i) b.AddInstant(track, th * 777 + i * 3'000, fname, fcat, 't', 0, 0);
  }
  if (!b.Finalize().ok()) return nullptr;
  return trace;
}

void BM_BuildTimelineModel(benchmark::State& state) {
  std::unique_ptr<Trace> trace = SyntheticThreads(state.range(0));
  TimelineOptions options;
  options.max_detailed_slices = trace->slices.size() / 10;
  for (auto _ : state) {
    TimelineModel m = BuildTimelineModel(*trace, {}, options);
    benchmark::DoNotOptimize(m.density_bin_count);
  }
  const int64_t slices = static_cast<int64_t>(trace->slices.size());
  state.SetItemsProcessed(state.iterations() * slices);
  state.SetComplexityN(slices);
}
BENCHMARK(BM_BuildTimelineModel)->RangeMultiplier(4)->Range(1 << 8, 1 << 14)->Complexity()->Unit(benchmark::kMillisecond);

void BM_WriteTimelinePage(benchmark::State& state) {
  std::unique_ptr<Trace> trace = SyntheticThreads(state.range(0));
  TimelineOptions options;
  options.max_detailed_slices = trace->slices.size() / 10;
  TimelineModel m = BuildTimelineModel(*trace, {}, options);
  size_t bytes = 0;
  for (auto _ : state) {
    std::string page;
    AppendTimelineHtml(*trace, m, options, &page);
    bytes = page.size();
    benchmark::DoNotOptimize(page.data());
  }
  state.SetBytesProcessed(state.iterations() * int64_t(bytes));
  state.SetComplexityN(static_cast<int64_t>(trace->slices.size()));
}
BENCHMARK(BM_WriteTimelinePage)->RangeMultiplier(4)->Range(1 << 8, 1 << 14)->Complexity()->Unit(benchmark::kMillisecond);

// Instants: 4 threads of the trees above (64 each) and `range` page fault
// records per thread, one every 3 µs across the trees' span and past it. At the default budget (100 000 instants kept
// one by one) the smaller sizes keep them all and the larger ones are binned;
// both are meant to be linear in instants.
void BM_BuildTimelineModelInstants(benchmark::State& state) {
  std::unique_ptr<Trace> trace = SyntheticThreads(64, state.range(0));
  TimelineOptions options;
  for (auto _ : state) {
    TimelineModel m = BuildTimelineModel(*trace, {}, options);
    benchmark::DoNotOptimize(m.instant_total);
  }
  state.SetItemsProcessed(state.iterations() * int64_t(trace->instants.size()));
  state.SetComplexityN(int64_t(trace->instants.size()));
}
BENCHMARK(BM_BuildTimelineModelInstants)->RangeMultiplier(4)->Range(1 << 10, 1 << 18)->Complexity()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace aiprof
