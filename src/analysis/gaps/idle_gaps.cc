#include "src/analysis/gaps/idle_gaps.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "src/analysis/common/intervals.h"
#include "src/analysis/common/text_format.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/window/analysis_window.h"

namespace aiprof {
namespace {

constexpr char kBreakdownSource[] = "breakdown";

enum class ActivityClass : uint8_t { kCompute, kComm, kMemcpy };

struct Activity {
  int64_t start_ns, end_ns;
  uint32_t slice;
  ActivityClass cls;
};

// Walks sorted gaps against a sorted disjoint interval list: overlap test in
// amortized O(1) per gap.
class OverlapCursor {
 public:
  explicit OverlapCursor(const Intervals* iv) : iv_(iv) {}
  bool Overlaps(int64_t start, int64_t end) {
    if (iv_ == nullptr) return false;
    while (pos_ < iv_->size() && (*iv_)[pos_].second <= start) ++pos_;
    return pos_ < iv_->size() && (*iv_)[pos_].first < end;
  }

 private:
  const Intervals* iv_;
  size_t pos_ = 0;
};

struct RankContext {
  Intervals sync, data_loading;  // merged
};

std::map<int32_t, RankContext> CollectRankContexts(const Trace& trace) {
  std::map<int32_t, std::pair<Intervals, Intervals>> raw;
  const SliceTable& s = trace.slices;
  // Name tests memoised per string id (bit 0 known, 1 sync, 2 data loader).
  std::vector<uint8_t> name_class(trace.strings.size(), 0);
  auto classify = [&](StringId id) {
    uint8_t& c = name_class[id.raw];
    if (c == 0) {
      std::string_view name = trace.Str(id);
      // A synchronous copy call waits as a sync does (the attribution's and
      // the critical path's rule: IsSyncCopyName).
      const bool sync = IsBlockingSyncName(name) || IsSyncCopyName(name);
      c = static_cast<uint8_t>(1 | (sync ? 2 : 0) | (IsDataLoaderName(name) ? 4 : 0));
    }
    return c;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    uint8_t c = classify(s.name[i]);
    if (c == 1) continue;
    int32_t rank = trace.tracks.rank[s.track[i]];
    std::pair<int64_t, int64_t> iv{s.ts_ns[i], s.ts_ns[i] + s.dur_ns[i]};
    if ((s.kind[i] == EventKind::kSync || s.kind[i] == EventKind::kRuntime) && (c & 2)) {
      raw[rank].first.push_back(iv);
    } else if (!IsDeviceActivity(s.kind[i]) && (c & 4)) {
      raw[rank].second.push_back(iv);
    }
  }
  std::map<int32_t, RankContext> out;
  for (auto& [rank, p] : raw) out[rank] = {MergeIntervals(std::move(p.first)), MergeIntervals(std::move(p.second))};
  return out;
}

size_t BucketOf(int64_t len_ns) {
  for (size_t b = 0; b < kGapBucketUpperNs.size(); ++b) {
    if (len_ns < kGapBucketUpperNs[b]) return b;
  }
  return kGapBucketUpperNs.size();
}

void AddGap(const Gap& gap, bool keep_all, TimelineBreakdown* tl) {
  if (keep_all) tl->gaps.push_back(gap);
  int64_t len = gap.end_ns - gap.start_ns;
  ++tl->gap_count;
  size_t b = BucketOf(len);
  ++tl->gap_hist_count[b];
  tl->gap_hist_ns[b] += len;
  tl->gap_hist_ns_by_cause[b][static_cast<size_t>(gap.cause)] += len;
  tl->idle_by_cause_ns[static_cast<size_t>(gap.cause)] += len;
  auto longer = [](const Gap& a, const Gap& c) {
    int64_t la = a.end_ns - a.start_ns, lc = c.end_ns - c.start_ns;
    return la != lc ? la > lc : a.start_ns < c.start_ns;
  };
  auto& top = tl->largest_gaps;
  if (top.size() < kLargestGapsKept || longer(gap, top.back())) {
    top.insert(std::upper_bound(top.begin(), top.end(), gap, longer), gap);
    if (top.size() > kLargestGapsKept) top.pop_back();
  }
}

// Fills busy/idle/gaps of one timeline from its activities (sorted by start).
void BuildTimeline(const Trace& trace, const std::vector<Activity>& acts, const std::vector<uint32_t>& launcher,
                   const RankContext* ctx, const StartupWork& startup, bool keep_all, const Intervals* window,
                   bool window_edges, const Intervals* own_work, TimelineBreakdown* tl) {
  Intervals compute, comm, memcpy;
  {
    // Reserved: on a 13.5 M-span trace these grew by doubling to 268 MB
    // beside their contents (mem2, heaptrack at analyze's peak).
    size_t n[3] = {0, 0, 0};
    for (const Activity& a : acts) ++n[a.cls == ActivityClass::kCompute ? 0 : a.cls == ActivityClass::kComm ? 1 : 2];
    compute.reserve(n[0]), comm.reserve(n[1]), memcpy.reserve(n[2]);
  }
  for (const Activity& a : acts) {
    Intervals& dst = a.cls == ActivityClass::kCompute ? compute : a.cls == ActivityClass::kComm ? comm : memcpy;
    dst.emplace_back(a.start_ns, a.end_ns);
  }
  Intervals compute_u = MergeIntervals(std::move(compute)), comm_u = MergeIntervals(std::move(comm));
  tl->compute_ns = LengthOf(compute_u);
  tl->comm_ns = LengthOf(comm_u);
  tl->comm_overlap_ns = IntersectionLength(compute_u, comm_u);
  Intervals memcpy_u = MergeIntervals(std::move(memcpy));
  tl->memcpy_ns = LengthOf(memcpy_u);
  std::optional<CoveredTime> in_window;
  if (window) {
    in_window.emplace(*window);
    Intervals copies_w = IntersectIntervals(memcpy_u, *window);
    Intervals others = compute_u;
    others.insert(others.end(), comm_u.begin(), comm_u.end());
    others = MergeIntervals(std::move(others));
    tl->window_memcpy_exposed_ns = LengthOf(copies_w) - IntersectionLength(copies_w, others);
    Intervals comm_w = IntersectIntervals(comm_u, *window);
    tl->window_comm_exposed_ns = LengthOf(comm_w) - IntersectionLength(comm_w, compute_u);
  }
  OverlapCursor sync(ctx ? &ctx->sync : nullptr), loading(ctx ? &ctx->data_loading : nullptr);
  // The cause of idle time [start, end) that ends at activity `next`
  // (kNoSlice: no activity follows). Queried in increasing `start` (the
  // cursors only move forward).
  auto cause_of = [&](int64_t start, int64_t end, uint32_t next) {
    uint32_t call = next == kNoSlice || launcher.empty() ? kNoSlice : launcher[next];
    if (startup.Covers(tl->rank, start, end)) return GapCause::kStartup;
    if (loading.Overlaps(start, end)) return GapCause::kDataLoading;
    if (sync.Overlaps(start, end)) return GapCause::kSync;
    if (call != kNoSlice && trace.slices.ts_ns[call] >= start) return GapCause::kHostBound;
    return GapCause::kOther;
  };
  // An edge (below) is the window's time before the first or after the last
  // activity, which can be long (a step's 13.3 s tail on triton_example):
  // a host span must cover at least half of it to name its cause. A gap's
  // "any overlap" rule there gave that tail's 13.3 s to a 16 us
  // cudaDeviceSynchronize inside it.
  auto edge_cause_of = [&](int64_t start, int64_t end, uint32_t next) {
    const Intervals edge{{start, end}};
    const int64_t half = (end - start + 1) / 2;
    if (startup.Covers(tl->rank, start, end)) return GapCause::kStartup;
    if (ctx && IntersectionLength(edge, ctx->data_loading) >= half) return GapCause::kDataLoading;
    if (ctx && IntersectionLength(edge, ctx->sync) >= half) return GapCause::kSync;
    const uint32_t call = next == kNoSlice || launcher.empty() ? kNoSlice : launcher[next];
    if (call != kNoSlice && trace.slices.ts_ns[call] >= start) return GapCause::kHostBound;
    return GapCause::kOther;
  };
  auto add_window_idle = [&](GapCause cause, int64_t start, int64_t end) {
    tl->window_idle_by_cause_ns[static_cast<size_t>(cause)] += in_window->Within(start, end);
  };
  // A gap, less aiprof's own work inside it (its parts keep its cause).
  OverlapCursor own(own_work);
  auto add_gap = [&](const Gap& gap) {
    if (!own.Overlaps(gap.start_ns, gap.end_ns)) {
      AddGap(gap, keep_all, tl);
      if (in_window) add_window_idle(gap.cause, gap.start_ns, gap.end_ns);
      return;
    }
    int64_t idle = 0;
    for (const auto& [a, b] : Complement(*own_work, gap.start_ns, gap.end_ns)) {
      Gap part = gap;
      part.start_ns = a;
      part.end_ns = b;
      AddGap(part, keep_all, tl);
      if (in_window) add_window_idle(part.cause, a, b);
      idle += b - a;
    }
    tl->aiprof_overhead_ns += (gap.end_ns - gap.start_ns) - idle;  // the rest of the gap is aiprof's
  };
  const bool edges = in_window && window_edges && !window->empty();
  // Window time before the first activity: idle, but not a gap (gaps lie
  // between activities); the cause rules see it as [window start, first start).
  if (edges && window->front().first < acts.front().start_ns) {
    int64_t start = window->front().first, end = acts.front().start_ns;
    add_window_idle(edge_cause_of(start, end, acts.front().slice), start, end);
  }
  int64_t cur_start = acts.front().start_ns, cur_end = acts.front().end_ns;
  tl->span_start_ns = cur_start;
  for (size_t i = 1; i <= acts.size(); ++i) {
    if (i < acts.size() && acts[i].start_ns <= cur_end) {
      cur_end = std::max(cur_end, acts[i].end_ns);
      continue;
    }
    tl->busy_ns += cur_end - cur_start;
    if (in_window) tl->window_busy_ns += in_window->Within(cur_start, cur_end);
    if (i == acts.size()) break;
    Gap gap;
    gap.start_ns = cur_end;
    gap.end_ns = acts[i].start_ns;
    gap.next_slice = acts[i].slice;
    gap.cause = cause_of(gap.start_ns, gap.end_ns, gap.next_slice);
    add_gap(gap);
    cur_start = acts[i].start_ns;
    cur_end = acts[i].end_ns;
  }
  // Window time after the last activity: idle, not a gap. No activity follows,
  // so no launch to wait for: data_loading, sync or other, never host_bound.
  if (edges && window->back().second > cur_end) {
    int64_t start = cur_end, end = window->back().second;
    add_window_idle(edge_cause_of(start, end, kNoSlice), start, end);
  }
  tl->span_ns = cur_end - tl->span_start_ns;
  tl->idle_ns = tl->span_ns - tl->busy_ns - tl->aiprof_overhead_ns;
}

ActivityClass ClassOf(EventKind k) {
  if (k == EventKind::kCollective) return ActivityClass::kComm;
  if (k == EventKind::kMemcpy || k == EventKind::kMemset) return ActivityClass::kMemcpy;
  return ActivityClass::kCompute;
}

// Reserves each track's vector for the slices `counted` accepts on it (an
// upper bound of what is pushed): a 13.5 M-span thread's Activity vector grew
// by doubling to 2^24 x 24 B (402 MB) and held the old block while it grew
// (mem2, heaptrack at analyze's peak).
template <typename Counted>
void ReserveByTrack(const Trace& trace, Counted counted, std::map<uint32_t, std::vector<Activity>>* by_track) {
  std::vector<size_t> n(trace.tracks.size(), 0);
  for (uint32_t i = 0; i < trace.slices.size(); ++i) n[trace.slices.track[i]] += counted(i);
  for (uint32_t t = 0; t < n.size(); ++t) {
    if (n[t] > 0) (*by_track)[t].reserve(n[t]);
  }
}

// A trace of the tracing SDK alone (no cpu_op): the spans the program
// recorded on its threads stand in for ops (docs/sdk.md, "Data loading").
// Left out: profiler wrappers (its iterations' ProfilerStep#N), data-loading
// spans (IsDataLoaderName), a span enclosing one on its thread (a step the
// program wraps in a span of its own) and a span inside one (part of the
// loading), so that the time in a data-loading span is idle time of its
// thread, caused by data loading. Where threads
// run iterations, only theirs count (the main thread is one of them).
std::map<uint32_t, std::vector<Activity>> SdkSpanActivity(const Trace& trace) {
  const SliceTable& s = trace.slices;
  std::vector<int8_t> loader_name(trace.strings.size(), -1);  // memoised per string id
  auto is_loader = [&](StringId id) {
    int8_t& c = loader_name[id.raw];
    if (c < 0) c = IsDataLoaderName(trace.Str(id)) ? 1 : 0;
    return c == 1;
  };
  auto recorded = [&](uint32_t i) {
    const uint32_t t = s.track[i];
    return s.kind[i] == EventKind::kUserAnnotation && trace.tracks.layer[t] == Layer::kApplication &&
           trace.tracks.kind[t] == TrackKind::kThread;
  };
  std::map<uint32_t, Intervals> loading;  // per track, merged
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (recorded(i) && is_loader(s.name[i])) loading[s.track[i]].emplace_back(s.ts_ns[i], s.ts_ns[i] + s.dur_ns[i]);
  }
  for (auto& [track, iv] : loading) iv = MergeIntervals(std::move(iv));
  // A thread's spans nest: one that overlaps a data-loading span encloses
  // it or is part of the loading (a "collate" inside it).
  auto overlaps_loading = [&](uint32_t track, int64_t start, int64_t end) {
    auto it = loading.find(track);
    if (it == loading.end()) return false;
    auto l = std::upper_bound(it->second.begin(), it->second.end(), start,
                              [](int64_t t, const std::pair<int64_t, int64_t>& iv) { return t < iv.second; });
    return l != it->second.end() && l->first < end;
  };
  // The threads that run iterations are the loop's: a busier thread (a
  // prefetcher, a DataLoader worker's spans) is not the main thread.
  std::set<uint32_t> stepping;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (recorded(i) && IsProfilerWrapperName(trace.Str(s.name[i]))) stepping.insert(s.track[i]);
  }
  std::map<uint32_t, std::vector<Activity>> by_track;
  ReserveByTrack(trace, recorded, &by_track);
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (!recorded(i) || is_loader(s.name[i]) || IsProfilerWrapperName(trace.Str(s.name[i]))) continue;
    if (!stepping.empty() && !stepping.contains(s.track[i])) continue;
    const int64_t start = s.ts_ns[i], end = s.ts_ns[i] + s.dur_ns[i];
    if (!overlaps_loading(s.track[i], start, end)) {
      by_track[s.track[i]].push_back({start, end, i, ActivityClass::kCompute});
    }
  }
  std::erase_if(by_track, [](const auto& kv) { return kv.second.empty(); });  // reserved, then left out
  return by_track;
}

// CPU-only: per rank, the thread track with the most cpu_op union time (a
// trace of the SDK alone: of its spans, SdkSpanActivity), among the tracks
// that hold the rank's timeline steps (Trace::steps: ProfilerStep markers, or
// the thread a periodic pattern was found on) where any of them has such
// time: the training loop's thread, the attribution's critical thread. A
// DataLoader worker that profiles itself, merged in as another pid, can be
// busier (fresh's loader_pids: worker 0 61 ms of ops, the trainer a few).
std::map<std::pair<int32_t, int32_t>, std::pair<uint32_t, std::vector<Activity>>> CpuMainThreads(const Trace& trace) {
  std::map<uint32_t, std::vector<Activity>> by_track;
  const SliceTable& s = trace.slices;
  ReserveByTrack(trace, [&](uint32_t i) { return s.kind[i] == EventKind::kCpuOp; }, &by_track);
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] != EventKind::kCpuOp) continue;
    by_track[s.track[i]].push_back({s.ts_ns[i], s.ts_ns[i] + s.dur_ns[i], i, ActivityClass::kCompute});
  }
  if (by_track.empty()) by_track = SdkSpanActivity(trace);
  std::set<uint32_t> stepping;  // tracks holding timeline steps
  for (size_t k = 0; k < trace.steps.size(); ++k) {
    const uint32_t t = trace.steps.track[k];
    if (t != kNoTrack && by_track.contains(t)) stepping.insert(t);
  }
  std::set<int32_t> ranks_stepping;
  for (uint32_t t : stepping) ranks_stepping.insert(trace.tracks.rank[t]);
  std::map<int32_t, std::pair<int64_t, uint32_t>> best;  // rank -> (union ns, track)
  for (auto& [track, acts] : by_track) {
    int32_t rank = trace.tracks.rank[track];
    if (ranks_stepping.contains(rank) && !stepping.contains(track)) continue;
    Intervals iv;
    iv.reserve(acts.size());
    for (const Activity& a : acts) iv.emplace_back(a.start_ns, a.end_ns);
    int64_t len = LengthOf(MergeIntervals(std::move(iv)));
    auto it = best.find(rank);
    if (it == best.end() || len > it->second.first) best[rank] = {len, track};
  }
  std::map<std::pair<int32_t, int32_t>, std::pair<uint32_t, std::vector<Activity>>> out;
  for (auto& [rank, b] : best) out[{rank, kHostDevice}] = {b.second, std::move(by_track[b.second])};
  return out;
}

// GapsResult::device_util: of the steady steps' wall time where the window
// is steps with starts (and they hold some of the timelines' time), else of
// the spans less aiprof's own work.
void SetDeviceUtil(bool steady_steps, GapsResult* result) {
  int64_t window_busy = 0, window_base = 0, busy = 0, span_base = 0;
  for (const TimelineBreakdown& tl : result->timelines) {
    window_busy += tl.window_busy_ns;
    window_base += tl.window_busy_ns;
    for (int64_t ns : tl.window_idle_by_cause_ns) window_base += ns;
    busy += tl.busy_ns;
    span_base += tl.span_ns - tl.aiprof_overhead_ns;
  }
  if (steady_steps && window_base > 0) {
    result->device_util = static_cast<double>(window_busy) / static_cast<double>(window_base);
    result->device_util_base = UtilBase::kSteadySteps;
  } else if (span_base > 0) {
    result->device_util = static_cast<double>(busy) / static_cast<double>(span_base);
    result->device_util_base = UtilBase::kSpan;
  }
}

}  // namespace

const char* GapCauseName(GapCause cause) {
  switch (cause) {
    case GapCause::kDataLoading: return "data_loading";
    case GapCause::kSync: return "sync";
    case GapCause::kHostBound: return "host_bound";
    case GapCause::kOther: return "other";
    case GapCause::kStartup: return "startup";
  }
  return "other";
}

GapsResult ComputeGaps(const Trace& trace, const GapsOptions& options) {
  const AnalysisWindow* window = options.window;
  GapsResult result;
  std::map<std::pair<int32_t, int32_t>, std::pair<uint32_t, std::vector<Activity>>> timelines;
  const SliceTable& s = trace.slices;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (!IsDeviceActivity(s.kind[i])) continue;
    uint32_t t = s.track[i];
    auto& tl = timelines[{trace.tracks.rank[t], trace.tracks.device[t]}];
    tl.first = kNoTrack;
    tl.second.push_back({s.ts_ns[i], s.ts_ns[i] + s.dur_ns[i], i, ClassOf(s.kind[i])});
  }
  std::vector<uint32_t> launcher;
  if (timelines.empty()) {
    result.cpu_only = true;
    timelines = CpuMainThreads(trace);
  } else {
    launcher = LaunchingCalls(trace);
    for (const auto& [key, tl] : timelines) {
      for (const Activity& a : tl.second) result.has_launch_links |= launcher[a.slice] != kNoSlice;
    }
  }
  std::map<int32_t, RankContext> contexts = CollectRankContexts(trace);
  // CPU-only timelines are a host thread's ops: start-up calls are its busy
  // time, not a device's idle.
  std::optional<StartupWork> own_startup;
  const StartupWork& startup = result.cpu_only     ? own_startup.emplace()
                               : window != nullptr ? window->startup_work
                                                   : own_startup.emplace(StartupWork::CaptureWindowsOnly(trace));
  const std::map<int32_t, Intervals> own_work = AiprofOverheadByRank(trace);
  for (auto& [key, tl] : timelines) {
    auto& acts = tl.second;
    if (acts.empty()) continue;
    std::sort(acts.begin(), acts.end(), [](const Activity& a, const Activity& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
    });
    TimelineBreakdown out;
    out.rank = key.first;
    out.device = key.second;
    out.track = tl.first;
    auto ctx = contexts.find(key.first);
    // Each rank's timelines are measured over that rank's own steps; the
    // window's time before the first and after the last activity counts only
    // when the window is steps (a per-trace window's ends are the capture's,
    // not the workload's: there the window is taken inside the span).
    std::optional<Intervals> rank_window;
    if (window) rank_window = window->DeviceIntervalsOfRank(key.first);
    auto own = own_work.find(key.first);
    BuildTimeline(trace, acts, launcher, ctx == contexts.end() ? nullptr : &ctx->second, startup, options.keep_all_gaps,
                  rank_window ? &*rank_window : nullptr, window && window->has_step_starts,
                  own == own_work.end() ? nullptr : &own->second, &out);
    result.timelines.push_back(std::move(out));
  }
  SetDeviceUtil(window != nullptr && window->steps > 0 && window->has_step_starts, &result);
  AttachHostSamples(trace, &result);
  return result;
}

void AttachHostSamples(const Trace& trace, GapsResult* result) {
  const StackSampleTable& s = trace.samples;
  if (s.size() == 0) return;
  // Samples are ordered by (track, ts): one [begin, end) range per track.
  std::vector<std::pair<size_t, size_t>> ranges;
  for (size_t i = 0; i < s.size();) {
    size_t j = i;
    while (j < s.size() && s.track[j] == s.track[i]) ++j;
    ranges.emplace_back(i, j);
    i = j;
  }
  for (TimelineBreakdown& tl : result->timelines) {
    for (Gap& g : tl.largest_gaps) {
      std::map<uint32_t, uint64_t> by_frame;  // frame StringId.raw -> samples
      for (auto [begin, end] : ranges) {
        if (trace.tracks.rank[s.track[begin]] != tl.rank) continue;
        size_t lo = begin, hi = end;
        while (lo < hi) {  // first sample at or after the gap's start
          size_t mid = (lo + hi) / 2;
          if (s.ts_ns[mid] < g.start_ns) lo = mid + 1; else hi = mid;
        }
        for (size_t i = lo; i < end && s.ts_ns[i] < g.end_ns; ++i) {
          ++g.host_samples;
          if (s.callsite[i] != kNoCallsite) ++by_frame[trace.callsites.frame[s.callsite[i]].raw];
        }
      }
      std::vector<std::pair<StringId, uint64_t>> frames;
      for (auto [frame, n] : by_frame) frames.emplace_back(StringId{frame}, n);
      std::sort(frames.begin(), frames.end(), [&](const auto& a, const auto& b) {
        return a.second != b.second ? a.second > b.second : trace.Str(a.first) < trace.Str(b.first);
      });
      if (frames.size() > kGapHostFramesKept) frames.resize(kGapHostFramesKept);
      g.top_host_frames = std::move(frames);
    }
  }
}

namespace {

double GapRatio(int64_t num, int64_t den) { return den > 0 ? static_cast<double>(num) / static_cast<double>(den) : 0; }

std::string GapLine(const Trace& trace, const TimelineBreakdown& tl, const Gap& g) {
  std::string where = tl.device == kHostDevice ? "main thread" : "device " + std::to_string(tl.device);
  if (tl.rank != kNoRank) where = "rank " + std::to_string(tl.rank) + " " + where;
  std::string line = where + ": gap of " + FormatDurationNs(g.end_ns - g.start_ns) + " at +" +
                     FormatDurationNs(g.start_ns - tl.span_start_ns) + " (ts " + std::to_string(g.start_ns) +
                     " ns), cause " + GapCauseName(g.cause);
  if (g.next_slice != kNoSlice) line += ", before " + std::string(trace.Str(trace.slices.name[g.next_slice]));
  if (g.host_samples > 0) {
    line += "; " + std::to_string(g.host_samples) + " host samples in the gap, top leaf frames:";
    for (size_t i = 0; i < g.top_host_frames.size(); ++i) {
      const auto& [frame, n] = g.top_host_frames[i];
      line += (i ? ", " : " ") + std::string(trace.Str(frame)) + " (" +
              std::to_string(100 * n / g.host_samples) + "%)";
    }
  }
  return line;
}

}  // namespace

void PublishGaps(const Trace& trace, const GapsResult& result, MetricSet* metrics) {
  if (result.timelines.empty()) {
    const char* why = "no device activity and no cpu_op slices in the trace";
    for (const char* m : {"device_util", "device_idle_ratio", "compute_ratio", "comm_ratio", "memcpy_ratio",
                          "comm_overlap_ratio", "comm_exposed_ratio", "idle_host_bound_ratio", "idle_sync_ratio",
                          "idle_startup_ratio", "data_loading_ratio"}) {
      metrics->SetUnavailable(m, why);
    }
    return;
  }
  // Shares of the spans less aiprof's own work in them (not the program's).
  int64_t span = 0, busy = 0, compute = 0, comm = 0, memcpy = 0, overlap = 0, exposed = 0;
  std::array<int64_t, kGapCauseCount> cause{};
  for (const TimelineBreakdown& tl : result.timelines) {
    span += tl.span_ns - tl.aiprof_overhead_ns;
    busy += tl.busy_ns;
    compute += tl.compute_ns;
    comm += tl.comm_ns;
    overlap += tl.comm_overlap_ns;
    exposed += tl.comm_exposed_ns();
    memcpy += tl.memcpy_ns;
    for (size_t c = 0; c < kGapCauseCount; ++c) cause[c] += tl.idle_by_cause_ns[c];
  }
  // Utilisation and idle share on one base (GapsResult::device_util); the
  // other shares are of the spans.
  if (result.device_util_base == UtilBase::kNone) {
    metrics->SetUnavailable("device_util", "no time on the device timelines");
    metrics->SetUnavailable("device_idle_ratio", "no time on the device timelines");
  } else {
    metrics->Set("device_util", result.device_util, kBreakdownSource);
    metrics->Set("device_idle_ratio", 1 - result.device_util, kBreakdownSource);
  }
  metrics->Set("compute_ratio", GapRatio(compute, span), kBreakdownSource);
  metrics->Set("data_loading_ratio", GapRatio(cause[size_t(GapCause::kDataLoading)], span), kBreakdownSource);
  if (result.cpu_only) {
    const char* why = "CPU-only trace: no device, so no device copies, collectives, launches or sync waits";
    metrics->SetUnavailable("comm_ratio", why);
    metrics->SetUnavailable("memcpy_ratio", why);
    metrics->SetUnavailable("idle_host_bound_ratio", why);
    metrics->SetUnavailable("idle_sync_ratio", why);
    metrics->SetUnavailable("idle_startup_ratio", why);
    metrics->SetUnavailable("comm_overlap_ratio", why);
    metrics->SetUnavailable("comm_exposed_ratio", why);
  } else {
    if (comm > 0) {
      metrics->Set("comm_overlap_ratio", GapRatio(overlap, comm), kBreakdownSource);
      metrics->Set("comm_exposed_ratio", GapRatio(exposed, span), kBreakdownSource);
    } else {
      metrics->SetUnavailable("comm_overlap_ratio", "no collectives on the device timeline");
      metrics->Set("comm_exposed_ratio", 0, kBreakdownSource);
    }
    metrics->Set("comm_ratio", GapRatio(comm, busy), kBreakdownSource);
    metrics->Set("memcpy_ratio", GapRatio(memcpy, busy), kBreakdownSource);
    metrics->Set("idle_sync_ratio", GapRatio(cause[size_t(GapCause::kSync)], span), kBreakdownSource);
    metrics->Set("idle_startup_ratio", GapRatio(cause[size_t(GapCause::kStartup)], span), kBreakdownSource);
    if (result.has_launch_links) {
      metrics->Set("idle_host_bound_ratio", GapRatio(cause[size_t(GapCause::kHostBound)], span), kBreakdownSource);
    } else {
      metrics->SetUnavailable("idle_host_bound_ratio",
                              "no device activity is linked to its launching runtime call (no correlation/flows)");
    }
  }
  for (const TimelineBreakdown& tl : result.timelines) {
    for (const Gap& g : tl.largest_gaps) {
      const char* topic = g.cause == GapCause::kHostBound     ? "host_bound"
                          : g.cause == GapCause::kSync        ? "sync_bound"
                          : g.cause == GapCause::kDataLoading ? "data_loading"
                          : g.cause == GapCause::kStartup     ? "startup"
                                                              : nullptr;
      if (topic) metrics->AddEvidence(topic, GapLine(trace, tl, g));
      if (g.host_samples > 0) metrics->AddEvidence("host_samples_in_gaps", GapLine(trace, tl, g));
    }
  }
}

std::string DescribeGap(const Trace& trace, const TimelineBreakdown& tl, const Gap& g) { return GapLine(trace, tl, g); }

const char* IdleOtherDescription(bool cpu_only) {
  return cpu_only ? "main-thread idle between its ops with no known cause (CPU-only trace: no device)"
                  : "device idle with no known cause";
}

void PublishGapImpacts(const GapsResult& result, const AnalysisWindow& window, MetricSet* metrics) {
  if (result.timelines.empty()) {
    const char* why = "no device activity and no cpu_op slices in the trace";
    for (const char* m : {"idle_host_bound_ns", "idle_sync_ns", "data_loading_wait_ns", "idle_other_ns",
                          "idle_startup_ns", "memcpy_exposed_ns", "comm_exposed_ns"}) {
      metrics->SetUnavailable(m, why);
    }
    return;
  }
  // Per rank: the mean over its timelines (devices), so a rank with two
  // devices idle at once counts that time once.
  struct Acc {
    double n = 0;
    std::array<double, kGapCauseCount> cause{};
    double memcpy = 0, comm = 0;
  };
  std::map<int32_t, Acc> by_rank;
  for (const TimelineBreakdown& tl : result.timelines) {
    Acc& a = by_rank[tl.rank];
    a.n += 1;
    for (size_t c = 0; c < kGapCauseCount; ++c) a.cause[c] += static_cast<double>(tl.window_idle_by_cause_ns[c]);
    a.memcpy += static_cast<double>(tl.window_memcpy_exposed_ns);
    a.comm += static_cast<double>(tl.window_comm_exposed_ns);
  }
  auto per_base = [&](auto get) {
    std::map<int32_t, double> totals;
    for (const auto& [rank, a] : by_rank) totals[rank] = get(a) / a.n;
    return window.PerDeviceBase(totals);
  };
  auto cause = [&](GapCause c) { return per_base([c](const Acc& a) { return a.cause[static_cast<size_t>(c)]; }); };
  metrics->Set("data_loading_wait_ns", cause(GapCause::kDataLoading), kBreakdownSource);
  metrics->Set("idle_other_ns", cause(GapCause::kOther), kBreakdownSource);
  if (result.cpu_only) {
    const char* why = "CPU-only trace: no device, so no device copies, collectives, launches or sync waits";
    for (const char* m :
         {"idle_host_bound_ns", "idle_sync_ns", "idle_startup_ns", "memcpy_exposed_ns", "comm_exposed_ns"}) {
      metrics->SetUnavailable(m, why);
    }
    return;
  }
  metrics->Set("idle_sync_ns", cause(GapCause::kSync), kBreakdownSource);
  metrics->Set("idle_startup_ns", cause(GapCause::kStartup), kBreakdownSource);
  if (result.has_launch_links) {
    metrics->Set("idle_host_bound_ns", cause(GapCause::kHostBound), kBreakdownSource);
  } else {
    metrics->SetUnavailable("idle_host_bound_ns",
                            "no device activity is linked to its launching runtime call (no correlation/flows)");
  }
  metrics->Set("memcpy_exposed_ns", per_base([](const Acc& a) { return a.memcpy; }), kBreakdownSource);
  metrics->Set("comm_exposed_ns", per_base([](const Acc& a) { return a.comm; }), kBreakdownSource);
}

}  // namespace aiprof
