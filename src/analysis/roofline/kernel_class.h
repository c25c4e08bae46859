// Kernel classes from device kernel names, so a run's kernel time can be read
// by what the kernels do, Triton/Inductor kernels included:
//   - Inductor's Triton kernels by their name prefix (torch/_inductor
//     codegen): triton_poi_ pointwise, triton_red_ reduction, triton_per_
//     persistent reduction, triton_tem_ template (GEMM/conv templates),
//     triton_for_ foreach; any other triton_ name (user Triton kernels
//     through torch.compile) is triton_other;
//   - gemm: cuBLAS/hipBLASLt/Tensile (Cijk_), CUTLASS, xmma/gemm/gemv names,
//     matmul in any case (Triton matmul_ogs (MoE), Ascend's MatMulV2,
//     BatchMatMul);
//   - attention: flash/fmha/attention/paged-attention/sdpa/multi_head names
//     (FlashAttention, aiter, vLLM/SGLang kernels, attn_fwd), SageAttention
//     (sage_fwd, sage_quant), KV-cache writes (kvcache, kv_cache,
//     reshape_and_cache), before gemm (FlashAttention's kernels are CUTLASS
//     templates);
//   - conv: convolution kernels (cuDNN/MIOpen engines: convolve, dgrad,
//     wgrad, fprop, winograd, scudnn_ names; implicit-GEMM convolutions
//     included; conv1d/2d/3d in any case: Ascend's Conv2D,
//     Conv2DBackpropFilter), before gemm;
//   - Ascend's workspace-zeroing kernels ("<op>_MemSet") are elementwise
//     fills, whatever op they serve;
//   - memset: the memset event kind, fill/zero kernels are not memsets;
//   - memcpy, collective: by event kind;
//   - elementwise, reduction, norm: ATen's kernel templates (norm also
//     cuDNN's batch-norm kernels, bn_fw_/bn_bw_);
//   - other.
// Substring tests on the kernel name; linear in its length.
#ifndef AIPROF_SRC_ANALYSIS_ROOFLINE_KERNEL_CLASS_H_
#define AIPROF_SRC_ANALYSIS_ROOFLINE_KERNEL_CLASS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

enum class KernelClass : uint8_t {
  kOther = 0,
  kGemm,
  kAttention,
  kTritonPointwise,
  kTritonReduction,
  kTritonPersistentReduction,
  kTritonTemplate,
  kTritonForeach,
  kTritonOther,
  kElementwise,
  kReduction,
  kNorm,
  kMemset,
  kMemcpy,
  kCollective,
  kConv,
};
inline constexpr size_t kKernelClassCount = 16;
const char* KernelClassName(KernelClass c);  // "gemm", "triton_pointwise", ...

// The class of a device activity with this kind and name.
// cuDNN's convolution engines by their SASS names: "scudnn_128x64_relu_…",
// with the architecture before it in real traces ("volta_scudnn_…",
// "cudnn_infer_volta_scudnn_…") and the precision and MMA shape in tensor-core
// ones ("volta_h884cudnn_256x128_…", "turing_fp16_s1688cudnn_fp16_…"):
// "cudnn_" right after s, h or a digit. Not "cask_cudnn_…" (offset helpers)
// nor "cudnn::bn_…" (batch norm). Shared with the attribution's op classes.
bool IsCudnnConvEngine(std::string_view name);

// Attention kernels by name (the attention patterns above). Shared with
// the attribution's op classes (src/analysis/attribution/op_class.h).
bool IsAttentionKernelName(std::string_view name);

// The one classification of device activity: analyze's kernel classes, the
// LLM phases' work, and the attribution tree's class of a device node
// (OpClassOfKernel, op_class.h) all read it, so every command puts a kernel
// in the same class.
KernelClass ClassifyKernel(EventKind kind, std::string_view name);

// ClassifyKernel of a trace's slices, once per distinct (kind, name): a
// trace has thousands of kernels of a few hundred names, and each class is
// a few dozen substring searches. One per pass over a trace's slices.
class KernelClassifier {
 public:
  explicit KernelClassifier(const Trace& trace) : trace_(trace), seen_(trace.strings.size(), kUnseen) {}
  KernelClass Of(uint32_t slice) {
    const SliceTable& s = trace_.slices;
    const uint32_t name = s.name[slice].raw;
    const uint16_t key = static_cast<uint16_t>((static_cast<uint16_t>(s.kind[slice]) << 8) | 0x80);
    if (name < seen_.size() && (seen_[name] & 0xff80) == key) return static_cast<KernelClass>(seen_[name] & 0x7f);
    const KernelClass c = ClassifyKernel(s.kind[slice], trace_.Str(s.name[slice]));
    // A name seen with another kind is classified again each time (rare).
    if (name < seen_.size() && seen_[name] == kUnseen) seen_[name] = key | static_cast<uint16_t>(c);
    return c;
  }

 private:
  static constexpr uint16_t kUnseen = 0;
  static_assert(kKernelClassCount <= 0x80, "a class fits the low 7 bits");
  const Trace& trace_;
  std::vector<uint16_t> seen_;  // per string: kind << 8 | 0x80 | class, or kUnseen
};

// True for Triton kernels (Inductor's or user Triton through torch.compile).
bool IsTritonClass(KernelClass c);

struct KernelClassTotal {
  KernelClass kernel_class = KernelClass::kOther;
  uint64_t count = 0;
  int64_t time_ns = 0;
};

// A torch.compile region ("Torch-Compiled Region: 0/0", "CompiledFunction",
// "## Call CompiledFxGraph <hash> ##") and the kernels its launches ran: a
// kernel belongs to the outermost region enclosing its launch call on the
// call's track ("Torch-Compiled Region: 0/0" rather than the compiled graph
// called inside it). A graph-replayed kernel belongs to the region enclosing
// its graph launch, else to the one enclosing its captured launch (a merged
// capture trace, src/importers/graph_capture/).
struct CompiledRegionTotal {
  std::string name;
  uint64_t instances = 0;     // region slices
  uint64_t kernels = 0;       // kernels launched under them
  uint64_t triton_kernels = 0;
  int64_t kernel_time_ns = 0;
};

struct KernelClassResult {
  std::vector<KernelClassTotal> classes;  // non-empty classes, by time, largest first
  int64_t device_time_ns = 0;             // all device activity
  std::vector<CompiledRegionTotal> regions;  // by kernel time, largest first
  uint64_t dynamo_cache_lookups = 0;      // "TorchDynamo Cache Lookup" slices
  uint64_t compiled_region_entries = 0;   // "Torch-Compiled Region" slices
};

// True for slice names that open a torch.compile region.
bool IsCompiledRegionName(std::string_view name);

// Device time by kernel class, and kernels by the compiled region whose
// launch calls (or launching ops) they came from. Linear in slices × depth.
KernelClassResult ComputeKernelClasses(const Trace& trace);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_ROOFLINE_KERNEL_CLASS_H_
