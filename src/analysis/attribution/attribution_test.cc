#include "src/analysis/attribution/attribution.h"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <string>

#include "src/analysis/common/trace_index.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/window/analysis_window.h"
#include "src/model/graph_capture_tracks.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportFixture;
using testing::ImportJsonText;

// Total (host) time per node path, in µs.
std::map<std::string, int64_t> TotalsUs(const Trace& t, const AttributionResult& r) {
  std::map<std::string, int64_t> out;
  for (uint32_t n = 1; n < r.nodes.size(); ++n) out[NodePath(t, r, n)] = r.nodes.total_ns[n] / 1000;
  return out;
}

void ExpectTreeAddsUp(const AttributionResult& r) {
  const AttributionNodes& n = r.nodes;
  std::vector<int64_t> kids(n.size(), 0);
  for (size_t i = 1; i < n.size(); ++i) kids[n.parent[i]] += n.total_ns[i];
  for (size_t i = 0; i < n.size(); ++i) {
    EXPECT_EQ(n.total_ns[i], n.self_ns[i] + kids[i]) << "node " << i;
    EXPECT_GE(n.self_ns[i], 0) << "node " << i;
  }
  EXPECT_EQ(n.total_ns[0], r.wall_ns);
  EXPECT_EQ(n.self_ns[0], 0);
  int64_t by_class = 0;
  for (int64_t c : r.by_class_ns) by_class += c;
  EXPECT_EQ(by_class, r.wall_ns);
  for (const AttributionStep& st : r.per_step) EXPECT_EQ(st.attributed_ns, st.wall_ns);
}

// Hand-made: two steps of 200 µs on the main thread (tid 1) inside the
// profiler's wrapper; a module tree with a kernel launch, a non-module
// Python frame (structure), a sync call, an op crossing the end of step 2,
// and an op on another thread (tid 2) inside a hole of the main thread.
// The tree below is worked out by hand in the comments.
constexpr const char* kHandMade = R"json({"traceEvents":[
 {"ph":"X","cat":"user_annotation","name":"PyTorch Profiler (0)","pid":1,"tid":1,"ts":0,"dur":1000},
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":100,"dur":200},
 {"ph":"X","cat":"python_function","name":"nn.Module: Net_0","pid":1,"tid":1,"ts":110,"dur":150},
 {"ph":"X","cat":"python_function","name":"nn.Module: Conv2d_1","pid":1,"tid":1,"ts":120,"dur":60},
 {"ph":"X","cat":"cpu_op","name":"aten::conv2d","pid":1,"tid":1,"ts":125,"dur":50},
 {"ph":"X","cat":"cpu_op","name":"aten::convolution","pid":1,"tid":1,"ts":130,"dur":40},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":140,"dur":10,"args":{"correlation":1}},
 {"ph":"X","cat":"kernel","name":"implicit_convolve_sgemm","pid":0,"tid":7,"ts":150,"dur":30,"args":{"correlation":1,"device":0,"stream":7}},
 {"ph":"X","cat":"python_function","name":"forward","pid":1,"tid":1,"ts":190,"dur":60},
 {"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":200,"dur":20},
 {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":2,"ts":255,"dur":10},
 {"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":270,"dur":20},
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":300,"dur":200},
 {"ph":"X","cat":"python_function","name":"nn.Module: Net_0","pid":1,"tid":1,"ts":320,"dur":100},
 {"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":330,"dur":50},
 {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":480,"dur":40}
]})json";

TEST(AttributionTest, HandMadeTreeMatchesHandComputation) {
  auto t = ImportJsonText(kHandMade);
  ASSERT_NE(t, nullptr);
  AttributionResult r = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(r.available) << r.problem;
  EXPECT_EQ(r.steps, 2u);
  EXPECT_EQ(r.wall_ns, 400'000);
  ExpectTreeAddsUp(r);
  EXPECT_DOUBLE_EQ(r.Coverage(), 1.0);
  std::map<std::string, int64_t> us = TotalsUs(*t, r);
  // Step 1 [100,300): holes [100,110) [260,270) [290,300); tid 2's aten::mm
  // claims [260,265). Step 2 [300,500): holes [300,320) [420,480); aten::add
  // is cut at 500.
  EXPECT_EQ(us["(host time outside any recorded op)"], 10 + 5 + 10 + 20 + 60);
  EXPECT_EQ(us["Net_0"], 150 + 100);
  EXPECT_EQ(us["Net_0 / Conv2d_1"], 60);
  EXPECT_EQ(us["Net_0 / Conv2d_1 / aten::conv2d"], 50);
  EXPECT_EQ(us["Net_0 / Conv2d_1 / aten::conv2d / aten::convolution"], 40);
  EXPECT_EQ(us["Net_0 / Conv2d_1 / aten::conv2d / aten::convolution / cudaLaunchKernel"], 10);
  // The Python frame "forward" is structure: relu sits under Net_0.
  EXPECT_EQ(us["Net_0 / aten::relu"], 20 + 50);
  EXPECT_EQ(us.count("Net_0 / forward"), 0u);
  EXPECT_EQ(us["cudaDeviceSynchronize"], 20);
  EXPECT_EQ(us["aten::add"], 20);
  EXPECT_EQ(us["[other thread 2]"], 5);
  EXPECT_EQ(us["[other thread 2] / aten::mm"], 5);
  // No wrapper is a node.
  for (const auto& [path, v] : us) {
    EXPECT_EQ(path.find("ProfilerStep"), std::string::npos) << path;
    EXPECT_EQ(path.find("PyTorch Profiler"), std::string::npos) << path;
  }
  // Self: Net_0 = 250 - 60 - 70 = 120 (its "forward" frame's own 40 included).
  for (uint32_t n = 1; n < r.nodes.size(); ++n) {
    std::string p = NodePath(*t, r, n);
    if (p == "Net_0") {
      EXPECT_EQ(r.nodes.self_ns[n], 120'000);
      EXPECT_EQ(r.nodes.count[n], 2u);
      EXPECT_EQ(r.nodes.device_total_ns[n], 30'000);
    }
    if (p == "Net_0 / Conv2d_1 / aten::conv2d") {
      EXPECT_EQ(r.nodes.op_class[n], OpClass::kConvolution);
    }
    if (r.nodes.kind[n] == AttributionKind::kDevice) {
      EXPECT_EQ(p, "Net_0 / Conv2d_1 / aten::conv2d / aten::convolution / cudaLaunchKernel / implicit_convolve_sgemm");
      EXPECT_EQ(r.nodes.device_self_ns[n], 30'000);
      EXPECT_EQ(r.nodes.total_ns[n], 0);
    }
  }
  EXPECT_EQ(r.device_ns, 30'000);
  // By class: op = conv2d 10 + convolution 30 + relu 70 + mm 5 + add 20;
  // module code = Net_0 120 + Conv2d_1 10; launch 10; sync 20; untraced 105.
  auto cls = [&](TimeClass c) { return r.by_class_ns[static_cast<size_t>(c)] / 1000; };
  EXPECT_EQ(cls(TimeClass::kOp), 135);
  EXPECT_EQ(cls(TimeClass::kModuleCode), 130);
  EXPECT_EQ(cls(TimeClass::kLaunch), 10);
  EXPECT_EQ(cls(TimeClass::kSync), 20);
  EXPECT_EQ(cls(TimeClass::kUntraced), 105);
  ASSERT_EQ(r.per_step.size(), 2u);
  EXPECT_EQ(r.per_step[0].by_class_ns[static_cast<size_t>(TimeClass::kUntraced)], 25'000);
  EXPECT_EQ(r.per_step[1].by_class_ns[static_cast<size_t>(TimeClass::kUntraced)], 80'000);
  OpClassTime oc = TimeByOpClass(r);
  EXPECT_EQ(oc.host_ns[static_cast<size_t>(OpClass::kConvolution)], 50'000);
  EXPECT_EQ(oc.device_ns[static_cast<size_t>(OpClass::kConvolution)], 30'000);
  EXPECT_EQ(oc.host_ns[static_cast<size_t>(OpClass::kElementwise)], 70'000 + 20'000);
  EXPECT_EQ(oc.host_ns[static_cast<size_t>(OpClass::kGemm)], 5'000);
  MetricSet m;
  PublishAttribution(r, &m);
  EXPECT_DOUBLE_EQ(m.Get("attribution_coverage")->value, 1.0);
  EXPECT_DOUBLE_EQ(m.Get("untraced_host_ns")->value, 105'000.0 / 2);
}

// Hand-made, after TraceLens's Flux.1 profile (xDiT): torch opens a
// record_function label inside the short `_record_function_enter_new` call
// that creates it, so the label starts inside that Python frame and outlives
// it. The label's parent is the slice that encloses it (the step), as
// ParentSlices and `aiprof query` say, and it has its whole time (the latest
// opened slice has the time, as `self_ns` in `aiprof query`). The old sweep
// clipped the label to the frame: 5 µs of its 165 µs per step, its aten::mm
// at the root and 195 µs a step untraced (on the Flux.1 trace, 81 of 249 ms
// untraced where 0.38 ms is).
constexpr const char* kLabelOpenedInsideItsEnterCall = R"json({"traceEvents":[
 {"ph":"X","cat":"python_function","name":"<built-in method _record_function_enter_new>","pid":1,"tid":1,"ts":95,"dur":10},
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":100,"dur":200},
 {"ph":"X","cat":"python_function","name":"<built-in method _record_function_enter_new>","pid":1,"tid":1,"ts":110,"dur":10},
 {"ph":"X","cat":"user_annotation","name":"execute_diffusion","pid":1,"tid":1,"ts":115,"dur":165},
 {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":150,"dur":20},
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":300,"dur":200},
 {"ph":"X","cat":"python_function","name":"<built-in method _record_function_enter_new>","pid":1,"tid":1,"ts":310,"dur":10},
 {"ph":"X","cat":"user_annotation","name":"execute_diffusion","pid":1,"tid":1,"ts":315,"dur":165},
 {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":350,"dur":20}
]})json";

TEST(AttributionTest, ALabelOpenedInsideItsEnterCallKeepsItsTime) {
  auto t = ImportJsonText(kLabelOpenedInsideItsEnterCall);
  ASSERT_NE(t, nullptr);
  AttributionResult r = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(r.available) << r.problem;
  EXPECT_EQ(r.steps, 2u);
  EXPECT_EQ(r.wall_ns, 400'000);
  ExpectTreeAddsUp(r);
  std::map<std::string, int64_t> us = TotalsUs(*t, r);
  // Each step: [start, +10) before the frame and the frame's first 5 µs (a
  // Python frame at the root: no node), then the label, [+15, +180) =
  // 165 µs, its aten::mm under it; [+180, +200) after it.
  EXPECT_EQ(us["execute_diffusion"], 2 * 165);
  EXPECT_EQ(us["execute_diffusion / aten::mm"], 2 * 20);
  EXPECT_EQ(us.count("aten::mm"), 0u);
  EXPECT_EQ(us["(host time outside any recorded op)"], 2 * (10 + 5 + 20));
  auto cls = [&](TimeClass c) { return r.by_class_ns[static_cast<size_t>(c)] / 1000; };
  EXPECT_EQ(cls(TimeClass::kModuleCode), 2 * 145);
  EXPECT_EQ(cls(TimeClass::kOp), 2 * 20);
  EXPECT_EQ(cls(TimeClass::kUntraced), 2 * 35);
  for (uint32_t n = 1; n < r.nodes.size(); ++n) {
    if (NodePath(*t, r, n) == "execute_diffusion") {
      EXPECT_EQ(r.nodes.count[n], 2u);
    }
  }
}

// Hand-made, after HTA's trace_compare pair (HolisticTraceAnalysis
// tests/data/trace_compare): a communication thread (tid 2) records only a
// `nccl:all_reduce` label (user_annotation) and a 0 µs op while the main
// thread waits. Its label is a node where it runs: a thread needs no cpu_op
// time to fill the critical thread's holes (docs/analyses.md, Holes). The old
// code took only threads with cpu_op time as helpers: the 60 µs went to
// untraced, and aiprof diff called the thread "added" in the run whose
// thread had a second op.
constexpr const char* kLabelOnlyThread = R"json({"traceEvents":[
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":100,"dur":200},
 {"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":1,"ts":110,"dur":20},
 {"ph":"X","cat":"user_annotation","name":"nccl:all_reduce","pid":1,"tid":2,"ts":150,"dur":60},
 {"ph":"X","cat":"cpu_op","name":"aten::as_strided","pid":1,"tid":2,"ts":220,"dur":0},
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":300,"dur":200},
 {"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":1,"ts":310,"dur":20}
]})json";

TEST(AttributionTest, ThreadWithOnlyLabelsFillsHoles) {
  auto t = ImportJsonText(kLabelOnlyThread);
  ASSERT_NE(t, nullptr);
  AttributionResult r = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(r.available) << r.problem;
  ExpectTreeAddsUp(r);
  std::map<std::string, int64_t> us = TotalsUs(*t, r);
  EXPECT_EQ(us["[other thread 2]"], 60);
  EXPECT_EQ(us["[other thread 2] / nccl:all_reduce"], 60);
  EXPECT_EQ(us["(host time outside any recorded op)"], 400 - 20 - 20 - 60);
  EXPECT_EQ(r.by_class_ns[static_cast<size_t>(TimeClass::kCommunication)], 60'000);
}

// Hand-made, after the gloo jobs (test/data/step_offset_gloo): two ranks,
// each a main thread (tid 1) and a gloo thread (tid 3) that runs an op in
// the main thread's hole. The tree keeps each rank's thread apart; both read
// "[other thread 3]", so two rows of one name held different ranks' time.
// In a trace of several ranks a thread's label names its rank; in a trace
// of one it stays as it was.
std::string RankJson(int rank, int op_us) {
  return R"({"distributedInfo": {"rank": )" + std::to_string(rank) + R"(, "world_size": 2}, "traceEvents":[
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":100,"dur":200},
 {"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":1,"ts":110,"dur":20},
 {"ph":"X","cat":"cpu_op","name":"aten::sum","pid":1,"tid":3,"ts":150,"dur":)" +
         std::to_string(op_us) + R"(}]})";
}

TEST(AttributionTest, OtherThreadsOfSeveralRanksNameTheirRank) {
  auto t = testing::ImportJsonFolder({{"rank0.json", RankJson(0, 30)}, {"rank1.json", RankJson(1, 70)}});
  ASSERT_NE(t, nullptr);
  AttributionResult r = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(r.available) << r.problem;
  std::map<std::string, int64_t> us = TotalsUs(*t, r);
  EXPECT_EQ(us["[other thread 3 (rank 0)]"], 30);
  EXPECT_EQ(us["[other thread 3 (rank 0)] / aten::sum"], 30);
  EXPECT_EQ(us["[other thread 3 (rank 1)]"], 70);
  EXPECT_EQ(us.count("[other thread 3]"), 0u);
  auto one = testing::ImportJsonFolder({{"rank1.json", RankJson(1, 70)}});
  ASSERT_NE(one, nullptr);
  AttributionResult r1 = ComputeAttribution(*one, nullptr);
  std::map<std::string, int64_t> us1 = TotalsUs(*one, r1);
  EXPECT_EQ(us1["[other thread 3]"], 70);
  EXPECT_EQ(us1.count("[other thread 3 (rank 1)]"), 0u);
}

// Hand-made: a module opened before the first step (vLLM's capture_32_FULL,
// a model's forward) runs through both steps; inside it one op per step. An
// instance counts once when it has time in a steady step: the module 1 (it
// counted 0, beside 100% of the steps' time), each op once per step (2).
TEST(AttributionTest, AnInstanceOpenedBeforeTheStepsCountsOnce) {
  auto t = ImportJsonText(R"({"traceEvents":[
   {"ph":"X","cat":"python_function","name":"nn.Module: Outer_0","pid":1,"tid":1,"ts":50,"dur":500},
   {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":100,"dur":200},
   {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":120,"dur":50},
   {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":300,"dur":200},
   {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":320,"dur":50}]})");
  ASSERT_NE(t, nullptr);
  AttributionResult r = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(r.available) << r.problem;
  ExpectTreeAddsUp(r);
  ASSERT_EQ(r.steps, 2u);
  std::map<std::string, uint64_t> count;
  for (uint32_t n = 1; n < r.nodes.size(); ++n) count[NodePath(*t, r, n)] = r.nodes.count[n];
  EXPECT_EQ(count["Outer_0"], 1u);
  EXPECT_EQ(count["Outer_0 / aten::mm"], 2u);
  EXPECT_EQ(TotalsUs(*t, r)["Outer_0"], 400);  // both steps' wall time
}

// Hand-made: three steps on the main thread (tid 1), the first a warm-up;
// on a helper thread (tid 2) an op opened in the warm-up step runs 50 µs into
// step 2 (the first steady step). It counts once, and its per-step entry is
// the step it is counted in: the row's per-step totals add up to its total
// (the entry was dropped, keyed to the warm-up step, review26 #6).
TEST(AttributionTest, AnInstanceOpenedInTheWarmUpHasAPerStepEntry) {
  auto t = ImportJsonText(R"({"traceEvents":[
   {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":100,"dur":200},
   {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":120,"dur":50},
   {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":300,"dur":200},
   {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":320,"dur":50},
   {"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":500,"dur":200},
   {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":520,"dur":50},
   {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":2,"ts":250,"dur":100}]})");
  ASSERT_NE(t, nullptr);
  AnalysisWindow w = ComputeAnalysisWindow(*t, /*warmup_steps=*/1);
  ASSERT_EQ(w.warmup.size(), 1u);
  AttributionResult r = ComputeAttribution(*t, &w, AttributionOptions{.op_shapes = true});
  ASSERT_TRUE(r.available) << r.problem;
  ExpectTreeAddsUp(r);
  ASSERT_EQ(r.steps, 2u);
  const AttributionResult::OpShapes& o = r.op_shapes;
  ASSERT_TRUE(o.computed());
  bool found = false;
  for (uint32_t x = 0; x < o.size(); ++x) {
    int64_t sum = 0;
    for (uint32_t e = o.step_begin[x]; e < o.step_begin[x + 1]; ++e) sum += o.step_ns[e];
    EXPECT_EQ(sum, o.total_ns[x]) << NodePath(*t, r, o.node[x]);
    if (NodePath(*t, r, o.node[x]).ends_with("aten::copy_")) {
      found = true;
      EXPECT_EQ(o.count[x], 1u);
      // Its time in step 2: the main thread's hole [300, 320) before its mm.
      EXPECT_EQ(o.total_ns[x], 20'000);
      ASSERT_EQ(o.step_begin[x + 1] - o.step_begin[x], 1u);
      EXPECT_EQ(o.step[o.step_begin[x]], 0u);  // the first steady step
    }
  }
  EXPECT_TRUE(found);
}

TEST(AttributionTest, NoStepsUsesTheMainThreadSpan) {
  auto t = ImportJsonText(R"({"traceEvents":[
   {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":0,"dur":10},
   {"ph":"X","cat":"cpu_op","name":"aten::mul","pid":1,"tid":1,"ts":30,"dur":10}]})");
  ASSERT_NE(t, nullptr);
  AttributionResult r = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(r.available);
  EXPECT_TRUE(r.pseudo_step);
  EXPECT_EQ(r.wall_ns, 40'000);
  ExpectTreeAddsUp(r);
  EXPECT_EQ(r.by_class_ns[static_cast<size_t>(TimeClass::kUntraced)], 20'000);
}

// Hand-made, with Python stacks (with_stack=1): no steps; on tid 1 every
// cpu_op sits under python_function frames and an annotation (depth 2 and 3,
// 60 us of top-level ops: aten::linear, with aten::addmm inside it); tid 2 has
// one op at depth 0 (30 us). The main thread is the one with the most
// top-level op time, tid 1, whatever the depth: span 0 .. 200 us.
TEST(AttributionTest, NoStepsFindsTheMainThreadUnderPythonFrames) {
  auto t = ImportJsonText(R"({"traceEvents":[
   {"ph":"X","cat":"python_function","name":"run.py(10): main","pid":1,"tid":1,"ts":0,"dur":200},
   {"ph":"X","cat":"user_annotation","name":"execute_1","pid":1,"tid":1,"ts":10,"dur":180},
   {"ph":"X","cat":"python_function","name":"model.py(5): forward","pid":1,"tid":1,"ts":20,"dur":150},
   {"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":30,"dur":60},
   {"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":35,"dur":50},
   {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":2,"ts":300,"dur":30}]})");
  ASSERT_NE(t, nullptr);
  AttributionResult r = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(r.available) << r.problem;
  EXPECT_TRUE(r.pseudo_step);
  ASSERT_EQ(r.per_step.size(), 1u);
  EXPECT_EQ(t->tracks.tid[r.per_step[0].track], 1);
  EXPECT_EQ(r.per_step[0].start_ns, 0);
  EXPECT_EQ(r.wall_ns, 200'000);
  ExpectTreeAddsUp(r);
}

// Hand-made: inside aten::to (100 us), a synchronous copy call (50 us,
// hipMemcpyWithStream as sglang's and Flux's .to() / .cpu()), an async copy
// call (5 us) and a launch (5 us). The synchronous copy waits for the stream:
// synchronisation, not launch overhead. Classes: sync 50, launch 10, op 40.
TEST(AttributionTest, SynchronousCopyCallsAreSynchronisation) {
  auto t = ImportJsonText(R"({"traceEvents":[
   {"ph":"X","cat":"cpu_op","name":"aten::to","pid":1,"tid":1,"ts":0,"dur":100},
   {"ph":"X","cat":"cuda_runtime","name":"hipMemcpyWithStream","pid":1,"tid":1,"ts":10,"dur":50},
   {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":70,"dur":5},
   {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":80,"dur":5}]})");
  ASSERT_NE(t, nullptr);
  AttributionResult r = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(r.available) << r.problem;
  ExpectTreeAddsUp(r);
  EXPECT_EQ(r.by_class_ns[static_cast<size_t>(TimeClass::kSync)], 50'000);
  EXPECT_EQ(r.by_class_ns[static_cast<size_t>(TimeClass::kLaunch)], 10'000);
  EXPECT_EQ(r.by_class_ns[static_cast<size_t>(TimeClass::kOp)], 40'000);
}

// Real fixtures with Python stacks and no steps (independent count over the
// raw JSON: sglang has 3,786 cpu_ops, all on pid/tid 251 under
// python_function frames; vLLM decode 100 on tid 851): attribution is
// available over the main thread's span (the same script: 522.741 ms and
// 2.409 ms, the execute_... annotation on each).
TEST(AttributionTest, PythonStackTracesWithoutStepsAreAttributed) {
  const std::pair<const char*, double> cases[] = {
      {"tracelens/inference__sglang_prefilldecode__sglang_Qwen3-8B_prefilldecode.json.gz", 522.741},
      {"tracelens/inference__vllm_decode_full__graph_execution.json.gz", 2.409}};
  for (const auto& [f, wall_ms] : cases) {
    auto t = ImportFixture(f);
    ASSERT_NE(t, nullptr) << f;
    AnalysisWindow w = ComputeAnalysisWindow(*t);
    AttributionResult r = ComputeAttribution(*t, &w);
    ASSERT_TRUE(r.available) << f << ": " << r.problem;
    EXPECT_TRUE(r.pseudo_step) << f;
    ASSERT_EQ(r.per_step.size(), 1u) << f;
    const int64_t tid = t->tracks.tid[r.per_step[0].track];
    EXPECT_TRUE(tid == 251 || tid == 851) << f << " tid " << tid;
    EXPECT_NEAR(static_cast<double>(r.wall_ns) / 1e6, wall_ms, 0.001) << f;
    ExpectTreeAddsUp(r);
  }
}

TEST(AttributionTest, OpClasses) {
  EXPECT_EQ(ClassifyOpName("aten::conv2d"), OpClass::kConvolution);
  // Rotary embedding is arithmetic; an embedding table's lookup moves data.
  EXPECT_EQ(ClassifyOpName("void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*)"),
            OpClass::kElementwise);
  EXPECT_EQ(ClassifyOpName("sgl_kernel::rotary_embedding"), OpClass::kElementwise);
  EXPECT_EQ(ClassifyOpName("aten::embedding"), OpClass::kDataMovement);
  EXPECT_EQ(ClassifyOpName("aten::addmm"), OpClass::kGemm);
  EXPECT_EQ(ClassifyOpName("aten::mm"), OpClass::kGemm);
  EXPECT_EQ(ClassifyOpName("ampere_sgemm_128x64_nn"), OpClass::kGemm);
  EXPECT_EQ(ClassifyOpName("aten::scaled_dot_product_attention"), OpClass::kAttention);
  EXPECT_EQ(ClassifyOpName("aten::batch_norm"), OpClass::kNormalisation);
  EXPECT_EQ(ClassifyOpName("aten::add_"), OpClass::kElementwise);
  EXPECT_EQ(ClassifyOpName("aten::relu_"), OpClass::kElementwise);
  EXPECT_EQ(ClassifyOpName("aten::sum"), OpClass::kReduction);
  EXPECT_EQ(ClassifyOpName("aten::max_pool2d"), OpClass::kReduction);
  EXPECT_EQ(ClassifyOpName("aten::to"), OpClass::kDataMovement);
  EXPECT_EQ(ClassifyOpName("aten::copy_"), OpClass::kDataMovement);
  EXPECT_EQ(ClassifyOpName("aten::cat"), OpClass::kDataMovement);
  EXPECT_EQ(ClassifyOpName("Optimizer.step#SGD.step"), OpClass::kOther);
  EXPECT_TRUE(IsProfilerWrapperName("ProfilerStep#8"));
  EXPECT_TRUE(IsProfilerWrapperName("PyTorch Profiler (0)"));
  EXPECT_TRUE(IsProfilerWrapperName("record_param_comms"));
  EXPECT_FALSE(IsProfilerWrapperName("aten::add"));
}

// The real ResNet50 sample (num_workers=0): independent figures from a
// Python reading of the JSON (test/e2e/attribution_oracle.py).
TEST(AttributionTest, Resnet50AddsUp) {
  auto t = ImportFixture("kineto/kineto__tb_plugin__samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz");
  ASSERT_NE(t, nullptr);
  AnalysisWindow w = ComputeAnalysisWindow(*t);
  AttributionResult r = ComputeAttribution(*t, &w);
  ASSERT_TRUE(r.available) << r.problem;
  ExpectTreeAddsUp(r);
  EXPECT_DOUBLE_EQ(r.Coverage(), 1.0);
  // By class per step, from src/analysis/testing/oracles/attribution_oracle.py
  // (elementary intervals, brute force) over the same file: op, module code,
  // launch, sync, communication, data loading, start-up, untraced (ns).
  const std::vector<std::pair<int64_t, std::array<int64_t, kTimeClassCount>>> kOracle = {
      {176078000, {69043000, 7542000, 17479000, 90000, 0, 68694000, 0, 13230000}},  // ProfilerStep#5
      {173992000, {66783000, 7604000, 17529000, 93000, 0, 68777000, 0, 13206000}},  // ProfilerStep#6
      {176918000, {66892000, 6426000, 17085000, 93000, 0, 73418000, 0, 13004000}},  // ProfilerStep#7
      {181259000, {68780000, 7056000, 17726000, 92000, 0, 71425000, 0, 16180000}},  // ProfilerStep#8
      {176468000, {68450000, 6487000, 17093000, 91000, 0, 70844000, 0, 13503000}},  // ProfilerStep#9
      {164261000, {65711000, 6308000, 16776000, 92000, 0, 62633000, 0, 12741000}},  // ProfilerStep#10
  };
  ASSERT_EQ(r.per_step.size(), kOracle.size());
  for (size_t k = 0; k < kOracle.size(); ++k) {
    EXPECT_EQ(r.per_step[k].wall_ns, kOracle[k].first) << k;
    for (size_t c = 0; c < kTimeClassCount; ++c) {
      EXPECT_EQ(r.per_step[k].by_class_ns[c], kOracle[k].second[c]) << "step " << k << " class " << TimeClassName(static_cast<TimeClass>(c));
    }
  }
}

// TraceLens's H100 BERT trace writes Input Dims as indented JSON over
// several lines; shape labels are one line (diff printed "[\x0a  [], ..."),
// with no doubled or edge spaces.
TEST(AttributionTest, ShapeLabelsAreOneLine) {
  auto t = ImportFixture("tracelens/h100__gaunernst_bert-small-uncased__1016001.json.gz");
  ASSERT_NE(t, nullptr);
  AnalysisWindow w = ComputeAnalysisWindow(*t);
  AttributionResult r = ComputeAttribution(*t, &w, AttributionOptions{.op_shapes = true});
  ASSERT_TRUE(r.available) << r.problem;
  ASSERT_GT(r.op_shapes.labels.size(), 1u);
  size_t nested = 0;
  for (const std::string& label : r.op_shapes.labels) {
    EXPECT_EQ(label.find_first_of("\n\r\t"), std::string::npos) << label;
    EXPECT_EQ(label.find("  "), std::string::npos) << label;
    EXPECT_EQ(label.find("[ "), std::string::npos) << label;
    EXPECT_TRUE(label.empty() || (label.front() != ' ' && label.back() != ' ')) << label;
    nested += label.starts_with("[[");
  }
  EXPECT_GT(nested, 0u);  // the multi-line lists are there, joined
}

// The opt-in breakdown by input shape: the same tree, and per op node the
// shape rows add up to the node's count, self, total and device time.
TEST(AttributionTest, Resnet50OpShapesAddUpToTheTree) {
  auto t = ImportFixture("kineto/kineto__tb_plugin__samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz");
  ASSERT_NE(t, nullptr);
  AnalysisWindow w = ComputeAnalysisWindow(*t);
  AttributionResult plain = ComputeAttribution(*t, &w);
  AttributionResult r = ComputeAttribution(*t, &w, AttributionOptions{.op_shapes = true});
  ASSERT_TRUE(r.available) << r.problem;
  EXPECT_EQ(plain.nodes.parent, r.nodes.parent);
  EXPECT_EQ(plain.nodes.total_ns, r.nodes.total_ns);
  EXPECT_EQ(plain.nodes.device_total_ns, r.nodes.device_total_ns);
  const AttributionResult::OpShapes& o = r.op_shapes;
  ASSERT_TRUE(o.computed());
  ASSERT_EQ(o.begin.size(), r.nodes.size() + 1);
  size_t split = 0;
  for (uint32_t n = 0; n < r.nodes.size(); ++n) {
    if (r.nodes.kind[n] != AttributionKind::kOp) {
      EXPECT_EQ(o.begin[n], o.begin[n + 1]);
      continue;
    }
    uint64_t c = 0;
    int64_t self = 0, total = 0, dev = 0;
    for (uint32_t x = o.begin[n]; x < o.begin[n + 1]; ++x) {
      EXPECT_EQ(o.node[x], n);
      c += o.count[x];
      self += o.self_ns[x];
      total += o.total_ns[x];
      dev += o.device_ns[x];
    }
    if (o.begin[n + 1] - o.begin[n] > 1) ++split;
    EXPECT_EQ(c, r.nodes.count[n]) << NodePath(*t, r, n);
    EXPECT_EQ(self, r.nodes.self_ns[n]) << NodePath(*t, r, n);
    EXPECT_EQ(total, r.nodes.total_ns[n]) << NodePath(*t, r, n);
    EXPECT_EQ(dev, r.nodes.device_total_ns[n]) << NodePath(*t, r, n);
  }
  // ResNet50's blocks call one op name with several shapes.
  EXPECT_GT(split, 0u);
  EXPECT_GT(o.labels.size(), 10u);
  // Per row, the per-step totals (steady step ordinals, ascending) add up to
  // the row's total; every row has a call site from the ops' "Call stack" arg
  // (cut at the first frame outside torch: never a torch/ frame).
  ASSERT_EQ(o.step_begin.size(), o.size() + 1);
  ASSERT_EQ(o.site.size(), o.size());
  size_t with_site = 0;
  for (uint32_t x = 0; x < o.size(); ++x) {
    int64_t sum = 0;
    for (uint32_t e = o.step_begin[x]; e < o.step_begin[x + 1]; ++e) {
      EXPECT_LT(o.step[e], r.steps);
      if (e > o.step_begin[x]) {
        EXPECT_LT(o.step[e - 1], o.step[e]);
      }
      sum += o.step_ns[e];
    }
    EXPECT_EQ(sum, o.total_ns[x]) << x;
    const std::string& site = o.site_labels[o.site[x]];
    if (!site.empty()) ++with_site;
    EXPECT_EQ(site.find("/torch/"), std::string::npos) << site;
    EXPECT_FALSE(site.starts_with("torch/")) << site;
  }
  EXPECT_GT(with_site, o.size() / 2);
  EXPECT_GT(o.site_labels.size(), 3u);
}

// Hand-made: a graph captured once (module Block_0 over aten::mm, aten::add
// and aten::relu, each launching one kernel, kA kB kC) and replayed three
// times: in step 1 [100, 300) (its kernels run at 400, in step 2's time), in
// step 2 [300, 500) (its kernels run at 600, after the last step), and at
// 700, outside any step. Each launch sits in the step's Engine_0 module.
// Merged with the capture, each replay's kernels belong to the captured ops,
// in the step and under the module where the graph was launched: Block_0
// beside cudaGraphLaunch, twice (the third replay is in no step). The old
// tree joined the captured ops only where their copies, re-timed onto the
// kernels, lay in a step: the first replay's went to step 2 under an
// "[other thread graph capture 1 ...]" node, the second's stayed on
// cudaGraphLaunch.
constexpr const char* kReplayedThrice = R"json({"traceEvents":[
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":100,"dur":200},
 {"ph":"X","cat":"python_function","name":"nn.Module: Engine_0","pid":1,"tid":1,"ts":110,"dur":180},
 {"ph":"X","cat":"cuda_runtime","name":"cudaGraphLaunch","pid":1,"tid":1,"ts":120,"dur":10,"args":{"correlation":7}},
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":300,"dur":200},
 {"ph":"X","cat":"python_function","name":"nn.Module: Engine_0","pid":1,"tid":1,"ts":310,"dur":180},
 {"ph":"X","cat":"cuda_runtime","name":"cudaGraphLaunch","pid":1,"tid":1,"ts":320,"dur":10,"args":{"correlation":8}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaGraphLaunch","pid":1,"tid":1,"ts":700,"dur":10,"args":{"correlation":9}},
 {"ph":"X","cat":"kernel","name":"kA","pid":0,"tid":7,"ts":400,"dur":5,"args":{"correlation":7,"stream":7,"device":0}},
 {"ph":"X","cat":"kernel","name":"kB","pid":0,"tid":7,"ts":406,"dur":5,"args":{"correlation":7,"stream":7,"device":0}},
 {"ph":"X","cat":"kernel","name":"kC","pid":0,"tid":7,"ts":412,"dur":5,"args":{"correlation":7,"stream":7,"device":0}},
 {"ph":"X","cat":"kernel","name":"kA","pid":0,"tid":7,"ts":600,"dur":5,"args":{"correlation":8,"stream":7,"device":0}},
 {"ph":"X","cat":"kernel","name":"kB","pid":0,"tid":7,"ts":606,"dur":5,"args":{"correlation":8,"stream":7,"device":0}},
 {"ph":"X","cat":"kernel","name":"kC","pid":0,"tid":7,"ts":612,"dur":5,"args":{"correlation":8,"stream":7,"device":0}},
 {"ph":"X","cat":"kernel","name":"kA","pid":0,"tid":7,"ts":720,"dur":5,"args":{"correlation":9,"stream":7,"device":0}},
 {"ph":"X","cat":"kernel","name":"kB","pid":0,"tid":7,"ts":726,"dur":5,"args":{"correlation":9,"stream":7,"device":0}},
 {"ph":"X","cat":"kernel","name":"kC","pid":0,"tid":7,"ts":732,"dur":5,"args":{"correlation":9,"stream":7,"device":0}}
]})json";
constexpr const char* kThreeOpCapture = R"json({"traceEvents":[
 {"ph":"X","cat":"cuda_runtime","name":"cudaStreamBeginCapture","pid":1,"tid":1,"ts":0,"dur":1},
 {"ph":"X","cat":"python_function","name":"nn.Module: Block_0","pid":1,"tid":1,"ts":5,"dur":90},
 {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":20},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":2,"args":{"correlation":1,"kernel":"kA"}},
 {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":40,"dur":20},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":42,"dur":2,"args":{"correlation":2,"kernel":"kB"}},
 {"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":70,"dur":20},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":72,"dur":2,"args":{"correlation":3,"kernel":"kC"}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaStreamEndCapture","pid":1,"tid":1,"ts":100,"dur":1}
]})json";

std::unique_ptr<Trace> MergeHandMade(const testing::TempDir& dir) {
  auto r = testing::ImportWithCaptures(dir.Write("replay.json", kReplayedThrice),
                                       {dir.Write("capture.json", kThreeOpCapture)});
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return nullptr;
  EXPECT_EQ((*r)->metadata.at("graph_capture.matched_activities"), "9");
  return std::move(r).value();
}

TEST(AttributionTest, GraphReplaysJoinTheStepAndModuleOfTheirLaunch) {
  testing::TempDir dir;
  auto t = MergeHandMade(dir);
  ASSERT_NE(t, nullptr);
  AttributionResult r = ComputeAttribution(*t, nullptr, AttributionOptions{.op_shapes = true});
  ASSERT_TRUE(r.available) << r.problem;
  ASSERT_EQ(r.steps, 2u);
  ExpectTreeAddsUp(r);
  std::map<std::string, uint32_t> node;
  for (uint32_t n = 1; n < r.nodes.size(); ++n) {
    const std::string p = NodePath(*t, r, n);
    EXPECT_TRUE(node.emplace(p, n).second) << p;
    EXPECT_EQ(p.find("graph replay"), std::string::npos) << p;  // the merge's root is structure
    EXPECT_EQ(p.find("[other thread"), std::string::npos) << p;
  }
  const AttributionNodes& n = r.nodes;
  auto at = [&](const std::string& p) {
    EXPECT_TRUE(node.count(p)) << p;
    return node.count(p) ? node[p] : 0u;
  };
  // The graph launch keeps its host time; its kernels are the captured ops'.
  const uint32_t launch = at("Engine_0 / cudaGraphLaunch");
  EXPECT_EQ(n.total_ns[launch], 20'000);
  EXPECT_EQ(n.device_total_ns[launch], 0);
  const uint32_t block = at("Engine_0 / Block_0");
  EXPECT_EQ(n.kind[block], AttributionKind::kModule);
  EXPECT_EQ(n.count[block], 2u);    // one per replay in a step
  EXPECT_EQ(n.total_ns[block], 0);  // no host time: the copies are not host time
  EXPECT_EQ(n.device_total_ns[block], 30'000);
  const std::pair<const char*, const char*> ops[] = {{"aten::mm", "kA"}, {"aten::add", "kB"}, {"aten::relu", "kC"}};
  for (const auto& [op, kernel] : ops) {
    const std::string p = std::string("Engine_0 / Block_0 / ") + op;
    EXPECT_EQ(n.kind[at(p)], AttributionKind::kOp) << p;
    EXPECT_EQ(n.count[at(p)], 2u) << p;
    EXPECT_EQ(n.device_total_ns[at(p)], 10'000) << p;
    const uint32_t k = at(p + " / cudaLaunchKernel / " + kernel);
    EXPECT_EQ(n.kind[k], AttributionKind::kDevice) << p;
    EXPECT_EQ(n.count[k], 2u) << p;
  }
  EXPECT_EQ(n.device_total_ns[at("Engine_0")], 30'000);
  // The replay outside the steps joins nothing; nothing in a step is left out.
  EXPECT_EQ(r.device_ns, 30'000);
  EXPECT_EQ(r.unlinked_device_ns, 0);
  // The captured ops are the outermost ops: their classes hold the device time.
  OpClassTime oc = TimeByOpClass(r);
  EXPECT_EQ(oc.device_ns[static_cast<size_t>(OpClass::kGemm)], 10'000);
  EXPECT_EQ(oc.device_ns[static_cast<size_t>(OpClass::kElementwise)], 20'000);
  // Op shapes: each captured op's rows add up to its node.
  const AttributionResult::OpShapes& o = r.op_shapes;
  ASSERT_TRUE(o.computed());
  for (const auto& [op, kernel] : ops) {
    const uint32_t x = at(std::string("Engine_0 / Block_0 / ") + op);
    uint64_t c = 0;
    int64_t dev = 0;
    for (uint32_t row = o.begin[x]; row < o.begin[x + 1]; ++row) {
      c += o.count[row];
      dev += o.device_ns[row];
    }
    EXPECT_EQ(c, 2u) << op;
    EXPECT_EQ(dev, 10'000) << op;
  }
}

// The same, step 1 a warm-up: its replay is left out with its launch; its
// kernels, which run in the steady step 2, are device time joined to no node
// (as an eager kernel launched in the warm-up would be).
TEST(AttributionTest, AGraphReplayLaunchedInTheWarmUpIsLeftOut) {
  testing::TempDir dir;
  auto t = MergeHandMade(dir);
  ASSERT_NE(t, nullptr);
  AnalysisWindow w = ComputeAnalysisWindow(*t, /*warmup_steps=*/1);
  ASSERT_EQ(w.warmup.size(), 1u);
  AttributionResult r = ComputeAttribution(*t, &w);
  ASSERT_TRUE(r.available) << r.problem;
  ASSERT_EQ(r.steps, 1u);
  ExpectTreeAddsUp(r);
  for (uint32_t n = 1; n < r.nodes.size(); ++n) {
    const std::string p = NodePath(*t, r, n);
    if (p == "Engine_0 / Block_0" || p == "Engine_0 / Block_0 / aten::mm") {
      EXPECT_EQ(r.nodes.count[n], 1u) << p;
      EXPECT_EQ(r.nodes.device_total_ns[n], p.ends_with("Block_0") ? 15'000 : 5'000) << p;
    }
    if (p == "Engine_0 / cudaGraphLaunch") {
      EXPECT_EQ(r.nodes.device_total_ns[n], 0);
    }
  }
  EXPECT_EQ(r.device_ns, 15'000);
  EXPECT_EQ(r.unlinked_device_ns, 15'000);
}

// The real vLLM decode replay merged with its capture (TraceLens's
// fixtures): its 421 replayed kernels run 6.9 ms after the graph launch,
// past the main thread's 2.41 ms span (the tree's pseudo-step). They join the
// tree under the captured ops, beside hipGraphLaunch, and each kernel's op is
// the one the other analyses find through OpLaunchingCalls (roofline, kernel
// classes): per innermost and per outermost enclosing op of that call, the
// tree's device time equals the kernels' summed time.
TEST(AttributionTest, VllmGraphReplayJoinsTheOpsOpLaunchingCallsNames) {
  const std::string dir = testing::FixturesDir() + "/tracelens/";
  auto merged = testing::ImportWithCaptures(
      dir + "inference__vllm_decode_full__graph_execution.json.gz",
      {dir + "inference__vllm_decode_full__capture_traces__graph_capture_rank_0.1773709742341309550.pt.trace.json.gz"});
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  const Trace& t = **merged;
  AnalysisWindow w = ComputeAnalysisWindow(t);
  AttributionResult r = ComputeAttribution(t, &w, AttributionOptions{.op_shapes = true});
  ASSERT_TRUE(r.available) << r.problem;
  ExpectTreeAddsUp(r);
  const SliceTable& s = t.slices;
  // The trace's side: per device activity, the cpu_ops enclosing its
  // OpLaunchingCalls() call (record_function labels written as cpu_ops,
  // with '#', are modules to the tree, and the merge's "graph replay: ..."
  // root, of category "graph capture", is structure).
  const std::vector<uint32_t> call = OpLaunchingCalls(t), run_call = LaunchingCalls(t);
  const std::vector<uint32_t> parent = ParentSlices(t);
  const StringId replay_root = t.strings.Find(kGraphCaptureFlowCategory).value_or(StringId{});
  ASSERT_FALSE(replay_root.empty());
  auto is_op = [&](uint32_t i) {
    return s.kind[i] == EventKind::kCpuOp && s.category[i] != replay_root &&
           t.Str(s.name[i]).find('#') == std::string::npos;
  };
  std::map<std::string, int64_t> want_inner, want_outer, got_inner, got_outer;
  int64_t replayed = 0, all = 0;
  for (uint32_t k = 0; k < s.size(); ++k) {
    if (!IsDeviceActivity(s.kind[k])) continue;
    all += s.dur_ns[k];
    if (call[k] != run_call[k]) replayed += s.dur_ns[k];
    std::string inner = "(no op)", outer = "(no op)";
    for (uint32_t a = call[k]; a != kNoSlice; a = parent[a]) {
      if (!is_op(a)) continue;
      if (inner == "(no op)") inner = t.Str(s.name[a]);
      outer = t.Str(s.name[a]);
    }
    want_inner[inner] += s.dur_ns[k];
    want_outer[outer] += s.dur_ns[k];
  }
  EXPECT_EQ(replayed, 10'388'482);  // 421 kernels (test/e2e/graph_replay_attribution_test.py counts them from the JSON)
  const AttributionNodes& n = r.nodes;
  for (uint32_t d = 1; d < n.size(); ++d) {
    if (n.kind[d] != AttributionKind::kDevice) continue;
    std::string inner = "(no op)", outer = "(no op)";
    for (uint32_t a = n.parent[d]; a != 0; a = n.parent[a]) {
      if (n.kind[a] != AttributionKind::kOp) continue;
      if (inner == "(no op)") inner = t.Str(n.name[a]);
      outer = t.Str(n.name[a]);
    }
    got_inner[inner] += n.device_self_ns[d];
    got_outer[outer] += n.device_self_ns[d];
    EXPECT_NE(t.Str(n.name[n.parent[d]]), "hipGraphLaunch") << t.Str(n.name[d]);
  }
  EXPECT_EQ(r.device_ns, all);
  EXPECT_EQ(got_inner, want_inner);
  EXPECT_EQ(got_outer, want_outer);
  EXPECT_GT(want_inner.size(), 10u);
  // Op shapes still add up to their nodes' device time.
  const AttributionResult::OpShapes& o = r.op_shapes;
  ASSERT_TRUE(o.computed());
  for (uint32_t x = 0; x < n.size(); ++x) {
    if (n.kind[x] != AttributionKind::kOp) continue;
    int64_t dev = 0;
    for (uint32_t row = o.begin[x]; row < o.begin[x + 1]; ++row) dev += o.device_ns[row];
    EXPECT_EQ(dev, n.device_total_ns[x]) << NodePath(t, r, x);
  }
}

// xDiT Flux (TraceLens's fixtures): four hipGraphLaunch calls, each in the
// step under "Torch-Compiled Region: 0/0", replay 1,566 kernels. Merged
// with the capture, their captured ops sit beside the launches under that
// region: the launches keep their host time and no device time, the
// captured nodes have the replayed kernels' device time and no host time,
// and every host figure of the tree is the unmerged trace's. (Before, the
// replays hung under one "[other thread graph capture N]" node per
// overlap lane of the merge, under the step.)
TEST(AttributionTest, FluxGraphReplaysSitBesideTheirLaunchesWithNoHostTime) {
  const std::string dir = testing::FixturesDir() + "/tracelens/";
  const std::string replay = dir + "inference__xdit_flux.1_aiter_sage__profile_trace_rank_0.json.gz";
  auto before = testing::MustImport(replay);
  ASSERT_NE(before, nullptr);
  auto after = testing::ImportWithCaptures(
      replay, {dir + "inference__xdit_flux.1_aiter_sage__capture_traces__capture_trace_rank_0.json.gz"});
  ASSERT_TRUE(after.ok()) << after.status().message();
  const Trace& t = **after;
  AttributionResult ab = ComputeAttribution(*before, nullptr), aa = ComputeAttribution(t, nullptr);
  ASSERT_TRUE(aa.available) << aa.problem;
  ExpectTreeAddsUp(aa);
  EXPECT_EQ(aa.wall_ns, ab.wall_ns);
  EXPECT_EQ(aa.by_class_ns, ab.by_class_ns);  // the copies fill no host time
  EXPECT_EQ(aa.device_ns, ab.device_ns);      // every kernel joined once
  // The replayed activities' time, from the launch flows.
  const std::vector<uint32_t> call = OpLaunchingCalls(t), run_call = LaunchingCalls(t);
  int64_t replayed = 0;
  for (uint32_t k = 0; k < t.slices.size(); ++k) {
    if (IsDeviceActivity(t.slices.kind[k]) && call[k] != run_call[k]) replayed += t.slices.dur_ns[k];
  }
  EXPECT_GT(replayed, 170'000'000);
  const AttributionNodes& n = aa.nodes;
  std::vector<uint8_t> launch_parent(n.size(), 0), launch(n.size(), 0);
  int64_t launch_host = 0;
  for (uint32_t x = 1; x < n.size(); ++x) {
    if (n.kind[x] != AttributionKind::kRuntime || !IsGraphLaunchName(t.Str(n.name[x]))) continue;
    launch[x] = launch_parent[n.parent[x]] = 1;
    launch_host += n.total_ns[x];
    EXPECT_EQ(n.device_total_ns[x], 0) << NodePath(t, aa, x);
    // Under the labels that enclose it (ParentSlices): the step's
    // `execute_diffusion` and the compiled graph's call, which torch opens
    // inside their `_record_function_enter_new` frames (and the old sweep
    // cut short, so the launch sat under the compiled region directly).
    EXPECT_EQ(NodePath(t, aa, x),
              "execute_diffusion_1_256x256 / OptimizedModule_0 / xFuserFlux1Transformer2DWrapper_0 / "
              "Torch-Compiled Region: 0/0 / ## Call CompiledFxGraph "
              "fjs75i4jmhjizyb52gwp7gln7sgi42fcmh5xdwningderuqcuslv ## / hipGraphLaunch");
  }
  EXPECT_GT(launch_host, 0);
  int64_t beside = 0;
  for (uint32_t x = 1; x < n.size(); ++x) {
    if (launch_parent[n.parent[x]] && !launch[x] && n.total_ns[x] == 0) beside += n.device_total_ns[x];
    EXPECT_EQ(n.kind[x] == AttributionKind::kThread && IsGraphCaptureTrack(t, n.track[x]), false) << NodePath(t, aa, x);
  }
  EXPECT_EQ(beside, replayed);
}

}  // namespace
}  // namespace aiprof
