#include "src/analysis/host_functions/host_regions.h"

#include <gtest/gtest.h>

#include <string>

#include "src/analysis/attribution/attribution.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/window/analysis_window.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

std::unique_ptr<Trace> ImportPair(const std::string& file) {
  return testing::MustImport(std::string(AIPROF_SOURCE_DIR) + "/test/data/pairs/" + file + ".pt.trace.json.gz");
}

HostRegionsResult RegionsOf(const Trace& t) {
  AnalysisWindow w = ComputeAnalysisWindow(t);
  return ComputeHostRegions(t, ComputeAttribution(t, &w));
}

const HostRegion* Find(const Trace& t, const HostRegionsResult& r, std::string_view name) {
  for (const HostRegion& g : r.regions) {
    if (t.Str(g.name) == name) return &g;
  }
  return nullptr;
}

// torch.save of model and optimizer every step in record_function
// ("checkpoint") (test/data/pairs, pairs.yaml). An independent sweep over
// the raw JSON (the region's span minus the union of the main thread's
// cpu_ops inside it, over the 12 ProfilerStep spans) gives 25.62 ms per step
// with no op running, of 25.63 ms, 71.5% of the 35.84 ms mean step: the
// largest region, first. The fix (every 10th step) leaves 1.11 ms per step.
TEST(HostRegionsTest, CheckpointEveryStepIsTheLargestRegion) {
  auto before = ImportPair("checkpoint_every_step_before");
  HostRegionsResult r = RegionsOf(*before);
  ASSERT_TRUE(r.available);
  ASSERT_FALSE(r.regions.empty());
  EXPECT_EQ(before->Str(r.regions[0].name), "checkpoint");
  EXPECT_NEAR(r.regions[0].host_ns_per_step, 25.62e6, 0.02e6);
  EXPECT_NEAR(r.regions[0].total_ns_per_step, 25.63e6, 0.02e6);
  EXPECT_NEAR(r.regions[0].instances_per_step, 1.0, 1e-9);
  EXPECT_NEAR(r.step_ns, 35.84e6, 0.02e6);
  EXPECT_NEAR(r.regions[0].host_ns_per_step / r.step_ns, 0.715, 0.002);
  EXPECT_TRUE(r.regions[0].host_work);

  auto after = ImportPair("checkpoint_every_step_after");
  HostRegionsResult ra = RegionsOf(*after);
  const HostRegion* c = Find(*after, ra, "checkpoint");
  ASSERT_NE(c, nullptr);
  EXPECT_NEAR(c->host_ns_per_step, 1.11e6, 0.02e6);
}

// .tolist() and .item() in record_function("log_metrics"): 22.21 ms per
// step with no op running of 22.40 ms (the raw sweep), the largest region.
TEST(HostRegionsTest, LogMetricsEveryStep) {
  auto t = ImportPair("log_every_step_before");
  HostRegionsResult r = RegionsOf(*t);
  ASSERT_FALSE(r.regions.empty());
  EXPECT_EQ(t->Str(r.regions[0].name), "log_metrics");
  EXPECT_NEAR(r.regions[0].host_ns_per_step, 22.21e6, 0.02e6);
  EXPECT_NEAR(r.regions[0].total_ns_per_step, 22.40e6, 0.02e6);
}

// The DataLoader's span is data loading (the data_loading finding's): no
// region, though the main thread runs no op for 19.17 ms per step in it.
TEST(HostRegionsTest, DataLoaderIsNoRegion) {
  auto t = ImportPair("dataloader_workers_before");
  HostRegionsResult r = RegionsOf(*t);
  ASSERT_TRUE(r.available);
  for (const HostRegion& g : r.regions) {
    EXPECT_EQ(std::string(t->Str(g.name)).find("DataLoader"), std::string::npos) << t->Str(g.name);
  }
  ASSERT_FALSE(r.regions.empty());
  EXPECT_LT(r.regions[0].host_ns_per_step / r.step_ns, 0.01);  // zero_grad and step: well under 1% of the step
}

// The per-sample loop in record_function("postprocess"): 128 rows x
// (select, softmax, topk) per step, so its time is mostly ops: 0.27 ms per
// step with no op running of 1.04 ms (the raw sweep).
TEST(HostRegionsTest, PostprocessLoopCountsItsOps) {
  auto t = ImportPair("per_sample_postprocess_before");
  HostRegionsResult r = RegionsOf(*t);
  const HostRegion* p = Find(*t, r, "postprocess");
  ASSERT_NE(p, nullptr);
  EXPECT_NEAR(p->host_ns_per_step, 0.27e6, 0.01e6);
  EXPECT_NEAR(p->total_ns_per_step, 1.04e6, 0.01e6);
  EXPECT_GE(p->ops_per_step, 3 * 128.0);
  EXPECT_FALSE(p->host_work);  // a quarter of it without ops: mostly ops
}

// "## forward ##" around an eager convnet forward (torch-cpu fixture, the
// legacy export: no nn.Module frames, so the interpreter time between the
// forward's ops is the label's own): 0.58 ms per step without ops of
// 9.96 ms — the model's code, not host work (kHostRegionMinHostShare).
TEST(HostRegionsTest, ForwardLabelIsNotHostWork) {
  auto t = testing::ImportFixture("torch-cpu/convnet_bs8_channels_last.legacy.json");
  ASSERT_NE(t, nullptr);
  HostRegionsResult r = RegionsOf(*t);
  const HostRegion* f = Find(*t, r, "## forward ##");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->host_ns_per_step, 0.58e6, 0.01e6);
  EXPECT_NEAR(f->total_ns_per_step, 9.96e6, 0.02e6);
  EXPECT_FALSE(f->host_work);
}

// Hand-made: a label around the whole loop (record_function("train") with
// profiler.step() inside it), two 200 us steps: each runs aten::mm for
// 60 us and then 140 us of Python the profiler does not record. The label
// holds the steps, not a piece of one: by hand its "time with no op" is
// the steps' untraced time (140 us per step, the attribution's "host time
// outside any recorded op" without the label), no region's work. It was a
// host region of 70% of the step, and the rule said to run "train" every
// N steps.
TEST(HostRegionsTest, RegionAroundTheStepsIsNoRegionOfTheStep) {
  auto t = testing::ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"train","pid":1,"tid":1,"ts":0,"dur":400},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":200},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":60},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":200,"dur":200},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":200,"dur":60}
  ]})");
  ASSERT_NE(t, nullptr);
  HostRegionsResult r = RegionsOf(*t);
  ASSERT_TRUE(r.available);
  EXPECT_NEAR(r.step_ns, 200e3, 1);
  EXPECT_EQ(Find(*t, r, "train"), nullptr);
  MetricSet m;
  PublishHostRegions(*t, r, ComputeAnalysisWindow(*t), &m);
  ASSERT_TRUE(m.Get("host_region_ratio"));
  EXPECT_EQ(m.Get("host_region_ratio")->value, 0);
}

// Hand-made: a region nested in a region of the same name (a decorated
// function calling itself, one label used at two levels). Per 200 us step
// at t: "save" [t+10, t+150) runs aten::add [t+10, t+50) and an inner
// "save" [t+50, t+150), which runs aten::mul [t+50, t+60) and nothing for
// 90 us; aten::mm [t+160, t+190) follows. By hand: outer self 140 - 40 -
// 100 = 0, inner self 100 - 10 = 90, so "save" runs no op for 90 us of its
// 140 us per step (the outer span: the inner lies inside it), 2 ops under
// it; host work (90 >= 70), 45% of the step. Adding the inner node's total
// to the outer's gave 240 us of "save" in a 200 us step and 3 ops, and
// 90 < 120 hid it as host work.
TEST(HostRegionsTest, NestedSameNameRegionCountsItsTimeOnce) {
  std::string e;
  auto ev = [&](const char* cat, const char* name, int ts, int dur) {
    e += std::string(e.empty() ? "" : ",\n") + R"({"ph":"X","cat":")" + cat + R"(","name":")" + name +
         R"(","pid":1,"tid":1,"ts":)" + std::to_string(ts) + R"(,"dur":)" + std::to_string(dur) + "}";
  };
  for (int k = 0; k < 2; ++k) {
    const int t = 200 * k;
    ev("user_annotation", k == 0 ? "ProfilerStep#1" : "ProfilerStep#2", t, 200);
    ev("user_annotation", "save", t + 10, 140);
    ev("cpu_op", "aten::add", t + 10, 40);
    ev("user_annotation", "save", t + 50, 100);
    ev("cpu_op", "aten::mul", t + 50, 10);
    ev("cpu_op", "aten::mm", t + 160, 30);
  }
  auto t = testing::ImportJsonText(R"({"traceEvents":[)" + e + "]}");
  ASSERT_NE(t, nullptr);
  HostRegionsResult r = RegionsOf(*t);
  ASSERT_TRUE(r.available);
  EXPECT_NEAR(r.step_ns, 200e3, 1);
  const HostRegion* g = Find(*t, r, "save");
  ASSERT_NE(g, nullptr);
  EXPECT_NEAR(g->host_ns_per_step, 90e3, 1);
  EXPECT_NEAR(g->total_ns_per_step, 140e3, 1);
  EXPECT_NEAR(g->ops_per_step, 2, 1e-9);
  EXPECT_TRUE(g->host_work);
  MetricSet m;
  PublishHostRegions(*t, r, ComputeAnalysisWindow(*t), &m);
  ASSERT_TRUE(m.Get("host_region_ratio"));
  EXPECT_NEAR(m.Get("host_region_ratio")->value, 0.45, 1e-9);
}

// An SDK recording of a program whose ops are not traced (test/data/sdk/
// fork_run: 127 spans, request / decode / layer-N, 20 ProfilerSteps, no
// cpu_op): every span runs "no op", so "decode" was host work of 56.1% of
// the step and host_region fired at high confidence, telling a model's
// decode span it was Python or file writing. Without ops nothing is
// computed or published (the rule applies only where computed).
TEST(HostRegionsTest, SpansWithoutRecordedOpsAreNotMeasured) {
  auto t = testing::MustImport(std::string(AIPROF_SOURCE_DIR) + "/test/data/sdk/fork_run");
  ASSERT_NE(t, nullptr);
  for (size_t i = 0; i < t->slices.size(); ++i) ASSERT_NE(t->slices.kind[i], EventKind::kCpuOp);
  HostRegionsResult r = RegionsOf(*t);
  EXPECT_FALSE(r.device);
  EXPECT_TRUE(r.no_ops);
  EXPECT_FALSE(r.available);
  MetricSet m;
  PublishHostRegions(*t, r, ComputeAnalysisWindow(*t), &m);
  EXPECT_FALSE(m.Get("host_region_ratio"));
  EXPECT_FALSE(m.UnavailableReason("host_region_ratio").has_value());
}

// A trace with device activity: the host's time without ops is not the
// step's (the device may run meanwhile), so no region is measured.
TEST(HostRegionsTest, DeviceTraceIsNotMeasured) {
  auto t = testing::ImportFixture(
      "kineto/kineto__tb_plugin__samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz");
  ASSERT_NE(t, nullptr);
  HostRegionsResult r = RegionsOf(*t);
  EXPECT_TRUE(r.device);
  EXPECT_FALSE(r.available);
  EXPECT_TRUE(r.regions.empty());
}

// Hand-made, no steps: "save" (300 us, no op in it) then aten::mm (100 us)
// on the main thread, and aten::add (50 us) on a second thread ending at
// 1950 us. By hand: the impact's base is the window, the trace's span
// 0..1950 us, so the region's share is 300 / 1950 = 15.4%; the tree's
// pseudo-step (the main thread's span, 400 us) gave 75% (helper rv's
// finding: the ratio, and so the confidence, on another base than the
// impact).
TEST(HostRegionsTest, PerTraceShareIsOfTheWindowAsTheImpact) {
  auto t = testing::ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"save","pid":1,"tid":1,"ts":0,"dur":300},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":300,"dur":100},
    {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":2,"ts":1900,"dur":50}]})");
  ASSERT_NE(t, nullptr);
  AnalysisWindow w = ComputeAnalysisWindow(*t);
  ASSERT_EQ(w.steps, 0u);
  ASSERT_DOUBLE_EQ(w.base_ns, 1950e3);
  HostRegionsResult r = RegionsOf(*t);
  ASSERT_TRUE(r.available);
  MetricSet m;
  PublishHostRegions(*t, r, w, &m);
  EXPECT_DOUBLE_EQ(m.Get("host_region_ns")->value, 300e3);
  EXPECT_NEAR(m.Get("host_region_ratio")->value, 300.0 / 1950, 1e-9);
}

// Hand-made: per 200 us step the main thread (tid 1) runs aten::mm for
// 60 us and records nothing for 140 us; a second thread (tid 2) runs
// "upload" [t+70, t+170) with aten::add [t+70, t+80) in it. The tree lends
// the main thread's unrecorded time to what the other thread runs then, so
// "upload" holds 90 us per step with no op: the step waited for it, or ran
// untraced Python beside it, which the trace cannot tell apart. The region
// is reported, and its evidence says which thread and what was counted
// (before, it read as if the step's thread ran it).
TEST(HostRegionsTest, RegionOnAnotherThreadSaysSo) {
  std::string e;
  auto ev = [&](const char* cat, const char* name, int tid, int ts, int dur) {
    e += std::string(e.empty() ? "" : ",\n") + R"({"ph":"X","cat":")" + cat + R"(","name":")" + name +
         R"(","pid":1,"tid":)" + std::to_string(tid) + R"(,"ts":)" + std::to_string(ts) + R"(,"dur":)" +
         std::to_string(dur) + "}";
  };
  for (int k = 0; k < 2; ++k) {
    const int t = 200 * k;
    ev("user_annotation", k == 0 ? "ProfilerStep#1" : "ProfilerStep#2", 1, t, 200);
    ev("cpu_op", "aten::mm", 1, t, 60);
    ev("user_annotation", "upload", 2, t + 70, 100);
    ev("cpu_op", "aten::add", 2, t + 70, 10);
  }
  auto t = testing::ImportJsonText(R"({"traceEvents":[)" + e + "]}");
  ASSERT_NE(t, nullptr);
  HostRegionsResult r = RegionsOf(*t);
  ASSERT_TRUE(r.available);
  const HostRegion* g = Find(*t, r, "upload");
  ASSERT_NE(g, nullptr);
  EXPECT_NEAR(g->host_ns_per_step, 90e3, 1);
  EXPECT_TRUE(g->host_work);
  EXPECT_EQ(g->other_thread, "[other thread 2]");
  MetricSet m;
  PublishHostRegions(*t, r, ComputeAnalysisWindow(*t), &m);
  ASSERT_FALSE(m.Evidence("host_region").empty());
  EXPECT_NE(m.Evidence("host_region")[0].find(
                "; runs on other thread 2, counted only while the step's thread recorded nothing"),
            std::string::npos)
      << m.Evidence("host_region")[0];
}

// Hand-made: a CPU step whose main thread runs an op, then waits 120 µs in a
// collective's record_function label (`gloo:all_reduce`, as the gloo ranks
// of HTA's cpu_only fixture record it) with no op inside. The wait is
// communication, not the program's host work: no region, so the host_region
// rule does not blame Python or I/O for it (it did: 60% of the step).
TEST(HostRegionsTest, CollectiveLabelIsNoRegion) {
  std::string e;
  auto ev = [&](const char* cat, const char* name, int ts, int dur) {
    e += std::string(e.empty() ? "" : ",\n") + R"({"ph":"X","cat":")" + cat + R"(","name":")" + name +
         R"(","pid":1,"tid":1,"ts":)" + std::to_string(ts) + R"(,"dur":)" + std::to_string(dur) + "}";
  };
  for (int k = 0; k < 2; ++k) {
    const int t = 200 * k;
    ev("user_annotation", k == 0 ? "ProfilerStep#1" : "ProfilerStep#2", t, 200);
    ev("cpu_op", "aten::mm", t, 60);
    ev("user_annotation", "gloo:all_reduce", t + 70, 120);
  }
  auto t = testing::ImportJsonText(R"({"traceEvents":[)" + e + "]}");
  ASSERT_NE(t, nullptr);
  HostRegionsResult r = RegionsOf(*t);
  ASSERT_TRUE(r.available);
  EXPECT_EQ(Find(*t, r, "gloo:all_reduce"), nullptr);
  MetricSet m;
  PublishHostRegions(*t, r, ComputeAnalysisWindow(*t), &m);
  const MetricValue* ratio = m.Get("host_region_ratio");
  EXPECT_TRUE(ratio == nullptr || ratio->value < 0.05) << (ratio ? ratio->value : -1);
}

}  // namespace
}  // namespace aiprof
