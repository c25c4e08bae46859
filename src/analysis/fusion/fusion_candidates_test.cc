#include "src/analysis/fusion/fusion_candidates.h"

#include <gtest/gtest.h>

#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/window/analysis_window.h"
#include "test/util/hand_made_traces.h"
#include "test/util/trace_fixtures.h"

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
  EXPECT_EQ(r.covered_ns, 45633000);
  ASSERT_EQ(r.top.size(), 5u);
  EXPECT_EQ(DescribeSequence(*t, r.top[0]),
            "aten::add -> aten::mul -> aten::mul -> aten::mul -> aten::add -> aten::mul -> aten::mul -> aten::tanh");
  EXPECT_EQ(r.top[0].occurrences, 48u);
  EXPECT_EQ(r.top[0].total_ns, 29348000);
  EXPECT_EQ(r.top[0].boundaries_removed, 336u);
  EXPECT_TRUE(r.top[0].has_shapes);
  EXPECT_GT(r.top[0].intermediate_bytes, 0);
  EXPECT_EQ(r.top[1].total_ns, 9303000);
  // The shifted window "aten::mul -> ... -> aten::tanh -> aten::add" (x46)
  // overlaps top[0] in 7 of 8 ops: reported once; a distinct pattern instead.
  EXPECT_EQ(DescribeSequence(*t, r.top[4]), "aten::add -> aten::mul -> aten::mul");
  EXPECT_EQ(r.top[4].occurrences, 96u);
  EXPECT_EQ(r.top[4].total_ns, 12635000);
}

// Oracle: the last op of a step (aten::linear) and the profiler's own
// aten::zeros / aten::empty between ProfilerSteps no longer form one
// sequence.
TEST(FusionCandidatesTest, SequencesStayInsideSteps) {
  auto t = ImportFixture("torch-cpu/convnet_bs8_contiguous.kineto.json");
  ASSERT_NE(t, nullptr);
  FusionResult r = ComputeFusionCandidates(*t);
  EXPECT_EQ(r.op_time_ns, 171274000);
  EXPECT_EQ(r.short_op_ns, 20437000);
  EXPECT_EQ(r.covered_ns, 19863000);
  ASSERT_EQ(r.top.size(), 3u);
  EXPECT_EQ(DescribeSequence(*t, r.top[0]), "aten::relu -> aten::adaptive_avg_pool2d -> aten::flatten -> aten::linear");
  EXPECT_EQ(r.top[0].occurrences, 12u);
  EXPECT_EQ(r.top[0].total_ns, 8556000);
  EXPECT_EQ(DescribeSequence(*t, r.top[1]), "aten::batch_norm -> aten::relu");
  EXPECT_EQ(r.top[1].occurrences, 35u);
}

// Hand-made: A B repeated 3 times inside step 1, then once straddling the
// boundary (A in step 1, B in step 2), then A B in step 2: "A B" counts 4
// (3 + 1), not 5; with the steps removed it counts 5. Without markers the
// A B repetition would itself give periodic steps (src/model/periodic_steps.h),
// so the unmarked trace also holds one long op C that takes most of the busy
// time: no pattern covers half of it, and the trace has no steps.
TEST(FusionCandidatesTest, HandMadeStepBoundaryCutsRuns) {
  const std::string ops = R"(
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":0,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":12,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":24,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":36,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":48,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":60,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":72,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":100,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":112,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":124,"dur":10})";
  auto with_steps = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":90},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":95,"dur":50},)" + ops + "]}");
  auto without = ImportJsonText(R"({"traceEvents":[)" + ops.substr(ops.find('{')) +
                                R"(,{"ph":"X","cat":"cpu_op","name":"C","pid":1,"tid":1,"ts":200,"dur":1000}]})");
  ASSERT_NE(with_steps, nullptr);
  ASSERT_NE(without, nullptr);
  ASSERT_EQ(without->steps.size(), 0u);
  FusionResult a = ComputeFusionCandidates(*with_steps);
  ASSERT_FALSE(a.top.empty());
  EXPECT_EQ(DescribeSequence(*with_steps, a.top[0]), "A -> B");
  EXPECT_EQ(a.top[0].occurrences, 4u);
  FusionResult b = ComputeFusionCandidates(*without);
  ASSERT_FALSE(b.top.empty());
  EXPECT_EQ(b.top[0].occurrences, 5u);
}

TEST(FusionCandidatesTest, SequencesOverlapContainmentAndShift) {
  auto ids = [](std::initializer_list<uint32_t> v) {
    std::vector<StringId> out;
    for (uint32_t x : v) out.push_back(StringId{x});
    return out;
  };
  EXPECT_TRUE(SequencesOverlap(ids({2, 3}), ids({1, 2, 3, 4})));           // inside
  EXPECT_TRUE(SequencesOverlap(ids({1, 2, 3, 4}), ids({2, 3, 4, 5})));     // shifted by 1: 3 of 4 agree
  EXPECT_FALSE(SequencesOverlap(ids({1, 2, 3, 4}), ids({3, 4, 5, 6})));    // shifted by 2: 2 of 4
  EXPECT_FALSE(SequencesOverlap(ids({1, 2, 3, 4}), ids({1, 2, 9, 4})));    // same length, differ inside
  EXPECT_TRUE(SequencesOverlap(ids({1, 2}), ids({2, 7})));                 // length 2: one shared op suffices
  EXPECT_FALSE(SequencesOverlap(ids({1, 2}), ids({3, 4})));
}

TEST(FusionCandidatesTest, FusedElementwiseIsClearlyWeaker) {
  auto t = ImportFixture("torch-cpu/elementwise_bs4_fused.kineto.json");
  auto u = ImportFixture("torch-cpu/elementwise_bs4_unfused.kineto.json");
  ASSERT_NE(t, nullptr);
  ASSERT_NE(u, nullptr);
  FusionResult r = ComputeFusionCandidates(*t);
  EXPECT_EQ(r.op_time_ns, 1560666000);
  EXPECT_EQ(r.short_op_ns, 24805000);
  EXPECT_EQ(r.covered_ns, 6610000);
  ASSERT_FALSE(r.top.empty());
  EXPECT_EQ(DescribeSequence(*t, r.top[0]), "aten::addcmul -> aten::silu -> aten::add -> aten::layer_norm");
  EXPECT_EQ(r.top[0].occurrences, 36u);
  EXPECT_EQ(r.top[0].total_ns, 5758000);
  MetricSet fused, unfused;
  PublishFusionCandidates(*t, r, &fused);
  PublishFusionCandidates(*u, ComputeFusionCandidates(*u), &unfused);
  EXPECT_NEAR(fused.Get("fusion_candidate_ratio")->value, 6610000.0 / 1560666000.0, 1e-12);
  EXPECT_NEAR(unfused.Get("fusion_candidate_ratio")->value, 45633000.0 / 1909424000.0, 1e-12);
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
      {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":652,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":664,"dur":10}]})";
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
  // L = 499 µs is short: one run A B A B L A B (no stretch without ops
  // reaches 500 µs either); "A B" still x3 but now
  // "A B A B" (x1) and "B L"... no window reaches 3 except "A B".
  auto s = ImportJsonText(make(499));
  ASSERT_NE(s, nullptr);
  FusionResult r2 = ComputeFusionCandidates(*s);
  EXPECT_EQ(r2.short_op_ns, 60000 + 499000);
  ASSERT_FALSE(r2.top.empty());
  EXPECT_EQ(r2.top[0].occurrences, 3u);
}

// Hand-made device stream: Inductor's Triton kernels repeat four times
// between two elementwise kernels of eager PyTorch. The Triton pair is the
// compiler's own fusion, no candidate (on xDiT Flux, torch.compile'd, aiprof
// proposed fusing triton_red_fused_* -> triton_per_fused_* and to "wrap the
// model with torch.compile": trial_workloads S1); the eager pair is one.
// ROCm's Tensile GEMM (Cijk_*) and attn_fwd that follow them are library
// math, as cuBLAS kernels are: they end runs too (Flux's candidates then
// held them).
TEST(FusionCandidatesTest, CompilerGeneratedKernelsAreNoCandidates) {
  auto t = ImportJsonText(
      testing::KernelStreamTrace({"triton_red_fused_abs_amax_transpose_view_32", "triton_per_fused_add_mul_8",
                                  "vectorized_elementwise_kernel<mul>", "vectorized_elementwise_kernel<add>",
                                  "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x512_MI16x16x1", "attn_fwd"},
                                 4));
  ASSERT_NE(t, nullptr);
  FusionResult r = ComputeFusionCandidates(*t);
  EXPECT_EQ(r.compiled_kernels, 8u);
  EXPECT_EQ(r.compiled_ns, 40'000);
  ASSERT_EQ(r.top.size(), 1u);
  EXPECT_EQ(DescribeSequence(*t, r.top[0]), "vectorized_elementwise_kernel<mul> -> vectorized_elementwise_kernel<add>");
  MetricSet m;
  PublishFusionCandidates(*t, r, &m);
  bool said = false;
  for (const std::string& line : m.Evidence("fusion_library_internal"))
    said |= line.starts_with("8 kernels (40.00 us)");
  EXPECT_TRUE(said);
}

// Hand-made, CPU: a stretch of 600 µs without ops (≥ kFusionShortCpuOpNs:
// a file read, .tolist()) between A and B of the third pair ends the run
// there, so that pair is no occurrence and its gap no saving; at 499 µs it
// is a gap between two ops like the others (dataloader_workers' 1 ms
// per-sample reads were 209 ms of "gaps" fusion would remove).
TEST(FusionCandidatesTest, HandMadeLongHostWorkEndsRuns) {
  auto make = [](int gap_us) {
    std::string j = R"({"traceEvents":[
      {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":5000},
      {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":10,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":22,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":34,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":46,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":58,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":TS1,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":TS2,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":TS3,"dur":10}]})";
    const int b = 68 + gap_us;
    j.replace(j.find("TS1"), 3, std::to_string(b));
    j.replace(j.find("TS2"), 3, std::to_string(b + 12));
    j.replace(j.find("TS3"), 3, std::to_string(b + 24));
    return j;
  };
  auto t = ImportJsonText(make(600));
  ASSERT_NE(t, nullptr);
  FusionResult r = ComputeFusionCandidates(*t);
  ASSERT_FALSE(r.top.empty());
  EXPECT_EQ(DescribeSequence(*t, r.top[0]), "A -> B");
  EXPECT_EQ(r.top[0].occurrences, 3u);  // two before the stretch, one after
  EXPECT_EQ(r.top[0].gap_ns, 3 * 2000);
  EXPECT_EQ(r.host_work_breaks, 1u);
  auto s = ImportJsonText(make(499));
  ASSERT_NE(s, nullptr);
  FusionResult r2 = ComputeFusionCandidates(*s);
  ASSERT_FALSE(r2.top.empty());
  EXPECT_EQ(r2.top[0].occurrences, 4u);
  EXPECT_EQ(r2.top[0].gap_ns, 3 * 2000 + 499000);
  EXPECT_EQ(r2.host_work_breaks, 0u);
}

// Hand-made, CPU: each of three steps loads its batch in a DataLoader span
// (aten::rand, aten::div: the data pipeline) and then runs the model (mul,
// add). The loader's ops are no candidate (dataloader_workers had "aten::sub
// -> aten::div -> aten::rand -> ..." first, the data_loading finding's time
// counted twice); they stay in the op time.
TEST(FusionCandidatesTest, HandMadeDataLoaderOpsAreNoCandidates) {
  std::string j = R"({"traceEvents":[)";
  for (int k = 0; k < 3; ++k) {
    const int t0 = k * 1000;
    auto at = [&](int dt) { return std::to_string(t0 + dt); };
    j += std::string(k ? "," : "") + R"(
      {"ph":"X","cat":"user_annotation","name":"ProfilerStep#)" +
         std::to_string(k + 1) + R"(","pid":1,"tid":1,"ts":)" + at(0) + R"(,"dur":900},
      {"ph":"X","cat":"user_annotation","name":"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__","pid":1,"tid":1,"ts":)" +
         at(5) + R"(,"dur":40},
      {"ph":"X","cat":"cpu_op","name":"aten::rand","pid":1,"tid":1,"ts":)" +
         at(10) + R"(,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"aten::div","pid":1,"tid":1,"ts":)" +
         at(22) + R"(,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"aten::mul","pid":1,"tid":1,"ts":)" +
         at(50) + R"(,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":)" +
         at(62) + R"(,"dur":10})";
  }
  auto t = ImportJsonText(j + "]}");
  ASSERT_NE(t, nullptr);
  FusionResult r = ComputeFusionCandidates(*t);
  ASSERT_EQ(r.top.size(), 1u);
  EXPECT_EQ(DescribeSequence(*t, r.top[0]), "aten::mul -> aten::add");
  EXPECT_EQ(r.top[0].occurrences, 3u);
  EXPECT_EQ(r.op_time_ns, 12 * 10000);  // the loader's ops are op time still
}

// Hand-made, CPU: the forward's last ops and the backward's first node
// (autograd::engine::evaluate_function: ...) run back to back in every
// step; the switch ends the run, so no candidate spans both passes
// (dataloader_workers had "... aten::cross_entropy_loss -> aten::ones_like
// -> autograd::engine::evaluate_function: NllLossBackward0 -> ...").
TEST(FusionCandidatesTest, HandMadeForwardBackwardSwitchEndsRuns) {
  std::string j = R"({"traceEvents":[)";
  for (int k = 0; k < 3; ++k) {
    auto at = [&](int dt) { return std::to_string(k * 1000 + dt); };
    j += std::string(k ? "," : "") + R"(
      {"ph":"X","cat":"user_annotation","name":"ProfilerStep#)" +
         std::to_string(k + 1) + R"(","pid":1,"tid":1,"ts":)" + at(0) + R"(,"dur":900},
      {"ph":"X","cat":"cpu_op","name":"aten::mul","pid":1,"tid":1,"ts":)" +
         at(10) + R"(,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":)" +
         at(22) + R"(,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: AddBackward0","pid":1,"tid":1,"ts":)" +
         at(34) + R"(,"dur":10},
      {"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: MulBackward0","pid":1,"tid":1,"ts":)" +
         at(46) + R"(,"dur":10})";
  }
  auto t = ImportJsonText(j + "]}");
  ASSERT_NE(t, nullptr);
  FusionResult r = ComputeFusionCandidates(*t);
  ASSERT_EQ(r.top.size(), 2u);
  EXPECT_EQ(DescribeSequence(*t, r.top[0]), "aten::mul -> aten::add");
  EXPECT_EQ(DescribeSequence(*t, r.top[1]),
            "autograd::engine::evaluate_function: AddBackward0 -> autograd::engine::evaluate_function: MulBackward0");
  EXPECT_EQ(r.host_work_breaks, 3u);
}

// Hand-made, CPU: A B C six times back to back. "A B C A B C" (x3) and its
// repeating half "A B C" (x6, too many occurrences to be skipped as a
// window of the longer one) are both reported; fusion_saving_ns counts
// every op and gap once: the longer one's three occurrences (5 gaps of
// 2 µs + 60 µs of ops − the longest 10 µs = 60 µs each) take all 18 ops,
// 180 µs; the two candidates alone say 180 + 6 × 24 = 324 µs.
TEST(FusionCandidatesTest, HandMadeOverlappingCandidatesSaveOnce) {
  std::string j =
      R"({"traceEvents":[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":300})";
  for (int k = 0; k < 18; ++k) {
    j += R"(,{"ph":"X","cat":"cpu_op","name":")" + std::string(1, "ABC"[k % 3]) + R"(","pid":1,"tid":1,"ts":)" +
         std::to_string(k * 12) + R"(,"dur":10})";
  }
  auto t = ImportJsonText(j + "]}");
  ASSERT_NE(t, nullptr);
  AnalysisWindow w;
  w.intervals = {{0, 1'000'000}};
  FusionResult r = ComputeFusionCandidates(*t, &w);
  ASSERT_EQ(r.top.size(), 2u);
  EXPECT_EQ(DescribeSequence(*t, r.top[0]), "A -> B -> C -> A -> B -> C");
  EXPECT_EQ(DescribeSequence(*t, r.top[1]), "A -> B -> C");
  EXPECT_EQ(r.top[0].window_saving_ns, 180'000);
  EXPECT_EQ(r.top[1].window_saving_ns, 144'000);
  ASSERT_EQ(r.window_saving_by_rank.size(), 1u);
  EXPECT_EQ(r.window_saving_by_rank.begin()->second, 180'000);
  MetricSet m;
  PublishFusionImpact(r, w, &m);
  EXPECT_EQ(m.Get("fusion_saving_ns")->value, 180'000);
}

// Hand-made, two ranks without steps (the base is per trace: the window's
// length, one timeline): each rank runs A B three times (10 us ops, 2 us
// gaps) and then C for 300 us (most of the busy time, so no periodic steps
// are inferred), at the same times. By hand, each rank's saving is
// 3 x (2 us gap + 20 us - the longest 10 us) = 36 us; the ranks run side by
// side, so fusing saves the run 36 us (the mean over ranks), not the 72 us
// of both ranks added.
TEST(FusionCandidatesTest, PerTraceSavingIsTheMeanOverRanks) {
  auto rank = [](int r) {
    std::string e;
    for (int k = 0; k < 3; ++k) {
      for (int op = 0; op < 2; ++op) {
        const int ts = 24 * k + 12 * op;
        e += std::string(e.empty() ? "" : ",") + R"({"ph":"X","cat":"cpu_op","name":")" + (op ? "B" : "A") +
             R"(","pid":1,"tid":1,"ts":)" + std::to_string(ts) + R"(,"dur":10})";
      }
    }
    e += R"(,{"ph":"X","cat":"cpu_op","name":"C","pid":1,"tid":1,"ts":80,"dur":300})";
    return R"({"distributedInfo":{"backend":"gloo","rank":)" + std::to_string(r) + R"(},"traceEvents":[)" + e + "]}";
  };
  auto t = testing::ImportJsonFolder({{"rank0.json", rank(0)}, {"rank1.json", rank(1)}});
  ASSERT_NE(t, nullptr);
  AnalysisWindow w = ComputeAnalysisWindow(*t);
  ASSERT_EQ(w.steps, 0u);
  FusionResult r = ComputeFusionCandidates(*t, &w);
  ASSERT_FALSE(r.top.empty());
  EXPECT_EQ(DescribeSequence(*t, r.top[0]), "A -> B");
  EXPECT_EQ(r.top[0].occurrences, 6u);
  MetricSet m;
  PublishFusionImpact(r, w, &m);
  ASSERT_TRUE(m.Get("fusion_saving_ns"));
  EXPECT_DOUBLE_EQ(m.Get("fusion_saving_ns")->value, 36000);
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
