#include "src/analysis/attribution/compute_finding.h"

#include <algorithm>
#include <map>
#include <vector>

#include "src/analysis/common/text_format.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/window/analysis_window.h"

namespace aiprof {

const char* ComputeClassMetric(OpClass c) {
  switch (c) {
    case OpClass::kConvolution: return "compute_conv_ratio";
    case OpClass::kGemm: return "compute_gemm_ratio";
    case OpClass::kAttention: return "compute_attention_ratio";
    case OpClass::kNormalisation: return "compute_norm_ratio";
    case OpClass::kElementwise: return "compute_elementwise_ratio";
    case OpClass::kReduction: return "compute_reduction_ratio";
    case OpClass::kDataMovement: return "compute_data_movement_ratio";
    case OpClass::kOther: break;
  }
  return "compute_other_ratio";
}

const char* ComputeAdvice(OpClass c, bool device_time, bool reduced, bool compiled, bool torch) {
  if (!torch) {
    switch (c) {
      case OpClass::kConvolution:
        return device_time ? "16-bit data (bf16/fp16) in the library's NHWC layout so the convolutions run on tensor "
                             "cores; the library's autotuned algorithm (cuDNN/MIOpen find); a larger batch"
                           : "the library's native blocked layout (oneDNN) and bf16 where the CPU has AMX/AVX-512 "
                             "BF16; conv+bn+relu fused; a larger batch";
      case OpClass::kGemm:
        if (reduced) break;
        return device_time ? "16-bit data (bf16/fp16) or the TF32 math mode; dimensions that are multiples of 8/16; "
                             "a larger batch so each GEMM fills the device"
                           : "bf16 on CPUs with AMX/AVX-512 BF16; dimensions that are multiples of 16; a larger "
                             "batch; a BLAS with the CPU's kernels (oneDNN/MKL)";
      case OpClass::kAttention: return "a fused attention kernel (FlashAttention-style) in bf16/fp16";
      case OpClass::kNormalisation: return "fuse normalisation into the neighbouring kernels";
      case OpClass::kElementwise:
        return "fuse the elementwise chains into fewer kernels (or into their producers); they move bytes, not "
               "FLOPs";
      case OpClass::kReduction: return "fuse reductions with their producers";
      case OpClass::kDataMovement:
        return "avoid the copies: keep data on the device and in one layout; pinned host memory and asynchronous "
               "copies for host-to-device";
      case OpClass::kOther: break;
    }
  }
  // Compiled code in the compute: torch.compile runs already, as
  // compile_fuse's condition (rules/compute.yaml) reads it.
  if (compiled) {
    switch (c) {
      case OpClass::kConvolution:
        if (device_time || reduced) break;
        return "channels_last (oneDNN's native blocked layout) and bf16 autocast where the CPU has AMX/AVX-512 "
               "BF16; IPEX to fuse conv+bn+relu; a larger batch";
      case OpClass::kNormalisation:
        return "already compiled: fused normalisation kernels (RMSNorm/LayerNorm with the residual add) where the "
               "compiled regions leave it apart; conv+bn folding for inference";
      case OpClass::kElementwise:
        return "already compiled: a fused kernel for the chains outside the compiled regions, fused optimizers "
               "(foreach/fused=True) in training; they move bytes, not FLOPs";
      case OpClass::kReduction:
        return "already compiled: fused softmax/cross-entropy kernels for the reductions outside the compiled regions";
      default: break;
    }
  }
  if (reduced && c == OpClass::kConvolution) {
    return "channels_last so the convolutions run without layout conversions; "
           "torch.backends.cudnn.benchmark=True picks the fastest algorithm; a larger batch";
  }
  if (reduced && c == OpClass::kGemm) {
    return "already 16-bit: fp8 (or int8/fp4 weights) where the accuracy allows; dimensions that are multiples of "
           "8/16; a larger batch so each GEMM fills the device";
  }
  switch (c) {
    case OpClass::kConvolution:
      return device_time ? "bf16/fp16 autocast and channels_last so the convolutions run on tensor cores; "
                           "torch.backends.cudnn.benchmark=True picks the fastest algorithm; a larger batch"
                         : "channels_last (oneDNN's native blocked layout) and bf16 autocast where the CPU has "
                           "AMX/AVX-512 BF16; torch.compile or IPEX to fuse conv+bn+relu; a larger batch";
    case OpClass::kGemm:
      return device_time ? "bf16/fp16 (or TF32: torch.backends.cuda.matmul.allow_tf32=True); dimensions that are "
                           "multiples of 8/16; a larger batch so each GEMM fills the device"
                         : "bf16 autocast on CPUs with AMX/AVX-512 BF16; dimensions that are multiples of 16; "
                           "a larger batch; a BLAS with the CPU's kernels (oneDNN/MKL)";
    case OpClass::kAttention:
      return "F.scaled_dot_product_attention (flash / memory-efficient kernels) in bf16/fp16";
    case OpClass::kNormalisation:
      return "fuse normalisation into the neighbouring ops (torch.compile; conv+bn folding for inference)";
    case OpClass::kElementwise:
      return "fuse the elementwise chains (torch.compile, optimizers with foreach/fused=True in training); they "
             "move bytes, not FLOPs";
    case OpClass::kReduction:
      return "fuse reductions with their producers (torch.compile); fused softmax/cross-entropy";
    case OpClass::kDataMovement:
      return device_time ? "avoid the copies: keep tensors on the device and in one layout, pin_memory + non_blocking "
                           "for host-to-device, drop .contiguous()/.to() that change nothing"
                         : "avoid the copies: keep tensors in one layout and dtype, drop .contiguous()/.to()/.clone() "
                           "that change nothing, grow caches in place (preallocated) rather than by torch.cat";
    case OpClass::kOther: break;
  }
  return "see the top ops of the class in the attribution tree";
}

namespace {

// Nearest module ancestor of `n` (or kNoNode).
uint32_t ModuleOf(const AttributionNodes& nodes, uint32_t n) {
  for (uint32_t p = nodes.parent[n]; p != kNoNode && p != 0; p = nodes.parent[p]) {
    if (nodes.kind[p] == AttributionKind::kModule && nodes.time_class[p] == TimeClass::kModuleCode) return p;
  }
  return kNoNode;
}

}  // namespace

ComputeResult ComputeComputeTime(const AttributionResult& a, const RooflineResult& roofline,
                                 const std::string& device_problem, const AnalysisWindow* window) {
  ComputeResult r;
  if (!a.available) return r;
  const AttributionNodes& n = a.nodes;
  // A trace with device activity in its steps is a device trace even when
  // none of it joined an op: its compute is device time, never host op time.
  r.device_time = a.device_ns > 0 || a.unlinked_device_ns > 0;
  r.wall_ns = a.PerStep(a.wall_ns);
  r.on_device_period = r.device_time && window && window->device_behind() && window->base_ns > r.wall_ns;
  if (r.on_device_period) r.wall_ns = window->base_ns;
  r.on_trace_base = r.device_time && a.pseudo_step && window && window->steps == 0 && window->base_ns > 0;
  if (r.on_trace_base) r.wall_ns = window->base_ns;
  // Device activity launched under communication ops (collectives: NCCL
  // kernels, HCCL tasks) is communication, which comm_exposed_ns counts.
  // A trace whose device activity joined no op at all (no launch links) is
  // not a trace without compute: its activity in the steps counts, less
  // collectives. Where links exist, what joined nothing is left out (on
  // torch_npu's level1, 144 unlinked copies of 55 ms, most of it waiting
  // behind an all-reduce).
  int64_t device_ns = a.device_ns == 0 ? a.unlinked_compute_ns : 0;
  for (size_t i = 1; i < n.size(); ++i) {
    if (n.kind[i] == AttributionKind::kDevice && n.time_class[i] != TimeClass::kCommunication) {
      device_ns += n.device_self_ns[i];
    }
  }
  r.compute_ns = r.device_time ? std::min(a.PerStep(device_ns), r.wall_ns)
                               : a.PerStep(a.by_class_ns[static_cast<size_t>(TimeClass::kOp)]);
  r.available = true;
  r.device = roofline.device ? roofline.device->name : "";
  r.device_problem = device_problem;
  // Per class: the outermost ops, and their nearest modules. On device
  // traces, per device activity under an outermost op, as compute_ns counts
  // it (collectives a backward op launches are communication, not its
  // class): the outermost op's class; where its name gives none (a
  // torch.compile region whose kernels a graph replays), the class of the
  // nearest op under it that has one, else of the kernel's own name
  // (ClassifyOpName): never the wrapper's.
  std::array<ComputeClass, kOpClassCount> by{};
  std::array<std::map<uint32_t, int64_t>, kOpClassCount> modules;
  const bool has_compiled = n.compiled.size() == n.size();
  // `outer`: the node whose nearest module is named; `at`: the node whose
  // time it is (compiled or not by its own flag).
  auto add = [&](OpClass c, int64_t t, uint32_t outer, uint32_t at) {
    by[static_cast<size_t>(c)].op_class = c;
    by[static_cast<size_t>(c)].ns += t;
    modules[static_cast<size_t>(c)][ModuleOf(n, outer)] += t;
    r.classes_ns += t;
    if (has_compiled && n.compiled[at]) r.compiled_ns += t;
  };
  auto add_device = [&](OpClass c, uint32_t outer, size_t i) {
    const int64_t t = n.device_self_ns[i];
    add(c, t, outer, static_cast<uint32_t>(i));
    if (c != OpClass::kGemm && c != OpClass::kConvolution) return;
    const DataWidth w = n.data_width.size() == n.size() ? n.data_width[i] : DataWidth::kUnknown;
    if (w == DataWidth::kUnknown) return;
    r.width_known_ns += t;
    if (w == DataWidth::kReduced) r.width_reduced_ns += t;
  };
  auto counted = [&](size_t i) {
    return n.kind[i] == AttributionKind::kDevice && n.time_class[i] != TimeClass::kCommunication &&
           n.device_self_ns[i] > 0;
  };
  std::vector<uint32_t> outer(n.size(), kNoNode);           // device traces: the outermost op above a node
  std::vector<OpClass> nearest(n.size(), OpClass::kOther);  // the class a node's device activity counts in
  // op_above[i]: an op encloses node i, however deep (an op -> label -> op
  // chain: a compiled graph's "## Call CompiledFxGraph ##" inside its
  // CompiledFunction op); its time is in that op's total already.
  std::vector<char> op_above(n.size(), 0);
  for (size_t i = 1; i < n.size(); ++i) {
    const uint32_t p = n.parent[i];
    op_above[i] = op_above[p] || n.kind[p] == AttributionKind::kOp;
    if (outer[p] != kNoNode) {
      outer[i] = outer[p];
      const bool named = n.kind[i] == AttributionKind::kOp || n.kind[i] == AttributionKind::kDevice;
      nearest[i] = nearest[p] == OpClass::kOther && named ? n.op_class[i] : nearest[p];
      if (counted(i)) add_device(nearest[i], outer[i], i);
      continue;
    }
    // Device activity under no op (a graph launch under a module): its own name's class.
    if (counted(i)) {
      add_device(n.op_class[i], static_cast<uint32_t>(i), i);
      continue;
    }
    if (n.kind[i] != AttributionKind::kOp || op_above[i]) continue;
    if (n.time_class[i] != TimeClass::kOp) continue;  // ops inside data loading / waits are not compute
    if (r.device_time) {
      outer[i] = static_cast<uint32_t>(i);
      nearest[i] = n.op_class[i];
    } else if (n.total_ns[i] > 0) {
      add(n.op_class[i], n.total_ns[i], static_cast<uint32_t>(i), static_cast<uint32_t>(i));
    }
  }
  // Efficiency and data type from the roofline rows of each class.
  std::array<double, kOpClassCount> flops{}, time_flops{}, util_time{}, util_sum{};
  std::array<std::map<std::string, int64_t>, kOpClassCount> precision_time;
  const DevicePeaks* device = roofline.device ? &*roofline.device : nullptr;
  int64_t op_width_known_ns = 0, op_width_reduced_ns = 0;  // matmul / conv rows by their Input type
  for (const RooflineRow& row : roofline.rows) {
    size_t c = static_cast<size_t>(ClassifyOpName(row.name));
    precision_time[c][PrecisionName(row.precision)] += row.time_ns;
    if ((row.family == OpFamily::kMatmul || row.family == OpFamily::kConv) && row.precision != Precision::kOther) {
      op_width_known_ns += row.time_ns;
      if (row.precision != Precision::kFp32 && row.precision != Precision::kFp64) op_width_reduced_ns += row.time_ns;
    }
    if (!row.flops_known || row.flops <= 0 || row.time_ns <= 0) continue;
    flops[c] += row.flops;
    time_flops[c] += static_cast<double>(row.time_ns);
    RooflinePoint p = EvaluateRow(row, device);
    if (p.compute_utilization) {
      util_sum[c] += *p.compute_utilization * static_cast<double>(row.time_ns);
      util_time[c] += static_cast<double>(row.time_ns);
    }
  }
  r.width_from_kernels = r.width_known_ns > 0;
  if (!r.width_from_kernels) {
    r.width_known_ns = op_width_known_ns;
    r.width_reduced_ns = op_width_reduced_ns;
  }
  for (size_t c = 0; c < kOpClassCount; ++c) {
    if (by[c].ns <= 0) continue;
    ComputeClass cc = by[c];
    if (time_flops[c] > 0) cc.achieved_flops_per_second = flops[c] / (time_flops[c] * 1e-9);
    if (util_time[c] > 0) cc.compute_utilization = util_sum[c] / util_time[c];
    const double class_ns = static_cast<double>(cc.ns);
    cc.flops_coverage = std::min(1.0, time_flops[c] / class_ns);
    int64_t best = 0, typed = 0;
    for (const auto& [p, t] : precision_time[c]) {
      typed += t;
      if (t > best) {
        best = t;
        cc.precision = p;
      }
    }
    cc.precision_coverage = std::min(1.0, static_cast<double>(typed) / class_ns);
    std::vector<std::pair<int64_t, uint32_t>> mods;
    for (const auto& [m, t] : modules[c]) {
      if (m != kNoNode) mods.emplace_back(t, m);
    }
    std::sort(mods.begin(), mods.end(), [](const auto& x, const auto& y) { return x.first != y.first ? x.first > y.first : x.second < y.second; });
    for (size_t k = 0; k < std::min(mods.size(), kComputeModulesShown); ++k) {
      cc.modules.push_back(mods[k].second);
      cc.module_ns.push_back(mods[k].first);
    }
    r.classes.push_back(std::move(cc));
  }
  std::sort(r.classes.begin(), r.classes.end(), [](const ComputeClass& x, const ComputeClass& y) {
    return x.ns != y.ns ? x.ns > y.ns : x.op_class < y.op_class;
  });
  return r;
}

namespace {

// compute_low_precision_ratio and compute_compiled_ratio, with their evidence.
void PublishWidthAndCompiled(const ComputeResult& r, MetricSet* m) {
  if (r.width_known_ns > 0) {
    const double low = static_cast<double>(r.width_reduced_ns) / static_cast<double>(r.width_known_ns);
    m->Set("compute_low_precision_ratio", low, "attribution");
    m->AddEvidence("compute", "GEMM and convolution data types (" +
                                  std::string(r.width_from_kernels ? "kernel names" : "the ops' input types") +
                                  "): " + FormatPercent(low) +
                                  " of their time whose type is known is in 16 bits or "
                                  "fewer (bf16, fp16, fp8, int8, fp4)");
  } else {
    m->SetUnavailable("compute_low_precision_ratio",
                      "no GEMM or convolution whose data type the kernel names or the ops' input types tell");
  }
  if (r.classes_ns <= 0) {
    m->SetUnavailable("compute_compiled_ratio", "attribution: no compute time in the steps");
    return;
  }
  const double compiled = static_cast<double>(r.compiled_ns) / static_cast<double>(r.classes_ns);
  m->Set("compute_compiled_ratio", compiled, "attribution");
  if (r.compiled_ns > 0) {
    m->AddEvidence("compute", "torch.compile's code (compiled regions, Inductor's Triton kernels): " +
                                  FormatPercent(compiled) + " of compute");
  }
}

}  // namespace

void PublishCompute(const Trace& trace, const AttributionResult& a, const ComputeResult& r, MetricSet* m) {
  if (!r.available || r.wall_ns <= 0) {
    std::string why = "attribution: " + (a.problem.empty() ? std::string("no steps to attribute") : a.problem);
    m->SetUnavailable("compute_op_ns", why);
    m->SetUnavailable("compute_op_ratio", why);
    m->SetUnavailable("compute_low_precision_ratio", why);
    m->SetUnavailable("compute_compiled_ratio", why);
    for (size_t c = 1; c < kOpClassCount; ++c) m->SetUnavailable(ComputeClassMetric(static_cast<OpClass>(c)), why);
    return;
  }
  m->Set("compute_op_ns", r.compute_ns, "attribution");
  m->Set("compute_op_ratio", r.compute_ns / r.wall_ns, "attribution");
  int64_t total = 0;
  for (const ComputeClass& c : r.classes) total += c.ns;
  std::array<int64_t, kOpClassCount> ns{};
  for (const ComputeClass& c : r.classes) ns[static_cast<size_t>(c.op_class)] = c.ns;
  for (size_t c = 1; c < kOpClassCount; ++c) {
    m->Set(ComputeClassMetric(static_cast<OpClass>(c)),
           total > 0 ? static_cast<double>(ns[c]) / static_cast<double>(total) : 0, "attribution");
  }
  // On device traces the figure is all device activity the step launched:
  // kernels, copies and memsets (the critical path's "compute" is kernels
  // only; found by review side by side).
  const std::string what =
      r.device_time ? "device activity in the step: kernels, copies, memsets; not collectives nor work launched by "
                      "communication ops"
                    : "host op time";
  m->AddEvidence("compute",
                 "compute " + FormatDurationNs(r.compute_ns) +
                     " per step = " + FormatPercent(r.compute_ns / r.wall_ns) +
                     (r.on_device_period ? " of the step (the device's period: the device runs behind the host)"
                      : r.on_trace_base  ? " of the trace's steady-state time (no steps: the device runs the work "
                                           "the main thread launched past its span)"
                                         : " of the step's wall time") +
                     " (" + what + ")");
  // What the suggestions' conditions read (autocast, torch.compile), before the classes.
  PublishWidthAndCompiled(r, m);
  // Every class with at least kComputeClassMinShare of compute, the rest
  // counted in one line (a cut at four classes, then at five evidence lines,
  // hid ResNet50's data movement).
  const bool torch = HasTorchOps(trace);
  size_t left_out = 0;
  int64_t left_out_ns = 0;
  for (const ComputeClass& c : r.classes) {
    if (total > 0 && static_cast<double>(c.ns) < kComputeClassMinShare * static_cast<double>(total)) {
      ++left_out;
      left_out_ns += c.ns;
      continue;
    }
    std::string line = std::string(OpClassName(c.op_class)) + ": " + FormatDurationNs(a.PerStep(c.ns)) +
                       " per step (" + FormatPercent(total > 0 ? static_cast<double>(c.ns) / static_cast<double>(total) : 0) +
                       " of compute)";
    const auto rests_on = [](double coverage) {
      return coverage < kComputeFiguresFull
                 ? " (of the " + FormatPercent(coverage) + " of its time with recorded shapes)"
                 : std::string();
    };
    const bool typed = c.precision_coverage >= kComputeFiguresMinCoverage;
    const bool counted = c.flops_coverage >= kComputeFiguresMinCoverage;
    if (!c.precision.empty() && typed) line += ", " + c.precision + (counted ? "" : rests_on(c.precision_coverage));
    if (c.achieved_flops_per_second && counted) {
      line += ", " + FormatFixed(*c.achieved_flops_per_second / 1e9, 1) + " GFLOP/s" + rests_on(c.flops_coverage);
    }
    if (c.compute_utilization && counted) {
      line += " = " + FormatPercent(*c.compute_utilization) + " of the " + r.device + " peak";
      // Above the peak: the peaks are not the machine's that recorded the
      // trace (a CPU trace from elsewhere against this machine's cpu-local).
      if (*c.compute_utilization > 1.0) line += " (above the peak: the trace comes from a faster machine than these peaks describe; pass --device)";
    } else if (c.achieved_flops_per_second && counted && r.device.empty()) {
      line += " (no peak to compare: " + r.device_problem + ")";
    }
    if (!c.modules.empty()) {
      line += "; in";
      for (size_t i = 0; i < c.modules.size(); ++i) {
        line += std::string(i ? ", " : " ") + NodePath(trace, a, c.modules[i]) + " " +
                FormatDurationNs(a.PerStep(c.module_ns[i]));
      }
    }
    const bool reduced = r.width_known_ns > 0 && 2 * r.width_reduced_ns >= r.width_known_ns;
    line += std::string("; faster: ") + ComputeAdvice(c.op_class, r.device_time, reduced, r.compiled_ns > 0, torch);
    m->AddEvidence("compute", std::move(line));
  }
  if (left_out > 0) {
    m->AddEvidence("compute", std::to_string(left_out) + (left_out == 1 ? " class" : " classes") + " under " +
                                  FormatPercent(kComputeClassMinShare) + " of compute each, not listed: " +
                                  FormatDurationNs(a.PerStep(left_out_ns)) + " per step (" +
                                  FormatPercent(static_cast<double>(left_out_ns) / static_cast<double>(total)) +
                                  " of compute) together");
  }
}

}  // namespace aiprof
