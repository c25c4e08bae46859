#include "src/analysis/communication/collective_stats.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "src/analysis/common/intervals.h"
#include "src/analysis/common/steps.h"
#include "src/analysis/window/analysis_window.h"

namespace aiprof {

double CollectiveTypeStats::AlgBandwidthBytesPerSecond() const {
  return sized_time_ns > 0 ? bytes / (static_cast<double>(sized_time_ns) * 1e-9) : 0;
}

double CollectiveTypeStats::BusBandwidthBytesPerSecond() const {
  return AlgBandwidthBytesPerSecond() * BusBandwidthFactor(type, group_size);
}

namespace {

using RankDevice = std::pair<int32_t, int32_t>;

std::vector<CollectiveTypeStats> StatsByType(const Trace& trace, const std::vector<CollectiveSlice>& collectives) {
  std::map<std::pair<int32_t, CollectiveType>, CollectiveTypeStats> by;
  for (const CollectiveSlice& c : collectives) {
    CollectiveTypeStats& st = by[{c.rank, c.type}];
    st.rank = c.rank;
    st.type = c.type;
    const int64_t dur = trace.slices.dur_ns[c.slice];
    ++st.count;
    st.total_ns += dur;
    st.max_ns = std::max(st.max_ns, dur);
    st.group_size = std::max(st.group_size, c.group_size);
    if (c.bytes >= 0) {
      ++st.sized;
      st.bytes += c.bytes;
      st.sized_time_ns += dur;
    }
  }
  std::vector<CollectiveTypeStats> out;
  for (auto& [key, st] : by) out.push_back(st);
  return out;
}

// Per (rank, device) with collectives: C and C ∩ K as window-queryable sets.
struct DeviceComm {
  CoveredTime comm;
  CoveredTime hidden;
};

std::map<RankDevice, DeviceComm> DeviceCommSets(const Trace& trace, const std::vector<CollectiveSlice>& collectives) {
  std::map<RankDevice, Intervals> comm, kernels;
  for (const CollectiveSlice& c : collectives) {
    const int64_t ts = trace.slices.ts_ns[c.slice];
    comm[{c.rank, c.device}].emplace_back(ts, ts + trace.slices.dur_ns[c.slice]);
  }
  for (uint32_t s = 0; s < trace.slices.size(); ++s) {
    if (!HidesCommunication(trace.slices.kind[s])) continue;
    const uint32_t track = trace.slices.track[s];
    auto it = comm.find({trace.tracks.rank[track], trace.tracks.device[track]});
    if (it == comm.end()) continue;
    kernels[it->first].emplace_back(trace.slices.ts_ns[s], trace.slices.ts_ns[s] + trace.slices.dur_ns[s]);
  }
  std::map<RankDevice, DeviceComm> out;
  for (auto& [key, iv] : comm) {
    Intervals c = MergeIntervals(std::move(iv));
    Intervals hidden = IntersectIntervals(c, MergeIntervals(std::move(kernels[key])));
    out.emplace(key, DeviceComm{CoveredTime(std::move(c)), CoveredTime(std::move(hidden))});
  }
  return out;
}

// The profiler's per-step figures: (rank, step) → (Communication, Not Overlapped).
std::map<std::pair<int32_t, int64_t>, std::pair<int64_t, int64_t>> ProfilerStepComm(const Trace& trace) {
  std::map<std::pair<int32_t, int64_t>, std::pair<int64_t, int64_t>> out;
  const StepBreakdownTable& b = trace.step_breakdown;
  for (size_t i = 0; i < b.rank.size(); ++i) {
    std::string_view key = trace.Str(b.key[i]);
    if (key != "Communication" && key != "Communication(Not Overlapped)") continue;
    auto [it, fresh] = out.try_emplace({b.rank[i], b.step[i]}, std::pair<int64_t, int64_t>{-1, -1});
    (key == "Communication" ? it->second.first : it->second.second) = b.value_ns[i];
  }
  return out;
}

std::vector<StepCommunication> StepsCommunication(const Trace& trace, const std::vector<CollectiveSlice>& collectives,
                                                  const AnalysisWindow* window) {
  const std::map<RankDevice, DeviceComm> sets = DeviceCommSets(trace, collectives);
  auto profiler = ProfilerStepComm(trace);
  std::vector<StepCommunication> out;
  for (size_t i = 0; i < trace.steps.size(); ++i) {
    StepCommunication sc;
    sc.rank = trace.steps.rank[i];
    sc.number = trace.steps.number[i];
    sc.step_ns = trace.steps.dur_ns[i];
    int64_t start = trace.steps.ts_ns[i], end = start + sc.step_ns;
    if (window && window->device_behind()) {
      const auto& periods = window->device_periods;
      auto p = std::lower_bound(periods.begin(), periods.end(), static_cast<uint32_t>(i),
                                [](const AnalysisWindow::DevicePeriod& d, uint32_t row) { return d.row < row; });
      if (p != periods.end() && p->row == i) {
        start = p->begin_ns, end = p->end_ns;
        sc.step_ns = end - start;
        sc.on_device_period = true;
      }
    }
    bool any_device = false;
    sc.comm_ns = sc.exposed_ns = 0;
    for (auto it = sets.lower_bound({sc.rank, INT32_MIN}); it != sets.end() && it->first.first == sc.rank; ++it) {
      any_device = true;
      const int64_t comm = it->second.comm.Within(start, end);
      sc.comm_ns += comm;
      sc.exposed_ns += comm - it->second.hidden.Within(start, end);
    }
    auto p = profiler.find({sc.rank, sc.number});
    if (p != profiler.end()) {
      std::tie(sc.profiler_comm_ns, sc.profiler_exposed_ns) = p->second;
      profiler.erase(p);
    }
    if (any_device || sc.profiler_comm_ns >= 0 || sc.profiler_exposed_ns >= 0) out.push_back(sc);
  }
  for (const auto& [key, value] : profiler) {  // steps known only from the profiler's file
    StepCommunication sc;
    std::tie(sc.rank, sc.number) = key;
    std::tie(sc.profiler_comm_ns, sc.profiler_exposed_ns) = value;
    out.push_back(sc);
  }
  std::sort(out.begin(), out.end(), [](const StepCommunication& a, const StepCommunication& b) {
    return std::tie(a.rank, a.number) < std::tie(b.rank, b.number);
  });
  return out;
}

}  // namespace

CollectiveStats ComputeCollectiveStats(const Trace& trace, const std::vector<CollectiveSlice>& collectives,
                                       const AnalysisWindow* window) {
  CollectiveStats st;
  st.by_type = StatsByType(trace, collectives);
  for (const CollectiveTypeStats& t : st.by_type) st.total_ns += t.total_ns;
  st.steps = StepsCommunication(trace, collectives, window);
  return st;
}

}  // namespace aiprof
