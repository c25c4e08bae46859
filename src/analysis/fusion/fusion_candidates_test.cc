#include "src/analysis/fusion/fusion_candidates.h"

#include <gtest/gtest.h>

#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/testing/analysis_test_util.h"

namespace aiprof {
namespace {

using testing::ImportFixture;
using testing::ImportJsonText;

// Expected figures from src/analysis/testing/oracles/fusion_oracle.py (name
// tuples, no hashing) over the same files.
TEST(FusionCandidatesTest, UnfusedElementwiseHasStrongCandidates) {
  auto t = ImportFixture("torch-cpu/elementwise_bs4_unfused.kineto.json");
  ASSERT_NE(t, nullptr);
  FusionResult r = ComputeFusionCandidates(*t);
  EXPECT_FALSE(r.device);
  EXPECT_EQ(r.op_time_ns, 1909424000);
  EXPECT_EQ(r.short_op_ns, 55218000);
  EXPECT_EQ(r.covered_ns, 42661000);
  ASSERT_EQ(r.top.size(), 5u);
  EXPECT_EQ(DescribeSequence(*t, r.top[0]),
            "aten::add -> aten::mul -> aten::mul -> aten::mul -> aten::add -> aten::mul -> aten::mul -> aten::tanh");
  EXPECT_EQ(r.top[0].occurrences, 48u);
  EXPECT_EQ(r.top[0].total_ns, 29348000);
  EXPECT_EQ(r.top[0].boundaries_removed, 336u);
  EXPECT_TRUE(r.top[0].has_shapes);
  EXPECT_GT(r.top[0].intermediate_bytes, 0);
  EXPECT_EQ(r.top[1].total_ns, 9303000);
  EXPECT_EQ(r.top[4].occurrences, 46u);
  EXPECT_EQ(r.top[4].total_ns, 26476000);
}

TEST(FusionCandidatesTest, FusedElementwiseIsClearlyWeaker) {
  auto t = ImportFixture("torch-cpu/elementwise_bs4_fused.kineto.json");
  auto u = ImportFixture("torch-cpu/elementwise_bs4_unfused.kineto.json");
  ASSERT_NE(t, nullptr);
  ASSERT_NE(u, nullptr);
  FusionResult r = ComputeFusionCandidates(*t);
  EXPECT_EQ(r.op_time_ns, 1560666000);
  EXPECT_EQ(r.short_op_ns, 24805000);
  EXPECT_EQ(r.covered_ns, 7899000);
  ASSERT_FALSE(r.top.empty());
  EXPECT_EQ(DescribeSequence(*t, r.top[0]), "aten::addcmul -> aten::silu -> aten::add -> aten::layer_norm");
  EXPECT_EQ(r.top[0].occurrences, 36u);
  EXPECT_EQ(r.top[0].total_ns, 5758000);
  MetricSet fused, unfused;
  PublishFusionCandidates(*t, r, &fused);
  PublishFusionCandidates(*u, ComputeFusionCandidates(*u), &unfused);
  EXPECT_NEAR(fused.Get("fusion_candidate_ratio")->value, 7899000.0 / 1560666000.0, 1e-12);
  EXPECT_NEAR(unfused.Get("fusion_candidate_ratio")->value, 42661000.0 / 1909424000.0, 1e-12);
  EXPECT_GT(unfused.Get("fusion_candidate_ratio")->value, 3 * fused.Get("fusion_candidate_ratio")->value);
  EXPECT_EQ(unfused.Get("fusion_candidate_boundaries_per_step")->value, 28);  // 48 x 7 / 12
  EXPECT_EQ(fused.Get("fusion_candidate_boundaries_per_step")->value, 9);     // 36 x 3 / 12
  EXPECT_EQ(unfused.Get("fusion_candidate_occurrences_per_step")->value, 4);
  EXPECT_FALSE(unfused.Evidence("fusion_missing").empty());
}

// Hand-made, both sides of the thresholds: A B A B A B with 10 µs ops (short)
// and a 600 µs op (long, ≥ 500 µs) between two pairs that breaks the run;
// "A B" occurs 3 times (the minimum) only with all three pairs in runs.
TEST(FusionCandidatesTest, HandMadeRunsAndMinimumOccurrences) {
  auto make = [](int long_ms_us) {
    std::string j = R"({"traceEvents":[
      {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":0,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":12,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":24,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":36,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"L","pid":1,"tid":1,"ts":50,"dur":LONG},
      {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":2000,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":2012,"dur":10}]})";
    return j.replace(j.find("LONG"), 4, std::to_string(long_ms_us));
  };
  // L = 600 µs: runs [A B A B] and [A B]; "A B" x3 → candidate.
  auto t = ImportJsonText(make(600));
  ASSERT_NE(t, nullptr);
  FusionResult r = ComputeFusionCandidates(*t);
  ASSERT_FALSE(r.top.empty());
  EXPECT_EQ(DescribeSequence(*t, r.top[0]), "A -> B");
  EXPECT_EQ(r.top[0].occurrences, 3u);
  EXPECT_EQ(r.top[0].gap_ns, 3 * 2000);
  EXPECT_FALSE(r.top[0].has_shapes);
  EXPECT_EQ(r.covered_ns, 60000);
  EXPECT_EQ(r.short_op_ns, 60000);
  // L = 499 µs is short: one run A B A B L A B; "A B" still x3 but now
  // "A B A B" (x1) and "B L"... no window reaches 3 except "A B".
  auto s = ImportJsonText(make(499));
  ASSERT_NE(s, nullptr);
  FusionResult r2 = ComputeFusionCandidates(*s);
  EXPECT_EQ(r2.short_op_ns, 60000 + 499000);
  ASSERT_FALSE(r2.top.empty());
  EXPECT_EQ(r2.top[0].occurrences, 3u);
}

TEST(FusionCandidatesTest, TwoOccurrencesAreNotACandidate) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":0,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":12,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":24,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":36,"dur":10}]})");
  ASSERT_NE(t, nullptr);
  FusionResult r = ComputeFusionCandidates(*t);
  EXPECT_TRUE(r.top.empty());
  MetricSet m;
  PublishFusionCandidates(*t, r, &m);
  EXPECT_EQ(m.Get("fusion_candidate_ratio")->value, 0);
}

}  // namespace
}  // namespace aiprof
