// The compute finding's classes on device traces whose kernels no op names:
// a torch.compile region replaying a captured graph (the Flux trial's D3).
#include "src/analysis/attribution/compute_finding.h"

#include <gtest/gtest.h>

#include "src/analysis/attribution/attribution.h"
#include "src/analysis/attribution/op_class.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/window/analysis_window.h"
#include "test/util/hand_made_traces.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportFixture;
using testing::ImportJsonText;

int64_t ComputeClassNs(const ComputeResult& r, OpClass c) {
  for (const ComputeClass& cc : r.classes) {
    if (cc.op_class == c) return cc.ns;
  }
  return 0;
}

// audit2 item 2: one classifier of kernels. xDiT's SageAttention kernels
// were "other" in analyze's kernels section (no sage_ pattern in
// kernel_class.h) while the op classifier called them attention; SGLang's
// KV-cache write was other where vLLM's is attention; SGLang's q/k-norm op
// was a reduction ("norm" of torch.norm). Names from the TraceLens fixtures.
TEST(OpClassTest, KernelsHaveOneClassEverywhere) {
  struct Case {
    const char* name;
    KernelClass kernel;
    OpClass op;
  } cases[] = {
      {"sage_fwd", KernelClass::kAttention, OpClass::kAttention},
      {"sage_quant_kernel", KernelClass::kAttention, OpClass::kAttention},
      {"void (anonymous namespace)::store_kvcache<2048l, 4, false, long>((anonymous namespace)::StoreKVCacheParams)",
       KernelClass::kAttention, OpClass::kAttention},
      {"reshape_and_cache_flash_kernel", KernelClass::kAttention, OpClass::kAttention},
      {"_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib",
       KernelClass::kNorm, OpClass::kNormalisation},
      {"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x256x32_MI16x16x1", KernelClass::kGemm, OpClass::kGemm},
      {"triton_red_fused_add_addmm_mul_native_layer_norm_split_unsqueeze_view_27", KernelClass::kTritonReduction,
       OpClass::kNormalisation},
      {"triton_poi_fused_addmm_gelu_view_26", KernelClass::kTritonPointwise, OpClass::kElementwise},
      {"void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)",
       KernelClass::kElementwise, OpClass::kElementwise},
      {"batched_transpose_32x32_half", KernelClass::kOther, OpClass::kOther},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const KernelClass k = ClassifyKernel(EventKind::kKernel, c.name);
    EXPECT_EQ(k, c.kernel);
    EXPECT_EQ(OpClassOfKernel(k, c.name), c.op);
  }
  EXPECT_EQ(OpClassOfKernel(ClassifyKernel(EventKind::kMemcpy, "Memcpy HtoD (Host -> Device)"), "Memcpy HtoD"),
            OpClass::kDataMovement);
  // Op names: the attention patterns are the kernels' (IsAttentionKernelName).
  EXPECT_EQ(ClassifyOpName("sglang_profiler::utils_apply_qk_norm_487"), OpClass::kNormalisation);  // was reduction
  EXPECT_EQ(ClassifyOpName("sglang_profiler::memory_pool__set_kv_buffer_impl_3"), OpClass::kAttention);
  EXPECT_EQ(ClassifyOpName("sglang::store_cache"), OpClass::kAttention);
  EXPECT_EQ(ClassifyOpName("aten::norm"), OpClass::kReduction);
}

// The attribution tree's device nodes take their class from the kernel
// classifier: on xDiT Flux every sage_fwd / sage_quant_kernel node is
// attention, as analyze's kernels section says.
TEST(OpClassTest, AttributionDeviceNodesUseTheKernelClass) {
  auto t = ImportFixture("tracelens/inference__xdit_flux.1_aiter_sage__profile_trace_rank_0.json.gz");
  ASSERT_NE(t, nullptr);
  AttributionResult r = ComputeAttribution(*t, nullptr);
  const AttributionNodes& n = r.nodes;
  size_t sage = 0;
  for (size_t i = 1; i < n.size(); ++i) {
    if (n.kind[i] != AttributionKind::kDevice) continue;
    const std::string_view name = t->Str(n.name[i]);
    if (name.starts_with("Memcpy") || name.starts_with("Memset")) continue;  // by event kind
    EXPECT_EQ(n.op_class[i], OpClassOfKernel(ClassifyKernel(EventKind::kKernel, name), name)) << name;
    if (name.starts_with("sage_")) {
      ++sage;
      EXPECT_EQ(n.op_class[i], OpClass::kAttention) << name;
    }
  }
  EXPECT_GT(sage, 0u);
}

TEST(OpClassTest, WrappersAndInductorKernelsByWhatTheyDo) {
  EXPECT_EQ(ClassifyOpName("Torch-Compiled Region: 0/0"), OpClass::kOther);  // was elementwise ("le")
  EXPECT_EQ(ClassifyOpName("CompiledFunction"), OpClass::kOther);
  EXPECT_EQ(ClassifyOpName("aten::le"), OpClass::kElementwise);
  EXPECT_EQ(ClassifyOpName("aten::ne_"), OpClass::kElementwise);
  EXPECT_EQ(ClassifyOpName("triton_red_fused__to_copy_add_addmm_div_mean_mul_pow_rsqrt_transpose_31"),
            OpClass::kReduction);  // was GEMM ("addmm")
  EXPECT_EQ(ClassifyOpName("triton_red_fused_add_addmm_mul_native_layer_norm_split_3"), OpClass::kNormalisation);
  EXPECT_EQ(ClassifyOpName("triton_poi_fused_addmm_gelu_view_26"), OpClass::kElementwise);
  EXPECT_EQ(ClassifyOpName("triton_tem_fused_addmm_0"), OpClass::kGemm);
  EXPECT_EQ(ClassifyOpName("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x192x64_MI16x16x1"), OpClass::kGemm);
  EXPECT_EQ(ClassifyOpName("nvjet_tst_128x256_64x4_2x1_v_bz_coopA_NNT"), OpClass::kGemm);
  EXPECT_EQ(ClassifyOpName("sage_fwd"), OpClass::kAttention);
}

// Hand-made (µs): one step [0, 200]. "Torch-Compiled Region: 0/0" [10, 40]
// replays a graph (hipGraphLaunch, one correlation): a Tensile GEMM 60, an
// Inductor pointwise kernel 10, SageAttention 20, and a kernel no pattern
// names 5; then aten::add [50, 60] launches an elementwise kernel 5. Compute
// = 100: GEMM 60, attention 20, elementwise 10 + 5, other 5. The old code
// gave the region's 95 to its own name's class (elementwise: 100%).
TEST(ComputeFindingTest, AGraphReplayedRegionIsClassedByItsKernels) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":200},
    {"ph":"X","cat":"cpu_op","name":"Torch-Compiled Region: 0/0","pid":1,"tid":1,"ts":10,"dur":30},
    {"ph":"X","cat":"cuda_runtime","name":"hipGraphLaunch","pid":1,"tid":1,"ts":20,"dur":5,"args":{"correlation":1}},
    {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":50,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":1,"ts":52,"dur":3,"args":{"correlation":2}},
    {"ph":"X","cat":"kernel","name":"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x192x64","pid":0,"tid":7,"ts":30,"dur":60,"args":{"device":0,"stream":7,"correlation":1}},
    {"ph":"X","cat":"kernel","name":"triton_poi_fused__to_copy_add_cat_div_mean_mul_neg_20","pid":0,"tid":7,"ts":90,"dur":10,"args":{"device":0,"stream":7,"correlation":1}},
    {"ph":"X","cat":"kernel","name":"sage_fwd","pid":0,"tid":7,"ts":100,"dur":20,"args":{"device":0,"stream":7,"correlation":1}},
    {"ph":"X","cat":"kernel","name":"kernel_xyz","pid":0,"tid":7,"ts":120,"dur":5,"args":{"device":0,"stream":7,"correlation":1}},
    {"ph":"X","cat":"kernel","name":"void at::native::vectorized_elementwise_kernel<4, add>","pid":0,"tid":7,"ts":125,"dur":5,"args":{"device":0,"stream":7,"correlation":2}}
  ]})");
  ASSERT_NE(t, nullptr);
  AttributionResult a = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(a.available);
  ASSERT_EQ(a.device_ns, 100'000);
  ComputeResult c = ComputeComputeTime(a, RooflineResult{}, "");
  EXPECT_TRUE(c.device_time);
  EXPECT_EQ(ComputeClassNs(c, OpClass::kGemm), 60'000);
  EXPECT_EQ(ComputeClassNs(c, OpClass::kAttention), 20'000);
  EXPECT_EQ(ComputeClassNs(c, OpClass::kElementwise), 15'000);
  EXPECT_EQ(ComputeClassNs(c, OpClass::kOther), 5'000);
  ASSERT_FALSE(c.classes.empty());
  EXPECT_EQ(c.classes[0].op_class, OpClass::kGemm);
}

// Hand-made, CPU only (µs): one step [0, 1000]; a compiled graph's op
// "CompiledFunction" [100, 900] holds the label "## Call CompiledFxGraph ##"
// [150, 850], which holds aten::mm [200, 600]. By hand: compute is the
// outermost op's 800 (its class: other), and GEMM is not counted again
// beside it; the old code added the mm's 400 as GEMM (classes 1200 in an
// 800 us op: an op -> label -> op chain, as torch's legacy export also
// wrote autograd nodes, counted twice).
TEST(ComputeFindingTest, AnOpUnderALabelUnderAnOpIsCountedOnce) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1000},
    {"ph":"X","cat":"cpu_op","name":"CompiledFunction","pid":1,"tid":1,"ts":100,"dur":800},
    {"ph":"X","cat":"user_annotation","name":"## Call CompiledFxGraph abc ##","pid":1,"tid":1,"ts":150,"dur":700},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":200,"dur":400}
  ]})");
  ASSERT_NE(t, nullptr);
  AttributionResult a = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(a.available);
  ComputeResult c = ComputeComputeTime(a, RooflineResult{}, "");
  EXPECT_FALSE(c.device_time);
  EXPECT_EQ(c.classes_ns, 800'000);
  EXPECT_EQ(ComputeClassNs(c, OpClass::kOther), 800'000);
  EXPECT_EQ(ComputeClassNs(c, OpClass::kGemm), 0);
}

// Hand-made (µs): one step [0, 100]; a backward op [10, 50] launches its
// ReLU kernel (10) and, from a DDP hook inside it, an all-reduce (30).
// Compute = 10 (the all-reduce is communication) and so is its class: the
// old code gave the op's class all 40 (elementwise 400% of compute; the
// MI300 ResNet's "elementwise 17.80 ms per step" of 7.07 ms compute).
TEST(ComputeFindingTest, CollectivesInsideAnOpAreNotItsClass) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: ReluBackward0","pid":1,"tid":1,"ts":10,"dur":40},
    {"ph":"X","cat":"cpu_op","name":"aten::threshold_backward","pid":1,"tid":1,"ts":12,"dur":8},
    {"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":1,"ts":14,"dur":3,"args":{"correlation":1}},
    {"ph":"X","cat":"cpu_op","name":"nccl:all_reduce","pid":1,"tid":1,"ts":25,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":1,"ts":27,"dur":3,"args":{"correlation":2}},
    {"ph":"X","cat":"kernel","name":"void at::native::vectorized_elementwise_kernel<4, threshold>","pid":0,"tid":7,"ts":20,"dur":10,"args":{"device":0,"stream":7,"correlation":1}},
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_Generic_4","pid":0,"tid":8,"ts":35,"dur":30,"args":{"device":0,"stream":8,"correlation":2}}
  ]})");
  ASSERT_NE(t, nullptr);
  AttributionResult a = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(a.available);
  ASSERT_EQ(a.device_ns, 40'000);
  ComputeResult c = ComputeComputeTime(a, RooflineResult{}, "");
  EXPECT_EQ(c.compute_ns, 10'000);
  ASSERT_EQ(c.classes.size(), 1u);
  EXPECT_EQ(c.classes[0].op_class, OpClass::kElementwise);
  EXPECT_EQ(c.classes[0].ns, 10'000);
}

// kDeviceBehindTrace (test/util/hand_made_traces.h, figures by hand there):
// each step launches 15 us of kernels while its host span is 10 us; the step
// time is the 15 us device period. Compute is 15 us per step = 100% of the
// period. The old code bounded it by the host span: 10 us, and the compute
// finding's impact read 10 us of a 15 us step.
TEST(ComputeFindingTest, DeviceBehindIsBoundedByTheDevicePeriod) {
  auto t = ImportJsonText(testing::kDeviceBehindTrace);
  ASSERT_NE(t, nullptr);
  const AnalysisWindow w = ComputeAnalysisWindow(*t);
  ASSERT_TRUE(w.device_behind());
  AttributionResult a = ComputeAttribution(*t, &w);
  ASSERT_TRUE(a.available);
  const ComputeResult c = ComputeComputeTime(a, RooflineResult{}, "", &w);
  EXPECT_TRUE(c.on_device_period);
  EXPECT_NEAR(c.wall_ns, 15'000, 0.5);
  EXPECT_NEAR(c.compute_ns, 15'000, 0.5);
  MetricSet m;
  PublishCompute(*t, a, c, &m);
  EXPECT_NEAR(m.Get("compute_op_ratio")->value, 1.0, 1e-9);
  ASSERT_FALSE(m.Evidence("compute").empty());
  EXPECT_NE(m.Evidence("compute")[0].find("the device's period"), std::string::npos) << m.Evidence("compute")[0];
}

// Hand-made (µs): one step [0, 1000]. "Torch-Compiled Region: 0/0" launches
// an Inductor pointwise kernel (elementwise, compiled) of 300 and a Tensile
// GEMM of 600; aten::copy_ launches a copy kernel of 5 (data movement: 5 of
// 905 = 0.55% of compute, under kComputeClassMinShare). The elementwise
// line's advice does not propose torch.compile, which runs already (the old
// text said "fuse the elementwise chains (torch.compile, ...)"), and the
// class under 1% is counted in one line, where the old code listed the four
// largest and said nothing of the rest.
TEST(ComputeFindingTest, CompiledComputeGetsNoTorchCompileAdviceAndSmallClassesAreCounted) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1000},
    {"ph":"X","cat":"cpu_op","name":"Torch-Compiled Region: 0/0","pid":1,"tid":1,"ts":10,"dur":30},
    {"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":1,"ts":12,"dur":3,"args":{"correlation":1}},
    {"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":1,"ts":20,"dur":3,"args":{"correlation":2}},
    {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":1,"ts":50,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":1,"ts":52,"dur":3,"args":{"correlation":3}},
    {"ph":"X","cat":"kernel","name":"triton_poi_fused_add_mul_0","pid":0,"tid":7,"ts":20,"dur":300,"args":{"device":0,"stream":7,"correlation":1}},
    {"ph":"X","cat":"kernel","name":"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x192x64","pid":0,"tid":7,"ts":320,"dur":600,"args":{"device":0,"stream":7,"correlation":2}},
    {"ph":"X","cat":"kernel","name":"void at::native::direct_copy_kernel_cuda","pid":0,"tid":7,"ts":920,"dur":5,"args":{"device":0,"stream":7,"correlation":3}}
  ]})");
  ASSERT_NE(t, nullptr);
  AttributionResult a = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(a.available);
  ComputeResult c = ComputeComputeTime(a, RooflineResult{}, "");
  ASSERT_EQ(c.classes_ns, 905'000);
  ASSERT_GT(c.compiled_ns, 0);
  EXPECT_EQ(ComputeClassNs(c, OpClass::kDataMovement), 5'000);
  MetricSet m;
  PublishCompute(*t, a, c, &m);
  std::string elementwise, counted;
  for (const std::string& e : m.Evidence("compute")) {
    if (e.rfind("elementwise:", 0) == 0) elementwise = e;
    if (e.find("not listed") != std::string::npos) counted = e;
    EXPECT_NE(e.rfind("data movement:", 0), 0u) << e;  // under the floor: not a line of its own
  }
  ASSERT_FALSE(elementwise.empty());
  const std::string advice = elementwise.substr(elementwise.find("faster:"));
  EXPECT_EQ(advice.find("torch.compile"), std::string::npos) << elementwise;
  EXPECT_NE(advice.find("already compiled"), std::string::npos) << elementwise;
  EXPECT_EQ(counted, "1 class under 1.0% of compute each, not listed: 5.00 us per step (0.6% of compute) together");
  // Eager compute keeps the torch.compile advice.
  EXPECT_NE(std::string(ComputeAdvice(OpClass::kElementwise, true, false, false)).find("torch.compile"),
            std::string::npos);
}

TEST(ComputeFindingTest, ClassFiguresSayTheShareOfTimeTheyRestOn) {
  // Hand-made: one step, an elementwise op whose kernel runs 900 us. The
  // roofline rows of the class are given: the class's FLOP/s and data type
  // are those rows' figures, stated only where the rows cover 10% of the
  // class's time (vLLM's elementwise class read "other, 0.0 GFLOP/s" from one
  // aten::sub row of a graph replay), with the share below 90%.
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1000},
    {"ph":"X","cat":"cpu_op","name":"aten::mul","pid":1,"tid":1,"ts":10,"dur":30},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":3,"args":{"correlation":1}},
    {"ph":"X","cat":"kernel","name":"elementwise_kernel","pid":0,"tid":7,"ts":20,"dur":900,"args":{"device":0,"stream":7,"correlation":1}}
  ]})");
  ASSERT_NE(t, nullptr);
  AttributionResult a = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(a.available);
  const auto line = [&](int64_t row_ns) {
    RooflineResult roofline;
    RooflineRow row;
    row.name = "aten::mul";
    row.family = OpFamily::kElementwise;
    row.precision = Precision::kBf16;
    row.time_ns = row_ns;
    row.flops = 1e9;  // 1 GFLOP in row_ns
    roofline.rows.push_back(row);
    ComputeResult c = ComputeComputeTime(a, roofline, "");
    EXPECT_EQ(ComputeClassNs(c, OpClass::kElementwise), 900'000);
    MetricSet m;
    PublishCompute(*t, a, c, &m);
    for (const std::string& e : m.Evidence("compute")) {
      if (e.rfind("elementwise:", 0) == 0) return e;
    }
    return std::string();
  };
  // 45 us of 900 (5%): neither the data type nor the FLOP/s.
  std::string few = line(45'000);
  EXPECT_EQ(few.find("GFLOP/s"), std::string::npos) << few;
  EXPECT_EQ(few.find("bf16"), std::string::npos) << few;
  // 450 us (50%): 1e9 / 450e-6 s = 2222.2 GFLOP/s, with its share.
  std::string half = line(450'000);
  EXPECT_NE(half.find("bf16, 2222.2 GFLOP/s (of the 50.0% of its time with recorded shapes)"), std::string::npos)
      << half;
  // 900 us (all of it): no share said.
  std::string all = line(900'000);
  EXPECT_NE(all.find("bf16, 1111.1 GFLOP/s"), std::string::npos) << all;
  EXPECT_EQ(all.find("of its time with recorded shapes"), std::string::npos) << all;
}

TEST(ComputeFindingTest, AProgramWithoutTorchOpsGetsNoTorchAdvice) {
  // Hand-made: a CUDA program's kernels and runtime calls, no cpu_op (as the
  // CloverLeaf Nsight export, whose evidence read "fuse the elementwise
  // chains (torch.compile, fused optimizers with foreach/fused=True)").
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1000},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":3,"args":{"correlation":1}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":20,"dur":3,"args":{"correlation":2}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":30,"dur":3,"args":{"correlation":3}},
    {"ph":"X","cat":"kernel","name":"vectorized_elementwise_kernel_add","pid":0,"tid":7,"ts":20,"dur":300,"args":{"device":0,"stream":7,"correlation":1}},
    {"ph":"X","cat":"kernel","name":"reduce_kernel_sum","pid":0,"tid":7,"ts":320,"dur":300,"args":{"device":0,"stream":7,"correlation":2}},
    {"ph":"X","cat":"kernel","name":"sgemm_128x64_nn","pid":0,"tid":7,"ts":620,"dur":300,"args":{"device":0,"stream":7,"correlation":3}}
  ]})");
  ASSERT_NE(t, nullptr);
  ASSERT_FALSE(HasTorchOps(*t));
  AttributionResult a = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(a.available);
  ComputeResult c = ComputeComputeTime(a, RooflineResult{}, "");
  MetricSet m;
  PublishCompute(*t, a, c, &m);
  size_t advised = 0;
  for (const std::string& e : m.Evidence("compute")) {
    if (e.find("faster:") == std::string::npos) continue;
    ++advised;
    const std::string advice = e.substr(e.find("faster:"));
    for (const char* torch : {"torch", "autocast", "foreach", "F.scaled", "pin_memory", ".contiguous"}) {
      EXPECT_EQ(advice.find(torch), std::string::npos) << e;
    }
  }
  EXPECT_GE(advised, 3u);
  // Every class has advice of its own without torch, and the torch advice is kept with it.
  for (OpClass k : {OpClass::kConvolution, OpClass::kGemm, OpClass::kAttention, OpClass::kNormalisation,
                    OpClass::kElementwise, OpClass::kReduction, OpClass::kDataMovement}) {
    for (bool device : {true, false}) {
      EXPECT_EQ(std::string(ComputeAdvice(k, device, false, false, false)).find("torch"), std::string::npos);
    }
  }
  EXPECT_NE(std::string(ComputeAdvice(OpClass::kElementwise, true)).find("torch.compile"), std::string::npos);
}

}  // namespace
}  // namespace aiprof
