#include "src/analysis/summary/step_breakdown.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "src/analysis/common/intervals.h"
#include "src/analysis/common/steps.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/summary/summary.h"

namespace aiprof {
namespace {

struct StepWindow {
  int64_t begin, end;
  int64_t step;
};

std::map<int32_t, std::vector<StepWindow>> StepWindows(const Trace& trace) {
  std::map<int32_t, std::vector<StepWindow>> by_rank;
  for (size_t i = 0; i < trace.steps.size(); ++i) {
    by_rank[trace.steps.rank[i]].push_back({trace.steps.ts_ns[i], INT64_MAX, trace.steps.number[i]});
  }
  for (auto& [rank, w] : by_rank) {
    std::sort(w.begin(), w.end(), [](const StepWindow& a, const StepWindow& b) { return a.begin < b.begin; });
    for (size_t i = 0; i + 1 < w.size(); ++i) w[i].end = w[i + 1].begin;
  }
  return by_rank;
}

// Clips `s` to the window; false if nothing is left.
bool Clip(int64_t start, int64_t dur, const StepWindow& w, std::pair<int64_t, int64_t>* out) {
  int64_t a = std::max(start, w.begin), b = std::min(start + dur, w.end);
  if (b <= a && !(dur == 0 && start >= w.begin && start < w.end)) return false;
  *out = {a, std::max(a, b)};
  return true;
}

void AddDerived(StepBreakdown* b, int64_t first, int64_t last, const StepWindow& w) {
  auto& v = b->values_ns;
  v["Overlapped"] = v["Communication"] - v["Communication(Not Overlapped)"];
  v["Stage"] = last - first;
  v["Preparing"] = std::max<int64_t>(0, first - w.begin);
}

class Breakdowns {
 public:
  explicit Breakdowns(const Trace& trace) : trace_(trace), ranges_(TrackSliceRanges(trace)) {
    // Per track, the latest end among its slices so far (they are sorted by
    // start): the slices that may reach into a window start where this
    // running maximum reaches the window, found by binary search, so each
    // step visits only its own slices instead of the whole track.
    const SliceTable& sl = trace.slices;
    max_end_.resize(sl.size());
    for (const auto& [first, last] : ranges_) {
      int64_t m = INT64_MIN;
      for (uint32_t i = first; i < last; ++i) max_end_[i] = m = std::max(m, sl.ts_ns[i] + sl.dur_ns[i]);
    }
  }

  void Rank(int32_t rank, const std::vector<StepWindow>& windows, std::vector<StepBreakdown>* out) {
    std::vector<uint32_t> overlap, device;
    for (uint32_t t = 0; t < trace_.tracks.size(); ++t) {
      if (trace_.tracks.rank[t] != rank) continue;
      if (trace_.Str(trace_.tracks.process_name[t]) == "Overlap Analysis") overlap.push_back(t);
      if (trace_.tracks.kind[t] == TrackKind::kDeviceStream) device.push_back(t);
    }
    Owned owned;
    if (overlap.empty()) owned = OwnedActivity(device, windows);
    int64_t previous_end = INT64_MIN;  // the end of the previous step's device work
    for (size_t k = 0; k < windows.size(); ++k) {
      const StepWindow& w = windows[k];
      StepBreakdown b{rank, w.step, "timeline", overlap.empty() ? "device_activity" : "overlap_analysis", {}};
      bool found = overlap.empty() ? FromDevice(&owned[k], w, &previous_end, &b) : FromOverlap(overlap, w, &b);
      if (found) out->push_back(std::move(b));
    }
  }

 private:
  // The slices of track `t` that may overlap window `w`: from the first
  // whose running maximum end reaches w.begin to the first starting at or
  // after w.end (Clip still decides each one).
  std::pair<uint32_t, uint32_t> Candidates(uint32_t t, const StepWindow& w) const {
    auto [first, last] = ranges_[t];
    const int64_t* begin = max_end_.data() + first;
    uint32_t from = first + static_cast<uint32_t>(std::lower_bound(begin, max_end_.data() + last, w.begin) - begin);
    return {from, last};
  }

  bool FromOverlap(const std::vector<uint32_t>& tracks, const StepWindow& w, StepBreakdown* b) {
    const SliceTable& s = trace_.slices;
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (uint32_t t : tracks) {
      std::string key(trace_.Str(trace_.tracks.name[t]));
      int64_t& total = b->values_ns[key];
      auto [from, to] = Candidates(t, w);
      for (uint32_t i = from; i < to && s.ts_ns[i] < w.end; ++i) {
        std::pair<int64_t, int64_t> c;
        if (!Clip(s.ts_ns[i], s.dur_ns[i], w, &c)) continue;
        total += c.second - c.first;
        first = std::min(first, c.first);
        last = std::max(last, c.second);
      }
    }
    if (first == INT64_MAX) return false;
    AddDerived(b, first, last, w);
    return true;
  }

  // The device activity each step owns, as the step time's work end counts
  // it (ComputeStepPeriods, src/analysis/common/steps.h): the step its
  // launching call starts in, else the step its own start falls in; whole,
  // not clipped to the window. Clipped, the previous step's last kernels
  // reaching past a step's start made its Preparing 0 and the data-loading
  // wait after them Free (kineto's ResNet50 sample: no Preparing in steps
  // 6-10 beside 48-62 ms of loading in each).
  struct Activity {
    int32_t device;
    EventKind kind;
    int64_t begin, end;
  };
  using Owned = std::vector<std::vector<Activity>>;  // by window
  Owned OwnedActivity(const std::vector<uint32_t>& tracks, const std::vector<StepWindow>& windows) {
    const SliceTable& s = trace_.slices;
    Owned owned(windows.size());
    if (tracks.empty() || windows.empty()) return owned;
    if (launch_.empty()) launch_ = LaunchingCalls(trace_);
    for (uint32_t t : tracks) {
      auto [first, last] = ranges_[t];
      for (uint32_t i = first; i < last; ++i) {
        if (!IsDeviceActivity(s.kind[i])) continue;
        const int64_t at = launch_[i] != kNoSlice ? s.ts_ns[launch_[i]] : s.ts_ns[i];
        auto it = std::upper_bound(windows.begin(), windows.end(), at,
                                   [](int64_t v, const StepWindow& w) { return v < w.begin; });
        if (it == windows.begin()) continue;  // before the rank's first step
        const size_t k = static_cast<size_t>(it - windows.begin()) - 1;
        owned[k].push_back({trace_.tracks.device[t], s.kind[i], s.ts_ns[i], s.ts_ns[i] + s.dur_ns[i]});
      }
    }
    return owned;
  }

  // A step's breakdown from the activity it owns (consumed). Computing is
  // the union of its kernels, copies and sets; Communication and
  // Communication(Not Overlapped) follow analyze's per-step figures
  // (collective_stats.h): per device, |C| and |C| - |C ∩ K| with C its
  // collectives and K what hides communication (HidesCommunication,
  // steps.h: kernels, not copies nor sets), summed over the rank's devices.
  // Preparing is the device's wait for the step: from its start, or from the
  // end of the previous step's device work when that is later (a device that
  // runs behind is busy, not waiting), to its first device work.
  static bool FromDevice(std::vector<Activity>* acts, const StepWindow& w, int64_t* previous_end, StepBreakdown* b) {
    if (acts->empty()) return false;
    int64_t first = INT64_MAX, last = INT64_MIN;
    Intervals all, compute;
    std::map<int32_t, std::pair<Intervals, Intervals>> by_device;  // collectives, hiders
    for (const Activity& a : *acts) {
      first = std::min(first, a.begin), last = std::max(last, a.end);
      all.emplace_back(a.begin, a.end);
      if (a.kind == EventKind::kCollective) {
        by_device[a.device].first.emplace_back(a.begin, a.end);
        continue;
      }
      compute.emplace_back(a.begin, a.end);
      if (HidesCommunication(a.kind)) by_device[a.device].second.emplace_back(a.begin, a.end);
    }
    acts->clear();
    acts->shrink_to_fit();
    int64_t m = 0, exposed = 0;
    for (auto& [device, sets] : by_device) {
      if (sets.first.empty()) continue;
      const Intervals comm = MergeIntervals(std::move(sets.first));
      const int64_t length = LengthOf(comm);
      m += length;
      exposed += length - IntersectionLength(comm, MergeIntervals(std::move(sets.second)));
    }
    auto& v = b->values_ns;
    v["Computing"] = UnionLengthNs(&compute);
    v["Communication"] = m;
    v["Communication(Not Overlapped)"] = exposed;
    v["Free"] = (last - first) - UnionLengthNs(&all);
    AddDerived(b, first, last, w);
    v["Preparing"] = std::max<int64_t>(0, first - std::max(w.begin, *previous_end));
    *previous_end = std::max(*previous_end, last);
    return true;
  }

  const Trace& trace_;
  std::vector<std::pair<uint32_t, uint32_t>> ranges_;
  std::vector<int64_t> max_end_;  // by slice
  std::vector<uint32_t> launch_;  // LaunchingCalls, on first use
};

void AddFileBreakdowns(const Trace& trace, std::vector<StepBreakdown>* out) {
  const StepBreakdownTable& t = trace.step_breakdown;
  std::map<std::tuple<int32_t, int64_t, uint32_t>, StepBreakdown> by_step;
  for (size_t i = 0; i < t.size(); ++i) {
    StepBreakdown& b = by_step[{t.rank[i], t.step[i], t.source[i].raw}];
    b.rank = t.rank[i];
    b.step = t.step[i];
    b.source = std::string(trace.Str(t.source[i]));
    b.values_ns[std::string(trace.Str(t.key[i]))] = t.value_ns[i];
  }
  for (auto& [key, b] : by_step) out->push_back(std::move(b));
}

}  // namespace

std::vector<StepBreakdown> ComputeStepBreakdowns(const Trace& trace) {
  std::vector<StepBreakdown> out;
  Breakdowns breakdowns(trace);
  for (const auto& [rank, windows] : StepWindows(trace)) breakdowns.Rank(rank, windows, &out);
  AddFileBreakdowns(trace, &out);
  return out;
}

std::vector<RankStat> ComputeRankStats(const Trace& trace) {
  std::map<int32_t, RankStat> by_rank;
  std::map<std::pair<int32_t, int32_t>, Intervals> busy;
  for (size_t t = 0; t < trace.tracks.size(); ++t) ++by_rank[trace.tracks.rank[t]].tracks;
  const SliceTable& s = trace.slices;
  for (size_t i = 0; i < s.size(); ++i) {
    int32_t rank = trace.tracks.rank[s.track[i]];
    ++by_rank[rank].slices;
    if (IsDeviceActivity(s.kind[i])) {
      busy[{rank, trace.tracks.device[s.track[i]]}].emplace_back(s.ts_ns[i], s.ts_ns[i] + s.dur_ns[i]);
    }
  }
  for (const StepSpan& st : FindSteps(trace).steps) ++by_rank[st.rank].steps;
  for (auto& [key, intervals] : busy) {
    RankStat& r = by_rank[key.first];
    r.device_busy_ns += UnionLengthNs(&intervals);
    r.devices.push_back(key.second);
  }
  std::vector<RankStat> out;
  for (auto& [rank, stat] : by_rank) {
    stat.rank = rank;
    out.push_back(stat);
  }
  return out;
}

std::vector<OpTypeStat> ComputeOpTypeStats(const Trace& trace) {
  const OpMetricTable& m = trace.op_metrics;
  std::optional<StringId> type_key = trace.strings.Find("Type"), op_type_key = trace.strings.Find("OP Type");
  std::map<std::pair<int32_t, uint32_t>, OpTypeStat> by_type;
  std::vector<bool> seen(trace.slices.size(), false);
  for (size_t i = 0; i < m.size(); ++i) {
    uint32_t slice = m.slice[i];
    bool is_type = (type_key && m.key[i] == *type_key) || (op_type_key && m.key[i] == *op_type_key);
    if (slice == kNoSlice || !is_type || m.text[i].empty() || seen[slice]) continue;
    seen[slice] = true;
    int32_t rank = trace.tracks.rank[trace.slices.track[slice]];
    OpTypeStat& st = by_type[{rank, m.text[i].raw}];
    st.rank = rank;
    st.type = m.text[i];
    ++st.count;
    st.total_ns += trace.slices.dur_ns[slice];
  }
  std::vector<OpTypeStat> out;
  for (auto& [key, st] : by_type) out.push_back(st);
  std::sort(out.begin(), out.end(), [](const OpTypeStat& a, const OpTypeStat& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.total_ns > b.total_ns;
  });
  return out;
}

}  // namespace aiprof
