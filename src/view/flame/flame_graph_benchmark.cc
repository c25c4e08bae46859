// Building the flame graph on synthetic traces: N slices on 4 threads in a
// fixed nesting pattern (a python-like call tree 6 deep with 400 distinct
// names), and N stack samples over a callsite tree of depth 24. Google
// Benchmark fits the time against N (Complexity): building is meant to be
// linear in events. Figures in README.md.
#include <benchmark/benchmark.h>

#include "src/model/trace_builder.h"
#include "src/view/flame/flame_graph.h"
#include "src/view/flame/flame_html.h"

namespace aiprof {
namespace {

constexpr int kThreads = 4;
constexpr int kDepth = 6;

// Each thread: repeated "call trees", each node lasting 1000 ns less than its
// parent; `fanout` children per level (the last levels are leaves).
std::unique_ptr<Trace> SpanTrace(int64_t slices) {
  auto trace = std::make_unique<Trace>();
  TraceBuilder b(trace.get());
  std::vector<StringId> names;
  for (int i = 0; i < 400; ++i) names.push_back(b.Intern("module.py(" + std::to_string(i) + "): fn_" + std::to_string(i)));
  const StringId cat = b.Intern("python_function");
  int64_t per_thread = slices / kThreads;
  for (int t = 0; t < kThreads; ++t) {
    uint32_t track = b.ThreadTrack(IdValue::Num(1), IdValue::Num(t + 1));
    int64_t ts = 0, made = 0, tree = 0;
    while (made < per_thread) {
      // One tree: a chain of depth kDepth, then 3 siblings at each level on the way back.
      int64_t start = ts;
      for (int d = 0; d < kDepth && made < per_thread; ++d, ++made) {
        b.AddSlice(track, start + d * 10, 100'000 - d * 10'000, names[(tree * 7 + d * 13) % 400], cat, -1, 0, 0);
      }
      for (int d = kDepth - 1; d > 0 && made < per_thread; --d) {
        for (int k = 0; k < 3 && made < per_thread; ++k, ++made) {
          b.AddSlice(track, start + d * 10 + 1000 + k * 2000, 1000, names[(tree + d * 31 + k) % 400], cat, -1, 0, 0);
        }
      }
      ts += 200'000;
      ++tree;
    }
  }
  if (!b.Finalize().ok()) return nullptr;
  return trace;
}

std::unique_ptr<Trace> SampleTrace(int64_t samples) {
  auto trace = std::make_unique<Trace>();
  TraceBuilder b(trace.get());
  std::vector<uint32_t> leaves;
  const StringId lib = b.Intern("/usr/lib/libtorch_cpu.so");
  for (int chain = 0; chain < 64; ++chain) {
    uint32_t c = kNoCallsite;
    for (int d = 0; d < 24; ++d) {
      c = b.InternCallsite(c, b.Intern("fn_" + std::to_string((chain / (d + 1)) * 24 + d)), lib, FrameKind::kNative);
    }
    leaves.push_back(c);
  }
  std::vector<uint32_t> tracks;
  for (int t = 0; t < kThreads; ++t) tracks.push_back(b.ThreadTrack(IdValue::Num(1), IdValue::Num(t + 1)));
  for (int64_t i = 0; i < samples; ++i) b.AddStackSample(tracks[i % kThreads], i * 1000, leaves[(i * 7) % 64], 1'000'000);
  if (!b.Finalize().ok()) return nullptr;
  return trace;
}

void BM_BuildFlameTreeFromSpans(benchmark::State& state) {
  std::unique_ptr<Trace> trace = SpanTrace(state.range(0));
  for (auto _ : state) {
    StatusOr<FrameTree> tree = BuildFrameTree(*trace, ViewOptions{});
    benchmark::DoNotOptimize(tree->root_total_ns());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(trace->slices.size()));
  state.SetComplexityN(static_cast<int64_t>(trace->slices.size()));
}
BENCHMARK(BM_BuildFlameTreeFromSpans)->RangeMultiplier(8)->Range(1 << 12, 1 << 21)->Complexity()->Unit(benchmark::kMillisecond);

void BM_BuildFlameTreeFromSamples(benchmark::State& state) {
  std::unique_ptr<Trace> trace = SampleTrace(state.range(0));
  for (auto _ : state) {
    StatusOr<FrameTree> tree = BuildFrameTree(*trace, ViewOptions{});
    benchmark::DoNotOptimize(tree->root_total_ns());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(trace->samples.size()));
  state.SetComplexityN(static_cast<int64_t>(trace->samples.size()));
}
BENCHMARK(BM_BuildFlameTreeFromSamples)->RangeMultiplier(8)->Range(1 << 12, 1 << 21)->Complexity()->Unit(benchmark::kMillisecond);

void BM_FlameHtml(benchmark::State& state) {
  std::unique_ptr<Trace> trace = SpanTrace(1 << 18);
  FrameTree tree = std::move(BuildFrameTree(*trace, ViewOptions{}).value());
  for (auto _ : state) {
    StringViewSink sink;
    Status s = WriteFlameHtml(tree, FlameDiff{}, ViewOptions{}, &sink);
    benchmark::DoNotOptimize(sink.str().size());
  }
  state.counters["frames"] = static_cast<double>(tree.size());
}
BENCHMARK(BM_FlameHtml)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace aiprof
