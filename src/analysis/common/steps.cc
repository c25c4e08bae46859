#include "src/analysis/common/steps.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <map>
#include <tuple>

#include "src/analysis/common/trace_index.h"

namespace aiprof {

namespace {

// The pattern's description in the metadata "steps.*" (a merged trace's
// parts have theirs under "<part>.steps.*"): the first part's, and the count.
void ReadPattern(const Trace& trace, StepList* out) {
  const std::string kFrom = "steps.from";
  for (const auto& [key, value] : trace.metadata) {
    if (value != kPeriodicPatternSource || !key.ends_with(kFrom)) continue;
    if (key.size() != kFrom.size() && key[key.size() - kFrom.size() - 1] != '.') continue;
    if (out->from_pattern) {
      ++out->pattern.parts;
      continue;
    }
    const std::string prefix = key.substr(0, key.size() - kFrom.size()) + "steps.";
    auto get = [&](const char* name) {
      auto it = trace.metadata.find(prefix + name);
      return it == trace.metadata.end() ? std::string() : it->second;
    };
    out->from_pattern = true;
    out->pattern.thread = get("thread");
    out->pattern.thread_name = get("thread_name");
    out->pattern.exact = get("exact") != "0";
    const std::string period = get("period_ops"), coverage = get("coverage");
    std::from_chars(period.data(), period.data() + period.size(), out->pattern.period_ops);
    out->pattern.coverage = std::strtod(coverage.c_str(), nullptr);
  }
}

}  // namespace

StepList FindSteps(const Trace& trace) {
  StepList out;
  const StepTable& st = trace.steps;
  if (st.size() > 0) {
    out.source = "timeline";
    ReadPattern(trace, &out);
    if (auto hook = trace.metadata.find("capture.steps_from"); hook != trace.metadata.end()) out.hook_source = hook->second;
    out.steps.reserve(st.size());
    for (uint32_t i = 0; i < st.size(); ++i) {
      StepSpan s;
      s.rank = st.rank[i];
      s.number = st.number[i];
      s.name = st.name[i];
      s.start_ns = st.ts_ns[i];
      s.dur_ns = st.dur_ns[i];
      s.row = i;
      out.steps.push_back(s);
    }
    return out;
  }
  const StepBreakdownTable& b = trace.step_breakdown;
  struct Values {
    int64_t computing = -1, comm = -1, free = -1, stage = -1, iteration = -1;
  };
  std::map<std::pair<int32_t, int64_t>, Values> by_step;
  std::string source;
  for (size_t i = 0; i < b.size(); ++i) {
    std::string_view key = trace.Str(b.key[i]);
    Values& v = by_step[{b.rank[i], b.step[i]}];
    if (key == "Computing") v.computing = b.value_ns[i];
    if (key == "Communication(Not Overlapped)") v.comm = b.value_ns[i];
    if (key == "Free") v.free = b.value_ns[i];
    if (key == "Stage") v.stage = b.value_ns[i];
    if (key == "Iteration Time(us)") v.iteration = b.value_ns[i];
    if (source.empty()) source = std::string(trace.Str(b.source[i]));
  }
  for (const auto& [k, v] : by_step) {
    int64_t dur = v.computing >= 0 && v.comm >= 0 && v.free >= 0 ? v.computing + v.comm + v.free
                  : v.stage >= 0                                  ? v.stage
                                                                  : v.iteration;
    if (dur < 0) continue;
    StepSpan s;
    s.rank = k.first;
    s.number = k.second;
    s.dur_ns = dur;
    s.computing_ns = v.computing;
    s.communication_not_overlapped_ns = v.comm;
    s.free_ns = v.free;
    out.steps.push_back(s);
  }
  if (!out.steps.empty()) out.source = source;
  return out;
}

StepPeriods ComputeStepPeriods(const Trace& trace, const StepList& list) {
  StepPeriods out;
  const size_t n = list.steps.size();
  out.work_end_ns.assign(n, -1);
  out.period_ns.assign(n, -1);
  out.previous.assign(n, SIZE_MAX);
  out.device_activities.assign(n, 0);
  // Timeline steps by (rank, start): the order an activity's time is looked up in.
  std::vector<size_t> order;
  for (size_t k = 0; k < n; ++k) {
    const StepSpan& st = list.steps[k];
    if (!st.has_start()) continue;
    out.work_end_ns[k] = st.start_ns + st.dur_ns;
    order.push_back(k);
  }
  if (order.empty()) return out;
  auto key = [&](size_t k) { return std::make_pair(list.steps[k].rank, list.steps[k].start_ns); };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) != key(b) ? key(a) < key(b) : a < b; });
  const SliceTable& s = trace.slices;
  const std::vector<uint32_t> launch = LaunchingCalls(trace);
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (trace.tracks.kind[s.track[i]] != TrackKind::kDeviceStream || !IsDeviceActivity(s.kind[i])) continue;
    const int64_t t = launch[i] != kNoSlice ? s.ts_ns[launch[i]] : s.ts_ns[i];
    const int32_t rank = trace.tracks.rank[s.track[i]];
    auto it = std::upper_bound(order.begin(), order.end(), std::make_pair(rank, t),
                               [&](const std::pair<int32_t, int64_t>& v, size_t k) { return v < key(k); });
    if (it == order.begin()) continue;
    const StepSpan& st = list.steps[*(it - 1)];
    if (st.rank != rank || t >= st.start_ns + st.dur_ns) continue;
    int64_t& end = out.work_end_ns[*(it - 1)];
    end = std::max(end, s.ts_ns[i] + s.dur_ns[i]);
    ++out.device_activities[*(it - 1)];
  }
  for (size_t j = 1; j < order.size(); ++j) {
    const size_t k = order[j], q = order[j - 1];
    if (list.steps[k].rank != list.steps[q].rank) continue;
    out.previous[k] = q;
    out.period_ns[k] = out.work_end_ns[k] - out.work_end_ns[q];
  }
  return out;
}

StepTimeBase ChooseStepTimeBase(const StepList& list, const StepPeriods& periods, const std::vector<size_t>& steps,
                                std::vector<size_t>* periods_used) {
  std::vector<size_t> used;
  double period_sum = 0, host_sum = 0;
  bool device_late = true;  // every such step's work ends after its host span
  for (size_t k : steps) {
    if (k >= periods.period_ns.size() || periods.period_ns[k] < 0) continue;
    const StepSpan& st = list.steps[k];
    used.push_back(k);
    period_sum += static_cast<double>(periods.period_ns[k]);
    host_sum += static_cast<double>(st.dur_ns);
    device_late &= periods.work_end_ns[k] > st.start_ns + st.dur_ns;
  }
  if (periods_used) *periods_used = used;
  const bool behind = !used.empty() && device_late && period_sum > (1 + kDeviceBehindMinExcess) * host_sum;
  return behind ? StepTimeBase::kDevicePeriod : StepTimeBase::kHostSpan;
}

const char* StepTimeBaseName(StepTimeBase base) {
  return base == StepTimeBase::kDevicePeriod ? "device period" : "host span";
}

}  // namespace aiprof
