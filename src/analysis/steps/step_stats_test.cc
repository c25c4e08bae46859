#include "src/analysis/steps/step_stats.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "src/analysis/common/trace_index.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/window/analysis_window.h"
#include "test/util/hand_made_traces.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportFixture;
using testing::ImportJsonText;
using testing::kDeviceBehindTrace;

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

// The 2021 kineto sample writes ProfilerStep#N as an "Operator" (a CPU op):
// one per step, so its median elsewhere is 0 and it led every slow step's
// list of ops that differ (found by review). Wrappers are not ops.
TEST(StepStatsTest, SlowStepsDoNotListTheStepItself) {
  auto t = ImportFixture(
      "kineto/kineto__tb_plugin__samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz");
  ASSERT_NE(t, nullptr);
  StepStats s = ComputeStepStats(*t);
  ASSERT_FALSE(s.slowest.empty());
  for (const SlowStep& slow : s.slowest) {
    EXPECT_FALSE(slow.differing_ops.empty());
    for (const StepDiffOp& d : slow.differing_ops)
      EXPECT_FALSE(IsProfilerWrapperName(t->Str(d.name))) << t->Str(d.name);
  }
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

// The legacy autograd profiler's record_function("## step N ##") ranges
// become steps: "## step 2 ##" .. "## step 4 ##" of durations 72705.29699999999,
// 96189.943 and 94643.59799999997 us in the JSON → 72705297, 96189943,
// 94643598 ns; Python statistics.fmean = 87846279.333, pstdev/mean = 0.122087.
TEST(StepStatsTest, LegacyStepAnnotationsAreSteps) {
  auto t = ImportFixture("torch-cpu/resnet18_bs1_autograd_legacy.profiler_legacy.json");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->steps.size(), 3u);
  EXPECT_EQ(t->Str(t->steps.name[0]), "## step 2 ##");
  EXPECT_EQ(t->steps.number[0], 2);
  EXPECT_EQ(t->steps.number[2], 4);
  EXPECT_EQ(t->steps.dur_ns[0], 72705297);
  StepStats s = ComputeStepStats(*t);
  EXPECT_EQ(s.source, "timeline");
  EXPECT_EQ(s.count, 3u);
  EXPECT_NEAR(s.mean_ns, 87846279.33333333, 1e-3);
  EXPECT_NEAR(s.cv, 0.12208698182422476, 1e-9);
  EXPECT_EQ(s.max_ns, 96189943);
}

// Hand-made: annotations "step 1"/"Step 2"; "stepper 3" and "step x" are not
// steps; with a ProfilerStep#N present the annotations are ignored.
TEST(StepStatsTest, HandMadeAnnotationsAndProfilerStepPrecedence) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"step 1","pid":1,"tid":1,"ts":0,"dur":10},
    {"ph":"X","cat":"user_annotation","name":"Step 2","pid":1,"tid":1,"ts":10,"dur":30},
    {"ph":"X","cat":"user_annotation","name":"stepper 3","pid":1,"tid":1,"ts":40,"dur":5},
    {"ph":"X","cat":"user_annotation","name":"step x","pid":1,"tid":1,"ts":50,"dur":5}
  ]})");
  ASSERT_NE(t, nullptr);
  StepStats s = ComputeStepStats(*t);
  ASSERT_EQ(s.count, 2u);
  EXPECT_NEAR(s.mean_ns, 20000, 1e-6);
  EXPECT_EQ(t->steps.number[1], 2);
  auto p = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#7","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","cat":"user_annotation","name":"## step 7 ##","pid":1,"tid":1,"ts":1,"dur":10}
  ]})");
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->steps.size(), 1u);
  EXPECT_EQ(p->Str(p->steps.name[0]), "ProfilerStep#7");
}

// Imports a torch_npu folder holding only the given files, as written.
std::unique_ptr<Trace> ImportNpuFolder(const ::aiprof::testing::TempDir& dir,
                                       const std::vector<std::pair<std::string, std::string>>& files) {
  std::filesystem::create_directories(dir.Path("r_ascend_pt/ASCEND_PROFILER_OUTPUT"));
  for (const auto& [name, text] : files) dir.Write("r_ascend_pt/ASCEND_PROFILER_OUTPUT/" + name, text);
  auto r = testing::ImportPath(dir.Path("r_ascend_pt"));
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : nullptr;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A torch_npu folder without trace_view.json (so no ProfilerStep#N): the
// step comes from step_trace_time.csv. level1/rank0 step 50: Computing
// 8873.756000000001 + Communication(Not Overlapped) 101963.203 + Free
// 25744.050000000003 us = 136581009 ns (Python Decimal, oracle
// ascend_memory_steps_oracle.py; Stage is written rounded: 136581.0).
TEST(StepStatsTest, StepTraceTimeStepsWhenNoTimelineSteps) {
  std::string out = testing::FixturesDir() + "/ascend-pt/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/";
  ::aiprof::testing::TempDir dir;
  auto t = ImportNpuFolder(dir, {{"kernel_details.csv", ReadFile(out + "kernel_details.csv")},
                                 {"step_trace_time.csv", ReadFile(out + "step_trace_time.csv")}});
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->steps.size(), 0u);
  StepStats s = ComputeStepStats(*t);
  EXPECT_EQ(s.source, "step_trace_time.csv");
  ASSERT_EQ(s.count, 1u);
  EXPECT_EQ(s.mean_ns, 136581009);
  ASSERT_EQ(s.breakdown_steps.size(), 1u);
  EXPECT_EQ(s.breakdown_steps[0].number, 50);
  EXPECT_EQ(s.breakdown_steps[0].computing_ns, 8873756);
  EXPECT_TRUE(s.slowest.empty());  // no start times: nothing to index in Trace::steps
  MetricSet m;
  PublishStepStats(*t, s, &m);
  EXPECT_EQ(m.Get("steps")->value, 1);
  EXPECT_EQ(m.Get("step_time_mean_ns")->value, 136581009);
  EXPECT_TRUE(m.UnavailableReason("step_time_excess_ratio").has_value());  // fewer than 3 steps
}

// Hand-made step_trace_time.csv: steps of 10, 10 and 40 ms; step 3 has no
// Free column value, so its Stage (40 ms) is used. Median 10 ms, so step 3
// (≥ 1.5× median) is explained by its breakdown.
TEST(StepStatsTest, HandMadeStepTraceTimeStageFallbackAndEvidence) {
  ::aiprof::testing::TempDir dir;
  auto t = ImportNpuFolder(dir, {{"kernel_details.csv",
                                  "Name,Type,Accelerator Core,Start Time(us),Duration(us)\nMatMul1,MatMul,AI_CORE,1,2\n"},
                                 {"step_trace_time.csv",
                                  "Step,Computing,Communication(Not Overlapped),Free,Stage\n"
                                  "1,6000,3000,1000,10000\n2,5000,4000,1000,10000\n3,30000,9000,N/A,40000\n"}});
  ASSERT_NE(t, nullptr);
  StepStats s = ComputeStepStats(*t);
  ASSERT_EQ(s.count, 3u);
  EXPECT_NEAR(s.mean_ns, 20e6, 1e-6);
  EXPECT_EQ(s.max_ns, 40000000);
  EXPECT_EQ(s.breakdown_steps[2].free_ns, -1);
  MetricSet m;
  PublishStepStats(*t, s, &m);
  EXPECT_NEAR(m.Get("step_time_excess_ratio")->value, 0.5, 1e-12);  // (20 - 10) / 20
  ASSERT_EQ(m.Evidence("step_variance").size(), 1u);
  EXPECT_NE(m.Evidence("step_variance")[0].find("step 3"), std::string::npos) << m.Evidence("step_variance")[0];
}

// Hand-made step_trace_time.csv of 12 steps where most are the slow ones
// (the shape of zero_grad_set_to_none's before run): 5.0, 5.2, 5.6 ms and
// 58..79 ms. By hand: median (62 + 64) / 2 = 63 ms; the fastest quarter's
// (3 steps) median 5.2 ms < 31.5 ms, a fast mode; mean 617.8 / 12 =
// 51.4833 ms; excess 51.4833 - 5.2 = 46.2833 ms, ratio 0.89899. The old
// mean - median read 0. Then 8 steps whose fast quarter is exactly half the
// median (10 of 20 ms): no fast mode, excess max(0, 17.5 - 20) = 0.
TEST(StepStatsTest, HandMadeSlowMajorityIsMeasuredFromTheFastMode) {
  auto publish = [](const std::string& rows, StepStats* s, MetricSet* m) {
    ::aiprof::testing::TempDir dir;
    auto t = ImportNpuFolder(
        dir,
        {{"kernel_details.csv", "Name,Type,Accelerator Core,Start Time(us),Duration(us)\nMatMul1,MatMul,AI_CORE,1,2\n"},
         {"step_trace_time.csv", "Step,Computing,Communication(Not Overlapped),Free,Stage\n" + rows}});
    ASSERT_NE(t, nullptr);
    *s = ComputeStepStats(*t);
    PublishStepStats(*t, *s, m);
    PublishStepImpact(*s, m);
  };
  std::string rows;
  int step = 1;
  for (int us : {58000, 5000, 60000, 62000, 5200, 64000, 66000, 68000, 5600, 70000, 75000, 79000}) {
    rows += std::to_string(step++) + "," + std::to_string(us) + ",0,0," + std::to_string(us) + "\n";
  }
  StepStats s;
  MetricSet m;
  publish(rows, &s, &m);
  ASSERT_EQ(s.count, 12u);
  EXPECT_NEAR(s.p50_ns, 63e6, 1e-3);
  EXPECT_TRUE(s.fast_mode);
  EXPECT_NEAR(s.typical_ns, 5.2e6, 1e-3);
  EXPECT_EQ(m.Get("step_time_fast_mode")->value, 1);
  EXPECT_NEAR(m.Get("step_time_excess_ns")->value, 617.8e6 / 12 - 5.2e6, 1e-3);
  EXPECT_NEAR(m.Get("step_time_excess_ratio")->value, (617.8e6 / 12 - 5.2e6) / (617.8e6 / 12), 1e-12);

  rows.clear();
  step = 1;
  for (int us : {10000, 20000, 20000, 10000, 20000, 20000, 20000, 20000}) {
    rows += std::to_string(step++) + "," + std::to_string(us) + ",0,0," + std::to_string(us) + "\n";
  }
  StepStats even;
  MetricSet m2;
  publish(rows, &even, &m2);
  ASSERT_EQ(even.count, 8u);
  EXPECT_FALSE(even.fast_mode);
  EXPECT_EQ(even.typical_ns, even.p50_ns);
  EXPECT_EQ(m2.Get("step_time_fast_mode")->value, 0);
  EXPECT_EQ(m2.Get("step_time_excess_ns")->value, 0);
}

// kDeviceBehindTrace (test/util/hand_made_traces.h, figures by hand there):
// the step time is the device's 15 us period over 2 periods, and the
// window's impact base is the same (its description says so). The old code
// read the host's 10 us everywhere.
TEST(StepStatsTest, HandMadeDeviceBehindReadsTheDevicePeriod) {
  auto t = ImportJsonText(kDeviceBehindTrace);
  ASSERT_NE(t, nullptr);
  const AnalysisWindow w = ComputeAnalysisWindow(*t);
  EXPECT_EQ(w.steps, 3u);
  EXPECT_EQ(w.step_base, StepTimeBase::kDevicePeriod);
  EXPECT_EQ(w.periods, 2u);
  EXPECT_NEAR(w.base_ns, 15'000, 0.5);
  EXPECT_NEAR(w.host_base_ns, 10'000, 0.5);
  EXPECT_NE(w.Describe().find("0.015 ms: the device's period"), std::string::npos) << w.Describe();
  EXPECT_NE(w.Describe().find("the device's period"), std::string::npos) << w.Describe();
  const StepStats s = ComputeStepStats(*t, &w);
  EXPECT_EQ(s.base, StepTimeBase::kDevicePeriod);
  EXPECT_EQ(s.count, 2u);
  EXPECT_NEAR(s.mean_ns, 15'000, 0.5);
  EXPECT_EQ(s.host_count, 3u);
  EXPECT_NEAR(s.host_mean_ns, 10'000, 0.5);
  EXPECT_EQ(s.period_count, 2u);
  EXPECT_NEAR(s.period_mean_ns, 15'000, 0.5);
  MetricSet m;
  PublishStepStats(*t, s, &m);
  auto value = [&](const char* name) { return m.Get(name) ? m.Get(name)->value : -1.0; };
  EXPECT_EQ(value("step_time_device_period"), 1);
  EXPECT_NEAR(value("step_time_mean_ns"), 15'000, 0.5);
  EXPECT_NEAR(value("step_time_host_mean_ns"), 10'000, 0.5);
  EXPECT_NEAR(value("step_time_device_period_mean_ns"), 15'000, 0.5);
}

// The report's step chart reads every step from here (it ran FindSteps and
// its own median): warm-up included, on the steady steps' base. By hand:
// steps of 50, 10, 10 and 13 ms; the first is warm-up (median of the rest
// 10 ms, MAD 0: over 12 ms), so the steady p50 is 10 ms, while every step's
// median is (10 + 13) / 2 = 11.5 ms and only the 50 ms step is over 1.2 x
// that (13 ms is not: 13.8). On kDeviceBehindTrace every step is on the
// device period: the first has none (-1), the others 15 us; 2 timed steps
// flag none slow.
TEST(StepStatsTest, HandMadeEveryStepCarriesTheChartsMedianAndSlowFlags) {
  auto t = ImportJsonText(R"json({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":50000},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":50000,"dur":10000},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":60000,"dur":10000},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#4","pid":1,"tid":1,"ts":70000,"dur":13000}
  ]})json");
  ASSERT_NE(t, nullptr);
  const AnalysisWindow w = ComputeAnalysisWindow(*t);
  ASSERT_EQ(w.warmup_only(), 1u);
  const StepStats s = ComputeStepStats(*t, &w);
  EXPECT_EQ(s.count, 3u);
  EXPECT_NEAR(s.p50_ns, 10e6, 1e-3);
  ASSERT_EQ(s.every_step.size(), 4u);
  const int64_t want[] = {50'000'000, 10'000'000, 10'000'000, 13'000'000};
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(s.every_step[i].row, i);
    EXPECT_EQ(s.every_step[i].dur_ns, want[i]);
    EXPECT_EQ(s.every_step[i].host_ns, want[i]);
    EXPECT_EQ(s.every_step[i].slow, i == 0) << i;
  }
  EXPECT_NEAR(s.every_step_median_ns, 11.5e6, 1e-3);

  auto behind = ImportJsonText(kDeviceBehindTrace);
  ASSERT_NE(behind, nullptr);
  const AnalysisWindow wb = ComputeAnalysisWindow(*behind);
  const StepStats b = ComputeStepStats(*behind, &wb);
  ASSERT_EQ(b.base, StepTimeBase::kDevicePeriod);
  ASSERT_EQ(b.every_step.size(), 3u);
  EXPECT_EQ(b.every_step[0].dur_ns, -1);
  EXPECT_EQ(b.every_step[1].dur_ns, 15'000);
  EXPECT_EQ(b.every_step[2].dur_ns, 15'000);
  EXPECT_EQ(b.every_step[0].host_ns, 10'000);
  EXPECT_NEAR(b.every_step_median_ns, 15'000, 1e-9);
  for (const StepTime& st : b.every_step) EXPECT_FALSE(st.slow);
}

// Hand-made capture with ops in 1 step in 2 (aiprof trace --torch-every 2):
// 8 steps; the odd ones (10 ms) hold no op, the even ones an aten::mm of
// 8 ms (steps 2, 4, 6, 12 ms each) and 18 ms (step 8, 22 ms). By hand: the
// slowest step is step 8, its aten::mm 18 ms against a median of 8 ms over
// the 4 steps with ops; before, the median was over all 8 steps, half of
// them never recorded: (0 + 8) / 2 = 4 ms.
TEST(StepStatsTest, SampledCaptureComparesWithTheMedianProfiledStep) {
  std::string events;
  int64_t ts = 0;
  for (int n = 1; n <= 8; ++n) {
    const int64_t dur = n % 2 ? 10'000 : n == 8 ? 22'000 : 12'000;
    events += std::string(events.empty() ? "" : ",") + R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#)" +
              std::to_string(n) + R"(","pid":1,"tid":1,"ts":)" + std::to_string(ts) + R"(,"dur":)" +
              std::to_string(dur) + "}";
    if (n % 2 == 0) {
      events += R"(,{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":)" + std::to_string(ts + 1000) +
                R"(,"dur":)" + std::to_string(n == 8 ? 18'000 : 8'000) + "}";
    }
    ts += dur;
  }
  auto t = ImportJsonText(R"({"traceEvents":[)" + events + "]}");
  ASSERT_NE(t, nullptr);
  t->metadata["capture.torch_every"] = "2";
  AnalysisWindow w = ComputeAnalysisWindow(*t);
  StepStats s = ComputeStepStats(*t, &w);
  EXPECT_EQ(s.count, 8u);
  ASSERT_FALSE(s.slowest.empty());
  EXPECT_EQ(s.slowest[0].dur_ns, 22'000'000);
  EXPECT_EQ(s.op_median_steps, 4u);
  ASSERT_EQ(s.slowest[0].differing_ops.size(), 1u);
  EXPECT_EQ(t->Str(s.slowest[0].differing_ops[0].name), "aten::mm");
  EXPECT_EQ(s.slowest[0].differing_ops[0].step_total_ns, 18'000'000);
  EXPECT_DOUBLE_EQ(s.slowest[0].differing_ops[0].median_total_ns, 8e6);
}

}  // namespace
}  // namespace aiprof
