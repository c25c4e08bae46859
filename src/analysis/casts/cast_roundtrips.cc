#include "src/analysis/casts/cast_roundtrips.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <tuple>

#include "src/analysis/common/intervals.h"
#include "src/analysis/common/op_args.h"
#include "src/analysis/common/text_format.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/window/analysis_window.h"

namespace aiprof {
namespace {

constexpr char kCastSource[] = "casts";

bool IsCastName(std::string_view n) {
  return n == "aten::to" || n == "aten::_to_copy" || n == "aten::type_as" ||
         n == "aten::_autocast_to_reduced_precision" || n == "aten::_autocast_to_full_precision";
}

// One dtype conversion: its outermost cast op and what it converts.
struct Conversion {
  uint32_t op = kNoSlice;
  std::string from, to;
  Dims shape;
};

class RoundtripFinder {
 public:
  explicit RoundtripFinder(const Trace& t) : t_(t), args_(t), parent_(ParentSlices(t)), launcher_(OpLaunchingCalls(t)) {
    // The innermost op enclosing each slice (parents precede children: one
    // pass), so no walk goes up a slice's ancestors (python frames, labels).
    op_parent_.assign(t.slices.size(), kNoSlice);
    for (uint32_t i = 0; i < t.slices.size(); ++i) {
      const uint32_t p = parent_[i];
      if (p != kNoSlice) op_parent_[i] = IsOp(p) ? p : op_parent_[p];
    }
  }

  CastRoundtripResult Run() {
    MarkMemcpyLaunchers();
    std::vector<Conversion> conversions = FindConversions();
    result_.conversions = conversions.size();
    for (size_t i = 0; i + 1 < conversions.size(); ++i) {
      if (!IsRoundtrip(conversions[i], conversions[i + 1])) continue;
      AddTrip(conversions[i], conversions[i + 1]);
      ++i;  // the way back starts no trip of its own
    }
    TimeTrips();
    SortGroups();
    return std::move(result_);
  }

 private:
  std::string_view Name(uint32_t i) const { return t_.Str(t_.slices.name[i]); }
  bool IsOp(uint32_t i) const { return t_.slices.kind[i] == EventKind::kCpuOp; }

  void MarkMemcpyLaunchers() {
    launches_memcpy_.assign(t_.slices.size(), 0);
    for (uint32_t i = 0; i < t_.slices.size(); ++i) {
      if (IsDeviceActivity(t_.slices.kind[i])) result_.device = true;
      if (t_.slices.kind[i] != EventKind::kMemcpy || launcher_[i] == kNoSlice) continue;
      for (uint32_t p = launcher_[i]; p != kNoSlice && !launches_memcpy_[p]; p = parent_[p]) launches_memcpy_[p] = 1;
    }
  }

  // Every dtype-changing copy_ under a cast chain, as its outermost cast op,
  // in slice order (per thread, in time order: TraceBuilder's order).
  std::vector<Conversion> FindConversions() {
    std::vector<Conversion> out;
    std::vector<char> counted(t_.slices.size(), 0);
    for (uint32_t i = 0; i < t_.slices.size(); ++i) {
      if (!IsOp(i)) continue;
      result_.torch_ops = true;
      if (Name(i) != "aten::copy_" || launches_memcpy_[i]) continue;
      auto types = args_.InputTypes(i);
      if (types) result_.typed = true;
      auto dims = args_.InputDims(i);
      if (!types || !dims || types->size() < 2 || dims->size() < 2) continue;
      const std::string &to = (*types)[0], &from = (*types)[1];
      if (to == from || BytesPerElement(to) == 0 || BytesPerElement(from) == 0 || (*dims)[0] != (*dims)[1]) continue;
      uint32_t outer = kNoSlice;
      for (uint32_t p = parent_[i]; p != kNoSlice && IsOp(p) && IsCastName(Name(p)); p = parent_[p]) outer = p;
      if (outer == kNoSlice || counted[outer]) continue;
      counted[outer] = 1;
      out.push_back({outer, from, to, (*dims)[0]});
    }
    if (!result_.typed) AnyTyped();
    std::sort(out.begin(), out.end(), [](const Conversion& a, const Conversion& b) { return a.op < b.op; });
    return out;
  }

  // Whether any torch op carries a readable "Input type" (the first found
  // ends the search), or only one in another form.
  void AnyTyped() {
    for (uint32_t i = 0; i < t_.slices.size() && !result_.typed; ++i) {
      if (!IsOp(i)) continue;
      result_.typed = args_.InputTypes(i).has_value();
      if (!result_.typed && args_.String(i, "Input type")) result_.types_unread = true;
    }
  }

  bool IsRoundtrip(const Conversion& a, const Conversion& b) const {
    const SliceTable& s = t_.slices;
    if (s.track[a.op] != s.track[b.op] || a.from != b.to || a.to != b.from || a.shape != b.shape) return false;
    return s.ts_ns[b.op] >= SliceEnd(s, a.op) && NothingReadsBetween(a, b);
  }

  // At most kCastRoundtripMaxOpsBetween outermost ops between the two casts,
  // none taking a tensor of the intermediate dtype and shape. Slice rows
  // between the two are the thread's slices in time order (one track's rows
  // are one run), so the walk is linear over all pairs.
  bool NothingReadsBetween(const Conversion& a, const Conversion& b) const {
    const SliceTable& s = t_.slices;
    const int64_t gap_begin = SliceEnd(s, a.op), gap_end = s.ts_ns[b.op];
    int ops = 0;
    for (uint32_t i = a.op + 1; i < b.op; ++i) {
      if (!IsOp(i) || s.ts_ns[i] < gap_begin || SliceEnd(s, i) > gap_end) continue;
      if (!OutermostInGap(i, gap_begin)) continue;
      if (++ops > kCastRoundtripMaxOpsBetween || Reads(i, a.to, a.shape)) return false;
    }
    return true;
  }

  // No enclosing op of `i` starts inside the gap: the innermost one does
  // not (the ones around it start no later).
  bool OutermostInGap(uint32_t i, int64_t gap_begin) const {
    const uint32_t p = op_parent_[i];
    return p == kNoSlice || t_.slices.ts_ns[p] < gap_begin;
  }

  // Whether op `i`, or an op inside it, takes a `dtype` tensor of `shape`.
  bool Reads(uint32_t i, const std::string& dtype, const Dims& shape) const {
    const SliceTable& s = t_.slices;
    for (uint32_t j = i; j < s.size() && s.track[j] == s.track[i] && s.ts_ns[j] < SliceEnd(s, i); ++j) {
      if (!IsOp(j) || SliceEnd(s, j) > SliceEnd(s, i)) continue;
      auto types = args_.InputTypes(j);
      auto dims = args_.InputDims(j);
      if (!types || !dims) continue;
      for (size_t k = 0; k < types->size() && k < dims->size(); ++k) {
        if ((*types)[k] == dtype && (*dims)[k] == shape) return true;
      }
    }
    return false;
  }

  // Enclosing slice of `op` that is not a cast; "ProfilerStep#7" style
  // suffixes become "#*" so every step's trips group together.
  std::string Trigger(uint32_t op) const {
    uint32_t p = parent_[op];
    if (p == kNoSlice) return "";
    return InstanceNameKey(Name(p));
  }

  void AddTrip(const Conversion& a, const Conversion& b) {
    auto key = std::make_tuple(a.from, a.to, a.shape, Trigger(a.op));
    auto it = index_.find(key);
    if (it == index_.end()) {
      it = index_.emplace(key, result_.groups.size()).first;
      result_.groups.push_back({a.from, a.to, a.shape, std::get<3>(key), 0, 0});
    }
    CastRoundtrip trip;
    trip.there = a.op;
    trip.back = b.op;
    trip.group = it->second;
    result_.trips.push_back(std::move(trip));
  }

  // Kernels launched inside a trip's ops where there are any (device
  // tensors: the copy kernels); else the two host ops.
  void TimeTrips() {
    const SliceTable& s = t_.slices;
    // trip_of[i]: the trip of the innermost trip op at or around slice i
    // (parents precede children: one pass).
    std::vector<uint32_t> trip_of(s.size(), kNoSlice);
    for (uint32_t k = 0; k < result_.trips.size(); ++k)
      trip_of[result_.trips[k].there] = trip_of[result_.trips[k].back] = k;
    for (uint32_t i = 0; i < s.size() && !result_.trips.empty(); ++i) {
      if (trip_of[i] == kNoSlice && parent_[i] != kNoSlice) trip_of[i] = trip_of[parent_[i]];
    }
    for (uint32_t i = 0; i < s.size() && !result_.trips.empty(); ++i) {
      if (s.kind[i] != EventKind::kKernel || launcher_[i] == kNoSlice) continue;
      const uint32_t k = trip_of[launcher_[i]];
      if (k == kNoSlice) continue;
      result_.trips[k].timed.push_back(i);
      result_.trips[k].time_ns += s.dur_ns[i];
    }
    for (CastRoundtrip& trip : result_.trips) {
      if (trip.timed.empty()) {
        trip.timed = {trip.there, trip.back};
        trip.time_ns = s.dur_ns[trip.there] + s.dur_ns[trip.back];
      }
      CastRoundtripGroup& g = result_.groups[trip.group];
      ++g.count;
      g.total_ns += trip.time_ns;
    }
  }

  void SortGroups() {
    std::vector<size_t> order(result_.groups.size());
    std::iota(order.begin(), order.end(), 0);
    const auto& g = result_.groups;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return g[a].total_ns != g[b].total_ns ? g[a].total_ns > g[b].total_ns : a < b;
    });
    std::vector<size_t> rank(order.size());
    std::vector<CastRoundtripGroup> sorted;
    for (size_t i = 0; i < order.size(); ++i) {
      rank[order[i]] = i;
      sorted.push_back(std::move(result_.groups[order[i]]));
    }
    result_.groups = std::move(sorted);
    for (CastRoundtrip& trip : result_.trips) trip.group = rank[trip.group];
  }

  const Trace& t_;
  OpArgReader args_;
  std::vector<uint32_t> parent_, launcher_, op_parent_;
  std::vector<char> launches_memcpy_;
  std::map<std::tuple<std::string, std::string, Dims, std::string>, size_t> index_;
  CastRoundtripResult result_;
};

std::string ShapeText(const Dims& d) {
  std::string out = "[";
  for (size_t i = 0; i < d.size(); ++i) out += (i ? ", " : "") + std::to_string(d[i]);
  return out + "]";
}

// A trip's figures inside the window: its count (by its first cast's start)
// and time, device-timed trips over the device's window.
struct WindowShare {
  std::map<int32_t, double> count, host_ns, device_ns;
  std::map<int32_t, Intervals> host_iv, device_iv;
  bool kernels = false;  // some trip is timed on its kernels
};

}  // namespace

CastRoundtripResult ComputeCastRoundtrips(const Trace& trace) { return RoundtripFinder(trace).Run(); }

void PublishCastRoundtrips(const Trace& trace, const CastRoundtripResult& r, const AnalysisWindow& w,
                           MetricSet* metrics) {
  if (!r.torch_ops) return;  // not a torch trace: not computed (the rule applies only where computed)
  const char* why = r.typed          ? nullptr
                    : r.types_unread ? "the ops' Input type is in a form not read (neither Kineto's list nor "
                                       "torch_npu's text)"
                                     : "no torch op has Input type (profile with record_shapes=True)";
  if (why != nullptr) {
    for (const char* m : {"cast_roundtrip_ns", "cast_roundtrip_ratio", "cast_roundtrip_count_per_step"}) {
      metrics->SetUnavailable(m, why);
    }
    return;
  }
  const SliceTable& s = trace.slices;
  // Per trace, PerBase's mean over ranks is over the trace's ranks
  // (AnalysisWindow::trace_ranks), those without a trip included.
  std::vector<WindowShare> groups(r.groups.size());
  WindowShare all;
  std::map<int32_t, double> host_union, device_union;
  for (const CastRoundtrip& trip : r.trips) {
    int32_t rank = trace.tracks.rank[s.track[trip.there]];
    bool on_device = s.kind[trip.timed[0]] == EventKind::kKernel;
    Intervals win = on_device ? w.DeviceIntervalsOfRank(rank) : w.IntervalsOfRank(rank);
    Intervals iv;
    for (uint32_t sl : trip.timed) iv.emplace_back(s.ts_ns[sl], SliceEnd(s, sl));
    iv = MergeIntervals(std::move(iv));
    double in = static_cast<double>(IntersectionLength(iv, win));
    double counted = IntervalsContain(w.IntervalsOfRank(rank), s.ts_ns[trip.there]) ? 1 : 0;
    for (WindowShare* ws : {&groups[trip.group], &all}) {
      ws->count[rank] += counted;
      ws->kernels = ws->kernels || on_device;
      (on_device ? ws->device_ns : ws->host_ns)[rank] += in;
    }
    auto& dst = on_device ? all.device_iv[rank] : all.host_iv[rank];
    dst.insert(dst.end(), iv.begin(), iv.end());
  }
  // The total is the union per rank (trips on two threads may overlap).
  for (auto& [rank, iv] : all.host_iv) {
    host_union[rank] = static_cast<double>(IntersectionLength(MergeIntervals(std::move(iv)), w.IntervalsOfRank(rank)));
  }
  for (auto& [rank, iv] : all.device_iv) {
    device_union[rank] =
        static_cast<double>(IntersectionLength(MergeIntervals(std::move(iv)), w.DeviceIntervalsOfRank(rank)));
  }
  const double ns = w.PerBase(host_union) + w.PerDeviceBase(device_union);
  metrics->Set("cast_roundtrip_ns", ns, kCastSource);
  metrics->Set("cast_roundtrip_count_per_step", w.PerBase(all.count), kCastSource);
  if (w.base_ns > 0) {
    metrics->Set("cast_roundtrip_ratio", ns / w.base_ns, kCastSource);
  } else {
    metrics->SetUnavailable("cast_roundtrip_ratio", "no analysis window (the base is 0)");
  }
  const bool per_step = w.steps > 0;
  for (size_t i = 0; i < std::min(kCastRoundtripTopReported, r.groups.size()); ++i) {
    const CastRoundtripGroup& g = r.groups[i];
    const double count = w.PerBase(groups[i].count);
    const double time = w.PerBase(groups[i].host_ns) + w.PerDeviceBase(groups[i].device_ns);
    if (count <= 0 && time <= 0) continue;  // outside the window
    std::string line = g.dtype + " -> " + g.via + " -> " + g.dtype + " on " + ShapeText(g.shape) + ": " +
                       FormatFixed(count, count == static_cast<double>(static_cast<int64_t>(count)) ? 0 : 2) + " " +
                       w.base + ", " + FormatDurationNs(time) + " " + w.base;
    if (w.base_ns > 0)
      line += " (" + FormatPercent(time / w.base_ns) + (per_step ? " of the step" : " of the steady-state time") + ")";
    line += groups[i].kernels ? ", the copy kernels' device time" : ", the casts' op time";
    line += ", first cast in " + (g.trigger.empty() ? std::string("(top level)") : g.trigger);
    metrics->AddEvidence("cast_roundtrip", std::move(line));
  }
}

}  // namespace aiprof
