#include "src/analysis/roofline/kernel_class.h"

#include <gtest/gtest.h>

#include <map>

#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportFixture;

TEST(KernelClassTest, InductorPrefixesAndLibraries) {
  EXPECT_EQ(ClassifyKernel(EventKind::kKernel, "triton_poi_fused_add_cos_sin_0"), KernelClass::kTritonPointwise);
  EXPECT_EQ(ClassifyKernel(EventKind::kKernel, "triton_red_fused_add_mean_mul_pow_rsqrt_0"),
            KernelClass::kTritonReduction);
  EXPECT_EQ(ClassifyKernel(EventKind::kKernel, "triton_per_fused__softmax_3"), KernelClass::kTritonPersistentReduction);
  EXPECT_EQ(ClassifyKernel(EventKind::kKernel, "triton_tem_fused_mm_4"), KernelClass::kTritonTemplate);
  EXPECT_EQ(ClassifyKernel(EventKind::kKernel, "triton_for_fused_5"), KernelClass::kTritonForeach);
  EXPECT_EQ(ClassifyKernel(EventKind::kKernel, "triton_my_kernel"), KernelClass::kTritonOther);
  EXPECT_EQ(ClassifyKernel(EventKind::kKernel, "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256"),
            KernelClass::kGemm);
  EXPECT_EQ(ClassifyKernel(EventKind::kKernel, "sm90_xmma_gemm_bf16bf16_bf16f32"), KernelClass::kGemm);
  EXPECT_EQ(ClassifyKernel(EventKind::kKernel, "kernel_unified_attention_2d"), KernelClass::kAttention);
  EXPECT_EQ(ClassifyKernel(EventKind::kKernel, "attn_fwd"), KernelClass::kAttention);
  EXPECT_EQ(ClassifyKernel(EventKind::kMemset, "Memset (Device)"), KernelClass::kMemset);
  EXPECT_EQ(ClassifyKernel(EventKind::kMemcpy, "Memcpy DtoD (Device -> Device)"), KernelClass::kMemcpy);
  EXPECT_EQ(ClassifyKernel(EventKind::kKernel, "void at::native::vectorized_elementwise_kernel<4>"),
            KernelClass::kElementwise);
  EXPECT_STREQ(KernelClassName(KernelClass::kTritonPersistentReduction), "triton_persistent_reduction");
}

// The ResNet50 kineto sample's cuDNN kernels (names from the trace): its
// batch-norm and convolution kernels were "other", 63% of device time.
TEST(KernelClassTest, CudnnConvolutionAndBatchNorm) {
  for (const char* conv :
       {"void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int)",
        "void cudnn::cnn::wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>(int)",
        "void cudnn::winograd_nonfused::winogradWgradData4x4<float, float>(cudnn::winograd_nonfused)",
        "void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int)",
        "scudnn_128x64_relu_interior_nn_v1", "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32",
        // As real traces name them (test/data/resnet50_*: 240 kernels, 90 ms).
        "volta_scudnn_128x128_stridedB_splitK_small_nn_v1", "cudnn_infer_volta_scudnn_128x64_relu_medium_nn_v1",
        "volta_h884cudnn_256x128_ldg8_relu_exp_interior_nhwc_tn_v1",
        "turing_fp16_s1688cudnn_fp16_128x128_ldg8_relu_f2f_exp_small_nhwc_tn_v1"}) {
    EXPECT_EQ(ClassifyKernel(EventKind::kKernel, conv), KernelClass::kConv) << conv;
  }
  EXPECT_EQ(ClassifyKernel(EventKind::kKernel, "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512>(float)"),
            KernelClass::kNorm);
  EXPECT_EQ(ClassifyKernel(EventKind::kKernel, "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512>(float)"),
            KernelClass::kNorm);
  // A dtype conversion is not a convolution.
  EXPECT_EQ(ClassifyKernel(EventKind::kKernel, "void at::native::vectorized_elementwise_kernel<4, convert_fn>(int)"),
            KernelClass::kElementwise);
  EXPECT_EQ(ClassifyKernel(EventKind::kKernel, "volta_sgemm_128x64_nn"), KernelClass::kGemm);
  // cuDNN's helpers are not convolution engines.
  EXPECT_NE(ClassifyKernel(EventKind::kKernel, "cask_cudnn::computeOffsetsKernel(cask_cudnn::ComputeOffsetsParams)"),
            KernelClass::kConv);
  // "cudnn_" after an underscore (as real traces name these helpers).
  EXPECT_NE(ClassifyKernel(EventKind::kKernel,
                           "void cask_cudnn_infer::computeOffsetsKernel<false, false>(cask_cudnn_infer::Params)"),
            KernelClass::kConv);
  EXPECT_FALSE(IsCudnnConvEngine("cask_cudnn_infer::computeBOffsetsKernel"));
  EXPECT_TRUE(IsCudnnConvEngine("volta_i8816cudnn_int8_128x128_ldg16_relu"));
  EXPECT_NE(ClassifyKernel(EventKind::kKernel, "void cudnn::ops::scalePackedTensor_kernel<float, float>(long)"),
            KernelClass::kConv);
  EXPECT_STREQ(KernelClassName(KernelClass::kConv), "conv");
}

// TraceLens's torch.compile trace (ROCm): 2 triton_red_ and 2 triton_poi_
// kernels, 7 Tensile GEMMs (Cijk_) and one Triton attention kernel (attn_fwd),
// all launched inside "Torch-Compiled Region: 0/0" and, within it, the
// annotation "## Call CompiledFxGraph fal4… ##" (counted by hand from the
// JSON: 12 kernels; hipModuleLaunchKernel ×5 and hipExtModuleLaunchKernel ×7).
// The outermost region takes them.
TEST(KernelClassTest, TorchCompileTraceByRegion) {
  auto t = ImportFixture("tracelens/torch_compile_triton__trace.json.gz");
  ASSERT_NE(t, nullptr);
  KernelClassResult r = ComputeKernelClasses(*t);
  std::map<KernelClass, uint64_t> count;
  for (const KernelClassTotal& c : r.classes) count[c.kernel_class] = c.count;
  EXPECT_EQ(count[KernelClass::kTritonReduction], 2u);
  EXPECT_EQ(count[KernelClass::kTritonPointwise], 2u);
  EXPECT_EQ(count[KernelClass::kGemm], 7u);
  EXPECT_EQ(count[KernelClass::kAttention], 1u);
  EXPECT_EQ(r.compiled_region_entries, 1u);
  EXPECT_EQ(r.dynamo_cache_lookups, 1u);
  ASSERT_FALSE(r.regions.empty());
  EXPECT_EQ(r.regions[0].name, "Torch-Compiled Region: 0/0");
  EXPECT_EQ(r.regions[0].kernels, 12u);
  EXPECT_EQ(r.regions[0].triton_kernels, 4u);
}

}  // namespace
}  // namespace aiprof
