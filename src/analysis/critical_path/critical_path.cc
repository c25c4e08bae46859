// ComputeCriticalPath: the backward walk of critical_path.h over the graph
// of dependency_graph.cc, step by step.
#include "src/analysis/critical_path/critical_path.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "src/analysis/common/steps.h"
#include "src/analysis/communication/collectives.h"
#include "src/analysis/communication/cross_rank.h"
#include "src/analysis/window/analysis_window.h"
#include "src/model/graph_capture_tracks.h"

namespace aiprof {
namespace {

// One window to walk: a step (or a rank's whole trace) and its sinks.
struct PathWindow {
  StepPath path;
  uint32_t host_sink = kNoSlice;    // the step's host span (or the rank's latest-ending host slice)
  uint32_t device_sink = kNoSlice;  // the latest-ending activity its calls launched
};

// The slice of step `st` on its track: its host span (ProfilerStep#N), or
// the latest-ending slice inside it (a periodic step's last op). `*first`:
// the first slice on the track starting at the step's start, if any.
uint32_t StepSlice(const Trace& trace, const std::vector<std::pair<uint32_t, uint32_t>>& track_range,
                   const StepSpan& st, uint32_t* first) {
  *first = kNoSlice;
  if (st.row == kNoSlice) return kNoSlice;
  const SliceTable& s = trace.slices;
  const uint32_t tr = trace.steps.track[st.row];
  if (tr >= track_range.size()) return kNoSlice;
  auto [b, e] = track_range[tr];
  uint32_t lo = b, hi = e;  // first slice starting at or after the step
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (s.ts_ns[mid] < st.start_ns) lo = mid + 1; else hi = mid;
  }
  if (lo < e && s.ts_ns[lo] == st.start_ns) *first = lo;
  uint32_t best = kNoSlice;
  for (uint32_t i = lo; i < e && s.ts_ns[i] < st.start_ns + st.dur_ns; ++i) {
    if (SliceEnd(s, i) > st.start_ns + st.dur_ns) continue;
    if (best == kNoSlice || SliceEnd(s, i) > SliceEnd(s, best)) best = i;
    if (SliceEnd(s, i) == st.start_ns + st.dur_ns) break;
  }
  return best;
}

// `step_of` (CriticalPathResult::step_of) is filled for every device
// activity a window owns.
std::vector<PathWindow> FindWindows(const Trace& trace, const DependencyGraph& g, const AnalysisWindow* aw,
                                    std::vector<uint32_t>* step_of) {
  step_of->assign(trace.slices.size(), kNoSlice);
  const SliceTable& s = trace.slices;
  std::vector<std::pair<uint32_t, uint32_t>> track_range(trace.tracks.size(), {0, 0});
  for (uint32_t i = 0; i < s.size(); ++i) {
    auto& r = track_range[s.track[i]];
    if (r.second == 0) r.first = i;
    r.second = i + 1;
  }
  std::vector<PathWindow> out;
  StepList steps = FindSteps(trace);
  for (size_t k = 0; k < steps.steps.size(); ++k) {
    const StepSpan& st = steps.steps[k];
    if (!st.has_start() || st.dur_ns <= 0) continue;
    PathWindow w;
    w.path.rank = st.rank;
    w.path.number = st.number;
    w.path.step_index = k;
    w.path.start_ns = st.start_ns;
    w.path.end_ns = st.start_ns + st.dur_ns;
    w.path.step_dur_ns = st.dur_ns;
    w.path.steady = aw == nullptr || std::find(aw->warmup.begin(), aw->warmup.end(), k) == aw->warmup.end();
    w.host_sink = StepSlice(trace, track_range, st, &w.path.start_slice);
    out.push_back(w);
  }
  if (out.empty()) {
    // No steps: each rank's whole trace is one window.
    std::vector<bool> capture(trace.tracks.size());
    for (uint32_t tr = 0; tr < trace.tracks.size(); ++tr) capture[tr] = IsGraphCaptureTrack(trace, tr);
    for (uint32_t i = 0; i < s.size(); ++i) {
      const int32_t rank = trace.tracks.rank[s.track[i]];
      if (trace.tracks.kind[s.track[i]] == TrackKind::kCounter || s.kind[i] == EventKind::kGpuUserAnnotation ||
          s.kind[i] == EventKind::kTraceSpan) {
        continue;
      }
      if (trace.tracks.kind[s.track[i]] == TrackKind::kDeviceStream && !g.on_device[i]) continue;
      if (capture[s.track[i]]) continue;  // copies of captured ops: no host time (BuildStructure)
      auto it = std::find_if(out.begin(), out.end(), [&](const PathWindow& w) { return w.path.rank == rank; });
      if (it == out.end()) {
        PathWindow w;
        w.path.rank = rank;
        w.path.start_ns = s.ts_ns[i];
        w.path.end_ns = SliceEnd(s, i);
        w.path.steady = true;
        out.push_back(w);
        it = out.end() - 1;
      }
      uint32_t& first = it->path.start_slice;  // the earliest host slice
      if (!g.on_device[i] && (first == kNoSlice || s.ts_ns[i] < s.ts_ns[first])) first = i;
      it->path.start_ns = std::min(it->path.start_ns, s.ts_ns[i]);
      if (g.on_device[i]) (*step_of)[i] = static_cast<uint32_t>(it - out.begin());
      uint32_t& sink = g.on_device[i] ? it->device_sink : it->host_sink;
      if (sink == kNoSlice || SliceEnd(s, i) > SliceEnd(s, sink)) sink = i;
    }
    for (PathWindow& w : out) {
      // Its last work, host or device, as a step's end is (the rewalk of a
      // what-if replay ends it so too: with only the host's end here, a
      // replay with nothing changed ended 465 ms later on SGLang's trace,
      // whose kernels run on after the host's last event).
      if (w.host_sink != kNoSlice) w.path.end_ns = SliceEnd(s, w.host_sink);
      if (w.device_sink != kNoSlice) w.path.end_ns = std::max(w.path.end_ns, SliceEnd(s, w.device_sink));
      w.path.step_dur_ns = w.path.end_ns - w.path.start_ns;
    }
    return out;
  }
  // Device sinks: each activity belongs to the step its launching call (or,
  // unlinked, its own start) falls in, on its rank.
  std::vector<size_t> order(out.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(out[a].path.rank, out[a].path.start_ns) < std::tie(out[b].path.rank, out[b].path.start_ns);
  });
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (!g.on_device[i]) continue;
    const int64_t t = g.launch[i] != kNoSlice ? s.ts_ns[g.launch[i]] : s.ts_ns[i];
    const int32_t rank = trace.tracks.rank[s.track[i]];
    auto it = std::upper_bound(order.begin(), order.end(), std::make_pair(rank, t), [&](const auto& key, size_t w) {
      return std::tie(key.first, key.second) < std::tie(out[w].path.rank, out[w].path.start_ns);
    });
    if (it == order.begin()) continue;
    PathWindow& w = out[*(it - 1)];
    if (w.path.rank != rank || t >= w.path.start_ns + w.path.step_dur_ns) continue;
    (*step_of)[i] = static_cast<uint32_t>(*(it - 1));
    w.path.device_total_ns[static_cast<size_t>(g.cls[i])] += s.dur_ns[i];
    if (w.device_sink == kNoSlice || SliceEnd(s, i) > SliceEnd(s, w.device_sink)) w.device_sink = i;
  }
  for (PathWindow& w : out) {
    if (w.device_sink != kNoSlice) w.path.end_ns = std::max(w.path.end_ns, SliceEnd(s, w.device_sink));
  }
  return out;
}

// The backward walk of one window. Appends its segments and edges (in time
// order) to the result.
class Walker {
 public:
  // `start`/`end`: every slice's times (a what-if's replay); null: measured.
  // `startup`: the host's start-up work (measured times only; null: none).
  Walker(const Trace& trace, const DependencyGraph& g, CriticalPathResult* out,
         const std::vector<int64_t>* start = nullptr, const std::vector<int64_t>* end = nullptr,
         const StartupWork* startup = nullptr)
      : s_(trace.slices), trace_(trace), g_(g), out_(out), start_(start), end_(end), startup_(startup) {}

  void Walk(PathWindow& w, uint32_t index) {
    StepPath& p = w.path;
    index_ = index;
    p.host_sink = w.host_sink;
    p.device_sink = w.device_sink;
    first_segment_ = out_->segments.size();
    first_edge_ = out_->edges.size();
    t0_ = p.start_ns;
    step_ = &p;
    want_cause_ = kNoSlice;
    uint32_t x = w.host_sink;
    bool at_end = true;
    if (w.device_sink != kNoSlice && (x == kNoSlice || En(w.device_sink) > En(x))) x = w.device_sink;
    if (x == kNoSlice) return Finish(p);
    t_ = p.end_ns;
    if (En(x) < t_) Emit(En(x), kNoSlice, PathClass::kIdleOther, DepKind::kNone);
    size_t budget = 4 * s_.size() + 64;
    while (t_ > t0_) {
      if (budget-- == 0) {
        p.truncated = true;
        break;
      }
      if (!(at_end ? StepFromEnd(&x, &at_end) : StepFromStart(&x, &at_end))) break;
    }
    Finish(p);
  }

 private:
  // Records [max(from, t0), t) as `slice`'s time of class `cls` and moves
  // the cursor to `from`.
  void Emit(int64_t from, uint32_t slice, PathClass cls, DepKind via) {
    from = std::max(from, t0_);
    if (from < t_) {
      out_->segments.push_back({from, t_, slice, cls, via});
      if (want_cause_ != kNoSlice && slice != kNoSlice && slice != want_cause_ && !IsIdleClass(cls)) {
        step_->waited_cause = slice;
        want_cause_ = kNoSlice;
      }
    }
    t_ = std::min(t_, std::max(from, t0_));
  }
  void Edge(uint32_t from, uint32_t to, DepKind kind) { out_->edges.push_back({from, to, kind}); }

  // At the end of `x`: its own time back to the binding predecessor among
  // its start, its last child's end, the device work a sync call waited
  // for, and the last rank's arrival at a collective.
  bool StepFromEnd(uint32_t* x, bool* at_end) {
    const uint32_t i = *x;
    int64_t best_t = St(i);
    uint32_t next = i;
    bool next_end = false;
    DepKind via = DepKind::kNone;
    if (uint32_t c = g_.last_child[i]; c != kNoSlice && En(c) >= best_t) {
      best_t = En(c), next = c, next_end = true, via = DepKind::kNesting;
    }
    if (uint32_t w = g_.wait_on[i]; w != kNoSlice && !g_.on_device[i] && En(w) > best_t) {
      best_t = En(w), next = w, next_end = true, via = DepKind::kSync;
    }
    if (uint32_t q = g_.peer[i]; q != kNoSlice && St(q) > best_t) {
      best_t = St(q), next = q, next_end = false, via = DepKind::kCollective;
    }
    Emit(std::min(best_t, t_), i, g_.cls[i], via);
    if (via == DepKind::kCollective && step_->waited_rank == kNoRank) {
      step_->waited_rank = trace_.tracks.rank[s_.track[next]];
      step_->waited_collective = next;
      step_->waited_late_ns = St(next) - St(i);
      want_cause_ = next;
    }
    if (via == DepKind::kSync || via == DepKind::kCollective) Edge(next, i, via);
    *x = next;
    *at_end = next_end;
    return true;
  }

  // At the start of `x`: the wait before it, back to the predecessor that
  // finished last.
  bool StepFromStart(uint32_t* x, bool* at_end) {
    const uint32_t i = *x;
    if (g_.on_device[i]) return DeviceStart(x, at_end);
    if (uint32_t h = g_.handoff[i]; h != kNoSlice && En(h) > OwnPredecessorTime(i)) {
      Emit(std::min(En(h), t_), i, PathClass::kIdleOther, DepKind::kHandoff);
      Edge(h, i, DepKind::kHandoff);
      *x = h;
      *at_end = true;
      return true;
    }
    if (uint32_t p = g_.prev[i]; p != kNoSlice) {
      const uint32_t parent = g_.parent[i];
      Emit(std::min(En(p), t_), parent, parent != kNoSlice ? g_.cls[parent] : PathClass::kIdleOther,
           DepKind::kThreadOrder);
      *x = p;
      *at_end = true;
      return true;
    }
    if (uint32_t u = g_.parent[i]; u != kNoSlice) {
      Emit(std::min(St(u), t_), u, g_.cls[u], DepKind::kNesting);
      *x = u;
      *at_end = false;
      return true;
    }
    Emit(t0_, kNoSlice, PathClass::kIdleOther, DepKind::kNone);
    return false;
  }

  int64_t OwnPredecessorTime(uint32_t i) const {
    if (g_.prev[i] != kNoSlice) return En(g_.prev[i]);
    return g_.parent[i] != kNoSlice ? St(g_.parent[i]) : INT64_MIN;
  }

  bool DeviceStart(uint32_t* x, bool* at_end) {
    const uint32_t i = *x;
    int64_t best_t = INT64_MIN;
    uint32_t next = kNoSlice;
    bool next_end = false;
    DepKind via = DepKind::kNone;
    PathClass wait = PathClass::kIdleOther;
    if (uint32_t l = g_.launch[i]; l != kNoSlice) {
      best_t = St(l), next = l, next_end = false, via = DepKind::kLaunch, wait = PathClass::kIdleHostBound;
    }
    if (uint32_t p = g_.prev[i]; p != kNoSlice && En(p) >= best_t) {
      best_t = En(p), next = p, next_end = true, via = DepKind::kStreamOrder, wait = PathClass::kIdleOther;
    }
    if (uint32_t w = g_.wait_on[i]; w != kNoSlice && En(w) >= best_t) {
      best_t = En(w), next = w, next_end = true, via = DepKind::kStreamWait, wait = PathClass::kIdleSync;
    }
    if (next == kNoSlice) {
      Emit(t0_, i, PathClass::kIdleOther, DepKind::kNone);
      return false;
    }
    const int64_t idle_end = t_;
    // A launch binds: the device waited for the host from the call's start
    // to the activity's start (idle_host_bound, the launch delay: the call
    // and the launch's latency after it). An activity that started
    // kMinLaunchHoldNs or more after its call had returned was held by no
    // host: the path runs through the call's own time (runtime) to the wait
    // after its return, unexplained device idle, as after a stream
    // predecessor below. The vLLM decode replay's first copy started 7.83
    // ms after its hipMemcpyAsync returned, every launch of the step issued
    // 6 ms before that: the path had 41% of the step in idle_host_bound
    // where the host held the device for no time.
    if (via == DepKind::kLaunch && St(i) - En(next) >= kMinLaunchHoldNs) {
      const int64_t before = t_;
      Emit(std::min(En(next), t_), i, PathClass::kIdleOther, via);
      unexplained_ += before - t_;
      Edge(next, i, via);
      *x = next;
      *at_end = true;
      return true;
    }
    // A launch wait the host's start-up work covers for at least half of it
    // (a first launch loading its code object: mi250_minitoy's 6.54 ms
    // hipLaunchKernel) is one-off, the gaps' startup cause: one rule,
    // StartupWork::Covers.
    if (via == DepKind::kLaunch && startup_ != nullptr &&
        startup_->Covers(trace_.tracks.rank[s_.track[i]], std::max(best_t, t0_), t_)) {
      wait = PathClass::kIdleStartup;
    }
    Emit(std::min(best_t, t_), i, wait, via);
    // A stream idle after its predecessor though this activity's launch call
    // had ended: no recorded dependency explains it. Measured from the later
    // of the predecessor's and the launch call's ends; gaps shorter than
    // kMinStreamIdleGapNs are the device's scheduling.
    if (via == DepKind::kStreamOrder && g_.launch[i] != kNoSlice) {
      const int64_t ready = std::max(best_t, En(g_.launch[i]));
      if (St(i) - ready >= kMinStreamIdleGapNs) unexplained_ += std::max<int64_t>(0, idle_end - std::max(ready, t0_));
    }
    Edge(next, i, via);
    *x = next;
    *at_end = next_end;
    return true;
  }

  // The walk appended the window's segments and edges to the result
  // backwards in time: reversed in place (a copy through a window-local
  // vector held the path twice, and a whole-trace window's grew by
  // doubling: 1.2 GB beside the result's 0.65 GB on a 13.5 M-slice trace).
  void Finish(StepPath& p) {
    std::vector<PathSegment>& segments = out_->segments;
    std::vector<PathEdge>& edges = out_->edges;
    std::reverse(segments.begin() + static_cast<ptrdiff_t>(first_segment_), segments.end());
    std::reverse(edges.begin() + static_cast<ptrdiff_t>(first_edge_), edges.end());
    p.first_segment = first_segment_;
    p.segment_count = segments.size() - first_segment_;
    p.first_edge = first_edge_;
    p.edge_count = edges.size() - first_edge_;
    const std::vector<uint32_t>& step_of = out_->step_of;
    for (size_t k = first_segment_; k < segments.size(); ++k) {
      const PathSegment& seg = segments[k];
      const int64_t len = seg.end_ns - seg.start_ns;
      p.by_class_ns[static_cast<size_t>(seg.cls)] += len;
      if (seg.slice != kNoSlice && IsDeviceClass(seg.cls)) {
        const size_t c = static_cast<size_t>(seg.cls);
        if (!g_.on_device[seg.slice]) {
          p.later_on_path_ns[c] += len;  // launched by no step (a collective span on a host thread)
        } else if (seg.slice < step_of.size() && step_of[seg.slice] == index_) {
          p.own_on_path_ns[c] += len;
        } else if (trace_.tracks.rank[s_.track[seg.slice]] != p.rank) {
          p.other_rank_on_path_ns[c] += len;
        } else if (LaunchTime(seg.slice) < p.start_ns) {
          p.earlier_on_path_ns[c] += len;
        } else {
          p.later_on_path_ns[c] += len;
        }
      }
      if (seg.slice != kNoSlice && !IsIdleClass(seg.cls)) out_->on_path[seg.slice] = true;
    }
    for (size_t k = first_edge_; k < edges.size(); ++k) {
      out_->on_path[edges[k].from_slice] = out_->on_path[edges[k].to_slice] = true;
    }
    p.device_idle_unexplained_ns = unexplained_;
    unexplained_ = 0;
  }

  // When device activity `i` was handed to its stream: its launch call's
  // start, else its own start (FindWindows' rule), on the walk's time base
  // (a rewalk's replayed times), as the step's start it is compared with.
  int64_t LaunchTime(uint32_t i) const { return g_.launch[i] != kNoSlice ? St(g_.launch[i]) : St(i); }

  int64_t St(uint32_t i) const { return start_ != nullptr ? (*start_)[i] : s_.ts_ns[i]; }
  int64_t En(uint32_t i) const { return end_ != nullptr ? (*end_)[i] : s_.ts_ns[i] + s_.dur_ns[i]; }

  const SliceTable& s_;
  const Trace& trace_;
  const DependencyGraph& g_;
  CriticalPathResult* out_;
  const std::vector<int64_t>* start_;
  const std::vector<int64_t>* end_;
  size_t first_segment_ = 0, first_edge_ = 0;  // the window's first segment and edge in out_
  int64_t t0_ = 0, t_ = 0;
  StepPath* step_ = nullptr;
  uint32_t want_cause_ = kNoSlice;
  uint32_t index_ = 0;       // the window's index (CriticalPathResult::step_of)
  int64_t unexplained_ = 0;  // StepPath::device_idle_unexplained_ns so far
  const StartupWork* startup_ = nullptr;
};

// The slices with the most own time on the counted steps' paths (WalkAll's
// steps: the steady ones, all when none is steady), by name.
std::vector<PathSliceTotal> TopPathSlices(const Trace& trace, const CriticalPathResult& r) {
  std::unordered_map<uint32_t, PathSliceTotal> by_name;
  const bool all = r.window_steps == r.steps.size();
  for (const StepPath& p : r.steps) {
    if (!all && !p.steady) continue;
    for (size_t k = p.first_segment; k < p.first_segment + p.segment_count; ++k) {
      const PathSegment& seg = r.segments[k];
      if (seg.slice == kNoSlice || IsIdleClass(seg.cls)) continue;
      PathSliceTotal& e = by_name[trace.slices.name[seg.slice].raw];
      e.name = trace.slices.name[seg.slice];
      e.on_path_ns += seg.end_ns - seg.start_ns;
      e.cls = seg.cls;
    }
  }
  std::vector<PathSliceTotal> v;
  v.reserve(by_name.size());
  for (const auto& [name, e] : by_name) v.push_back(e);
  auto before = [](const PathSliceTotal& a, const PathSliceTotal& b) {
    return a.on_path_ns != b.on_path_ns ? a.on_path_ns > b.on_path_ns : a.name.raw < b.name.raw;
  };
  const size_t n = std::min(kPathTopSlicesKept, v.size());
  std::partial_sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n), v.end(), before);
  v.resize(n);
  return v;
}

}  // namespace

namespace {

// Walks every window and sums the steady ones (all when none is steady).
void WalkAll(const Trace& trace, const DependencyGraph& g, std::vector<PathWindow>& windows,
             const std::vector<int64_t>* start, const std::vector<int64_t>* end, CriticalPathResult* r,
             const StartupWork* startup = nullptr) {
  r->on_path.assign(trace.slices.size(), false);
  // A path visits a slice about once or twice (its own time, the wait before
  // it): room for two segments per slice up front, so the result never
  // grows by copying (only the pages used are touched; growing would touch
  // every page of every copy, which the profile showed to dominate).
  r->segments.reserve(2 * trace.slices.size() + 64);
  AdviseHugePages(r->segments.data(), r->segments.capacity() * sizeof(PathSegment));
  Walker walker(trace, g, r, start, end, startup);
  bool any_steady = false;
  for (size_t k = 0; k < windows.size(); ++k) {
    walker.Walk(windows[k], static_cast<uint32_t>(k));
    any_steady |= windows[k].path.steady;
  }
  // Each path moves into the result (the windows are not used after this):
  // a StepPath is ~0.9 KB, and copying them into a growing vector held three
  // copies of every step at its peak (80,000 steps: 127 MB of the 241 MB
  // heap peak, heaptrack).
  r->steps.reserve(windows.size());
  for (PathWindow& w : windows) {
    StepPath& p = w.path;
    if (any_steady && !p.steady) {
      r->steps.push_back(std::move(p));
      continue;
    }
    ++r->window_steps;
    r->window_path_ns += p.length_ns();
    for (size_t c = 0; c < kPathClassCount; ++c) {
      r->window_by_class_ns[c] += p.by_class_ns[c];
      r->window_device_total_ns[c] += p.device_total_ns[c];
      r->window_own_on_path_ns[c] += p.own_on_path_ns[c];
      r->window_earlier_on_path_ns[c] += p.earlier_on_path_ns[c];
      r->window_later_on_path_ns[c] += p.later_on_path_ns[c];
      r->window_other_rank_on_path_ns[c] += p.other_rank_on_path_ns[c];
    }
    r->window_device_idle_unexplained_ns += p.device_idle_unexplained_ns;
    r->steps.push_back(std::move(p));
  }
  windows.clear();
  windows.shrink_to_fit();
}

}  // namespace

namespace {

// Steps whose walk did not move to another rank (no collective join: the
// clocks were aligned by collective ends, or the rank's wait is not linked
// to its collective, as a CPU gloo job's main thread waiting for the
// all-reduce on a thread of its own): the rank they waited for, from the
// pairing's arrivals (CrossRankResult::paired_lateness, on the clocks its
// figures use, trusted when they agree). A step names the last arrival of
// the collective whose wait [its arrival, the last rank's) holds the most of
// its path's idle and collective time, at least half the wait; a tie for the
// last arrival names none. waited_collective is then this rank's own collective, waited_cause
// unknown.
void NameWaitedRanks(const Trace& trace, const CrossRankResult& cross, CriticalPathResult* r) {
  struct Wait {
    int64_t from, to;
    int32_t last;
  };
  std::map<int32_t, std::vector<Wait>> by_rank;
  for (const auto& members : cross.paired_lateness) {
    int64_t latest = INT64_MIN;
    int32_t last = kNoRank;
    size_t tied = 0;
    for (const auto& m : members) {
      if (m.lateness_ns > latest)
        latest = m.lateness_ns, last = m.rank, tied = 1;
      else if (m.lateness_ns == latest)
        ++tied;
    }
    if (tied != 1) continue;
    for (const auto& m : members) {
      if (m.rank != last) by_rank[m.rank].push_back({m.arrival_ns, m.arrival_ns + latest - m.lateness_ns, last});
    }
  }
  if (by_rank.empty()) return;
  std::map<std::pair<int32_t, int64_t>, uint32_t> own;  // (rank, arrival) -> collective slice, on first use
  for (StepPath& p : r->steps) {
    if (p.waited_rank != kNoRank) continue;
    auto it = by_rank.find(p.rank);
    if (it == by_rank.end()) continue;
    const Wait* best = nullptr;
    int64_t best_ns = 0;
    for (const Wait& w : it->second) {
      if (w.to <= p.start_ns || w.from >= p.end_ns) continue;
      int64_t held = 0;  // the path's idle and collective time inside the wait
      for (size_t k = p.first_segment; k < p.first_segment + p.segment_count; ++k) {
        const PathSegment& seg = r->segments[k];
        if (!IsIdleClass(seg.cls) && seg.cls != PathClass::kCollective) continue;
        held += std::max<int64_t>(0, std::min(seg.end_ns, w.to) - std::max(seg.start_ns, w.from));
      }
      // The step spent at least half the wait on its path idle or in the
      // collective: a wait the path passes by (its host running ops while the
      // device waits) names no one.
      if (2 * held >= w.to - w.from && held > best_ns) best = &w, best_ns = held;
    }
    if (best == nullptr) continue;
    if (own.empty()) {
      for (const CollectiveSlice& c : CollectCollectives(trace))
        own.emplace(std::pair{c.rank, trace.slices.ts_ns[c.slice]}, c.slice);
    }
    auto o = own.find({p.rank, best->from});
    p.waited_rank = best->last;
    p.waited_late_ns = best->to - best->from;
    p.waited_collective = o != own.end() ? o->second : kNoSlice;
    p.waited_cause = kNoSlice;
  }
}

}  // namespace

CriticalPathResult ComputeCriticalPath(const Trace& trace, const CriticalPathOptions& options) {
  CriticalPathResult r;
  r.graph = BuildDependencyGraph(trace, options);
  std::vector<PathWindow> windows = FindWindows(trace, r.graph, options.window, &r.step_of);
  std::optional<StartupWork> own_startup;
  const StartupWork& startup = options.window != nullptr ? options.window->startup_work
                                                         : own_startup.emplace(StartupWork::CaptureWindowsOnly(trace));
  WalkAll(trace, r.graph, windows, nullptr, nullptr, &r, &startup);
  r.window_top_slices = TopPathSlices(trace, r);
  if (options.cross != nullptr && options.cross->clocks_agree) NameWaitedRanks(trace, *options.cross, &r);
  if (!options.keep_graph) r.graph = DependencyGraph{}, r.step_of = {};
  return r;
}

CriticalPathResult RewalkCriticalPath(const Trace& trace, const CriticalPathResult& measured,
                                      const std::vector<int64_t>& start, const std::vector<int64_t>& end) {
  CriticalPathResult r;
  const size_t n = trace.slices.size();
  if (measured.graph.parent.size() != n || start.size() != n || end.size() != n) return r;
  std::vector<PathWindow> windows;
  windows.reserve(measured.steps.size());
  for (const StepPath& m : measured.steps) {
    PathWindow w;
    w.host_sink = m.host_sink;
    w.device_sink = m.device_sink;
    StepPath& p = w.path;
    p.rank = m.rank;
    p.number = m.number;
    p.step_index = m.step_index;
    p.steady = m.steady;
    p.step_dur_ns = m.step_dur_ns;
    p.device_total_ns = m.device_total_ns;
    p.start_slice = m.start_slice;
    p.start_ns = m.start_ns;
    p.end_ns = INT64_MIN;
    // The start moves with the slice that starts the step, and the host's
    // end with its sink, keeping the measured time from the sink's end to
    // the step's recorded end (a periodic step ends where the next begins,
    // after its last op): a replay with nothing changed gives every step its
    // measured length (on nsys CloverLeaf's periodic steps it gave -2.5%, and
    // with idle removed the start stayed while the work moved: 0 ms steps).
    if (m.start_slice != kNoSlice && trace.slices.ts_ns[m.start_slice] == m.start_ns) {
      p.start_ns = start[m.start_slice];
    } else if (m.host_sink != kNoSlice && trace.slices.ts_ns[m.host_sink] == m.start_ns) {
      p.start_ns = start[m.host_sink];
    }
    if (m.host_sink != kNoSlice) {
      const int64_t tail =
          m.step_index == SIZE_MAX ? 0 : m.start_ns + m.step_dur_ns - SliceEnd(trace.slices, m.host_sink);
      p.end_ns = end[m.host_sink] + std::max<int64_t>(0, tail);
    }
    if (m.device_sink != kNoSlice) p.end_ns = std::max(p.end_ns, end[m.device_sink]);
    if (p.end_ns == INT64_MIN) p.end_ns = m.end_ns;
    p.end_ns = std::max(p.end_ns, p.start_ns);
    windows.push_back(w);
  }
  r.step_of = measured.step_of;  // the windows are measured's steps, in order
  WalkAll(trace, measured.graph, windows, &start, &end, &r);
  return r;
}

bool SteadyStepsAreHostOnly(const CriticalPathResult& path) {
  bool any = false;
  for (const StepPath& p : path.steps) {
    if (!p.steady) continue;
    if (p.device_sink != kNoSlice) return false;
    any = true;
  }
  return any;
}

}  // namespace aiprof
