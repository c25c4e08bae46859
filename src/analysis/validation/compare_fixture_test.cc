// Verdicts on real before/after pairs: the torch-cpu traces in
// ../shared/fixtures/torch-cpu (README.md there says what each run shows).
#include <gtest/gtest.h>

#include <algorithm>

#include "src/analysis/validation/compare.h"
#include "src/analysis/validation/trace_samples.h"
#include "src/analysis/validation/validation_test_util.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

RunSamples LoadRuns(const std::string& name, const std::string& unit = "step") {
  std::string path = (testing::TorchCpuFixtures() / name).string();
  StatusOr<std::unique_ptr<Trace>> trace = testing::ImportPath(path);
  EXPECT_TRUE(trace.ok()) << trace.status().message();
  if (!trace.ok()) return {};
  TraceSampleOptions o;
  o.unit = unit;
  StatusOr<RunSamples> s = SamplesFromTrace(**trace, path, o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : RunSamples{};
}

const MetricComparison& FixtureMetric(const ValidationResult& r, const std::string& name) {
  for (const MetricComparison& m : r.metrics) {
    if (m.metric == name) return m;
  }
  ADD_FAILURE() << "no metric " << name;
  static MetricComparison none;
  return none;
}

RunSamples LoadPath(const std::string& path, const TraceSampleOptions& o) {
  StatusOr<std::unique_ptr<Trace>> trace = testing::ImportPath(path);
  EXPECT_TRUE(trace.ok()) << trace.status().message();
  if (!trace.ok()) return {};
  StatusOr<RunSamples> s = SamplesFromTrace(**trace, path, o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : RunSamples{};
}

RunSamples LoadWith(const std::string& name, const TraceSampleOptions& o) {
  return LoadPath((testing::TorchCpuFixtures() / name).string(), o);
}

ValidationResult Compare(const RunSamples& a, const RunSamples& b) { return Validate(a, b, ValidationOptions{}); }

TEST(CompareFixtureTest, StepSamplesMatchTheReadme) {
  // 12 recorded steps; the first (44.8 ms, README) is a warm-up outlier and is
  // left out by default, with a note saying so.
  RunSamples s = LoadRuns("convnet_bs8_contiguous.kineto.json");
  ASSERT_EQ(s.latency_ns.size(), 11u);
  ASSERT_EQ(s.warmup_left_out_ns.size(), 1u);
  EXPECT_NEAR(s.warmup_left_out_ns[0] / 1e6, 44.8, 0.05);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("warm-up"), std::string::npos);
  EXPECT_LT(*std::max_element(s.latency_ns.begin(), s.latency_ns.end()) / 1e6, 44.8);
  TraceSampleOptions keep;
  keep.warmup_steps = 0;
  RunSamples all = LoadWith("convnet_bs8_contiguous.kineto.json", keep);
  ASSERT_EQ(all.latency_ns.size(), 12u);  // --warmup-steps 0 keeps every step
  EXPECT_NEAR(Quantile(all.latency_ns, 0.5) / 1e6, 11.3, 0.05);  // README: median 11.3 ms
  EXPECT_NEAR(*std::max_element(all.latency_ns.begin(), all.latency_ns.end()) / 1e6, 44.8, 0.05);
  EXPECT_TRUE(s.device_util.empty());  // a CPU-only trace
  EXPECT_GT(s.op_dur_ns.at("aten::conv2d").size(), 0u);
  RunSamples fwd = LoadRuns("convnet_bs8_contiguous.kineto.json", "## forward ##");
  EXPECT_EQ(fwd.latency_ns.size(), 12u);
  RunSamples legacy = LoadRuns("convnet_bs8_contiguous.legacy.json");
  EXPECT_EQ(legacy.latency_ns.size(), 11u);  // the same warm-up step left out
}

// The real resnet50 pair (kineto tb_plugin samples): num_workers 0 -> 4. The
// after run's first step (181.6 ms, against 116-164 ms for the others) is
// warm-up; left out, the 28% faster median is a significant improvement.
TEST(CompareFixtureTest, Resnet50NumWorkersIsSignificantOnceWarmupIsLeftOut) {
  std::string dir = std::string(AIPROF_FIXTURES_DIR) + "/kineto/";
  TraceSampleOptions o;
  RunSamples before = LoadPath(dir + "kineto__tb_plugin__samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz", o);
  RunSamples after = LoadPath(dir + "kineto__tb_plugin__samples__resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz", o);
  EXPECT_EQ(before.latency_ns.size(), 6u);  // no warm-up outlier among 174-181 ms steps
  ASSERT_EQ(after.latency_ns.size(), 5u);
  ASSERT_EQ(after.warmup_left_out_ns.size(), 1u);
  EXPECT_NEAR(after.warmup_left_out_ns[0] / 1e6, 181.6, 0.1);
  ValidationResult r = Compare(before, after);
  const MetricComparison& lat = FixtureMetric(r, "latency");
  EXPECT_NEAR(lat.change_rel, -0.28, 0.01);
  EXPECT_EQ(lat.verdict, Verdict::kImproved) << lat.reason;
  EXPECT_LT(lat.p_value, 0.01);
  EXPECT_EQ(FixtureMetric(r, "device_util").n_after, 5u);  // the warm-up step is left out of every per-step metric
  ASSERT_FALSE(r.sample_notes.empty());
  EXPECT_NE(r.sample_notes[0].find("after: left out 1 warm-up step"), std::string::npos) << r.sample_notes[0];
  // With the warm-up step kept (--warmup-steps 0) the same data is not significant.
  o.warmup_steps = 0;
  RunSamples after_all = LoadPath(dir + "kineto__tb_plugin__samples__resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz", o);
  EXPECT_EQ(after_all.latency_ns.size(), 6u);
  EXPECT_EQ(FixtureMetric(Compare(before, after_all), "latency").verdict, Verdict::kNoChange);
}

TEST(CompareFixtureTest, ElementwiseFusedIsASignificantLatencyImprovement) {
  ValidationResult r =
      Compare(LoadRuns("elementwise_bs4_unfused.kineto.json"), LoadRuns("elementwise_bs4_fused.kineto.json"));
  const MetricComparison& lat = FixtureMetric(r, "latency");
  EXPECT_EQ(lat.verdict, Verdict::kImproved) << lat.reason;
  EXPECT_LT(lat.p_value, 1e-4);
  EXPECT_NEAR(lat.change_rel, 130.4 / 159.3 - 1, 0.01);  // README medians: 159.3 -> 130.4 ms
  EXPECT_LT(lat.ci.high, 0);  // the whole interval of the difference is a gain
  EXPECT_EQ(FixtureMetric(r, "p50").verdict, Verdict::kImproved);
  EXPECT_EQ(FixtureMetric(r, "throughput").verdict, Verdict::kImproved);
  EXPECT_EQ(FixtureMetric(r, "p99").verdict, Verdict::kInsufficientData);  // 12 steps are not enough for a p99
  EXPECT_EQ(FixtureMetric(r, "device_util").verdict, Verdict::kInsufficientData);
  EXPECT_EQ(r.overall, Verdict::kImproved);
  EXPECT_EQ(r.diagnosis, "");
  // And the other way round it is a regression, in a few ops (the fused ones), not environmental.
  ValidationResult back =
      Compare(LoadRuns("elementwise_bs4_fused.kineto.json"), LoadRuns("elementwise_bs4_unfused.kineto.json"));
  EXPECT_EQ(FixtureMetric(back, "latency").verdict, Verdict::kRegressed);
  EXPECT_EQ(back.overall, Verdict::kRegressed);
  EXPECT_NE(back.diagnosis, "environmental");
}

TEST(CompareFixtureTest, AATraceAgainstItselfIsNoChange) {
  RunSamples a = LoadRuns("convnet_bs8_contiguous.kineto.json");
  ValidationResult r = Compare(a, a);
  for (const MetricComparison& m : r.metrics) {
    EXPECT_TRUE(m.verdict == Verdict::kNoChange || m.verdict == Verdict::kInsufficientData) << m.metric;
  }
  EXPECT_EQ(FixtureMetric(r, "latency").verdict, Verdict::kNoChange);
  EXPECT_EQ(FixtureMetric(r, "p50").verdict, Verdict::kNoChange);
  EXPECT_EQ(r.overall, Verdict::kNoChange);
}

TEST(CompareFixtureTest, ChannelsLastIsFasterThanContiguous) {
  ValidationResult r =
      Compare(LoadRuns("convnet_bs8_contiguous.kineto.json"), LoadRuns("convnet_bs8_channels_last.kineto.json"));
  const MetricComparison& lat = FixtureMetric(r, "latency");
  EXPECT_EQ(lat.test, "mannwhitney");  // the 44.8 ms outlier step makes the before sample skewed
  EXPECT_EQ(lat.verdict, Verdict::kImproved) << lat.reason;
  EXPECT_NEAR(lat.change_rel, 10.2 / 11.3 - 1, 0.01);  // medians
  EXPECT_EQ(r.overall, Verdict::kImproved);
}

// malloc_noisy: same code, default glibc malloc settings; every op slows.
TEST(CompareFixtureTest, MallocNoisyIsAnEnvironmentalSlowdownSpreadOverAllOps) {
  ValidationResult r = Compare(LoadRuns("convnet_bs8_contiguous.kineto.json"),
                               LoadRuns("convnet_bs8_contiguous_malloc_noisy.kineto.json"));
  EXPECT_EQ(FixtureMetric(r, "latency").verdict, Verdict::kRegressed);
  EXPECT_EQ(r.overall, Verdict::kRegressed);
  EXPECT_TRUE(r.op_shift.broad);
  EXPECT_TRUE(r.op_shift.same_op_mix);
  EXPECT_GE(r.op_shift.slowed, r.op_shift.compared * 9 / 10);  // 25 of 27 by the independent count in docs
  EXPECT_EQ(r.diagnosis, "environmental");
  EXPECT_NE(r.diagnosis_text.find("not in one op"), std::string::npos);
  // A real code change that is slower is not called environmental.
  ValidationResult code =
      Compare(LoadRuns("convnet_bs8_channels_last.kineto.json"), LoadRuns("convnet_bs8_contiguous.kineto.json"));
  EXPECT_EQ(FixtureMetric(code, "latency").verdict, Verdict::kRegressed);
  EXPECT_FALSE(code.op_shift.broad);
  EXPECT_EQ(code.diagnosis, "localized");
}

TEST(CompareFixtureTest, MissingUnitIsAClearError) {
  std::string path = (testing::TorchCpuFixtures() / "convnet_bs8_contiguous.kineto.json").string();
  StatusOr<std::unique_ptr<Trace>> trace = testing::ImportPath(path);
  ASSERT_TRUE(trace.ok());
  TraceSampleOptions o;
  o.unit = "request";
  StatusOr<RunSamples> s = SamplesFromTrace(**trace, path, o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(path), std::string::npos);
  EXPECT_NE(s.status().message().find("request"), std::string::npos);
}

TEST(CompareFixtureTest, SpanNameMatching) {
  EXPECT_TRUE(SpanNameMatchesUnit("request", "request"));
  EXPECT_TRUE(SpanNameMatchesUnit("request#3", "request"));
  EXPECT_TRUE(SpanNameMatchesUnit("request 17", "request"));
  EXPECT_FALSE(SpanNameMatchesUnit("requests", "request"));
  EXPECT_FALSE(SpanNameMatchesUnit("req", "request"));
  EXPECT_FALSE(SpanNameMatchesUnit("x", ""));
}

}  // namespace
}  // namespace aiprof

namespace aiprof {
namespace {

// HTA's mi250_minitoy: ProfilerStep#2 is a 49 us fragment holding nothing
// (the profiler stopped in it); validate's samples leave it out as the
// analysis window does (FindTruncatedSteps) and say so. The old samples
// held both steps (9.288 ms and 0.049 ms).
TEST(CompareFixtureTest, ATruncatedLastStepIsNoSample) {
  TraceSampleOptions o;
  o.unit = "step";
  RunSamples s =
      LoadPath(testing::FixturesDir() +
                   "/kineto/HolisticTraceAnalysis__tests__data__amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz",
               o);
  ASSERT_EQ(s.latency_ns.size(), 1u);
  EXPECT_NEAR(s.latency_ns[0], 9.288e6, 1e3);
  ASSERT_FALSE(s.notes.empty());
  EXPECT_NE(s.notes[0].find("left out 1 truncated last step (ProfilerStep#2 0.05 ms)"), std::string::npos)
      << s.notes[0];
  EXPECT_TRUE(s.warmup_left_out_ns.empty());
}

}  // namespace
}  // namespace aiprof
