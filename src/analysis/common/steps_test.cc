// FindSteps' report of steps found from a periodic pattern (hand-made traces,
// labelled as such; real traces: test/e2e/periodic_steps_test.py).
#include "src/analysis/common/steps.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "src/model/trace_builder.h"
#include "src/model/trace_merge.h"
#include "test/util/trace_fixtures.h"

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

// Hand-made for the step time's base: three 10 us ProfilerStep spans back to
// back, each launching one kernel 1 us after its start; the kernels run one
// after another on one stream, starting no earlier than 2 us into their step.
// `kernel_ends_us` is where each kernel ends (it starts at the later of the
// previous kernel's end and its step's start + 2 us).
std::unique_ptr<Trace> ThreeSteps(const std::vector<double>& kernel_ends_us) {
  std::string json = R"({"traceEvents":[)";
  double prev_end = 0;
  for (size_t k = 0; k < kernel_ends_us.size(); ++k) {
    const double start = 10.0 * static_cast<double>(k);
    const double kstart = std::max(prev_end, start + 2);
    const std::string corr = std::to_string(k + 1);
    json += R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#)" + std::to_string(k + 1) +
            R"(","pid":1,"tid":1,"ts":)" + std::to_string(start) + R"(,"dur":10},)";
    json += R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":)" +
            std::to_string(start + 1) + R"(,"dur":0.5,"args":{"correlation":)" + corr + "}},";
    json += R"({"ph":"X","cat":"kernel","name":"K","pid":0,"tid":7,"ts":)" + std::to_string(kstart) + R"(,"dur":)" +
            std::to_string(kernel_ends_us[k] - kstart) + R"(,"args":{"device":0,"stream":7,"correlation":)" + corr +
            "}}";
    json += k + 1 < kernel_ends_us.size() ? "," : "]}";
    prev_end = kernel_ends_us[k];
  }
  return testing::ImportJsonText(json);
}

std::vector<size_t> All(const StepList& list) {
  std::vector<size_t> v(list.steps.size());
  for (size_t k = 0; k < v.size(); ++k) v[k] = k;
  return v;
}

// The device runs behind: each kernel takes 15 us, the host issues a step
// every 10 us. Work ends 20, 35, 50 us: periods 15 us (the first step has
// none); by hand mean period 15 us > 1.05 x 10 us.
TEST(StepPeriodsTest, HandMadeDeviceBehindHasTheDevicePeriod) {
  auto t = ThreeSteps({20, 35, 50});
  ASSERT_NE(t, nullptr);
  const StepList list = FindSteps(*t);
  ASSERT_EQ(list.steps.size(), 3u);
  const StepPeriods p = ComputeStepPeriods(*t, list);
  EXPECT_EQ(p.work_end_ns, (std::vector<int64_t>{20'000, 35'000, 50'000}));
  EXPECT_EQ(p.period_ns, (std::vector<int64_t>{-1, 15'000, 15'000}));
  std::vector<size_t> used;
  EXPECT_EQ(ChooseStepTimeBase(list, p, All(list), &used), StepTimeBase::kDevicePeriod);
  EXPECT_EQ(used, (std::vector<size_t>{1, 2}));
}

// Host-paced: 4 us kernels end inside their steps (work ends = span ends 10,
// 20, 30 us), periods 10 us = the host span.
TEST(StepPeriodsTest, HandMadeHostPacedKeepsTheHostSpan) {
  auto t = ThreeSteps({6, 16, 26});
  ASSERT_NE(t, nullptr);
  const StepList list = FindSteps(*t);
  const StepPeriods p = ComputeStepPeriods(*t, list);
  EXPECT_EQ(p.work_end_ns, (std::vector<int64_t>{10'000, 20'000, 30'000}));
  EXPECT_EQ(ChooseStepTimeBase(list, p, All(list), nullptr), StepTimeBase::kHostSpan);
}

// Both sides of kDeviceBehindMinExcess (5%): work ends 12, 22.5, 33 us give
// periods of 10.5 us = 1.05 x 10 us (host span); 12, 22.6, 33.2 us give 10.6 us
// (device period).
TEST(StepPeriodsTest, TheThresholdIsStrict) {
  auto at = ThreeSteps({12, 22.5, 33});
  ASSERT_NE(at, nullptr);
  StepList list = FindSteps(*at);
  StepPeriods p = ComputeStepPeriods(*at, list);
  EXPECT_EQ(p.period_ns, (std::vector<int64_t>{-1, 10'500, 10'500}));
  EXPECT_EQ(ChooseStepTimeBase(list, p, All(list), nullptr), StepTimeBase::kHostSpan);
  auto above = ThreeSteps({12, 22.6, 33.2});
  ASSERT_NE(above, nullptr);
  list = FindSteps(*above);
  p = ComputeStepPeriods(*above, list);
  EXPECT_EQ(p.period_ns, (std::vector<int64_t>{-1, 10'600, 10'600}));
  EXPECT_EQ(ChooseStepTimeBase(list, p, All(list), nullptr), StepTimeBase::kDevicePeriod);
}

// Steps with gaps between them and no device work (a CPU trace) are not a
// device running behind, whatever their periods.
TEST(StepPeriodsTest, GapsBetweenHostStepsAreNotADeviceBehind) {
  auto t = std::make_unique<Trace>();
  TraceBuilder b(t.get());
  const uint32_t host = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  for (int k = 0; k < 3; ++k) {
    b.AddSlice(host, k * 30'000, 10'000, b.Intern("ProfilerStep#" + std::to_string(k)), b.Intern("user_annotation"),
               kNoCorrelation, 0, 0);
  }
  EXPECT_TRUE(b.Finalize().ok());
  const StepList list = FindSteps(*t);
  ASSERT_EQ(list.steps.size(), 3u);
  const StepPeriods p = ComputeStepPeriods(*t, list);
  EXPECT_EQ(p.period_ns, (std::vector<int64_t>{-1, 30'000, 30'000}));
  EXPECT_EQ(ChooseStepTimeBase(list, p, All(list), nullptr), StepTimeBase::kHostSpan);
}

}  // namespace
}  // namespace aiprof
