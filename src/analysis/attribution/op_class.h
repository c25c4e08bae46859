// What an op computes, named from its name (a PyTorch op, a kernel, a
// torch_npu task): the classes the attribution tree and the compute finding
// report. And the profiler's own wrapper spans, which are structure, never
// consumers of time.
#ifndef AIPROF_SRC_ANALYSIS_ATTRIBUTION_OP_CLASS_H_
#define AIPROF_SRC_ANALYSIS_ATTRIBUTION_OP_CLASS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "src/analysis/common/trace_index.h"  // IsProfilerWrapperName
#include "src/analysis/roofline/kernel_class.h"

namespace aiprof {

enum class OpClass : uint8_t {
  kOther = 0,
  kConvolution,
  kGemm,
  kAttention,
  kNormalisation,
  kElementwise,
  kReduction,
  kDataMovement,
};
inline constexpr size_t kOpClassCount = 8;
const char* OpClassName(OpClass c);

// The class of an op or kernel name. A torch.compile region
// (IsCompiledRegionName) is other: structure, classed by its kernels.
// Inductor's Triton kernels by their kind: triton_poi_ elementwise,
// triton_red_/triton_per_ reduction (normalisation when a norm is fused),
// triton_tem_ GEMM (convolution when a conv is). Else by case-insensitive
// patterns checked in this order (the first that matches wins): attention
// (the attention kernels' patterns, IsAttentionKernelName: attention, sdpa,
// flash, fmha, multi_head, attn_fwd/attn_bwd, SageAttention's
// sage_fwd/sage_quant, KV-cache writes; and the ops _mha, SGLang's
// set_kv_buffer and store_cache), convolution (conv, winograd,
// implicit_gemm... of cudnn, its scudnn/h884cudnn/s1688cudnn engines), GEMM
// (mm, addmm, bmm, matmul, linear, gemm, cutlass, cublas, Tensile's Cijk_,
// cuBLAS's nvjet), normalisation
// (batch_norm, layer_norm, group_norm, instance_norm, rms_norm, bn_fw/bn_bw,
// q/k norms: qk_norm, q_norm, k_norm),
// reduction (sum, mean, softmax, loss, nll, pool, reduce, argmax, norm),
// data movement (copy, to, cat, clone, contiguous, index, gather, scatter,
// memcpy, memset, fill, zero, stack, embedding, transpose, permute, pad),
// elementwise (add, mul, div, sub, relu, gelu, silu, sigmoid, tanh, exp,
// threshold, dropout, where, clamp, elementwise, foreach, addcmul, sqrt, pow;
// the comparisons eq/ne/lt/gt/le/ge as the op's whole name only). Nothing
// defaults to elementwise: a name no pattern matches is other.
OpClass ClassifyOpName(std::string_view name);

// The class of device activity, from its kernel class (ClassifyKernel,
// src/analysis/roofline/kernel_class.h: the one classifier of kernels, so
// the attribution tree, diagnose's compute classes and analyze's kernels
// section agree on a kernel): gemm, attention, conv, norm, reduction and
// elementwise as they are; Triton pointwise and foreach kernels elementwise,
// reductions reduction (normalisation when a norm is fused: "norm" in the
// name), templates GEMM (convolution when "conv" is in the name); memcpy and
// memset data movement; collectives, other Triton and other kernels other.
OpClass OpClassOfKernel(KernelClass c, std::string_view name);

// Whether a kernel name is one torch.compile's Inductor generated: Triton
// kernels named by their kind (triton_poi_, triton_red_, triton_per_,
// triton_tem_, triton_for_). User Triton kernels (vLLM's _matmul_ogs) are not.
bool IsInductorKernelName(std::string_view name);

// The width of the data a GEMM or convolution kernel computes on, as its
// name says: kReduced for 16 bits or fewer (bf16/bfloat16/bhalf, fp16/f16/half
// and cuDNN's h884/h1688/h16816 engines, fp8/f8/e4m3/e5m2, int8, fp4/mxfp4;
// Tensile's Cijk_<a>_<b>_<type>: B or H), else kFull for 32 bits or more
// (sgemm/dgemm/scudnn, fp32/f32f32/tf32/fp64, "float" or "double" template
// arguments; Tensile's S, D, X, C, Z); kUnknown when it says neither (MIOpen
// assembly, CK's mangled templates). Reduced is checked first: bf16 kernels
// name their fp32 accumulator too (sm90_xmma_gemm_bf16bf16_bf16f32).
enum class DataWidth : uint8_t { kUnknown = 0, kFull, kReduced };
DataWidth KernelDataWidth(std::string_view name);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_ATTRIBUTION_OP_CLASS_H_
