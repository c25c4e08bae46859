#include "src/analysis/attribution/op_class.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include "src/analysis/common/trace_index.h"
#include "src/analysis/roofline/kernel_class.h"
#include "src/base/ascii.h"

namespace aiprof {
namespace {

// Lower-case copy of at most 256 bytes in a fixed buffer (names are matched
// once per distinct string, never per event).
struct LowerBuf {
  char buf[256];
  size_t n = 0;
  explicit LowerBuf(std::string_view s) {
    n = std::min(s.size(), sizeof(buf));
    for (size_t i = 0; i < n; ++i) buf[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
  }
  std::string_view view() const { return {buf, n}; }
};

template <size_t N>
bool HasAny(std::string_view s, const std::string_view (&parts)[N]) {
  for (std::string_view p : parts) {
    if (Contains(s, p)) return true;
  }
  return false;
}

// The op's own name: "aten::add_" → "add_", "at::native::foo" → "foo".
std::string_view BaseName(std::string_view s) {
  size_t colon = s.rfind("::");
  return colon == std::string_view::npos ? s : s.substr(colon + 2);
}

bool IsWordOp(std::string_view base, std::string_view op) {
  // "add", "add_", "add_out", "_add" but not "addmm".
  if (base.substr(0, 1) == "_") base.remove_prefix(1);
  if (base.substr(0, op.size()) != op) return false;
  return base.size() == op.size() || base[op.size()] == '_' || base[op.size()] == '.';
}

// Inductor's generated Triton kernels name their kind, then every aten op
// fused into them ("triton_red_fused__to_copy_add_addmm_..._rsqrt_..."):
// the kind says what the kernel does, the op list would say GEMM for an
// addmm epilogue. nullopt for other names.
std::optional<OpClass> InductorKernelClass(std::string_view s) {
  auto has = [&](std::string_view p) { return Contains(s, p); };
  if (s.substr(0, 11) == "triton_poi_") return OpClass::kElementwise;
  if (s.substr(0, 11) == "triton_red_" || s.substr(0, 11) == "triton_per_") {
    return has("norm") ? OpClass::kNormalisation : OpClass::kReduction;
  }
  if (s.substr(0, 11) == "triton_tem_") return has("conv") ? OpClass::kConvolution : OpClass::kGemm;
  return std::nullopt;
}

// Comparison ops are two letters: matched as the op's own name ("aten::le",
// "ne_"), never inside a word ("Torch-Compiled Region" is no "le").
bool IsComparisonOp(std::string_view base) {
  for (std::string_view op : {"eq", "ne", "lt", "gt", "le", "ge"}) {
    if (IsWordOp(base, op)) return true;
  }
  return false;
}

}  // namespace

const char* OpClassName(OpClass c) {
  switch (c) {
    case OpClass::kConvolution: return "convolution";
    case OpClass::kGemm: return "GEMM";
    case OpClass::kAttention: return "attention";
    case OpClass::kNormalisation: return "normalisation";
    case OpClass::kElementwise: return "elementwise";
    case OpClass::kReduction: return "reduction";
    case OpClass::kDataMovement: return "data movement";
    case OpClass::kOther: break;
  }
  return "other";
}

OpClass ClassifyOpName(std::string_view name) {
  // A compiled region (torch.compile) is structure: its kernels say what it computes.
  if (IsCompiledRegionName(name)) return OpClass::kOther;
  LowerBuf lower(name);
  std::string_view s = lower.view();
  std::string_view base = BaseName(s);
  if (std::optional<OpClass> c = InductorKernelClass(s)) return *c;
  static constexpr std::string_view kAttention[] = {"_mha", "kv_buffer", "store_cache"};
  static constexpr std::string_view kConv[] = {"conv", "winograd", "implicit_gemm", "implicit_convolve", "dgrad",
                                               "wgrad", "fprop", "xmma_fprop"};
  static constexpr std::string_view kGemm[] = {"gemm",   "matmul", "cutlass", "cublas", "addmm", "baddbmm", "bmm",
                                               "linear", "_mm",    "einsum",  "gemv",   "dot",   "cijk_",   "nvjet"};
  static constexpr std::string_view kNorm[] = {
      "batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm", "batchnorm", "layernorm", "groupnorm",
      "rmsnorm",    "bn_fw",      "bn_bw",      "bn_",           "welford",  "qk_norm",   "q_norm",    "k_norm"};
  static constexpr std::string_view kReduce[] = {"sum", "mean", "softmax", "loss", "nll", "pool", "reduce",
                                                 "argmax", "argmin", "norm", "max", "min", "cumsum", "var", "std"};
  static constexpr std::string_view kMove[] = {"copy", "cat", "clone", "contiguous", "index", "gather", "scatter",
                                               "memcpy", "memset", "fill", "zero", "stack", "embedding", "transpose",
                                               "permute", "pad", "to_copy", "reshape", "expand", "repeat", "split",
                                               "slice", "narrow", "select", "view", "flatten", "empty", "resize"};
  static constexpr std::string_view kElementwise[] = {
      "add",      "mul",     "div",         "sub",       "relu",    "gelu",    "silu",     "sigmoid",
      "tanh",     "exp",     "log",         "threshold", "dropout", "where",   "clamp",    "elementwise",
      "foreach",  "addcmul", "addcdiv",     "sqrt",      "rsqrt",   "pow",     "neg",      "abs",
      "hardtanh", "leaky",   "elu",         "erf",       "sin",     "cos",     "mish",     "swish",
      "lerp",     "sign",    "masked_fill", "bitwise",   "maximum", "minimum", "unrolled", "vectorized"};
  if (HasAny(s, kAttention) || IsAttentionKernelName(s)) return OpClass::kAttention;
  if (HasAny(s, kConv) || IsCudnnConvEngine(s)) return OpClass::kConvolution;
  if (HasAny(s, kNorm)) return OpClass::kNormalisation;
  if (HasAny(s, kGemm) || IsWordOp(base, "mm") || IsWordOp(base, "mv")) return OpClass::kGemm;
  // Rotary position embedding is sin/cos arithmetic on q and k, not an
  // embedding table's lookup (SGLang's and vLLM's rotary_embedding_kernel).
  if (s.find("rotary") != std::string_view::npos) return OpClass::kElementwise;
  if (IsWordOp(base, "to") || IsWordOp(base, "t") || HasAny(s, kMove)) return OpClass::kDataMovement;
  if (HasAny(s, kReduce)) return OpClass::kReduction;
  if (HasAny(s, kElementwise) || IsComparisonOp(base)) return OpClass::kElementwise;
  return OpClass::kOther;
}

OpClass OpClassOfKernel(KernelClass c, std::string_view name) {
  switch (c) {
    case KernelClass::kGemm: return OpClass::kGemm;
    case KernelClass::kAttention: return OpClass::kAttention;
    case KernelClass::kConv: return OpClass::kConvolution;
    case KernelClass::kNorm: return OpClass::kNormalisation;
    case KernelClass::kReduction: return OpClass::kReduction;
    case KernelClass::kElementwise:
    case KernelClass::kTritonPointwise:
    case KernelClass::kTritonForeach: return OpClass::kElementwise;
    case KernelClass::kTritonReduction:
    case KernelClass::kTritonPersistentReduction:
      return Contains(name, "norm") ? OpClass::kNormalisation : OpClass::kReduction;
    case KernelClass::kTritonTemplate: return Contains(name, "conv") ? OpClass::kConvolution : OpClass::kGemm;
    case KernelClass::kMemset:
    case KernelClass::kMemcpy: return OpClass::kDataMovement;
    case KernelClass::kCollective:
    case KernelClass::kTritonOther:
    case KernelClass::kOther: break;
  }
  return OpClass::kOther;
}

bool IsInductorKernelName(std::string_view name) {
  if (name.substr(0, 7) != "triton_") return false;
  const std::string_view kind = name.substr(7, 4);
  return kind == "poi_" || kind == "red_" || kind == "per_" || kind == "tem_" || kind == "for_";
}

DataWidth KernelDataWidth(std::string_view name) {
  LowerBuf lower(name);
  std::string_view s = lower.view();
  static constexpr std::string_view kReduced[] = {"bf16", "bfloat16", "bhalf",  "fp16", "f16",  "half",
                                                  "fp8",  "f8",       "e4m3",   "e5m2", "int8", "fp4",
                                                  "h884", "h1688",    "h16816", "hgemm"};
  static constexpr std::string_view kFull[] = {"sgemm", "dgemm",  "scudnn", "fp32",    "f32f32", "tf32",
                                               "fp64",  "<float", "float,", "<double", "double,"};
  if (HasAny(s, kReduced)) return DataWidth::kReduced;
  // Tensile (rocBLAS / hipBLASLt): Cijk_Alik_Bljk_<type>_..., the type's
  // first letter (BBS, B: bf16; HHS, HB: fp16; SB: fp32; DB: fp64; X: xf32).
  if (s.substr(0, 5) == "cijk_") {
    size_t at = 0;
    for (int k = 0; k < 3 && at != std::string_view::npos; ++k) at = s.find('_', at + 1);
    if (at != std::string_view::npos && at + 1 < s.size()) {
      const char t = s[at + 1];
      if (t == 'b' || t == 'h') return DataWidth::kReduced;
      if (t == 's' || t == 'd' || t == 'x' || t == 'c' || t == 'z') return DataWidth::kFull;
      if (s.substr(at + 1, 2) == "i8" || s.substr(at + 1, 2) == "f8") return DataWidth::kReduced;
    }
    return DataWidth::kUnknown;
  }
  if (HasAny(s, kFull)) return DataWidth::kFull;
  return DataWidth::kUnknown;
}

}  // namespace aiprof
