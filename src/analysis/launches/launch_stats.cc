#include "src/analysis/launches/launch_stats.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "src/analysis/common/capture_windows.h"
#include "src/analysis/common/intervals.h"
#include "src/analysis/common/text_format.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/launches/launch_hold.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/summary/summary.h"
#include "src/model/graph_capture_tracks.h"

namespace aiprof {
namespace {

constexpr char kLaunchesSource[] = "launches";

bool IsTask(EventKind k) { return k == EventKind::kKernel || k == EventKind::kCollective; }

// Host runtime calls only: the copies a graph-capture merge re-times onto
// replayed kernels (IsGraphCaptureTrack, left out of the op statistics too)
// carry synthetic durations, not host time.
void FindOutliers(const Trace& trace, const std::vector<uint8_t>& capture_track, LaunchStats* out) {
  const SliceTable& s = trace.slices;
  std::vector<uint8_t> host_call(s.size(), 0);
  for (size_t i = 0; i < s.size(); ++i) {
    host_call[i] = s.kind[i] == EventKind::kRuntime && !capture_track[s.track[i]];
  }
  std::unordered_map<uint32_t, std::vector<int64_t>> by_name;
  for (size_t i = 0; i < s.size(); ++i) {
    if (host_call[i]) by_name[s.name[i].raw].push_back(s.dur_ns[i]);
  }
  std::unordered_map<uint32_t, double> median;
  for (auto& [name, d] : by_name) {
    if (d.size() < kRuntimeOutlierMinCount) continue;
    std::sort(d.begin(), d.end());
    median[name] = QuantileSorted(d.data(), d.size(), 0.5);
  }
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (!host_call[i]) continue;
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

namespace {

// Capture windows (src/analysis/common/capture_windows.h): the closed ones
// counted with their time; a work launch call inside any window of its
// thread, closed or not, was recorded into a graph, not run.
void CountCapturedLaunches(const Trace& trace, const std::vector<CaptureWindow>& windows,
                           const std::vector<uint8_t>& capture_track, LaunchStats* out) {
  for (const CaptureWindow& w : windows) {
    if (!w.closed) continue;
    ++out->capture_windows;
    out->capture_ns += w.end_ns - w.start_ns;
  }
  const SliceTable& s = trace.slices;
  std::vector<uint8_t> launch_name(trace.strings.size(), 0);  // 0 unknown, 1 no, 2 yes
  size_t next = 0;  // the first window not ending before the slice (windows and slices in track, start order)
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] != EventKind::kRuntime && s.kind[i] != EventKind::kDriver) continue;
    if (capture_track[s.track[i]]) continue;
    uint8_t& c = launch_name[s.name[i].raw];
    if (c == 0) c = IsWorkLaunchName(trace.Str(s.name[i])) ? 2 : 1;
    if (c != 2) continue;
    ++out->work_launch_calls;
    while (next < windows.size() && (windows[next].track < s.track[i] ||
                                     (windows[next].track == s.track[i] && windows[next].end_ns < s.ts_ns[i]))) {
      ++next;
    }
    out->captured_launch_calls +=
        next < windows.size() && windows[next].track == s.track[i] && windows[next].start_ns <= s.ts_ns[i];
  }
}

// One launching call and what it launched.
struct CallInfo {
  int64_t first_start = INT64_MAX;
  int64_t last_end = INT64_MIN;
  uint32_t first_track = kNoTrack;
};

// Per launch call: delay of its first kernel, one-by-one launch cost, graph
// launch cost and the device gaps between consecutive graph replays.
void SummariseCalls(const Trace& trace, const std::unordered_map<uint32_t, CallInfo>& calls,
                    const std::vector<std::pair<int64_t, int64_t>>& steps, LaunchStats* out) {
  const SliceTable& s = trace.slices;
  std::vector<int64_t> delays, held, call_durs, graph_durs;
  std::vector<std::tuple<uint32_t, int64_t, int64_t>> replays;  // track, start, end
  for (const auto& [call, info] : calls) {
    ++out->launch_calls;
    if (IntervalsContain(steps, s.ts_ns[call])) ++out->launch_calls_in_steps;
    // Work that started kMinLaunchHoldNs or more after its call returned
    // was held by the device (a graph replay queued behind earlier work):
    // no launch latency, counted apart.
    const int64_t delay = info.first_start - (s.ts_ns[call] + s.dur_ns[call]);
    (delay >= kMinLaunchHoldNs ? held : delays).push_back(delay);
    if (IsGraphLaunchName(trace.Str(s.name[call]))) {
      ++out->graph_launches;
      graph_durs.push_back(s.dur_ns[call]);
      replays.emplace_back(info.first_track, info.first_start, info.last_end);
    } else {
      call_durs.push_back(s.dur_ns[call]);
    }
  }
  std::sort(delays.begin(), delays.end());
  std::sort(held.begin(), held.end());
  std::sort(call_durs.begin(), call_durs.end());
  std::sort(graph_durs.begin(), graph_durs.end());
  out->delay_p50_ns = QuantileSorted(delays.data(), delays.size(), 0.5);
  out->delay_p90_ns = QuantileSorted(delays.data(), delays.size(), 0.9);
  out->delay_max_ns = delays.empty() ? 0 : delays.back();
  out->held_calls = held.size();
  out->held_p50_ns = QuantileSorted(held.data(), held.size(), 0.5);
  out->held_max_ns = held.empty() ? 0 : held.back();
  out->launch_cost_ns = QuantileSorted(call_durs.data(), call_durs.size(), 0.5);
  out->graph_launch_cost_ns = QuantileSorted(graph_durs.data(), graph_durs.size(), 0.5);
  std::sort(replays.begin(), replays.end());
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < replays.size(); ++i) {
    const auto& [track, start, end] = replays[i];
    const auto& [prev_track, prev_start, prev_end] = replays[i - 1];
    if (track != prev_track || start < prev_end) continue;
    gaps.push_back(start - prev_end);
  }
  std::sort(gaps.begin(), gaps.end());
  out->graph_gaps = gaps.size();
  for (int64_t g : gaps) out->graph_gap_total_ns += g;
  out->graph_gap_p50_ns = QuantileSorted(gaps.data(), gaps.size(), 0.5);
}

// For every slice, whether a cpu_op encloses it on its track (parents come
// before their children in slice order). The root a graph-capture merge puts
// over a replay's copied ops is structure, not an op.
std::vector<uint8_t> UnderHostOp(const Trace& trace) {
  const SliceTable& s = trace.slices;
  std::vector<uint32_t> parent = ParentSlices(trace);
  std::vector<uint8_t> under(s.size(), 0);
  const std::optional<StringId> replay_root = trace.strings.Find(kGraphCaptureFlowCategory);
  for (uint32_t i = 0; i < s.size(); ++i) {
    uint32_t p = parent[i];
    bool op = p != kNoSlice && s.kind[p] == EventKind::kCpuOp && (!replay_root || s.category[p] != *replay_root);
    under[i] = p != kNoSlice && (op || under[p]);
  }
  return under;
}

}  // namespace

LaunchStats ComputeLaunchStats(const Trace& trace, const std::vector<CaptureWindow>* capture_windows) {
  LaunchStats out;
  const SliceTable& s = trace.slices;
  std::vector<uint32_t> launcher = LaunchingCalls(trace);
  std::vector<uint32_t> launching_op = LaunchingOps(trace);
  std::vector<uint32_t> op_call = OpLaunchingCalls(trace);  // a replayed kernel's captured launch
  std::vector<uint8_t> under_op = UnderHostOp(trace);
  std::vector<std::pair<int64_t, int64_t>> steps;
  for (size_t i = 0; i < trace.steps.size(); ++i) {
    steps.emplace_back(trace.steps.ts_ns[i], trace.steps.ts_ns[i] + trace.steps.dur_ns[i]);
  }
  std::sort(steps.begin(), steps.end());
  std::unordered_map<uint32_t, CallInfo> calls;
  std::vector<uint32_t> one_by_one;  // kernels launched by a non-graph call
  for (uint32_t i = 0; i < s.size(); ++i) {
    out.host_ops |= s.kind[i] == EventKind::kCpuOp;
    if (!IsDeviceActivity(s.kind[i])) continue;
    uint32_t call = launcher[i];
    bool graph = call != kNoSlice && IsGraphLaunchName(trace.Str(s.name[call]));
    out.device_time_ns += s.dur_ns[i];
    const bool captured = op_call[i] != call && op_call[i] != kNoSlice && under_op[op_call[i]];
    if (launching_op[i] != kNoSlice || (call != kNoSlice && !graph && under_op[call]) || captured) {
      out.attributed_time_ns += s.dur_ns[i];
    }
    if (!IsTask(s.kind[i])) continue;
    ++out.kernels;
    if (call == kNoSlice) continue;
    ++out.launches;
    out.kernels_in_steps += IntervalsContain(steps, s.ts_ns[call]);
    if (graph) {
      ++out.graph_kernels;
      out.graph_kernels_captured += op_call[i] != call && op_call[i] != kNoSlice;
    } else {
      one_by_one.push_back(i);
    }
    CallInfo& info = calls[call];
    if (s.ts_ns[i] < info.first_start) {
      info.first_start = s.ts_ns[i];
      info.first_track = s.track[i];
    }
    info.last_end = std::max(info.last_end, s.ts_ns[i] + s.dur_ns[i]);
  }
  SummariseCalls(trace, calls, steps, &out);
  if (out.launch_calls > out.graph_launches) {
    for (uint32_t k : one_by_one) out.short_kernels += static_cast<double>(s.dur_ns[k]) < out.launch_cost_ns;
  }
  // The tracks a graph-capture merge added (copies, not host calls).
  std::vector<uint8_t> capture_track(trace.tracks.size(), 0);
  for (uint32_t t = 0; t < trace.tracks.size(); ++t) capture_track[t] = IsGraphCaptureTrack(trace, t);
  FindOutliers(trace, capture_track, &out);
  std::vector<CaptureWindow> found;
  if (capture_windows == nullptr) found = FindCaptureWindows(trace);
  CountCapturedLaunches(trace, capture_windows != nullptr ? *capture_windows : found, capture_track, &out);
  return out;
}

void PublishLaunchStats(const Trace& trace, const LaunchStats& st, MetricSet* metrics) {
  constexpr const char* kLaunchMetrics[] = {"launches_per_step", "launch_delay_p50_ns", "short_kernel_ratio",
                                            "graph_kernel_ratio", "graph_launch_cost_ns", "graph_gap_p50_ns"};
  // 0 without work launch calls (none captured): a trace of another runtime
  // must not leave the rules that test it unevaluated.
  metrics->Set("graph_capture_launch_ratio",
               st.work_launch_calls == 0
                   ? 0.0
                   : static_cast<double>(st.captured_launch_calls) / static_cast<double>(st.work_launch_calls),
               kLaunchesSource);
  metrics->Set("graph_capture_ns", static_cast<double>(st.capture_ns), kLaunchesSource);
  if (st.capture_windows > 0) {
    metrics->AddEvidence("graph_capture", std::to_string(st.captured_launch_calls) + " of " +
                                              std::to_string(st.work_launch_calls) + " launch calls lie inside " +
                                              std::to_string(st.capture_windows) + " stream capture window" +
                                              (st.capture_windows == 1 ? "" : "s") + " (" +
                                              FormatDurationNs(static_cast<double>(st.capture_ns)) +
                                              "): recorded into a graph, not run");
  }
  if (!st.host_ops) {
    metrics->SetUnavailable("op_coverage", "no host ops (cpu_op) in the trace to attribute device time to");
  } else if (st.device_time_ns > 0) {
    metrics->Set("op_coverage", static_cast<double>(st.attributed_time_ns) / static_cast<double>(st.device_time_ns),
                 kLaunchesSource);
  } else {
    metrics->SetUnavailable("op_coverage", "no device activity in the trace");
  }
  if (st.kernels == 0) {
    auto unmodelled = trace.metadata.find("accelerator_unmodelled");
    const std::string why = unmodelled != trace.metadata.end()
                                ? "the trace holds device events of an accelerator aiprof has no model for (" +
                                      unmodelled->second + "), but no kernels it recognises"
                                : std::string("no device kernels in the trace (CPU-only)");
    for (const char* m : kLaunchMetrics) metrics->SetUnavailable(m, why);
    return;
  }
  metrics->Set("graph_kernel_ratio", static_cast<double>(st.graph_kernels) / static_cast<double>(st.kernels),
               kLaunchesSource);
  if (st.launches == 0) {
    const char* why = "no kernel is linked to its launching runtime call (no correlation/flows)";
    for (const char* m : kLaunchMetrics) {
      if (std::string_view(m) != "graph_kernel_ratio") metrics->SetUnavailable(m, why);
    }
    return;
  }
  if (trace.steps.size() == 0) {
    metrics->SetUnavailable("launches_per_step", "no steps in the trace");
  } else {
    metrics->Set("launches_per_step",
                 static_cast<double>(st.launch_calls_in_steps) / static_cast<double>(trace.steps.size()),
                 kLaunchesSource);
  }
  if (st.held_calls == st.launch_calls) {
    metrics->SetUnavailable(
        "launch_delay_p50_ns",
        "every launch call's work started " + FormatDurationNs(static_cast<double>(kMinLaunchHoldNs)) +
            " or more after the call returned (" + std::to_string(st.held_calls) + " held by the device, median " +
            FormatDurationNs(st.held_p50_ns) + "): holds, not launch latency");
  } else {
    metrics->Set("launch_delay_p50_ns", st.delay_p50_ns, kLaunchesSource);
  }
  metrics->Set("short_kernel_ratio", static_cast<double>(st.short_kernels) / static_cast<double>(st.kernels),
               kLaunchesSource);
  if (st.graph_launches == 0) {
    metrics->SetUnavailable("graph_launch_cost_ns", "no graph launches in the trace");
    metrics->SetUnavailable("graph_gap_p50_ns", "no graph launches in the trace");
  } else {
    metrics->Set("graph_launch_cost_ns", st.graph_launch_cost_ns, kLaunchesSource);
    if (st.graph_gaps == 0) {
      metrics->SetUnavailable("graph_gap_p50_ns", "fewer than two consecutive graph replays on a stream");
    } else {
      metrics->Set("graph_gap_p50_ns", st.graph_gap_p50_ns, kLaunchesSource);
    }
    metrics->AddEvidence("host_bound", std::to_string(st.graph_launches) + " graph launches replay " +
                                           std::to_string(st.graph_kernels) + " of " + std::to_string(st.kernels) +
                                           " kernels; each graph launch call takes " +
                                           FormatDurationNs(st.graph_launch_cost_ns) + " (median); " +
                                           (st.graph_gaps > 0 ? "device gap between replays " +
                                                                    FormatDurationNs(st.graph_gap_p50_ns) + " (median)"
                                                              : std::string("no consecutive replays")));
  }
  for (const RuntimeOutlier& o : st.outliers) {
    metrics->AddEvidence("host_bound", "runtime call " + std::string(trace.Str(trace.slices.name[o.slice])) + " took " +
                                           FormatDurationNs(static_cast<double>(trace.slices.dur_ns[o.slice])) +
                                           " (median " + FormatDurationNs(o.median_ns) + ") at ts " +
                                           std::to_string(trace.slices.ts_ns[o.slice]) + " ns");
  }
}

}  // namespace aiprof
