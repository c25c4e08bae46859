#include "src/analysis/summary/summary.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "src/analysis/attribution/op_class.h"
#include "src/analysis/common/steps.h"
#include "src/analysis/window/analysis_window.h"
#include "src/model/graph_capture_tracks.h"
#include "src/model/op_stats.h"
#include "src/model/slice_nesting.h"

namespace aiprof {

int64_t UnionLengthNs(std::vector<std::pair<int64_t, int64_t>>* intervals) {
  std::sort(intervals->begin(), intervals->end());
  int64_t total = 0;
  int64_t cur_start = 0, cur_end = 0;
  bool open = false;
  for (const auto& [start, end] : *intervals) {
    if (!open || start > cur_end) {
      if (open) total += cur_end - cur_start;
      cur_start = start;
      cur_end = end;
      open = true;
    } else {
      cur_end = std::max(cur_end, end);
    }
  }
  if (open) total += cur_end - cur_start;
  return total;
}

namespace {

// Self time per op, in one walk over each track's slices
// (src/model/slice_nesting.h, as query's self_ns and the flame graph): every
// instant of the track goes to the innermost slice open at it (the latest
// started), so Σ self over a track is the union of its slices and nothing is
// counted twice. Slices missing from the table (a stale stats table) still
// cover their time.
void AddSelfTimes(const Trace& trace, std::vector<OpStat>* ops) {
  std::unordered_map<uint64_t, uint32_t> group;
  group.reserve(ops->size() * 2);
  auto key = [](StringId cat, StringId name) { return (static_cast<uint64_t>(cat.raw) << 32) | name.raw; };
  for (size_t g = 0; g < ops->size(); ++g) {
    OpStat& op = (*ops)[g];
    group.emplace(key(op.category, op.name), static_cast<uint32_t>(g));
    std::string_view name = trace.Str(op.name);
    op.profiler_wrapper = IsProfilerWrapperName(name) || trace.Str(op.category) == "Trace";
  }
  constexpr uint32_t kNoGroup = UINT32_MAX;
  const SliceTable& s = trace.slices;
  // device_record: every slice of the group on a device track and not
  // device activity, or on torch_npu's Overlap Analysis tracks (cleared by
  // the first slice that is neither).
  for (OpStat& op : *ops) op.device_record = true;
  std::vector<uint32_t> group_of;  // per row of the current track, reused
  for (size_t begin = 0; begin < s.size();) {
    const uint32_t track = s.track[begin];
    size_t end = begin;
    while (end < s.size() && s.track[end] == track) ++end;
    // Its slices are ops (a host track, or a capture track), device records
    // unless they are device activity (a device stream), or records whatever
    // they are (torch_npu's Overlap Analysis bands). A graph-capture track
    // is not in the self times.
    const bool capture = IsGraphCaptureTrack(trace, track);
    const bool bands = trace.Str(trace.tracks.process_name[track]) == "Overlap Analysis";
    const bool device_track = !bands && trace.tracks.kind[track] == TrackKind::kDeviceStream;
    const bool ops_track = capture || (!bands && !device_track);
    group_of.resize(end - begin);
    for (size_t i = begin; i < end; ++i) {
      auto it = group.find(key(s.category[i], s.name[i]));
      group_of[i - begin] = it == group.end() ? kNoGroup : it->second;
      if (it != group.end() && (ops_track || (device_track && IsDeviceActivity(s.kind[i])))) {
        (*ops)[it->second].device_record = false;
      }
    }
    if (!capture) {
      SweepTrackNesting<uint32_t>(
          s, begin, end, [](size_t) { return true; },
          [&](size_t i, const uint32_t*) { return group_of[i - begin]; },
          [&](uint32_t g, int64_t ns) {
            if (g != kNoGroup) (*ops)[g].self_ns += ns;
          });
    }
    begin = end;
  }
}

// Per-op figures come from the model's op statistics: stored in an .aiprof
// file, or computed here in one pass (ComputeOpStats).
std::vector<OpStat> ComputeOps(const Trace& trace) {
  OpStatTable computed;
  const OpStatTable* table = &trace.op_stats;
  if (!OpStatsCurrent(trace)) {
    computed = ComputeOpStats(trace);
    table = &computed;
  }
  std::vector<OpStat> ops(table->size());
  for (size_t g = 0; g < ops.size(); ++g) {
    OpStat& op = ops[g];
    op.category = table->category[g];
    op.name = table->name[g];
    op.count = table->count[g];
    op.total_ns = table->total_ns[g];
    op.max_ns = table->max_ns[g];
    op.mean_ns = static_cast<double>(op.total_ns) / static_cast<double>(op.count);
    op.p50_ns = table->p50_ns[g];
    op.p99_ns = table->p99_ns[g];
  }
  AddSelfTimes(trace, &ops);
  std::sort(ops.begin(), ops.end(), [&trace](const OpStat& a, const OpStat& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    return trace.Str(a.name) < trace.Str(b.name);
  });
  return ops;
}

std::vector<DeviceStat> ComputeDevices(const Trace& trace) {
  const SliceTable& s = trace.slices;
  std::map<std::pair<int32_t, int32_t>, std::vector<std::pair<int64_t, int64_t>>> by_device;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!IsDeviceActivity(s.kind[i])) continue;
    uint32_t t = s.track[i];
    by_device[{trace.tracks.rank[t], trace.tracks.device[t]}].emplace_back(s.ts_ns[i], s.ts_ns[i] + s.dur_ns[i]);
  }
  std::vector<DeviceStat> out;
  for (auto& [key, intervals] : by_device) {
    DeviceStat d;
    d.rank = key.first;
    d.device = key.second;
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (const auto& [a, b] : intervals) {
      first = std::min(first, a);
      last = std::max(last, b);
    }
    d.busy_ns = UnionLengthNs(&intervals);
    d.span_ns = last - first;
    d.utilization = d.span_ns > 0 ? static_cast<double>(d.busy_ns) / static_cast<double>(d.span_ns) : 0;
    out.push_back(d);
  }
  return out;
}

}  // namespace

std::vector<size_t> TopOpsBySelf(const Trace& trace, const Summary& summary) {
  std::vector<size_t> out;
  for (size_t i = 0; i < summary.ops.size(); ++i) {
    if (!summary.ops[i].profiler_wrapper && !summary.ops[i].device_record) out.push_back(i);
  }
  std::sort(out.begin(), out.end(), [&](size_t a, size_t b) {
    const OpStat& x = summary.ops[a];
    const OpStat& y = summary.ops[b];
    if (x.self_ns != y.self_ns) return x.self_ns > y.self_ns;
    if (x.total_ns != y.total_ns) return x.total_ns > y.total_ns;
    return trace.Str(x.name) < trace.Str(y.name);
  });
  return out;
}

Summary ComputeSummary(const Trace& trace, const RequestTokenStats* requests) {
  Summary sum;
  sum.ops = ComputeOps(trace);
  sum.devices = ComputeDevices(trace);
  sum.requests = requests != nullptr ? *requests : ComputeRequestTokens(trace);
  sum.host_samples = ComputeHostSamples(trace);
  StepList steps = FindSteps(trace);
  sum.step_source = steps.reported_source();
  sum.step_hook_source = steps.hook_source;
  sum.step_pattern = steps.pattern;
  for (const StepSpan& st : steps.steps) sum.steps.push_back({st.name, st.number, st.rank, st.start_ns, st.dur_ns, false, ""});
  // The trailing steps cut short where the recording stopped, which every
  // steady-state figure leaves out (src/analysis/window/analysis_window.h).
  if (steps.source == "timeline") {
    std::vector<std::string> why;
    const std::vector<size_t> cut = FindTruncatedSteps(trace, steps, ComputeStepPeriods(trace, steps), &why);
    for (size_t i = 0; i < cut.size(); ++i) {
      sum.steps[cut[i]].truncated = true;
      sum.steps[cut[i]].truncated_why = i < why.size() ? why[i] : "";
    }
  }
  std::vector<uint64_t> by_cat(trace.strings.size(), 0);  // by category string id
  for (size_t i = 0; i < trace.slices.size(); ++i) ++by_cat[trace.slices.category[i].raw];
  for (size_t i = 0; i < trace.instants.size(); ++i) ++by_cat[trace.instants.category[i].raw];
  for (size_t cat = 0; cat < by_cat.size(); ++cat) {
    if (by_cat[cat] > 0) sum.events_by_category[std::string(trace.Str(StringId{static_cast<uint32_t>(cat)}))] += by_cat[cat];
  }
  sum.ranks = ComputeRankStats(trace);
  sum.step_breakdowns = ComputeStepBreakdowns(trace);
  sum.op_types = ComputeOpTypeStats(trace);
  sum.slice_count = trace.slices.size();
  sum.instant_count = trace.instants.size();
  sum.counter_count = trace.counters.size();
  sum.flow_count = trace.flows.size();
  sum.track_count = trace.tracks.size();
  return sum;
}

}  // namespace aiprof
