// FindSteps' report of steps found from a periodic pattern (hand-made traces,
// labelled as such; real traces: test/e2e/periodic_steps_test.py).
#include "src/analysis/common/steps.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "src/model/trace_builder.h"
#include "src/model/trace_merge.h"

namespace aiprof {
namespace {

// Hand-made: `iterations` x (fwd, bwd, opt) on thread 7, 500 ns apart; a
// ProfilerStep#N around each when `markers`.
std::unique_ptr<Trace> Loop(int iterations, bool markers, const char* rank) {
  auto t = std::make_unique<Trace>();
  TraceBuilder b(t.get());
  const uint32_t host = b.ThreadTrack(IdValue::Num(1), IdValue::Num(7));
  const StringId cat = b.Intern("cpu_op");
  int64_t ts = 0;
  for (int k = 0; k < iterations; ++k) {
    if (markers) b.AddSlice(host, ts, 330, b.Intern("ProfilerStep#" + std::to_string(k)), cat, kNoCorrelation, 0, 0);
    for (const char* name : {"fwd", "bwd", "opt"}) {
      b.AddSlice(host, ts, 100, b.Intern(name), cat, kNoCorrelation, 0, 0);
      ts += 110;
    }
    ts += 500;
  }
  if (rank != nullptr) t->metadata["rank"] = rank;
  EXPECT_TRUE(b.Finalize().ok());
  return t;
}

TEST(FindSteps, SaysWhenTimelineStepsComeFromAPattern) {
  auto t = Loop(4, false, nullptr);
  StepList list = FindSteps(*t);
  EXPECT_EQ(list.source, "timeline");  // start times and rows, as marker steps
  ASSERT_EQ(list.steps.size(), 4u);
  EXPECT_TRUE(list.from_pattern);
  EXPECT_EQ(list.pattern.period_ops, 3);
  EXPECT_TRUE(list.pattern.exact);
  EXPECT_EQ(list.pattern.thread, "7");
  EXPECT_DOUBLE_EQ(list.pattern.coverage, 1.0);
  EXPECT_EQ(list.pattern.parts, 1);
  EXPECT_EQ(list.steps[1].start_ns, 3 * 110 + 500);
  EXPECT_EQ(list.steps[1].number, 2);
}

TEST(FindSteps, MarkersAreNotAPattern) {
  auto t = Loop(4, true, nullptr);
  StepList list = FindSteps(*t);
  EXPECT_EQ(list.steps.size(), 4u);
  EXPECT_FALSE(list.from_pattern);
}

TEST(FindSteps, MergedPartsEachWithAPattern) {
  std::vector<std::unique_ptr<Trace>> parts;
  parts.push_back(Loop(4, false, "0"));
  parts.push_back(Loop(5, false, "1"));
  auto merged = MergeTraces(std::move(parts));
  EXPECT_EQ(merged->metadata["rank1.steps.from"], "periodic pattern");
  StepList list = FindSteps(*merged);
  EXPECT_EQ(list.steps.size(), 9u);
  EXPECT_TRUE(list.from_pattern);
  EXPECT_EQ(list.pattern.parts, 2);
  EXPECT_EQ(list.pattern.period_ops, 3);
}

}  // namespace
}  // namespace aiprof
