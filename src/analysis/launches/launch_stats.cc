#include "src/analysis/launches/launch_stats.h"

#include <algorithm>
#include <unordered_map>

#include "src/analysis/common/text_format.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/summary/summary.h"

namespace aiprof {
namespace {

constexpr char kSource[] = "launches";

bool IsTask(EventKind k) { return k == EventKind::kKernel || k == EventKind::kCollective; }

bool InsideAnyStep(const std::vector<std::pair<int64_t, int64_t>>& steps, int64_t ts) {
  auto it = std::upper_bound(steps.begin(), steps.end(), std::make_pair(ts, INT64_MAX));
  return it != steps.begin() && ts < std::prev(it)->second;
}

void FindOutliers(const Trace& trace, LaunchStats* out) {
  const SliceTable& s = trace.slices;
  std::unordered_map<uint32_t, std::vector<int64_t>> by_name;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] == EventKind::kRuntime) by_name[s.name[i].raw].push_back(s.dur_ns[i]);
  }
  std::unordered_map<uint32_t, double> median;
  for (auto& [name, d] : by_name) {
    if (d.size() < kRuntimeOutlierMinCount) continue;
    std::sort(d.begin(), d.end());
    median[name] = QuantileSorted(d.data(), d.size(), 0.5);
  }
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] != EventKind::kRuntime) continue;
    auto it = median.find(s.name[i].raw);
    if (it != median.end() && static_cast<double>(s.dur_ns[i]) > kRuntimeOutlierFactor * it->second) {
      out->outliers.push_back({i, it->second});
    }
  }
  std::sort(out->outliers.begin(), out->outliers.end(), [&](const RuntimeOutlier& a, const RuntimeOutlier& b) {
    return s.dur_ns[a.slice] != s.dur_ns[b.slice] ? s.dur_ns[a.slice] > s.dur_ns[b.slice] : a.slice < b.slice;
  });
  if (out->outliers.size() > kRuntimeOutliersReported) out->outliers.resize(kRuntimeOutliersReported);
}

}  // namespace

LaunchStats ComputeLaunchStats(const Trace& trace) {
  LaunchStats out;
  const SliceTable& s = trace.slices;
  std::vector<uint32_t> launcher = LaunchingCalls(trace);
  std::vector<std::pair<int64_t, int64_t>> steps;
  for (size_t i = 0; i < trace.steps.size(); ++i) {
    steps.emplace_back(trace.steps.ts_ns[i], trace.steps.ts_ns[i] + trace.steps.dur_ns[i]);
  }
  std::sort(steps.begin(), steps.end());
  std::vector<int64_t> delays, call_durs, kernel_durs;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (!IsTask(s.kind[i])) continue;
    ++out.kernels;
    kernel_durs.push_back(s.dur_ns[i]);
    uint32_t call = launcher[i];
    if (call == kNoSlice) continue;
    ++out.launches;
    if (InsideAnyStep(steps, s.ts_ns[call])) ++out.launches_in_steps;
    delays.push_back(s.ts_ns[i] - (s.ts_ns[call] + s.dur_ns[call]));
    call_durs.push_back(s.dur_ns[call]);
  }
  std::sort(delays.begin(), delays.end());
  std::sort(call_durs.begin(), call_durs.end());
  out.delay_p50_ns = QuantileSorted(delays.data(), delays.size(), 0.5);
  out.delay_p90_ns = QuantileSorted(delays.data(), delays.size(), 0.9);
  out.delay_max_ns = delays.empty() ? 0 : delays.back();
  out.launch_cost_ns = QuantileSorted(call_durs.data(), call_durs.size(), 0.5);
  if (!call_durs.empty()) {
    for (int64_t d : kernel_durs) out.short_kernels += static_cast<double>(d) < out.launch_cost_ns;
  }
  FindOutliers(trace, &out);
  return out;
}

void PublishLaunchStats(const Trace& trace, const LaunchStats& st, MetricSet* metrics) {
  if (st.kernels == 0) {
    const char* why = "no device kernels in the trace (CPU-only)";
    for (const char* m : {"launches_per_step", "launch_delay_p50_ns", "short_kernel_ratio"}) metrics->SetUnavailable(m, why);
    return;
  }
  if (st.launches == 0) {
    const char* why = "no kernel is linked to its launching runtime call (no correlation/flows)";
    for (const char* m : {"launches_per_step", "launch_delay_p50_ns", "short_kernel_ratio"}) metrics->SetUnavailable(m, why);
    return;
  }
  if (trace.steps.size() == 0) {
    metrics->SetUnavailable("launches_per_step", "no steps in the trace");
  } else {
    metrics->Set("launches_per_step",
                 static_cast<double>(st.launches_in_steps) / static_cast<double>(trace.steps.size()), kSource);
  }
  metrics->Set("launch_delay_p50_ns", st.delay_p50_ns, kSource);
  metrics->Set("short_kernel_ratio", static_cast<double>(st.short_kernels) / static_cast<double>(st.kernels), kSource);
  for (const RuntimeOutlier& o : st.outliers) {
    metrics->AddEvidence("host_bound", "runtime call " + std::string(trace.Str(trace.slices.name[o.slice])) + " took " +
                                           FormatDurationNs(static_cast<double>(trace.slices.dur_ns[o.slice])) +
                                           " (median " + FormatDurationNs(o.median_ns) + ") at ts " +
                                           std::to_string(trace.slices.ts_ns[o.slice]) + " ns");
  }
}

}  // namespace aiprof
