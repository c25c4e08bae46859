#include "src/analysis/roofline/kernel_class.h"

#include <algorithm>
#include <unordered_map>

#include "src/analysis/common/trace_index.h"
#include "src/base/ascii.h"

namespace aiprof {
namespace {

KernelClass TritonClass(std::string_view n) {
  if (n.starts_with("triton_poi_")) return KernelClass::kTritonPointwise;
  if (n.starts_with("triton_red_")) return KernelClass::kTritonReduction;
  if (n.starts_with("triton_per_")) return KernelClass::kTritonPersistentReduction;
  if (n.starts_with("triton_tem_")) return KernelClass::kTritonTemplate;
  if (n.starts_with("triton_for_")) return KernelClass::kTritonForeach;
  return KernelClass::kTritonOther;
}

}  // namespace

bool IsAttentionKernelName(std::string_view n) {
  // SageAttention (xDiT's sage_fwd, sage_quant_kernel), the serving
  // frameworks' KV-cache writes (vLLM's reshape_and_cache(_flash), SGLang's
  // store_kvcache) and SDPA / multi-head attention names.
  static constexpr std::string_view kParts[] = {"attention",  "flash",    "fmha",     "sdpa",
                                                "multi_head", "sage_fwd", "sage_bwd", "sage_quant",
                                                "sageattn",   "kvcache",  "kv_cache", "reshape_and_cache"};
  for (std::string_view p : kParts) {
    if (ContainsIgnoreCase(n, p)) return true;
  }
  return n.starts_with("attn_") || Contains(n, "_attn_") || Contains(n, "attn_fwd") || Contains(n, "attn_bwd");
}

bool IsCudnnConvEngine(std::string_view n) {
  for (size_t p = n.find("cudnn_"); p != std::string_view::npos; p = n.find("cudnn_", p + 1)) {
    if (p == 0) continue;
    char c = n[p - 1];
    if (c == 's' || c == 'h' || (c >= '0' && c <= '9')) return true;
  }
  return false;
}

const char* KernelClassName(KernelClass c) {
  switch (c) {
    case KernelClass::kGemm: return "gemm";
    case KernelClass::kAttention: return "attention";
    case KernelClass::kTritonPointwise: return "triton_pointwise";
    case KernelClass::kTritonReduction: return "triton_reduction";
    case KernelClass::kTritonPersistentReduction: return "triton_persistent_reduction";
    case KernelClass::kTritonTemplate: return "triton_template";
    case KernelClass::kTritonForeach: return "triton_foreach";
    case KernelClass::kTritonOther: return "triton_other";
    case KernelClass::kElementwise: return "elementwise";
    case KernelClass::kReduction: return "reduction";
    case KernelClass::kNorm: return "norm";
    case KernelClass::kMemset: return "memset";
    case KernelClass::kMemcpy: return "memcpy";
    case KernelClass::kCollective: return "collective";
    case KernelClass::kConv:
      return "conv";
    case KernelClass::kOther: break;
  }
  return "other";
}

bool IsTritonClass(KernelClass c) {
  return c == KernelClass::kTritonPointwise || c == KernelClass::kTritonReduction ||
         c == KernelClass::kTritonPersistentReduction || c == KernelClass::kTritonTemplate ||
         c == KernelClass::kTritonForeach || c == KernelClass::kTritonOther;
}

KernelClass ClassifyKernel(EventKind kind, std::string_view n) {
  if (kind == EventKind::kMemset) return KernelClass::kMemset;
  if (kind == EventKind::kMemcpy) return KernelClass::kMemcpy;
  if (kind == EventKind::kCollective) return KernelClass::kCollective;
  if (n.starts_with("triton_")) return TritonClass(n);
  // Ascend's zeroing kernel for an op's workspace ("Conv2DBackpropFilter9_MemSet",
  // op type MemSet): a fill, not the op it serves.
  if (n.ends_with("_MemSet")) return KernelClass::kElementwise;
  // Convolutions first: cuDNN's implicit-GEMM engines have "gemm" in their
  // names ("implicit_convolve_sgemm", "xmma_fprop_implicit_gemm").
  if (ContainsIgnoreCase(n, "convolution") || ContainsIgnoreCase(n, "convolve") || ContainsIgnoreCase(n, "conv2d") ||
      ContainsIgnoreCase(n, "conv3d") || ContainsIgnoreCase(n, "conv1d") || Contains(n, "dgrad") ||
      Contains(n, "wgrad") || Contains(n, "fprop") || ContainsIgnoreCase(n, "winograd") || IsCudnnConvEngine(n)) {
    return KernelClass::kConv;
  }
  // Attention before gemm: FlashAttention's kernels are CUTLASS templates
  // ("pytorch_flash::flash_fwd_kernel<…cutlass::bfloat16_t…>").
  if (IsAttentionKernelName(n)) return KernelClass::kAttention;
  // cuBLASLt's generated GEMMs on Hopper and later are "nvjet_*" (e.g.
  // "nvjet_tst_192x192_64x4_2x1_v_bz_coopA_TNT"): no "gemm" in the name.
  if (n.starts_with("Cijk_") || n.starts_with("nvjet_") || ContainsIgnoreCase(n, "gemm") || ContainsIgnoreCase(n, "gemv") ||
      Contains(n, "cutlass") || Contains(n, "xmma") || ContainsIgnoreCase(n, "matmul")) {
    return KernelClass::kGemm;
  }
  if (ContainsIgnoreCase(n, "norm") || Contains(n, "bn_fw") || Contains(n, "bn_bw")) return KernelClass::kNorm;
  if (Contains(n, "reduce_kernel") || Contains(n, "reduce_segments") || Contains(n, "Reduce"))
    return KernelClass::kReduction;
  if (Contains(n, "elementwise_kernel") || Contains(n, "vectorized_") || Contains(n, "unrolled_elementwise")) {
    return KernelClass::kElementwise;
  }
  return KernelClass::kOther;
}

bool IsCompiledRegionName(std::string_view n) {
  return n.starts_with("Torch-Compiled Region") || n == "CompiledFunction" ||
         n.starts_with("## Call CompiledFxGraph") || n.starts_with("torch.compile");
}

KernelClassResult ComputeKernelClasses(const Trace& trace) {
  const SliceTable& s = trace.slices;
  KernelClassResult r;
  std::vector<KernelClassTotal> totals(kKernelClassCount);
  for (size_t c = 0; c < kKernelClassCount; ++c) totals[c].kernel_class = static_cast<KernelClass>(c);
  // The outermost compiled region enclosing each slice ("Torch-Compiled
  // Region: 0/0" rather than the "## Call CompiledFxGraph" inside it;
  // parents precede children in slice order).
  std::vector<uint32_t> parent = ParentSlices(trace);
  std::vector<uint32_t> region(s.size(), kNoSlice);
  std::unordered_map<uint32_t, size_t> region_index;  // name id → r.regions
  for (uint32_t i = 0; i < s.size(); ++i) {
    std::string_view name = trace.Str(s.name[i]);
    r.dynamo_cache_lookups += name == "TorchDynamo Cache Lookup";
    if (parent[i] != kNoSlice && region[parent[i]] != kNoSlice) {
      region[i] = region[parent[i]];
    } else if (IsCompiledRegionName(name)) {
      region[i] = i;
      auto [it, added] = region_index.emplace(s.name[i].raw, r.regions.size());
      if (added) r.regions.push_back({std::string(name)});
      r.regions[it->second].instances++;
      r.compiled_region_entries += name.starts_with("Torch-Compiled Region");
    }
  }
  // A graph-replayed kernel has two launch calls: the graph launch on the
  // host (LaunchingCalls) and, after a graph-capture merge, its captured
  // launch (OpLaunchingCalls) copied under the capture window's ops. The
  // graph launch's region encloses the whole graph (the capture's own region
  // began before the window and is not copied), so it comes first.
  std::vector<uint32_t> host_call = LaunchingCalls(trace);
  std::vector<uint32_t> launcher = OpLaunchingCalls(trace);
  std::vector<uint32_t> launching_op = LaunchingOps(trace);
  KernelClassifier classes(trace);
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (!IsDeviceActivity(s.kind[i])) continue;
    const KernelClass c = classes.Of(i);
    totals[static_cast<size_t>(c)].count++;
    totals[static_cast<size_t>(c)].time_ns += s.dur_ns[i];
    r.device_time_ns += s.dur_ns[i];
    uint32_t from = launcher[i] != kNoSlice ? launcher[i] : launching_op[i];
    uint32_t reg = host_call[i] == kNoSlice ? kNoSlice : region[host_call[i]];
    if (reg == kNoSlice && from != kNoSlice) reg = region[from];
    if (reg == kNoSlice) continue;
    CompiledRegionTotal& t = r.regions[region_index[s.name[reg].raw]];
    t.kernels++;
    t.triton_kernels += IsTritonClass(c);
    t.kernel_time_ns += s.dur_ns[i];
  }
  for (const KernelClassTotal& t : totals) {
    if (t.count > 0) r.classes.push_back(t);
  }
  std::stable_sort(r.classes.begin(), r.classes.end(),
                   [](const KernelClassTotal& a, const KernelClassTotal& b) { return a.time_ns > b.time_ns; });
  std::stable_sort(r.regions.begin(), r.regions.end(), [](const CompiledRegionTotal& a, const CompiledRegionTotal& b) {
    return a.kernel_time_ns > b.kernel_time_ns;
  });
  return r;
}

}  // namespace aiprof
