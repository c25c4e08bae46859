// The compute finding's impact, classes and evidence on real traces and a
// hand-made one (the metrics the shipped rules read: rules/compute.yaml,
// rules/fusion_missing.yaml; the suggestions those rules keep or exclude are
// tested through the diagnosis, src/analysis/diagnosis/
// compute_suggestions_test.cc).
//
// Expected figures come from an independent reading of the raw JSON
// (test/e2e/compute_graph_replay_test.py computes them live): TraceLens's
// vLLM decode replay (MI300, one hipGraphLaunch replaying 421 kernels) has
// 434 device activities of 10,717,708 ns in a 19,114,059 ns trace; its
// GEMMs (_matmul_ogs*, Tensile Cijk_*) take 8,402,090 ns, all bf16 by their
// names; no convolution. The old code bounded compute by the main thread's
// 2.409 ms span (impact 12.6% of the trace) and left the 421 graph-replayed
// kernels out of every class (GEMM 84% of 329 us).
#include <gtest/gtest.h>

#include <string>

#include "src/analysis/analyze.h"
#include "src/analysis/attribution/attribution.h"
#include "src/analysis/attribution/compute_finding.h"
#include "src/analysis/attribution/op_class.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/window/analysis_window.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportFixture;
using testing::ImportJsonText;

TEST(KernelDataWidthTest, NamesFromTheFixtures) {
  // bf16 / fp16 / fp4 GEMMs and convolutions.
  EXPECT_EQ(KernelDataWidth("_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1"), DataWidth::kReduced);
  EXPECT_EQ(KernelDataWidth("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256_MI16x16x1"), DataWidth::kReduced);
  EXPECT_EQ(KernelDataWidth("Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x128"), DataWidth::kReduced);
  EXPECT_EQ(KernelDataWidth("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64"), DataWidth::kReduced);
  EXPECT_EQ(KernelDataWidth("igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32"), DataWidth::kReduced);
  EXPECT_EQ(KernelDataWidth("void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16>"),
            DataWidth::kReduced);
  // float32 (and TF32) ones.
  EXPECT_EQ(KernelDataWidth("Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1"), DataWidth::kFull);
  EXPECT_EQ(KernelDataWidth("volta_sgemm_64x64_nt"), DataWidth::kFull);
  EXPECT_EQ(KernelDataWidth("void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int)"),
            DataWidth::kFull);
  EXPECT_EQ(KernelDataWidth("volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1"), DataWidth::kFull);
  EXPECT_EQ(KernelDataWidth("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw"),
            DataWidth::kFull);
  // Names that say neither.
  EXPECT_EQ(KernelDataWidth("ampere_gcgemm_64x64_nt"), DataWidth::kUnknown);
  EXPECT_EQ(KernelDataWidth("_ZN2ck16tensor_operation6device37kernel_batched_gemm_xdlops_bwd_weight"),
            DataWidth::kUnknown);
}

TEST(KernelDataWidthTest, InductorKernels) {
  EXPECT_TRUE(IsInductorKernelName("triton_poi_fused__to_copy_1"));
  EXPECT_TRUE(IsInductorKernelName("triton_red_fused__to_copy_add_addmm_div_mean_mul_pow_rsqrt_transpose_31"));
  EXPECT_TRUE(IsInductorKernelName("triton_tem_fused_addmm_0"));
  EXPECT_FALSE(IsInductorKernelName("_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1"));  // user Triton (vLLM)
  EXPECT_FALSE(IsInductorKernelName("triton_"));
  EXPECT_FALSE(IsInductorKernelName("add_kernel"));
}

// Hand-made (µs), no steps: the main thread's span is [0, 20] (a record_function
// label holding a graph launch at [5, 10]); the graph replays a bf16 GEMM of 50
// and an Inductor kernel of 10 at [60, 120], so the trace is 120 long. Compute
// = 60 = 50% of the 120 trace (the base every impact is a share of); the old
// code gave min(60, 20) = 20 = 100% of the main thread's span, and no class
// (the kernels sit under no op). GEMM 50 and elementwise 10 now, all bf16 by
// name, 10 of 60 compiled (the Triton kernel).
TEST(ComputeFindingTest, NoStepsTheDeviceRunsPastTheMainThread) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"execute_32","pid":1,"tid":1,"ts":0,"dur":20},
    {"ph":"X","cat":"cpu_op","name":"aten::slice","pid":1,"tid":1,"ts":1,"dur":2},
    {"ph":"X","cat":"cuda_runtime","name":"hipGraphLaunch","pid":1,"tid":1,"ts":5,"dur":5,"args":{"correlation":1}},
    {"ph":"X","cat":"kernel","name":"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256","pid":0,"tid":7,"ts":60,"dur":50,"args":{"device":0,"stream":7,"correlation":1}},
    {"ph":"X","cat":"kernel","name":"triton_poi_fused__to_copy_1","pid":0,"tid":7,"ts":110,"dur":10,"args":{"device":0,"stream":7,"correlation":1}}
  ]})");
  ASSERT_NE(t, nullptr);
  const AnalysisWindow w = ComputeAnalysisWindow(*t);
  ASSERT_EQ(w.steps, 0u);
  ASSERT_NEAR(w.base_ns, 120'000, 0.5);
  AttributionResult a = ComputeAttribution(*t, &w);
  ASSERT_TRUE(a.available);
  ASSERT_TRUE(a.pseudo_step);
  ASSERT_EQ(a.wall_ns, 20'000);
  const ComputeResult c = ComputeComputeTime(a, RooflineResult{}, "", &w);
  EXPECT_TRUE(c.on_trace_base);
  EXPECT_NEAR(c.wall_ns, 120'000, 0.5);
  EXPECT_NEAR(c.compute_ns, 60'000, 0.5);
  EXPECT_EQ(c.classes_ns, 60'000);
  EXPECT_EQ(c.width_known_ns, 50'000);
  EXPECT_EQ(c.width_reduced_ns, 50'000);
  EXPECT_EQ(c.compiled_ns, 10'000);
  MetricSet m;
  PublishCompute(*t, a, c, &m);
  EXPECT_NEAR(m.Get("compute_op_ratio")->value, 0.5, 1e-9);
  EXPECT_NEAR(m.Get("compute_gemm_ratio")->value, 50.0 / 60.0, 1e-9);
  EXPECT_NEAR(m.Get("compute_elementwise_ratio")->value, 10.0 / 60.0, 1e-9);
  EXPECT_NEAR(m.Get("compute_low_precision_ratio")->value, 1.0, 1e-9);
  EXPECT_NEAR(m.Get("compute_compiled_ratio")->value, 10.0 / 60.0, 1e-9);
  ASSERT_FALSE(m.Evidence("compute").empty());
  EXPECT_NE(m.Evidence("compute")[0].find("of the trace's steady-state time"), std::string::npos)
      << m.Evidence("compute")[0];
  // The GEMM line's advice does not propose bf16 to bf16 GEMMs.
  bool gemm_line = false;
  for (const std::string& line : m.Evidence("compute")) {
    if (line.rfind("GEMM: ", 0) != 0) continue;
    gemm_line = true;
    EXPECT_EQ(line.find("bf16/fp16"), std::string::npos) << line;
    EXPECT_NE(line.find("already 16-bit"), std::string::npos) << line;
  }
  EXPECT_TRUE(gemm_line);
}

// The vLLM decode replay against the independent figures above.
TEST(ComputeFindingTest, GraphReplayedDecodeStepIsAllItsDeviceWork) {
  auto t = ImportFixture("tracelens/inference__vllm_decode_full__graph_execution.json.gz");
  ASSERT_NE(t, nullptr);
  const MetricSet m = ComputeAllMetrics(*t, AnalyzeOptions{});
  ASSERT_TRUE(m.Get("impact_base_ns"));
  ASSERT_NEAR(m.Get("impact_base_ns")->value, 19'114'059, 1'000);  // the whole trace: no start-up
  ASSERT_TRUE(m.Get("compute_op_ns"));
  // Each ns figure is summed from microsecond floats rounded at import: 1 ns per boundary at most.
  EXPECT_NEAR(m.Get("compute_op_ns")->value, 10'717'708, 1'000);
  EXPECT_NEAR(m.Get("compute_op_ratio")->value, 10'717'708.0 / 19'114'059.0, 1e-4);
  EXPECT_NEAR(m.Get("compute_gemm_ratio")->value, 8'402'090.0 / 10'717'708.0, 1e-4);
  EXPECT_EQ(m.Get("compute_conv_ratio")->value, 0);
  EXPECT_EQ(m.Get("compute_low_precision_ratio")->value, 1);
  // Inductor's triton_poi_ kernels (vLLM compiles the model, then captures it): 425,589 ns.
  EXPECT_NEAR(m.Get("compute_compiled_ratio")->value, 425'589.0 / 10'717'708.0, 1e-4);
}

}  // namespace
}  // namespace aiprof
