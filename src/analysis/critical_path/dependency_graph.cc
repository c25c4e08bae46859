// BuildDependencyGraph: the edges of critical_path.h, as per-slice arrays.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <tuple>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "src/analysis/common/trace_index.h"
#include "src/analysis/communication/collectives.h"
#include "src/analysis/communication/cross_rank.h"
#include "src/analysis/critical_path/critical_path.h"
#include "src/model/event_kind.h"
#include "src/model/graph_capture_tracks.h"

namespace aiprof {
namespace {

// Device activity grouped by stream track, with the time each was launched
// (its launching call's start, else its own start): "the last activity
// launched on stream S before time t" is a binary search.
class StreamIndex {
 public:
  StreamIndex(const Trace& trace, const DependencyGraph& g) : trace_(trace) {
    const SliceTable& s = trace.slices;
    range_.assign(trace.tracks.size(), {0, 0});
    for (uint32_t i = 0; i < s.size(); ++i) {
      if (!g.on_device[i]) continue;
      const uint32_t tr = s.track[i];
      if (range_[tr].second == 0) range_[tr].first = acts_.size();
      acts_.push_back(i);
      launched_.push_back(g.launch[i] != kNoSlice ? s.ts_ns[g.launch[i]] : s.ts_ns[i]);
      range_[tr].second = acts_.size();
    }
    // Launch order follows stream order; a stray inversion (clock skew)
    // must not break the binary searches.
    for (size_t k = 1; k < launched_.size(); ++k) {
      if (s.track[acts_[k]] == s.track[acts_[k - 1]]) launched_[k] = std::max(launched_[k], launched_[k - 1]);
    }
    for (uint32_t tr = 0; tr < trace.tracks.size(); ++tr) {
      if (trace.tracks.kind[tr] == TrackKind::kDeviceStream && range_[tr].second > range_[tr].first) {
        streams_.push_back({trace.tracks.rank[tr], trace.tracks.pid[tr], trace.tracks.tid[tr], tr});
      }
    }
    std::sort(streams_.begin(), streams_.end());
  }

  // Last activity on stream track `tr` launched at or before `t`, or kNoSlice.
  uint32_t LastBefore(uint32_t tr, int64_t t) const {
    if (tr >= range_.size()) return kNoSlice;
    auto [b, e] = range_[tr];
    auto it = std::upper_bound(launched_.begin() + static_cast<ptrdiff_t>(b),
                               launched_.begin() + static_cast<ptrdiff_t>(e), t);
    size_t k = static_cast<size_t>(it - launched_.begin());
    return k > b ? acts_[k - 1] : kNoSlice;
  }
  // First activity on stream track `tr` launched after `t`, or kNoSlice.
  uint32_t FirstAfter(uint32_t tr, int64_t t) const {
    if (tr >= range_.size()) return kNoSlice;
    auto [b, e] = range_[tr];
    auto it = std::upper_bound(launched_.begin() + static_cast<ptrdiff_t>(b),
                               launched_.begin() + static_cast<ptrdiff_t>(e), t);
    size_t k = static_cast<size_t>(it - launched_.begin());
    return k < e ? acts_[k] : kNoSlice;
  }
  // Of the streams of (rank, device) — every device of the rank when
  // `device` is -1 — the activity launched last before `t` per stream that
  // ends latest.
  uint32_t LatestEndingBefore(int32_t rank, int64_t device, int64_t t) const {
    uint32_t best = kNoSlice;
    const SliceTable& s = trace_.slices;
    auto lo = std::lower_bound(streams_.begin(), streams_.end(), Stream{rank, INT64_MIN, INT64_MIN, 0});
    for (auto it = lo; it != streams_.end() && it->rank == rank; ++it) {
      if (device != -1 && it->device != device) continue;
      uint32_t a = LastBefore(it->track, t);
      if (a != kNoSlice && (best == kNoSlice || SliceEnd(s, a) > SliceEnd(s, best))) best = a;
    }
    return best;
  }
  uint32_t StreamTrack(int32_t rank, int64_t device, int64_t stream) const {
    auto it = std::lower_bound(streams_.begin(), streams_.end(), Stream{rank, device, stream, 0});
    return it != streams_.end() && it->rank == rank && it->device == device && it->stream == stream ? it->track
                                                                                                    : kNoTrack;
  }

 private:
  struct Stream {
    int32_t rank;
    int64_t device, stream;
    uint32_t track;
    bool operator<(const Stream& o) const {
      return std::tie(rank, device, stream, track) < std::tie(o.rank, o.device, o.stream, o.track);
    }
  };
  const Trace& trace_;
  std::vector<uint32_t> acts_;
  std::vector<int64_t> launched_;
  std::vector<std::pair<size_t, size_t>> range_;  // per track, into acts_
  std::vector<Stream> streams_;
};

// Host slices by (rank, correlation id): the runtime call a CUPTI record
// names.
class HostByCorrelation {
 public:
  explicit HostByCorrelation(const Trace& trace) {
    const SliceTable& s = trace.slices;
    for (uint32_t i = 0; i < s.size(); ++i) {
      if (s.correlation[i] == kNoCorrelation || trace.tracks.kind[s.track[i]] == TrackKind::kDeviceStream) continue;
      rows_.push_back({trace.tracks.rank[s.track[i]], s.correlation[i], i});
    }
    std::sort(rows_.begin(), rows_.end());
  }
  uint32_t Find(int32_t rank, int64_t corr) const {
    auto it = std::lower_bound(rows_.begin(), rows_.end(), Row{rank, corr, 0});
    return it != rows_.end() && it->rank == rank && it->corr == corr ? it->slice : kNoSlice;
  }

 private:
  struct Row {
    int32_t rank;
    int64_t corr;
    uint32_t slice;
    bool operator<(const Row& o) const { return std::tie(rank, corr, slice) < std::tie(o.rank, o.corr, o.slice); }
  };
  std::vector<Row> rows_;
};

int64_t IntArg(const Trace& trace, uint32_t slice, std::optional<StringId> key, int64_t fallback) {
  if (!key) return fallback;
  const Arg* a = trace.FindSliceArg(slice, *key);
  if (!a) return fallback;
  switch (a->type) {
    case ArgType::kInt: return a->i;
    case ArgType::kUint: return static_cast<int64_t>(a->u);
    case ArgType::kDouble: return static_cast<int64_t>(a->d);
    default: return fallback;
  }
}

// Host threads whose runtime calls sit on a track of their own are one
// thread: Ascend's CANN layer records a framework thread's aclrt* calls on
// a track with the same tid under a pid of its own. Each track's group is
// the non-runtime thread track of the same (rank, tid), else itself.
std::vector<uint32_t> ThreadGroups(const Trace& trace, bool* merged) {
  const TrackTable& t = trace.tracks;
  std::vector<uint32_t> group(t.size());
  std::map<std::pair<int32_t, int64_t>, uint32_t> frame_track;  // (rank, tid) -> non-runtime thread track
  for (uint32_t tr = 0; tr < t.size(); ++tr) {
    group[tr] = tr;
    if (t.kind[tr] == TrackKind::kThread && t.layer[tr] != Layer::kRuntime)
      frame_track.emplace(std::make_pair(t.rank[tr], t.tid[tr]), tr);
  }
  *merged = false;
  for (uint32_t tr = 0; tr < t.size(); ++tr) {
    if (t.kind[tr] != TrackKind::kThread || t.layer[tr] != Layer::kRuntime || t.tid[tr] <= 0) continue;
    auto it = frame_track.find({t.rank[tr], t.tid[tr]});
    if (it == frame_track.end() || t.pid[it->second] == t.pid[tr]) continue;  // same process: one track already
    group[tr] = it->second;
    *merged = true;
  }
  return group;
}

// Classes, nesting and order on host threads, order on streams. Slices are
// visited track by track, or, where ThreadGroups merged tracks, group by
// group by start (longest first; on a tie the framework's op encloses the
// runtime call), so a runtime call nests in the op it ran under and the op
// ends when the call does (the Ascend trial's D5: aten::_local_scalar_dense
// spent 91.8 ms in an aclrtSynchronizeStreamWithTimeout on the CANN track,
// which the replay kept as fixed host time).
void BuildStructure(const Trace& trace, DependencyGraph* g) {
  const SliceTable& s = trace.slices;
  const size_t n = s.size();
  bool merged = false;
  const std::vector<uint32_t> group = ThreadGroups(trace, &merged);
  std::vector<uint32_t> order;
  if (merged) {
    order.resize(n);
    for (uint32_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      const uint32_t ga = group[s.track[a]], gb = group[s.track[b]];
      if (ga != gb) return ga < gb;
      if (s.ts_ns[a] != s.ts_ns[b]) return s.ts_ns[a] < s.ts_ns[b];
      if (SliceEnd(s, a) != SliceEnd(s, b)) return SliceEnd(s, a) > SliceEnd(s, b);
      const bool ra = trace.tracks.layer[s.track[a]] == Layer::kRuntime;
      const bool rb = trace.tracks.layer[s.track[b]] == Layer::kRuntime;
      if (ra != rb) return rb;
      return a < b;
    });
  }
  // The class from the name (host kinds) once per distinct string.
  constexpr uint8_t kUnknown = 0xFF;
  std::vector<uint8_t> name_cls(trace.strings.size(), kUnknown), runtime_cls(trace.strings.size(), kUnknown);
  auto ClassOf = [&](uint32_t i) {
    switch (s.kind[i]) {
      case EventKind::kCpuOp:
      case EventKind::kPythonFunction:
      case EventKind::kUserAnnotation:
      case EventKind::kGpuUserAnnotation:
      case EventKind::kOther: {
        uint8_t& c = name_cls[s.name[i].raw];
        if (c == kUnknown) c = static_cast<uint8_t>(ClassOfSlice(EventKind::kOther, trace.Str(s.name[i])));
        return static_cast<PathClass>(c);
      }
      case EventKind::kRuntime:
      case EventKind::kDriver: {  // a blocking call is sync_call (ClassOfSlice)
        uint8_t& c = runtime_cls[s.name[i].raw];
        if (c == kUnknown) c = static_cast<uint8_t>(ClassOfSlice(s.kind[i], trace.Str(s.name[i])));
        return static_cast<PathClass>(c);
      }
      default: return ClassOfSlice(s.kind[i], {});
    }
  };
  // A graph-capture merge's copies of the captured ops (IsGraphCaptureTrack)
  // sit at their replayed kernels' times: they are no host time and get no
  // edge (class kIdleOther). As host work they were the vLLM decode
  // replay's host sink, and remove-idle host_bound replayed them as 17 ms
  // of host ops on the path (18.82 ms predicted with the capture merged).
  std::vector<bool> capture(trace.tracks.size());
  for (uint32_t tr = 0; tr < trace.tracks.size(); ++tr) capture[tr] = IsGraphCaptureTrack(trace, tr);
  std::vector<uint32_t> stack;
  uint32_t track = kNoTrack, last_top = kNoSlice, last_act = kNoSlice;
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t i = merged ? order[k] : k;
    if (capture[s.track[i]]) continue;  // class kIdleOther, no edges
    if (group[s.track[i]] != track) {
      track = group[s.track[i]];
      stack.clear();
      last_top = last_act = kNoSlice;
    }
    const TrackKind tk = trace.tracks.kind[s.track[i]];
    g->cls[i] = ClassOf(i);
    if (tk == TrackKind::kDeviceStream) {
      if (!IsDeviceActivity(s.kind[i])) continue;  // labels and CUPTI sync records
      g->on_device[i] = true;
      g->prev[i] = last_act;
      if (last_act != kNoSlice) ++g->edges[static_cast<size_t>(DepKind::kStreamOrder)];
      last_act = i;
      continue;
    }
    const int64_t start = s.ts_ns[i], end = SliceEnd(s, i);
    while (!stack.empty() && !(SliceEnd(s, stack.back()) >= end && s.ts_ns[stack.back()] <= start)) stack.pop_back();
    const uint32_t parent = stack.empty() ? kNoSlice : stack.back();
    g->parent[i] = parent;
    if (parent != kNoSlice) {
      g->prev[i] = g->last_child[parent];
      g->last_child[parent] = i;
      ++g->edges[static_cast<size_t>(DepKind::kNesting)];
      // Work inside a data-loader span is data loading.
      if (g->cls[parent] == PathClass::kIdleDataLoading && !IsIdleClass(g->cls[i])) {
        g->cls[i] = PathClass::kIdleDataLoading;
      }
    } else {
      g->prev[i] = last_top;
      last_top = i;
    }
    if (g->prev[i] != kNoSlice) ++g->edges[static_cast<size_t>(DepKind::kThreadOrder)];
    stack.push_back(i);
  }
}

void LinkLaunches(const Trace& trace, DependencyGraph* g) {
  std::vector<uint32_t> calls = LaunchingCalls(trace);
  std::vector<uint32_t> ops = LaunchingOps(trace);
  for (uint32_t i = 0; i < trace.slices.size(); ++i) {
    if (!g->on_device[i]) continue;
    g->launch[i] = calls[i] != kNoSlice ? calls[i] : ops[i];
    if (g->launch[i] != kNoSlice) ++g->edges[static_cast<size_t>(DepKind::kLaunch)];
  }
}

// Adds `source` as what `target` waits for, keeping the latest-ending one.
void AddWait(const SliceTable& s, uint32_t target, uint32_t source, DependencyGraph* g) {
  if (target == kNoSlice || source == kNoSlice || target == source) return;
  uint32_t& cur = g->wait_on[target];
  if (cur == kNoSlice) {
    ++g->edges[static_cast<size_t>(g->on_device[target] ? DepKind::kStreamWait : DepKind::kSync)];
    cur = source;
  } else if (SliceEnd(s, source) > SliceEnd(s, cur)) {
    cur = source;
  }
}

// The host calls that make a stream wait for an event, in slice order: a
// runtime, driver or sync call on a host track whose name
// IsStreamWaitCallName accepts (event_kind.h). Each distinct name is
// classified once.
std::vector<uint32_t> StreamWaitCalls(const Trace& trace) {
  const SliceTable& s = trace.slices;
  constexpr uint8_t kUnknown = 0xFF;
  std::vector<uint8_t> is_wait(trace.strings.size(), kUnknown);
  std::vector<uint32_t> calls;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] != EventKind::kRuntime && s.kind[i] != EventKind::kDriver && s.kind[i] != EventKind::kSync) continue;
    if (trace.tracks.kind[s.track[i]] == TrackKind::kDeviceStream) continue;
    uint8_t& w = is_wait[s.name[i].raw];
    if (w == kUnknown) w = IsStreamWaitCallName(trace.Str(s.name[i])) ? 1 : 0;
    if (w != 0) calls.push_back(i);
  }
  return calls;
}

// `*waits`: the stream-wait calls (StreamWaitCalls); on return, only those
// no CUPTI "Stream Wait Event" record resolved (LinkCollectiveWaits' rule 4
// uses those alone).
void LinkSyncs(const Trace& trace, DependencyGraph* g, std::vector<uint32_t>* waits) {
  const SliceTable& s = trace.slices;
  // Without device activity no call waits for a stream: nothing to index.
  if (std::find(g->on_device.begin(), g->on_device.end(), true) == g->on_device.end()) {
    waits->clear();
    return;
  }
  StreamIndex streams(trace, *g);
  HostByCorrelation host(trace);
  const std::optional<StringId> k_wait_stream = trace.strings.Find("wait_on_stream");
  const std::optional<StringId> k_record = trace.strings.Find("wait_on_cuda_event_record_corr_id");
  bool has_records = false;
  std::vector<uint32_t> resolved_waits;  // wait calls a "Stream Wait Event" record bound
  for (uint32_t i = 0; i < s.size(); ++i) {
    const uint32_t tr = s.track[i];
    if (s.kind[i] != EventKind::kSync || trace.tracks.kind[tr] != TrackKind::kDeviceStream) continue;
    has_records = true;
    const int32_t rank = trace.tracks.rank[tr];
    const int64_t device = trace.tracks.pid[tr];
    const uint32_t call = host.Find(rank, s.correlation[i]);
    if (call == kNoSlice) continue;
    const std::string_view name = trace.Str(s.name[i]);
    const int64_t wait_stream = IntArg(trace, i, k_wait_stream, -1);
    const uint32_t record = host.Find(rank, IntArg(trace, i, k_record, kNoCorrelation));
    const uint32_t wait_track = wait_stream >= 0 ? streams.StreamTrack(rank, device, wait_stream) : kNoTrack;
    if (name == "Stream Wait Event") {
      if (record == kNoSlice || wait_track == kNoTrack) continue;
      AddWait(s, streams.FirstAfter(tr, s.ts_ns[call]), streams.LastBefore(wait_track, s.ts_ns[record]), g);
      resolved_waits.push_back(call);
    } else if (name == "Stream Sync") {
      AddWait(s, call, streams.LastBefore(tr, s.ts_ns[call]), g);
    } else if (name == "Event Sync" && record != kNoSlice && wait_track != kNoTrack) {
      AddWait(s, call, streams.LastBefore(wait_track, s.ts_ns[record]), g);
    } else {  // Context Sync, an Event Sync naming no stream: every stream of the device
      AddWait(s, call, streams.LatestEndingBefore(rank, device, s.ts_ns[call]), g);
    }
  }
  std::sort(resolved_waits.begin(), resolved_waits.end());
  g->wait_calls = waits->size();
  std::erase_if(*waits,
                [&](uint32_t i) { return std::binary_search(resolved_waits.begin(), resolved_waits.end(), i); });
  g->wait_calls_unresolved = waits->size();
  if (has_records) return;
  // No CUPTI sync records (older traces, other runtimes): a blocking sync
  // call waits for every stream of its rank.
  for (uint32_t i = 0; i < s.size(); ++i) {
    const uint32_t tr = s.track[i];
    if (s.kind[i] != EventKind::kSync && s.kind[i] != EventKind::kRuntime) continue;
    if (trace.tracks.kind[tr] == TrackKind::kDeviceStream || !IsBlockingSyncName(trace.Str(s.name[i]))) continue;
    AddWait(s, i, streams.LatestEndingBefore(trace.tracks.rank[tr], -1, s.ts_ns[i]), g);
  }
}

// Ascend streams wait for a collective with an EVENT_WAIT task: the next
// activity on the stream runs once the collective has ended, and the wait
// task (no device activity itself) is all the trace shows of it; the gap
// it leaves was kept as that activity's dispatch gap, so `remove-comm`
// moved nothing after it. A wait of at least kMinEventWaitNs that ends
// within kEventWaitMatchNs of a collective of its rank (the closest end)
// makes that collective what the stream's next activity waits for
// (kStreamWait). On the Ascend DDP fixture the EVENT_WAIT of 65.6 ms ends
// 2.0 us after the all-reduce it waits for.
constexpr int64_t kMinEventWaitNs = 10'000;
constexpr int64_t kEventWaitMatchNs = 50'000;

void LinkEventWaits(const Trace& trace, DependencyGraph* g) {
  const SliceTable& s = trace.slices;
  const std::optional<StringId> k_event_wait = trace.strings.Find("EVENT_WAIT");
  if (!k_event_wait) return;
  // The device records each wait as a task on the waiting stream: the wait
  // calls (aclrtStreamWaitEvent) are not unresolved.
  g->wait_calls_unresolved = 0;
  std::vector<std::pair<std::pair<int32_t, int64_t>, uint32_t>> colls;  // ((rank, end), slice)
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (g->on_device[i] && g->cls[i] == PathClass::kCollective) {
      colls.push_back({{trace.tracks.rank[s.track[i]], SliceEnd(s, i)}, i});
    }
  }
  if (colls.empty()) return;
  std::sort(colls.begin(), colls.end());
  for (uint32_t w = 0; w < s.size(); ++w) {
    if (s.name[w] != *k_event_wait || s.dur_ns[w] < kMinEventWaitNs) continue;
    const uint32_t tr = s.track[w];
    if (trace.tracks.kind[tr] != TrackKind::kDeviceStream) continue;
    const int32_t rank = trace.tracks.rank[tr];
    const int64_t end = SliceEnd(s, w);
    auto it =
        std::lower_bound(colls.begin(), colls.end(), std::make_pair(std::make_pair(rank, end - kEventWaitMatchNs), 0u));
    uint32_t best = kNoSlice;
    int64_t best_d = kEventWaitMatchNs + 1;
    for (; it != colls.end() && it->first.first == rank && it->first.second <= end + kEventWaitMatchNs; ++it) {
      const int64_t d = std::abs(it->first.second - end);
      if (s.track[it->second] != tr && s.ts_ns[it->second] < end && d < best_d) best = it->second, best_d = d;
    }
    if (best == kNoSlice) continue;
    // The stream's next activity: slices of a track are in start order.
    uint32_t next = w + 1;
    while (next < s.size() && s.track[next] == tr && !g->on_device[next]) ++next;
    if (next >= s.size() || s.track[next] != tr) continue;
    AddWait(s, next, best, g);
  }
}

// Stream waits the trace leaves unresolved: ROCm traces record
// hipStreamWaitEvent calls but neither the event's hipEventRecord nor the
// stream waited for (TraceLens's MI300 ResNet activation-checkpointing run:
// 24 calls, no record), so a stream that idles until an all-reduce on
// another stream ends had no edge, and the path showed the idle as
// idle_other and the collective as hidden. Bound, conservatively, only when
// the timing admits one reading: device activity A on stream S (rank R,
// device D) whose launch call is known, such that
//   1. S idled at least kMinStreamIdleGapNs before A (A's stream
//      predecessor ended that much earlier, or A is S's first activity);
//   2. A's launch call ended before the idle ended (A was ready: the host
//      did not hold it back);
//   3. a collective C on another stream of (R, D) ended inside S's idle and
//      at most kCollectiveWaitMatchNs before A started (the latest such C);
//   4. an unresolved stream-wait call of rank R started between C's launch
//      (when known) and A's launch (the host asked a stream to wait there).
// Then C → A is a kStreamWait edge. On the MI300 trace the stream-0 copy
// after each all-reduce starts 0.2-18.7 µs after the all-reduce ends and was
// launched milliseconds before. The thresholds are in critical_path.h.
// `unresolved`: the wait calls LinkSyncs left unresolved.
void LinkCollectiveWaits(const Trace& trace, const std::vector<uint32_t>& unresolved, DependencyGraph* g) {
  if (g->wait_calls_unresolved == 0) return;
  const SliceTable& s = trace.slices;
  struct Coll {
    int32_t rank;
    int64_t device, end;
    uint32_t slice;
    bool operator<(const Coll& o) const {
      return std::tie(rank, device, end, slice) < std::tie(o.rank, o.device, o.end, o.slice);
    }
  };
  std::vector<Coll> colls;
  for (uint32_t i = 0; i < s.size(); ++i) {
    const uint32_t tr = s.track[i];
    if (g->on_device[i] && g->cls[i] == PathClass::kCollective) {
      colls.push_back({trace.tracks.rank[tr], trace.tracks.pid[tr], SliceEnd(s, i), i});
    }
  }
  std::vector<std::pair<int32_t, int64_t>> waits;  // (rank, start) of the unresolved wait calls
  waits.reserve(unresolved.size());
  for (uint32_t i : unresolved) waits.push_back({trace.tracks.rank[s.track[i]], s.ts_ns[i]});
  if (colls.empty() || waits.empty()) return;
  std::sort(colls.begin(), colls.end());
  std::sort(waits.begin(), waits.end());
  for (uint32_t a = 0; a < s.size(); ++a) {
    const uint32_t l = g->launch[a];
    if (!g->on_device[a] || l == kNoSlice || g->wait_on[a] != kNoSlice) continue;
    const uint32_t tr = s.track[a];
    const int32_t rank = trace.tracks.rank[tr];
    const int64_t start = s.ts_ns[a];
    const int64_t idle_from = g->prev[a] != kNoSlice ? SliceEnd(s, g->prev[a]) : INT64_MIN;
    if (idle_from != INT64_MIN && start - idle_from < kMinStreamIdleGapNs) continue;  // 1
    // 3: the latest collective of (rank, device) on another stream ending in
    // [max(idle_from, start - match), start].
    const int64_t lo = std::max(idle_from, start - kCollectiveWaitMatchNs);
    auto it = std::upper_bound(colls.begin(), colls.end(), Coll{rank, trace.tracks.pid[tr], start, UINT32_MAX});
    uint32_t c = kNoSlice;
    while (it != colls.begin()) {
      --it;
      if (it->rank != rank || it->device != trace.tracks.pid[tr] || it->end < lo) break;
      if (s.track[it->slice] != tr) {
        c = it->slice;
        break;
      }
    }
    if (c == kNoSlice || SliceEnd(s, l) > SliceEnd(s, c)) continue;  // 3, 2
    // 4: an unresolved wait call between C's launch and A's launch.
    const int64_t from = g->launch[c] != kNoSlice ? s.ts_ns[g->launch[c]] : INT64_MIN;
    auto w = std::lower_bound(waits.begin(), waits.end(), std::make_pair(rank, from));
    if (w == waits.end() || w->first != rank || w->second > s.ts_ns[l]) continue;
    AddWait(s, a, c, g);
    ++g->waits_bound_by_timing;
  }
}

// Joins each collective across ranks as the multi-rank analysis paired it
// (CrossRankResult::paired_slices: within steps, completed ones only,
// collective_pairing.h): every instance but the last to arrive gets the
// last arrival as its peer. The last arrival is the pairing's own
// (CrossRankResult::paired_last, LastArrival); a tie for it joins nothing:
// no single rank held the others.
void LinkCollectives(const CrossRankResult& cross, DependencyGraph* g) {
  for (size_t j = 0; j < cross.paired_slices.size(); ++j) {
    const uint32_t last = cross.paired_last[j];
    if (last == kNoSlice) continue;
    for (uint32_t x : cross.paired_slices[j]) {
      if (x == last) continue;  // the others arrived strictly earlier
      g->peer[x] = last;
      ++g->edges[static_cast<size_t>(DepKind::kCollective)];
    }
  }
  g->cross_rank = true;
}

// Work roots: host slices that start work on their thread (no parent, or a
// profiler wrapper as parent) and are no wrapper themselves.
bool IsWorkRoot(const DependencyGraph& g, uint32_t i) {
  if (g.on_device[i] || g.cls[i] == PathClass::kIdleOther) return false;
  return g.parent[i] == kNoSlice || g.cls[g.parent[i]] == PathClass::kIdleOther;
}

void LinkHandoffs(const Trace& trace, DependencyGraph* g) {
  const SliceTable& s = trace.slices;
  // Work roots by (process, end, slice); a process is a (rank, pid) pair,
  // numbered in that order so the order is (rank, pid, end, slice). 16 bytes
  // a root, counted before they are collected, and only in processes of two
  // or more threads (a hand-off is between two threads of one process): on
  // a 13.5 M-slice trace of one thread's top-level spans the growing vector
  // of 32-byte roots peaked at 805 MB.
  std::vector<std::pair<int32_t, int64_t>> procs;
  for (uint32_t tr = 0; tr < trace.tracks.size(); ++tr) procs.push_back({trace.tracks.rank[tr], trace.tracks.pid[tr]});
  std::sort(procs.begin(), procs.end());
  procs.erase(std::unique(procs.begin(), procs.end()), procs.end());
  std::vector<uint32_t> proc(trace.tracks.size());
  for (uint32_t tr = 0; tr < trace.tracks.size(); ++tr) {
    proc[tr] = static_cast<uint32_t>(
        std::lower_bound(procs.begin(), procs.end(), std::make_pair(trace.tracks.rank[tr], trace.tracks.pid[tr])) -
        procs.begin());
  }
  std::vector<uint32_t> threads(procs.size(), 0);
  for (uint32_t tr = 0; tr < trace.tracks.size(); ++tr)
    threads[proc[tr]] += trace.tracks.kind[tr] == TrackKind::kThread;
  struct Root {
    int64_t end;
    uint32_t proc, slice;
    bool operator<(const Root& o) const { return std::tie(proc, end, slice) < std::tie(o.proc, o.end, o.slice); }
  };
  auto is_root = [&](uint32_t i) {
    const uint32_t tr = s.track[i];
    return trace.tracks.kind[tr] == TrackKind::kThread && threads[proc[tr]] >= 2 && IsWorkRoot(*g, i);
  };
  size_t count = 0;
  for (uint32_t i = 0; i < s.size(); ++i) count += is_root(i);
  std::vector<Root> roots;
  roots.reserve(count);
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (is_root(i)) roots.push_back({SliceEnd(s, i), proc[s.track[i]], i});
  }
  std::sort(roots.begin(), roots.end());
  constexpr int kScan = 8;  // entries of the same thread skipped at most
  for (const Root& x : roots) {
    const uint32_t i = x.slice;
    const uint32_t p = g->prev[i], u = g->parent[i];
    const int64_t own = p != kNoSlice ? SliceEnd(s, p) : u != kNoSlice ? s.ts_ns[u] : INT64_MIN;
    if (own != INT64_MIN && s.ts_ns[i] - own < kMinHandoffGapNs) continue;  // busy thread: no waiting
    auto it = std::upper_bound(roots.begin(), roots.end(), Root{s.ts_ns[i], x.proc, UINT32_MAX});
    for (int k = 0; k < kScan && it != roots.begin(); ++k) {
      --it;
      if (it->proc != x.proc || it->end <= own) break;
      if (s.track[it->slice] == s.track[i]) continue;
      g->handoff[i] = it->slice;
      ++g->edges[static_cast<size_t>(DepKind::kHandoff)];
      break;
    }
  }
}

}  // namespace

const char* DepKindName(DepKind kind) {
  switch (kind) {
    case DepKind::kNone: return "start";
    case DepKind::kNesting: return "nesting";
    case DepKind::kThreadOrder: return "thread_order";
    case DepKind::kLaunch: return "launch";
    case DepKind::kStreamOrder: return "stream_order";
    case DepKind::kSync: return "sync";
    case DepKind::kStreamWait: return "stream_wait";
    case DepKind::kCollective: return "collective";
    case DepKind::kHandoff: return "handoff";
  }
  return "?";
}

void AdviseHugePages(const void* p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (bytes < 2 * kHuge) return;
  const uintptr_t a = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t b = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (b > a) madvise(reinterpret_cast<void*>(a), b - a, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

DependencyGraph BuildDependencyGraph(const Trace& trace, const CriticalPathOptions& options) {
  const size_t n = trace.slices.size();
  DependencyGraph g;
  for (std::vector<uint32_t>* v : {&g.parent, &g.prev, &g.last_child, &g.launch, &g.wait_on, &g.peer, &g.handoff}) {
    v->reserve(n);
    AdviseHugePages(v->data(), n * sizeof(uint32_t));
    v->assign(n, kNoSlice);
  }
  g.cls.assign(n, PathClass::kIdleOther);
  g.on_device.assign(n, false);
  BuildStructure(trace, &g);
  LinkLaunches(trace, &g);
  std::vector<uint32_t> waits = StreamWaitCalls(trace);
  LinkSyncs(trace, &g, &waits);  // leaves the unresolved calls in `waits`
  LinkEventWaits(trace, &g);
  LinkCollectiveWaits(trace, waits, &g);
  LinkHandoffs(trace, &g);
  // Only on the traces' own clocks: the walk compares trace times across
  // ranks, which an alignment by collective ends does not move.
  if (options.cross != nullptr && options.cross->clocks_agree && !options.cross->aligned_from_collectives &&
      options.cross->ranks.size() >= 2) {
    LinkCollectives(*options.cross, &g);
  }
  return g;
}

}  // namespace aiprof
