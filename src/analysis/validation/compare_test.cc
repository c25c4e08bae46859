#include "src/analysis/validation/compare.h"

#include <gtest/gtest.h>

#include <cmath>

namespace aiprof {
namespace {

RunSamples Samples(std::string label, std::vector<double> latency) {
  RunSamples r;
  r.label = std::move(label);
  r.source_kind = "test";
  r.unit = "step";
  r.latency_ns = std::move(latency);
  return r;
}

// n values spread evenly around `center` (+-1% steps): deterministic, symmetric.
std::vector<double> Around(double center, int n, double spread = 0.01) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center * (1 + spread * (i - (n - 1) / 2.0) / ((n - 1) / 2.0)));
  return v;
}

const MetricComparison& Metric(const ValidationResult& r, const std::string& name) {
  for (const MetricComparison& m : r.metrics) {
    if (m.metric == name) return m;
  }
  ADD_FAILURE() << "no metric " << name;
  static MetricComparison none;
  return none;
}

ValidationOptions Opts(std::vector<std::string> metrics, TestKind test = TestKind::kWelch) {
  ValidationOptions o;
  o.metrics = std::move(metrics);
  o.test = test;
  o.bootstrap_resamples = 2000;
  return o;
}

TEST(CompareTest, MinSamplesForQuantile) {
  EXPECT_EQ(MinSamplesForQuantile(0.5), 10u);
  EXPECT_EQ(MinSamplesForQuantile(0.9), 50u);
  EXPECT_EQ(MinSamplesForQuantile(0.99), 500u);
  EXPECT_EQ(MinSamplesForQuantile(0.999), 5000u);
}

// A p99 from 499 samples is not decided; from 500 it is.
TEST(CompareTest, P99NeedsFiveHundredSamples) {
  ValidationOptions o = Opts({"p99"});
  ValidationResult r = Validate(Samples("a", Around(100, 499, 0.1)), Samples("b", Around(150, 499, 0.1)), o);
  EXPECT_EQ(Metric(r, "p99").verdict, Verdict::kInsufficientData);
  EXPECT_NE(Metric(r, "p99").reason.find("500"), std::string::npos);
  r = Validate(Samples("a", Around(100, 500, 0.1)), Samples("b", Around(150, 500, 0.1)), o);
  EXPECT_EQ(Metric(r, "p99").verdict, Verdict::kRegressed);
  EXPECT_EQ(r.overall, Verdict::kRegressed);
}

// Six skewed steps a side (the ResNet50 pair's count): latency is compared
// on its median by Mann-Whitney and decided; p50, the same medians, needs
// 10 samples for its bootstrap interval, and its row says why the two differ.
TEST(CompareTest, P50ShortOfSamplesPointsAtTheLatencyMedian) {
  ValidationOptions o = Opts({"latency", "p50"}, TestKind::kMannWhitney);
  const std::vector<double> a = {100, 101, 102, 103, 104, 160}, b = {70, 71, 72, 73, 74, 110};
  ValidationResult r = Validate(Samples("a", a), Samples("b", b), o);
  const MetricComparison& lat = Metric(r, "latency");
  EXPECT_EQ(lat.statistic_name, "median");
  EXPECT_EQ(lat.verdict, Verdict::kImproved);
  const MetricComparison& p50 = Metric(r, "p50");
  EXPECT_EQ(p50.verdict, Verdict::kInsufficientData);
  EXPECT_NE(p50.reason.find("needs at least 10 samples per side"), std::string::npos) << p50.reason;
  EXPECT_NE(p50.reason.find("the latency row compares the same medians with mannwhitney"), std::string::npos)
      << p50.reason;
  // Without a decided latency median, nothing is added.
  r = Validate(Samples("a", a), Samples("b", b), Opts({"p50"}, TestKind::kMannWhitney));
  EXPECT_EQ(Metric(r, "p50").reason.find("latency row"), std::string::npos);
}

TEST(CompareTest, LatencyNeedsFiveSamplesPerSide) {
  ValidationOptions o = Opts({"latency"});
  EXPECT_EQ(Metric(Validate(Samples("a", Around(100, 4)), Samples("b", Around(120, 30)), o), "latency").verdict,
            Verdict::kInsufficientData);
  EXPECT_EQ(Metric(Validate(Samples("a", Around(100, 5)), Samples("b", Around(120, 30)), o), "latency").verdict,
            Verdict::kRegressed);
}

// 3% faster, highly significant: an improvement at min-effect 2%, not at 4%.
TEST(CompareTest, MinEffectBothSides) {
  ValidationOptions o = Opts({"latency"});
  RunSamples a = Samples("a", Around(100, 30)), b = Samples("b", Around(97, 30));
  o.min_effect = 0.02;
  ValidationResult r = Validate(a, b, o);
  EXPECT_EQ(Metric(r, "latency").verdict, Verdict::kImproved);
  EXPECT_NEAR(Metric(r, "latency").change_rel, -0.03, 1e-12);
  o.min_effect = 0.04;
  r = Validate(a, b, o);
  EXPECT_EQ(Metric(r, "latency").verdict, Verdict::kNoChange);
  EXPECT_NE(Metric(r, "latency").reason.find("below min-effect"), std::string::npos);
}

// Welch on {1..5} vs {3..7}+noise-free shift 2: t = -2, df = 8, p = 0.0805 (scipy).
// Alpha 0.1 calls it, alpha 0.05 does not.
TEST(CompareTest, AlphaBothSides) {
  ValidationOptions o = Opts({"latency"});
  o.min_effect = 0;
  RunSamples a = Samples("a", {1, 2, 3, 4, 5}), b = Samples("b", {3, 4, 5, 6, 7});
  ValidationResult r = Validate(a, b, o);
  EXPECT_NEAR(Metric(r, "latency").p_value, 0.08051623795726257, 1e-9);
  EXPECT_EQ(Metric(r, "latency").verdict, Verdict::kNoChange);
  o.alpha = 0.1;
  EXPECT_EQ(Metric(Validate(a, b, o), "latency").verdict, Verdict::kRegressed);
}

TEST(CompareTest, AutoPicksWelchForSymmetricAndMannWhitneyForSkewed) {
  ValidationOptions o = Opts({"latency"}, TestKind::kAuto);
  ValidationResult r = Validate(Samples("a", Around(100, 20)), Samples("b", Around(90, 20)), o);
  EXPECT_EQ(Metric(r, "latency").test, "welch");
  EXPECT_EQ(Metric(r, "latency").statistic_name, "mean");
  std::vector<double> skewed = Around(100, 20);
  skewed.back() = 400;  // one slow outlier step, as real step times have
  r = Validate(Samples("a", skewed), Samples("b", Around(90, 20)), o);
  EXPECT_EQ(Metric(r, "latency").test, "mannwhitney");
  EXPECT_EQ(Metric(r, "latency").statistic_name, "median");
  EXPECT_EQ(Metric(r, "latency").verdict, Verdict::kImproved);
}

TEST(CompareTest, ThroughputIsHigherIsBetterAndUsesBatchSize) {
  RunSamples a = Samples("a", Around(10e6, 20)), b = Samples("b", Around(8e6, 20));
  a.items_per_sample = b.items_per_sample = 8;
  ValidationResult r = Validate(a, b, Opts({"throughput"}));
  const MetricComparison& m = Metric(r, "throughput");
  EXPECT_EQ(m.unit, "items/s");
  EXPECT_EQ(m.verdict, Verdict::kImproved);
  double sum = 0;  // mean of per-step items/s = 8 items / step time
  for (double ns : a.latency_ns) sum += 8e9 / ns;
  EXPECT_NEAR(m.before, sum / 20, 1e-6);
  b.items_per_sample = 0;
  EXPECT_EQ(Metric(Validate(a, b, Opts({"throughput"})), "throughput").verdict, Verdict::kInsufficientData);
}

TEST(CompareTest, DeviceUtilAndQualityWhenMissingOrSingle) {
  RunSamples a = Samples("a", Around(100, 20)), b = Samples("b", Around(100, 20));
  a.device_util_missing = "the trace has no device activity";
  a.quality["accuracy"] = {0.91};
  b.quality["accuracy"] = {0.90};
  ValidationResult r = Validate(a, b, Opts({"device_util"}));
  EXPECT_EQ(Metric(r, "device_util").verdict, Verdict::kInsufficientData);
  EXPECT_NE(Metric(r, "device_util").reason.find("no device activity"), std::string::npos);
  const MetricComparison& q = Metric(r, "quality:accuracy");  // added because both inputs carry it
  EXPECT_EQ(q.verdict, Verdict::kInsufficientData);
  EXPECT_DOUBLE_EQ(q.before, 0.91);
  EXPECT_DOUBLE_EQ(q.after, 0.90);
  a.quality["accuracy"] = {0.91, 0.92, 0.90, 0.91, 0.92};
  b.quality["accuracy"] = {0.81, 0.82, 0.80, 0.81, 0.82};
  EXPECT_EQ(Metric(Validate(a, b, Opts({"accuracy"})), "accuracy").verdict, Verdict::kRegressed);
}

TEST(CompareTest, UnknownMetricsAndTestsAreRejected) {
  EXPECT_TRUE(CheckMetricNames({"latency", "p50", "p99.9", "throughput", "device_util", "quality:bleu"}).ok());
  EXPECT_FALSE(CheckMetricNames({"latncy"}).ok());
  EXPECT_FALSE(CheckMetricNames({"p100"}).ok());
  EXPECT_FALSE(CheckMetricNames({}).ok());
  EXPECT_FALSE(ParseTestKind("ttest").ok());
  EXPECT_EQ(ParseTestKind("mannwhitney").value(), TestKind::kMannWhitney);
}

// Builds ops: `slowed` of `total` ops get 2x slower, the rest unchanged.
std::pair<RunSamples, RunSamples> OpRuns(int total, int slowed) {
  RunSamples a = Samples("a", Around(100, 10)), b = Samples("b", Around(200, 10));
  for (int i = 0; i < total; ++i) {
    std::string name = "op" + std::to_string(i);
    a.op_dur_ns[name] = {10, 10, 10, 10};
    b.op_dur_ns[name] = i < slowed ? std::vector<double>{20, 20, 20, 20} : std::vector<double>{10, 10, 10, 10};
  }
  return {a, b};
}

// 6 of 8 ops slowed = 75%: broad. 5 of 8 = 62.5%: localized.
TEST(CompareTest, BroadSlowdownThresholdBothSides) {
  auto [a, b] = OpRuns(8, 6);
  OpShiftAnalysis s = CompareOps(a, b);
  EXPECT_EQ(s.compared, 8u);
  EXPECT_EQ(s.slowed, 6u);
  EXPECT_DOUBLE_EQ(s.slowed_time_share, 0.75);
  EXPECT_FALSE(s.broad);  // 75% of ops but only 75% < 80% of time
  a.op_dur_ns["op0"] = {100, 100, 100, 100};  // the slowed ops now hold most of the time
  b.op_dur_ns["op0"] = {200, 200, 200, 200};
  s = CompareOps(a, b);
  EXPECT_TRUE(s.broad);
  EXPECT_TRUE(s.same_op_mix);
  auto [c, d] = OpRuns(8, 5);
  c.op_dur_ns["op0"] = {100, 100, 100, 100};
  d.op_dur_ns["op0"] = {200, 200, 200, 200};
  s = CompareOps(c, d);
  EXPECT_GT(s.slowed_time_share, 0.8);
  EXPECT_FALSE(s.broad);  // 5/8 < 75% of ops
  ValidationResult r = Validate(c, d, Opts({"latency"}));
  EXPECT_EQ(r.diagnosis, "localized");
  r = Validate(a, b, Opts({"latency"}));
  EXPECT_EQ(r.diagnosis, "environmental");
}

TEST(CompareTest, NoDiagnosisWithoutRegression) {
  auto [a, b] = OpRuns(8, 8);
  b.latency_ns = a.latency_ns;
  ValidationResult r = Validate(a, b, Opts({"latency"}));
  EXPECT_EQ(Metric(r, "latency").verdict, Verdict::kNoChange);
  EXPECT_TRUE(r.op_shift.broad);
  EXPECT_EQ(r.diagnosis, "");
}

// Several runs a side: the run is the unit. Worked by hand: run means before
// 10, 11, 12 ms and after 8, 9, 10 ms (each run's steps symmetric around its
// mean, so the mean is exact): difference -2 ms, both variances 1, standard
// error sqrt(2/3) = 0.8165, Welch df 4, t = 2.4495; two-sided p = 0.0705
// (Student t, 4 df); 95% half-width 2.776445 * 0.8165 = 2.2670 ms. A step-level
// test over the same 60 steps would call it significant.
// Runs identical on both sides (one file given as three runs) leave the
// between-run spread unmeasured: no verdict, instead of p = 0.
TEST(CompareTest, RunsWithoutSpreadAreNotTested) {
  std::vector<RunSamples> b, a;
  for (int i = 0; i < 3; ++i) {
    b.push_back(Samples("b" + std::to_string(i), Around(10e6, 10, 0.02)));
    a.push_back(Samples("a" + std::to_string(i), Around(8e6, 10, 0.02)));
  }
  const ValidationResult r = Validate(MergeRuns(std::move(b)), MergeRuns(std::move(a)), Opts({"latency"}));
  const MetricComparison& m = Metric(r, "latency");
  EXPECT_EQ(m.verdict, Verdict::kInsufficientData);
  EXPECT_NE(m.reason.find("no between-run spread"), std::string::npos) << m.reason;
}

TEST(CompareTest, SeveralRunsMakeTheRunTheUnit) {
  auto side = [](const char* name, std::vector<double> means) {
    std::vector<RunSamples> runs;
    for (size_t i = 0; i < means.size(); ++i) {
      runs.push_back(Samples(std::string(name) + std::to_string(i + 1), Around(means[i] * 1e6, 10, 0.02)));
    }
    return MergeRuns(std::move(runs));
  };
  RunSamples before = side("b", {10, 11, 12}), after = side("a", {8, 9, 10});
  ASSERT_EQ(before.runs.size(), 3u);
  EXPECT_EQ(before.latency_ns.size(), 30u);
  EXPECT_EQ(before.label, "b1, b2, b3");
  ValidationResult r = Validate(before, after, Opts({"latency"}));
  const MetricComparison& m = Metric(r, "latency");
  EXPECT_EQ(m.statistic_name, "mean of the runs' means");
  EXPECT_EQ(m.n_before, 3u);
  EXPECT_EQ(m.n_after, 3u);
  EXPECT_NEAR(m.before, 11e6, 1);
  EXPECT_NEAR(m.after, 9e6, 1);
  EXPECT_NEAR(m.df, 4, 1e-9);
  EXPECT_NEAR(std::fabs(m.test_statistic), 2.449490, 1e-5);
  EXPECT_NEAR(m.p_value, 0.0705, 5e-4);
  EXPECT_NEAR(m.ci.low, -2e6 - 2.2670e6, 1e3);
  EXPECT_NEAR(m.ci.high, -2e6 + 2.2670e6, 1e3);
  EXPECT_EQ(m.verdict, Verdict::kNoChange);
  EXPECT_NE(r.unit.find("run"), std::string::npos);
  // The same steps pooled as one run per side: significant by steps.
  RunSamples pooled_b = Samples("b", before.latency_ns), pooled_a = Samples("a", after.latency_ns);
  EXPECT_EQ(Metric(Validate(pooled_b, pooled_a, Opts({"latency"})), "latency").verdict, Verdict::kImproved);
  // Two runs a side are too few: insufficient data, and why.
  RunSamples two_b = side("b", {10, 11}), two_a = side("a", {8, 9});
  const ValidationResult few_r = Validate(two_b, two_a, Opts({"latency"}));
  const MetricComparison& few = Metric(few_r, "latency");
  EXPECT_EQ(few.verdict, Verdict::kInsufficientData);
  EXPECT_NE(few.reason.find("at least 3 runs per side, has 2 before and 2 after"), std::string::npos) << few.reason;
  // One run against several: the single run is one unit, so too few as well.
  const ValidationResult one_r = Validate(pooled_b, after, Opts({"latency"}));
  const MetricComparison& one = Metric(one_r, "latency");
  EXPECT_EQ(one.verdict, Verdict::kInsufficientData);
  // A quantile per run needs enough steps in every run.
  const ValidationResult p99_r = Validate(before, after, Opts({"p99"}));
  const MetricComparison& p99 = Metric(p99_r, "p99");
  EXPECT_EQ(p99.verdict, Verdict::kInsufficientData);
  EXPECT_NE(p99.reason.find("a p99 of one run needs 500"), std::string::npos) << p99.reason;
}

}  // namespace
}  // namespace aiprof
