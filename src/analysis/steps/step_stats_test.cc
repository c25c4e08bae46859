#include "src/analysis/steps/step_stats.h"

#include <gtest/gtest.h>

#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/testing/analysis_test_util.h"

namespace aiprof {
namespace {

using testing::ImportFixture;
using testing::ImportJsonText;

// Expected figures computed independently in Python over the same JSON
// (statistics.fmean / pstdev over ProfilerStep#N durations, numpy-style
// linear quantile), see docs/analyses.md "steps".
TEST(StepStatsTest, ConvnetContiguousMatchesPythonOracle) {
  auto t = ImportFixture("torch-cpu/convnet_bs8_contiguous.kineto.json");
  ASSERT_NE(t, nullptr);
  StepStats s = ComputeStepStats(*t);
  EXPECT_EQ(s.count, 12u);
  EXPECT_NEAR(s.mean_ns, 14850666.666666666, 1);
  EXPECT_NEAR(s.cv, 0.6336242282922995, 1e-9);
  EXPECT_NEAR(s.p99_ns, 42186290.0, 1);
  EXPECT_EQ(s.max_ns, 44844000);
  ASSERT_FALSE(s.slowest.empty());
  EXPECT_EQ(s.slowest[0].dur_ns, 44844000);
  EXPECT_FALSE(s.slowest[0].differing_ops.empty());
}

TEST(StepStatsTest, ChannelsLastIsSteady) {
  auto t = ImportFixture("torch-cpu/convnet_bs8_channels_last.kineto.json");
  ASSERT_NE(t, nullptr);
  StepStats s = ComputeStepStats(*t);
  EXPECT_EQ(s.count, 12u);
  EXPECT_NEAR(s.mean_ns, 10163333.333333334, 1);
  EXPECT_NEAR(s.cv, 0.02277515584049485, 1e-9);
  EXPECT_NEAR(s.p99_ns, 10592490.0, 1);
}

// Hand-made: three steps of 10, 10 and 40 µs; the slow one has an extra
// 25 µs aten::slow op. mean 20 µs, pstdev sqrt(200)=14.142 µs.
TEST(StepStatsTest, HandMadeSlowStepNamesTheDifferingOp) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":5},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":10,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":11,"dur":5},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":20,"dur":40},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":21,"dur":5},
    {"ph":"X","cat":"cpu_op","name":"aten::slow","pid":1,"tid":1,"ts":30,"dur":25}
  ]})");
  ASSERT_NE(t, nullptr);
  StepStats s = ComputeStepStats(*t);
  ASSERT_EQ(s.count, 3u);
  EXPECT_NEAR(s.mean_ns, 20000, 1e-6);
  EXPECT_NEAR(s.stddev_ns, 14142.1356, 1e-3);
  ASSERT_FALSE(s.slowest.empty());
  EXPECT_EQ(s.slowest[0].dur_ns, 40000);
  ASSERT_EQ(s.slowest[0].differing_ops.size(), 1u);  // aten::mm equals its median
  EXPECT_EQ(t->Str(s.slowest[0].differing_ops[0].name), "aten::slow");
  EXPECT_EQ(s.slowest[0].differing_ops[0].step_total_ns, 25000);
  EXPECT_EQ(s.slowest[0].differing_ops[0].median_total_ns, 0);
}

// Same hand-made trace: median 10 µs, mean 20 µs, so half the mean step is
// lost to the slow step; its evidence names the step and the differing op.
TEST(StepStatsTest, ExcessRatioAndSlowStepEvidence) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":10},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":10,"dur":10},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":20,"dur":40},
    {"ph":"X","cat":"cpu_op","name":"aten::slow","pid":1,"tid":1,"ts":30,"dur":25}
  ]})");
  ASSERT_NE(t, nullptr);
  MetricSet m;
  PublishStepStats(*t, ComputeStepStats(*t), &m);
  ASSERT_NE(m.Get("step_time_excess_ratio"), nullptr);
  EXPECT_DOUBLE_EQ(m.Get("step_time_excess_ratio")->value, 0.5);
  ASSERT_EQ(m.Evidence("step_variance").size(), 1u);  // only the 40 µs step is >= 1.5x median
  EXPECT_NE(m.Evidence("step_variance")[0].find("ProfilerStep#3"), std::string::npos);
  EXPECT_NE(m.Evidence("step_variance")[0].find("aten::slow"), std::string::npos);
}

// Two steps are too few for a typical step: unavailable, not zero.
TEST(StepStatsTest, ExcessRatioNeedsThreeSteps) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":10},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":10,"dur":30}
  ]})");
  ASSERT_NE(t, nullptr);
  MetricSet m;
  PublishStepStats(*t, ComputeStepStats(*t), &m);
  EXPECT_EQ(m.Get("step_time_excess_ratio"), nullptr);
  EXPECT_TRUE(m.UnavailableReason("step_time_excess_ratio").has_value());
}

TEST(StepStatsTest, NoStepsMakesStepTimesUnavailableNotZero) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":5}]})");
  ASSERT_NE(t, nullptr);
  MetricSet m;
  PublishStepStats(*t, ComputeStepStats(*t), &m);
  ASSERT_NE(m.Get("steps"), nullptr);
  EXPECT_EQ(m.Get("steps")->value, 0);
  EXPECT_EQ(m.Get("step_time_mean_ns"), nullptr);
  EXPECT_TRUE(m.UnavailableReason("step_time_mean_ns").has_value());
}

}  // namespace
}  // namespace aiprof
