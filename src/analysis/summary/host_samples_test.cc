#include "src/analysis/summary/host_samples.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

// Leaf-first path of a call site, as (frame, module) strings.
std::vector<std::pair<std::string, std::string>> Path(const Trace& t, uint32_t c) {
  std::vector<std::pair<std::string, std::string>> out;
  for (; c != kNoCallsite; c = t.callsites.parent[c]) {
    out.emplace_back(std::string(t.Str(t.callsites.frame[c])), std::string(t.Str(t.callsites.module[c])));
  }
  return out;
}

const SampledFunction* FindFunction(const Trace& t, const HostSampleStats& h, const std::string& frame) {
  for (const SampledFunction& f : h.functions) {
    if (t.Str(f.frame) == frame) return &f;
  }
  return nullptr;
}

TEST(HostSamplesTest, SelfTotalRecursionPythonAndThreads) {
  Trace trace;
  TraceBuilder b(&trace);
  uint32_t main_thread = b.ThreadTrack(IdValue::Num(10), IdValue::Num(10));
  uint32_t worker = b.ThreadTrack(IdValue::Num(10), IdValue::Num(11));
  StringId app = b.Intern("/usr/bin/app"), script = b.Intern("train.py");
  uint32_t root = b.InternCallsite(kNoCallsite, b.Intern("main"), app, FrameKind::kNative);
  uint32_t f1 = b.InternCallsite(root, b.Intern("f"), app, FrameKind::kNative);
  uint32_t g = b.InternCallsite(f1, b.Intern("g"), app, FrameKind::kNative);
  uint32_t f2 = b.InternCallsite(g, b.Intern("f"), app, FrameKind::kNative);  // recursion: f counted once
  uint32_t py = b.InternCallsite(root, b.Intern("step (train.py:3)"), script, FrameKind::kPython);
  uint32_t under_py = b.InternCallsite(py, b.Intern("g"), app, FrameKind::kNative);
  b.AddStackSample(main_thread, 100, f2, 1000);
  b.AddStackSample(main_thread, 200, f2, 1000);
  b.AddStackSample(main_thread, 300, g, 1000);
  b.AddStackSample(worker, 150, under_py, 1000);
  b.AddStackSample(worker, 250, kNoCallsite, 1000);  // no stack: counted as a sample only
  ASSERT_TRUE(b.Finalize().ok());
  const Trace* t = &trace;
  HostSampleStats h = ComputeHostSamples(*t);
  EXPECT_EQ(h.samples, 5u);
  EXPECT_EQ(h.weight_ns, 5000);
  EXPECT_EQ(h.with_stack, 4u);
  EXPECT_EQ(h.with_python, 1u);
  EXPECT_FALSE(h.truncated.has_value());
  ASSERT_EQ(h.functions.size(), 4u);
  // f: self 2 (both f2 samples), total 3 (f2 twice, g under f1 once; recursion once per sample).
  const SampledFunction* f = FindFunction(*t, h, "f");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->self_samples, 2u);
  EXPECT_EQ(f->total_samples, 3u);
  EXPECT_EQ(f->total_ns, 3000);
  const SampledFunction* gf = FindFunction(*t, h, "g");
  EXPECT_EQ(gf->self_samples, 2u);   // g under f1, g under the Python frame
  EXPECT_EQ(gf->total_samples, 4u);  // every sample with a stack passes through g
  const SampledFunction* m = FindFunction(*t, h, "main");
  EXPECT_EQ(m->self_samples, 0u);
  EXPECT_EQ(m->total_samples, 4u);
  const SampledFunction* p = FindFunction(*t, h, "step (train.py:3)");
  EXPECT_EQ(p->kind, FrameKind::kPython);
  EXPECT_EQ(p->total_samples, 1u);
  // Ranked by self, then total, then name: f (2, 3) and g (2, 4): g first.
  EXPECT_EQ(t->Str(h.functions[0].frame), "g");
  EXPECT_EQ(t->Str(h.functions[1].frame), "f");
  std::vector<size_t> by_total = FunctionsByTotal(h);
  EXPECT_EQ(t->Str(h.functions[by_total[0]].frame), "g");  // 4, self 2
  EXPECT_EQ(t->Str(h.functions[by_total[1]].frame), "main");  // 4, self 0
  ASSERT_EQ(h.threads.size(), 2u);
  EXPECT_EQ(h.threads[0].samples, 3u);
  EXPECT_EQ(t->tracks.tid[h.threads[0].track], 10);
  EXPECT_EQ(t->Str(h.functions[static_cast<size_t>(h.threads[0].top_function)].frame), "f");
  EXPECT_EQ(h.threads[0].top_function_samples, 2u);
  EXPECT_EQ(h.threads[1].samples, 2u);
  EXPECT_EQ(h.threads[1].with_python, 1u);
  EXPECT_EQ(t->Str(h.functions[static_cast<size_t>(h.threads[1].top_function)].frame), "g");
}

TEST(HostSamplesTest, EmptyAndTruncatedFromCaptureMetadata) {
  Trace empty;
  TraceBuilder b(&empty);
  ASSERT_TRUE(b.Finalize().ok());
  EXPECT_TRUE(ComputeHostSamples(empty).empty());
  Trace trace;
  TraceBuilder c(&trace);
  uint32_t th = c.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  c.AddStackSample(th, 1, c.InternCallsite(kNoCallsite, c.Intern("x"), c.Intern("m"), FrameKind::kNative), 10);
  ASSERT_TRUE(c.Finalize().ok());
  trace.metadata["capture.host_stacks_truncated"] = "7";
  HostSampleStats h = ComputeHostSamples(trace);
  ASSERT_TRUE(h.truncated.has_value());
  EXPECT_EQ(*h.truncated, 7u);
}

// Random trees and samples against a brute-force count per sample.
TEST(HostSamplesTest, MatchesBruteForceOnRandomStacks) {
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    Trace trace;
    TraceBuilder b(&trace);
    std::vector<uint32_t> threads = {b.ThreadTrack(IdValue::Num(1), IdValue::Num(1)),
                                     b.ThreadTrack(IdValue::Num(1), IdValue::Num(2))};
    std::vector<StringId> names;
    for (int i = 0; i < 5; ++i) names.push_back(b.Intern("fn" + std::to_string(i)));
    StringId mod = b.Intern("lib.so");
    std::vector<uint32_t> sites = {b.InternCallsite(kNoCallsite, names[0], mod, FrameKind::kNative)};
    for (int i = 0; i < 40; ++i) {
      uint32_t parent = sites[rng() % sites.size()];
      sites.push_back(b.InternCallsite(parent, names[rng() % names.size()], mod, rng() % 4 == 0 ? FrameKind::kPython : FrameKind::kNative));
    }
    for (int i = 0; i < 300; ++i) b.AddStackSample(threads[rng() % 2], i, sites[rng() % sites.size()], 1 + rng() % 5);
    ASSERT_TRUE(b.Finalize().ok());
    const Trace* t = &trace;
    HostSampleStats h = ComputeHostSamples(*t);
    std::map<std::string, std::pair<uint64_t, uint64_t>> expect;  // frame -> (self, total)
    uint64_t python = 0;
    for (size_t i = 0; i < t->samples.size(); ++i) {
      auto path = Path(*t, t->samples.callsite[i]);
      ++expect[path[0].first].first;
      std::set<std::string> once;
      bool py = false;
      for (uint32_t c = t->samples.callsite[i]; c != kNoCallsite; c = t->callsites.parent[c]) {
        py |= t->callsites.kind[c] == FrameKind::kPython;
      }
      python += py;
      for (const auto& [frame, module] : path) once.insert(frame);
      for (const std::string& frame : once) ++expect[frame].second;
    }
    // A name can appear with both kinds here but one (frame, module) is one
    // function: the kinds of one pair are equal in real traces, not here.
    EXPECT_EQ(h.with_python, python);
    for (const auto& [frame, counts] : expect) {
      const SampledFunction* f = FindFunction(*t, h, frame);
      ASSERT_NE(f, nullptr) << frame;
      EXPECT_EQ(f->self_samples, counts.first) << frame;
      EXPECT_EQ(f->total_samples, counts.second) << frame;
    }
  }
}

}  // namespace
}  // namespace aiprof
