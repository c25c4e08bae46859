#include "src/analysis/layout/layout_conversions.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "src/analysis/common/intervals.h"
#include "src/analysis/common/op_args.h"
#include "src/analysis/common/text_format.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/window/analysis_window.h"
#include "src/base/ascii.h"

namespace aiprof {
namespace {

// A kernel that computes and only lists a transpose among what it does:
// Inductor's Triton kernels name every aten op they fused
// (triton_red_fused__to_copy_add_addmm_..._transpose_unbind_...), XLA's
// fusions say "fusion", and GEMM libraries name the operands' transposition
// (Tensile's Cijk_Alik_..., CUTLASS/cuBLAS "gemm", "_tn"/"_nt" layouts).
bool IsComputeKernelName(std::string_view name) {
  return EqualsIgnoreCase(name.substr(0, 7), "triton_") || ContainsIgnoreCase(name, "fused") ||
         ContainsIgnoreCase(name, "fusion") || ContainsIgnoreCase(name, "gemm") || ContainsIgnoreCase(name, "cijk_") ||
         ContainsIgnoreCase(name, "cutlass");
}

}  // namespace

bool IsNamedConversion(std::string_view name, bool device_kernel) {
  return ContainsIgnoreCase(name, "transdata") || ContainsIgnoreCase(name, "nchwtonhwc") ||
         ContainsIgnoreCase(name, "nhwctonchw") || ContainsIgnoreCase(name, "format_cast") ||
         ContainsIgnoreCase(name, "formatcast") ||
         (device_kernel && ContainsIgnoreCase(name, "transpose") && !IsComputeKernelName(name));
}

namespace {

constexpr char kLayoutSource[] = "layout";

bool IsConversionName(std::string_view n) {
  return n == "aten::to" || n == "aten::_to_copy" || n == "aten::contiguous" || n == "aten::clone";
}

bool IsCloneCaller(std::string_view n) {
  return n == "aten::contiguous" || n == "aten::flatten" || n == "aten::reshape";
}

class ConversionFinder {
 public:
  explicit ConversionFinder(const Trace& t)
      : t_(t), args_(t), parent_(ParentSlices(t)), launcher_(OpLaunchingCalls(t)), named_(t.strings.size(), kUnknown) {}

  LayoutResult Run() {
    const SliceTable& s = t_.slices;
    MarkMemcpyLaunchers();
    std::vector<char> counted(s.size(), 0);
    for (uint32_t i = 0; i < s.size(); ++i) {
      if (IsDeviceActivity(s.kind[i])) {
        result_.device = true;
        continue;
      }
      if (s.kind[i] != EventKind::kCpuOp) continue;
      uint32_t outer = kNoSlice;
      if (Named(i, false)) outer = i;
      else if (Name(i) == "aten::copy_" && !launches_memcpy_[i]) outer = OuterConversion(i);
      if (outer == kNoSlice || counted[outer]) continue;
      counted[outer] = 1;
      host_conversions_.push_back(outer);
    }
    if (result_.device) DeviceShare(); else CpuShare();
    std::sort(result_.groups.begin(), result_.groups.end(), [](const ConversionGroup& a, const ConversionGroup& b) {
      return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.op < b.op;
    });
    return std::move(result_);
  }

 private:
  std::string_view Name(uint32_t i) const { return t_.Str(t_.slices.name[i]); }

  // IsNamedConversion of slice i's name, computed once per distinct name
  // (names repeat: case-insensitive searches per slice cost more than the
  // rest of the analysis on long kernel names).
  bool Named(uint32_t i, bool device_kernel) {
    int8_t& c = named_[t_.slices.name[i].raw];
    const int8_t bit = device_kernel ? 2 : 1, known = device_kernel ? 8 : 4;
    if (!(c & known)) c = static_cast<int8_t>(c | known | (IsNamedConversion(Name(i), device_kernel) ? bit : 0));
    return c & bit;
  }

  // Host ops that (transitively) launch a device memcpy.
  void MarkMemcpyLaunchers() {
    launches_memcpy_.assign(t_.slices.size(), 0);
    for (uint32_t i = 0; i < t_.slices.size(); ++i) {
      if (t_.slices.kind[i] != EventKind::kMemcpy || launcher_[i] == kNoSlice) continue;
      for (uint32_t p = launcher_[i]; p != kNoSlice && !launches_memcpy_[p]; p = parent_[p]) launches_memcpy_[p] = 1;
    }
  }

  // For a same-shape same-dtype copy_ under a conversion chain, the outermost
  // conversion op; else kNoSlice.
  uint32_t OuterConversion(uint32_t copy) const {
    auto dims = args_.InputDims(copy);
    auto types = args_.InputTypes(copy);
    if (!dims || !types || dims->size() < 2 || types->size() < 2) return kNoSlice;
    if ((*dims)[0].size() < 2 || (*dims)[0] != (*dims)[1] || (*types)[0] != (*types)[1]) return kNoSlice;
    uint32_t outer = kNoSlice;
    for (uint32_t p = parent_[copy]; p != kNoSlice && IsConversionName(Name(p)); p = parent_[p]) {
      if (Name(p) == "aten::clone") {
        uint32_t caller = parent_[p];
        if (caller == kNoSlice || !IsCloneCaller(Name(caller))) break;
      }
      outer = p;
    }
    return outer;
  }

  // Enclosing op name; "ProfilerStep#7" style suffixes become "#*" so
  // every step's instances group together.
  std::string Trigger(uint32_t op) const {
    uint32_t p = parent_[op];
    if (p == kNoSlice) return "";
    return InstanceNameKey(Name(p));
  }

  void Add(std::string op, std::string trigger, int64_t ns, uint32_t slice) {
    result_.slices.push_back(slice);
    auto key = std::make_pair(op, trigger);
    auto it = index_.find(key);
    if (it == index_.end()) {
      it = index_.emplace(key, result_.groups.size()).first;
      result_.groups.push_back({std::move(op), std::move(trigger), 0, 0});
    }
    ConversionGroup& g = result_.groups[it->second];
    ++g.count;
    g.total_ns += ns;
    ++result_.count;
    result_.conversion_ns += ns;
  }

  void CpuShare() {
    const SliceTable& s = t_.slices;
    const std::vector<char> under_op = UnderCpuOp(t_, parent_);
    for (uint32_t i = 0; i < s.size(); ++i) {
      if (s.kind[i] == EventKind::kCpuOp && !under_op[i]) result_.denominator_ns += s.dur_ns[i];
    }
    for (uint32_t op : host_conversions_) Add(std::string(Name(op)), Trigger(op), s.dur_ns[op], op);
  }

  // Kernels that are named conversions or launched inside a host conversion.
  void DeviceShare() {
    const SliceTable& s = t_.slices;
    std::vector<char> in_conversion(s.size(), 0);
    for (uint32_t op : host_conversions_) in_conversion[op] = 1;
    // Walking up from a slice: host[i], the first host conversion op at or
    // above it; first_op[i], the first cpu_op at or above it before that
    // conversion (the walk stops there). One pass, parents preceding children:
    // a walk per kernel was quadratic in the nesting depth.
    std::vector<uint32_t> host(s.size(), kNoSlice), first_op(s.size(), kNoSlice);
    for (uint32_t i = 0; i < s.size(); ++i) {
      const uint32_t p = parent_[i];
      const bool op = s.kind[i] == EventKind::kCpuOp;
      host[i] = in_conversion[i] ? i : p == kNoSlice ? kNoSlice : host[p];
      first_op[i] = op ? i : in_conversion[i] || p == kNoSlice ? kNoSlice : first_op[p];
    }
    for (uint32_t i = 0; i < s.size(); ++i) {
      if (s.kind[i] != EventKind::kKernel) continue;
      result_.denominator_ns += s.dur_ns[i];
      const uint32_t l = launcher_[i];
      const uint32_t conversion = l == kNoSlice ? kNoSlice : host[l];  // enclosing host conversion op, if any
      const uint32_t launcher_op = l == kNoSlice ? kNoSlice : first_op[l];
      if (Named(i, true)) {
        Add(std::string(Name(i)), launcher_op == kNoSlice ? "" : std::string(Name(launcher_op)), s.dur_ns[i], i);
      } else if (conversion != kNoSlice) {
        Add(std::string(Name(conversion)), Trigger(conversion), s.dur_ns[i], i);
      }
    }
  }

  const Trace& t_;
  OpArgReader args_;
  std::vector<uint32_t> parent_, launcher_;
  std::vector<char> launches_memcpy_;
  std::vector<uint32_t> host_conversions_;
  std::map<std::pair<std::string, std::string>, size_t> index_;
  static constexpr int8_t kUnknown = 0;
  std::vector<int8_t> named_;  // per StringId: bits 1/2 = named (host/device), 4/8 = computed
  LayoutResult result_;
};

}  // namespace

LayoutResult ComputeLayoutConversions(const Trace& trace) { return ConversionFinder(trace).Run(); }

void PublishLayoutConversions(const Trace& trace, const LayoutResult& r, MetricSet* metrics) {
  if (r.denominator_ns <= 0) {
    const char* why = r.device ? "no kernel time in the trace" : "no cpu_op time in the trace";
    metrics->SetUnavailable("layout_conversion_ratio", why);
  } else {
    metrics->Set("layout_conversion_ratio",
                 static_cast<double>(r.conversion_ns) / static_cast<double>(r.denominator_ns), kLayoutSource);
  }
  if (trace.steps.size() == 0) {
    metrics->SetUnavailable("layout_conversion_count_per_step", "no steps in the trace");
  } else {
    metrics->Set("layout_conversion_count_per_step",
                 static_cast<double>(r.count) / static_cast<double>(trace.steps.size()), kLayoutSource);
  }
  for (size_t i = 0; i < std::min(kLayoutTopReported, r.groups.size()); ++i) {
    const ConversionGroup& g = r.groups[i];
    std::string share = r.denominator_ns > 0
                            ? FormatPercent(static_cast<double>(g.total_ns) / static_cast<double>(r.denominator_ns))
                            : "n/a";
    metrics->AddEvidence("layout_conversion",
                         g.op + " x" + std::to_string(g.count) + ", " + FormatDurationNs(g.total_ns) + " (" + share +
                             " of " + (r.device ? "kernel" : "CPU op") + " time), triggered by " +
                             (g.trigger.empty() ? "(top level)" : g.trigger));
  }
}

void PublishLayoutImpact(const Trace& trace, const LayoutResult& r, const AnalysisWindow& window, MetricSet* metrics) {
  // The conversions' own time inside the window: conversion kernels occupy
  // their stream (host conversions their thread) for that long, so it is on
  // the critical path of the step unless something else runs alongside.
  std::map<int32_t, Intervals> by_rank;
  for (uint32_t sl : r.slices) {
    by_rank[trace.tracks.rank[trace.slices.track[sl]]].emplace_back(trace.slices.ts_ns[sl],
                                                                    trace.slices.ts_ns[sl] + trace.slices.dur_ns[sl]);
  }
  std::map<int32_t, double> totals;
  for (auto& [rank, iv] : by_rank) {
    // Conversion kernels over the device's window, host conversions over the host steps.
    totals[rank] = static_cast<double>(
        IntersectionLength(MergeIntervals(std::move(iv)), r.device ? window.DeviceIntervals() : window.intervals));
  }
  if (r.denominator_ns <= 0) {
    metrics->SetUnavailable("layout_conversion_ns", "no kernels or cpu_op slices in the trace");
    return;
  }
  metrics->Set("layout_conversion_ns", r.device ? window.PerDeviceBase(totals) : window.PerBase(totals), kLayoutSource);
}

}  // namespace aiprof
