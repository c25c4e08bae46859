#include "src/model/trace_builder.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <functional>
#include <optional>
#include <unordered_set>

#include "src/base/check.h"
#include "src/base/import_budget.h"
#include "src/base/parallel.h"
#include "src/base/phase_log.h"
#include "src/base/threads.h"
#include "src/model/periodic_steps.h"
#include "src/model/time_range.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace aiprof {

namespace {

// The builder's own check of times an importer did not check (time_range.h):
// false, after counting the record as "time_out_of_range", when it is out of range.
bool TimesInRange(Trace* trace, const char* record, uint32_t track, int64_t ts_ns, int64_t dur_ns = 0) {
  if (SpanInRange(ts_ns, dur_ns)) return true;
  trace->diagnostics.Add("time_out_of_range",
                         std::string(record) + " on track " + std::to_string(track) + " at ts " + std::to_string(ts_ns) +
                             " ns, dur " + std::to_string(dur_ns) + " ns",
                         "a time outside +-2^61 ns or a duration outside [0, 2^61] ns (ends would overflow); skipped");
  return false;
}

}  // namespace

size_t TraceBuilder::TrackKeyHash::operator()(const TrackKey& k) const {
  int64_t words[3] = {k.pid, k.tid, (k.pid_is_string ? 1 : 0) | (k.tid_is_string ? 2 : 0)};
  return static_cast<size_t>(XXH3_64bits(words, sizeof(words)));
}

TraceBuilder::TraceBuilder(Trace* trace) : trace_(trace), budget_(CurrentImportBudget()) {}

void TraceBuilder::FlushBudget() {
  if (budget_ == nullptr || uncounted_ == 0) return;
  budget_->events.fetch_add(uncounted_, std::memory_order_relaxed);
  uncounted_ = 0;
}

uint32_t TraceBuilder::NewTrack(TrackKind kind, IdValue pid, IdValue tid) {
  TrackTable& t = trace_->tracks;
  uint32_t id = static_cast<uint32_t>(t.size());
  t.Append({.kind = kind,
            .layer = Layer::kUnknown,
            .pid = pid.is_string ? -1 : pid.num,
            .tid = tid.is_string ? -1 : tid.num,
            .pid_label = pid.is_string ? pid.str : StringId{},
            .tid_label = tid.is_string ? tid.str : StringId{},
            .name = StringId{},
            .process_name = StringId{},
            .rank = kNoRank,
            .device = kHostDevice});
  role_fixed_.push_back(false);
  return id;
}

uint32_t TraceBuilder::ThreadTrack(IdValue pid, IdValue tid) {
  TrackKey key{pid.is_string, tid.is_string, pid.is_string ? pid.str.raw : pid.num,
               tid.is_string ? tid.str.raw : tid.num};
  if (last_track_ != kNoTrack && key == last_key_) return last_track_;
  auto [it, inserted] = thread_tracks_.emplace(key, 0);
  if (inserted) it->second = NewTrack(TrackKind::kThread, pid, tid);
  last_key_ = key;
  last_track_ = it->second;
  return it->second;
}

uint32_t TraceBuilder::CounterTrack(IdValue pid, StringId name, int32_t device) {
  TrackKey key{pid.is_string, true, pid.is_string ? pid.str.raw : pid.num, name.raw};
  auto [it, inserted] = counter_tracks_.emplace(key, 0);
  if (inserted) {
    it->second = NewTrack(TrackKind::kCounter, pid, IdValue::Str(name));
    trace_->tracks.name[it->second] = name;
    trace_->tracks.device[it->second] = device;
    trace_->tracks.layer[it->second] = device == kHostDevice ? Layer::kHost : Layer::kDevice;
  }
  return it->second;
}

void TraceBuilder::SetProcessName(IdValue pid, StringId name) {
  TrackKey key{pid.is_string, false, pid.is_string ? pid.str.raw : pid.num, 0};
  process_names_.emplace_back(key, name);
}

std::vector<std::pair<IdValue, StringId>> TraceBuilder::ProcessNamesSince(size_t first) const {
  std::vector<std::pair<IdValue, StringId>> out;
  for (size_t i = first; i < process_names_.size(); ++i) {
    const TrackKey& k = process_names_[i].first;
    out.emplace_back(k.pid_is_string ? IdValue::Str(StringId{static_cast<uint32_t>(k.pid)}) : IdValue::Num(k.pid),
                     process_names_[i].second);
  }
  return out;
}

void TraceBuilder::SetTrackRole(uint32_t track, TrackKind kind, Layer layer, int32_t device) {
  trace_->tracks.kind[track] = kind;
  trace_->tracks.layer[track] = layer;
  trace_->tracks.device[track] = device;
  role_fixed_[track] = true;
}

uint32_t TraceBuilder::AddSlice(uint32_t track, int64_t ts_ns, int64_t dur_ns, StringId name,
                                StringId category, int64_t correlation, uint64_t arg_begin,
                                uint16_t arg_count) {
  const uint32_t index = AppendSlice(track, ts_ns, dur_ns, name, category, correlation, arg_begin, arg_count);
  if (index != kNoSlice) CountEvent();
  return index;
}

uint32_t TraceBuilder::AppendSlice(uint32_t track, int64_t ts_ns, int64_t dur_ns, StringId name, StringId category,
                                   int64_t correlation, uint64_t arg_begin, uint16_t arg_count) {
  if (!TimesInRange(trace_, "slice", track, ts_ns, dur_ns)) return kNoSlice;
  uint32_t index = static_cast<uint32_t>(trace_->slices.size());
  trace_->slices.Append({.ts_ns = ts_ns,
                         .dur_ns = dur_ns,
                         .name = name,
                         .category = category,
                         .kind = EventKind::kOther,
                         .track = TrackId{track},
                         .depth = 0,
                         .correlation = correlation,
                         .arg_begin = arg_begin,
                         .arg_count = arg_count});
  return index;
}

uint32_t TraceBuilder::AddSource(std::string path) {
  sources_.push_back(std::move(path));
  return static_cast<uint32_t>(sources_.size() - 1);
}

void TraceBuilder::AddBegin(uint32_t track, int64_t ts_ns, StringId name, StringId category, uint64_t arg_begin,
                            uint16_t arg_count, SourcePlace place) {
  if (!TimesInRange(trace_, "begin (B) event", track, ts_ns)) return;
  CountEvent();
  begin_end_.push_back({.ts_ns = ts_ns,
                        .track = track,
                        .seq = static_cast<uint32_t>(begin_end_.size()),
                        .name = name,
                        .category = category,
                        .arg_begin = arg_begin,
                        .place = place,
                        .arg_count = arg_count,
                        .is_begin = true});
}

void TraceBuilder::AddEnd(uint32_t track, int64_t ts_ns, StringId name, SourcePlace place) {
  if (!TimesInRange(trace_, "end (E) event", track, ts_ns)) return;
  begin_end_.push_back({.ts_ns = ts_ns,
                        .track = track,
                        .seq = static_cast<uint32_t>(begin_end_.size()),
                        .name = name,
                        .category = {},
                        .arg_begin = 0,
                        .place = place,
                        .arg_count = 0,
                        .is_begin = false});
}

// "FILE:byte N (ts_ns T)" where the importer said the event's source, else
// "<event> at ts_ns T". T is the event's time after the time base.
std::string TraceBuilder::PlaceOf(SourcePlace place, int64_t ts_ns, const char* event) const {
  const std::string ts = "ts_ns " + std::to_string(ts_ns);
  if (place.known() && place.source() < sources_.size()) {
    return sources_[place.source()] + ":byte " + std::to_string(place.byte()) + " (" + ts + ")";
  }
  return std::string(event) + " at " + ts;
}

void TraceBuilder::AddInstant(uint32_t track, int64_t ts_ns, StringId name, StringId category,
                              char scope, uint64_t arg_begin, uint16_t arg_count) {
  if (!TimesInRange(trace_, "instant", track, ts_ns)) return;
  CountEvent();
  trace_->instants.Append({.ts_ns = ts_ns,
                           .name = name,
                           .category = category,
                           .track = TrackId{track},
                           .scope = scope,
                           .arg_begin = arg_begin,
                           .arg_count = arg_count});
}

void TraceBuilder::AddCounter(uint32_t track, int64_t ts_ns, double value) {
  if (!TimesInRange(trace_, "counter value", track, ts_ns)) return;
  CountEvent();
  trace_->counters.Append({.ts_ns = ts_ns, .track = TrackId{track}, .value = value});
}

void TraceBuilder::AddOpMetric(uint32_t slice, int32_t rank, StringId source, StringId op, StringId key,
                               double value, StringId text) {
  trace_->op_metrics.Append(
      {.slice = SliceId{slice}, .rank = rank, .source = source, .op = op, .key = key, .value = value, .text = text});
}

void TraceBuilder::AddStepBreakdown(int32_t rank, int64_t step, StringId source, StringId key, int64_t value_ns) {
  trace_->step_breakdown.Append({.rank = rank, .step = step, .source = source, .key = key, .value_ns = value_ns});
}

void TraceBuilder::AddFlowEvent(uint64_t id, char phase, uint32_t track, int64_t ts_ns, bool bind_enclosing,
                                StringId category, SourcePlace place) {
  if (!TimesInRange(trace_, "flow event", track, ts_ns)) return;
  flow_events_.push_back({.id = id,
                          .ts_ns = ts_ns,
                          .track = track,
                          .category = category,
                          .place = place,
                          .phase = phase,
                          .bind_enclosing = bind_enclosing});
}

Status TraceBuilder::Finalize() {
  FlushBudget();
  ApplyTimeBase();
  MatchBeginEnd();
  {
    ScopedPhase phase("sort slices");
    SortSlices();
  }
  ComputeDepthAndKinds();
  InferTracks();
  LinkCorrelationFlows();
  LinkFlowEvents();
  LinkSliceFlows();
  ExtractSteps();
  SortSamples();
  return OkStatus();
}

size_t TraceBuilder::CallsiteKeyHash::operator()(const CallsiteKey& k) const {
  uint64_t h = (uint64_t{k.parent} << 32) ^ (uint64_t{k.frame} * 0x9E3779B97F4A7C15ull) ^
               (uint64_t{k.module} << 7) ^ static_cast<uint64_t>(k.kind);
  return static_cast<size_t>(h ^ (h >> 29));
}

uint32_t TraceBuilder::InternCallsite(uint32_t parent, StringId frame, StringId module, FrameKind kind) {
  CallsiteTable& cs = trace_->callsites;
  AIPROF_CHECK(parent == kNoCallsite || parent < cs.size());
  auto [it, inserted] = callsites_.try_emplace(CallsiteKey{parent, frame.raw, module.raw, kind},
                                               static_cast<uint32_t>(cs.size()));
  if (inserted) {
    cs.Append({.parent = CallsiteId{parent},
               .depth = parent == kNoCallsite ? 0 : cs.depth[parent] + 1,
               .frame = frame,
               .module = module,
               .kind = kind});
  }
  return it->second;
}

void TraceBuilder::AddStackSample(uint32_t track, int64_t ts_ns, uint32_t callsite, int64_t weight_ns) {
  if (!TimesInRange(trace_, "stack sample", track, ts_ns, std::max<int64_t>(weight_ns, 0))) return;
  trace_->samples.Append({.ts_ns = ts_ns, .track = TrackId{track}, .callsite = CallsiteId{callsite}, .weight_ns = weight_ns});
}

// Samples ordered by (track, ts); sources deliver them per CPU or interleaved.
void TraceBuilder::SortSamples() {
  StackSampleTable& s = trace_->samples;
  const size_t n = s.size();
  bool sorted = true;
  for (size_t i = 1; i < n && sorted; ++i) {
    sorted = s.track[i - 1] < s.track[i] || (s.track[i - 1] == s.track[i] && s.ts_ns[i - 1] <= s.ts_ns[i]);
  }
  if (sorted) return;
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (s.track[a] != s.track[b]) return s.track[a] < s.track[b];
    return s.ts_ns[a] < s.ts_ns[b];
  });
  StackSampleTable::Columns(s, [&order](auto& column) { column.Permute(order); });
}

void TraceBuilder::ApplyTimeBase() {
  if (time_base_ns_ == 0) return;
  if (!TimeInRange(time_base_ns_)) {
    trace_->diagnostics.Add("time_out_of_range", "time base " + std::to_string(time_base_ns_) + " ns",
                            "the time base (baseTimeNanoseconds) is outside +-2^61 ns; ignored");
    time_base_ns_ = 0;
    return;
  }
  for (size_t i = 0; i < trace_->slices.size(); ++i) trace_->slices.ts_ns[i] += time_base_ns_;
  for (size_t i = 0; i < trace_->instants.size(); ++i) trace_->instants.ts_ns[i] += time_base_ns_;
  for (size_t i = 0; i < trace_->counters.size(); ++i) trace_->counters.ts_ns[i] += time_base_ns_;
  for (size_t i = 0; i < trace_->samples.size(); ++i) trace_->samples.ts_ns[i] += time_base_ns_;
  for (PendingBeginEnd& e : begin_end_) e.ts_ns += time_base_ns_;
  for (PendingFlow& f : flow_events_) f.ts_ns += time_base_ns_;
  trace_->metadata["time_base_ns"] = std::to_string(time_base_ns_);
}

// Pairs B with E per track in time order (input order breaks ties), the way
// a stack of open slices would see them.
void TraceBuilder::MatchBeginEnd() {
  std::sort(begin_end_.begin(), begin_end_.end(), [](const auto& a, const auto& b) {
    if (a.track != b.track) return a.track < b.track;
    if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
    return a.seq < b.seq;
  });
  std::vector<const PendingBeginEnd*> open;
  uint32_t current_track = kNoTrack;
  auto flush_open = [&]() {
    for (const PendingBeginEnd* b : open) {
      Diagnose("unterminated_begin", PlaceOf(b->place, b->ts_ns, "B event"),
               "a B event has no matching E; the slice was dropped");
    }
    open.clear();
  };
  for (const PendingBeginEnd& e : begin_end_) {
    if (e.track != current_track) {
      flush_open();
      current_track = e.track;
    }
    if (e.is_begin) {
      open.push_back(&e);
      continue;
    }
    if (open.empty()) {
      Diagnose("unmatched_end", PlaceOf(e.place, e.ts_ns, "E event"),
               "an E event has no open B on its thread; it was ignored");
      continue;
    }
    const PendingBeginEnd* b = open.back();
    open.pop_back();
    // An E closes the last open B whatever its name; a named E that names
    // another slice is said (B x, B y, E x closed y silently: found by review).
    if (!e.name.empty() && e.name != b->name) {
      Diagnose("end_name_mismatch", PlaceOf(e.place, e.ts_ns, "E event"),
               "an E event names another slice than the B it closes (the last open one on its thread)");
    }
    // Its begin was counted against the import budget already.
    AppendSlice(b->track, b->ts_ns, e.ts_ns - b->ts_ns, b->name, b->category, kNoCorrelation, b->arg_begin,
                b->arg_count);
  }
  flush_open();
  begin_end_.clear();
  begin_end_.shrink_to_fit();
}

void TraceBuilder::SortSlices() {
  SliceTable& s = trace_->slices;
  // Sort compact keys rather than indices into the columns: one cache line
  // holds several keys, so the sort never chases column blocks.
  struct Key {
    int64_t ts_ns;
    int64_t neg_dur_ns;
    uint32_t track;
    uint32_t index;
  };
  auto less = [](const Key& a, const Key& b) {
    if (a.track != b.track) return a.track < b.track;
    if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
    if (a.neg_dur_ns != b.neg_dur_ns) return a.neg_dur_ns < b.neg_dur_ns;
    return a.index < b.index;
  };
  // Importers that add slices in order (the SDK's, per thread) need no keys:
  // check the columns first.
  bool sorted = true;
  for (uint32_t i = 1; i < s.size() && sorted; ++i) {
    sorted = !less({s.ts_ns[i], -s.dur_ns[i], s.track[i], i}, {s.ts_ns[i - 1], -s.dur_ns[i - 1], s.track[i - 1], i - 1});
  }
  std::vector<Key> keys(sorted ? 0 : s.size());
  for (uint32_t i = 0; i < keys.size(); ++i) keys[i] = {s.ts_ns[i], -s.dur_ns[i], s.track[i], i};
  // The order is total (index breaks ties), so the result is the same for
  // any thread count.
  const size_t threads = WorkerThreads();
  std::vector<uint32_t> order(sorted ? 0 : keys.size());
  // Only the order is kept of the sorted keys.
  if (!sorted) ParallelSortEmit(&keys, less, threads, [&order](size_t i, const Key& k) { order[i] = k.index; });
  keys.clear();
  keys.shrink_to_fit();
  if (!slice_flows_.empty()) {
    slice_position_.resize(s.size());
    for (uint32_t i = 0; i < s.size(); ++i) slice_position_[sorted ? i : order[i]] = i;
  }
  if (!sorted) {
    // Columns are independent: permute them side by side.
    std::vector<std::function<void()>> permute;
    SliceTable::Columns(s, [&](auto& column) { permute.push_back([&column, &order] { column.Permute(order); }); });
    ParallelFor(permute.size(), threads, [&](size_t column) { permute[column](); });
  }
  track_slice_begin_.assign(trace_->tracks.size() + 1, static_cast<uint32_t>(s.size()));
  for (size_t i = s.size(); i-- > 0;) track_slice_begin_[s.track[i]] = static_cast<uint32_t>(i);
  for (size_t t = trace_->tracks.size(); t-- > 0;) {
    track_slice_begin_[t] = std::min(track_slice_begin_[t], track_slice_begin_[t + 1]);
  }
}

void TraceBuilder::ComputeDepthAndKinds() {
  SliceTable& s = trace_->slices;
  // The depth column is 16 bits (as in the .aiprof file): deeper nesting is
  // held at the last level and counted (docs/importers.md, "Limits").
  constexpr size_t kMaxDepth = UINT16_MAX;
  std::unordered_map<uint64_t, EventKind> kind_cache;
  std::vector<int64_t> open_ends;
  std::vector<uint32_t> open_slices;  // beside open_ends: the innermost open slice is the last
  uint64_t overlaps = 0, rounded = 0;
  std::pair<uint32_t, uint32_t> first_overlap, first_rounded;  // (outer, inner)
  int64_t first_rounded_end = 0;                               // as written, before the cut
  uint32_t current_track = kNoTrack;
  for (size_t i = 0; i < s.size(); ++i) {
    uint64_t key = (uint64_t{s.category[i].raw} << 32) | s.name[i].raw;
    auto it = kind_cache.find(key);
    if (it == kind_cache.end()) {
      it = kind_cache.emplace(key, ClassifyEvent(trace_->Str(s.category[i]), trace_->Str(s.name[i]))).first;
    }
    s.kind[i] = it->second;
    if (s.track[i] != current_track) {
      open_ends.clear();
      open_slices.clear();
      current_track = s.track[i];
    }
    while (!open_ends.empty() && open_ends.back() <= s.ts_ns[i]) {
      open_ends.pop_back();
      open_slices.pop_back();
    }
    if (!open_ends.empty() && s.ts_ns[i] + s.dur_ns[i] > open_ends.back()) {
      if (WithinMicrosecondRounding(s.ts_ns[open_slices.back()], open_ends.back(), s.ts_ns[i],
                                    s.ts_ns[i] + s.dur_ns[i])) {
        // Whole microseconds, ending one past the slice it starts in: the
        // writer rounded each start and duration (torch's legacy export:
        // aten::convolution 1 us past its aten::conv2d). It is that
        // slice's child, cut to its end.
        if (rounded++ == 0) {
          first_rounded = {open_slices.back(), static_cast<uint32_t>(i)};
          first_rounded_end = s.ts_ns[i] + s.dur_ns[i];
        }
        s.dur_ns[i] = open_ends.back() - s.ts_ns[i];
      } else if (overlaps++ == 0) {
        // Counted here; only the first is described (after the loop), so a
        // trace with many such pairs builds no text per pair.
        first_overlap = {open_slices.back(), static_cast<uint32_t>(i)};
      }
    }
    if (open_ends.size() > kMaxDepth) {
      trace_->diagnostics.Add("slice_depth_limit", "slice " + std::to_string(i) + " (track " + std::to_string(s.track[i]) +
                                  ", ts " + std::to_string(s.ts_ns[i]) + " ns)",
                              "slice nested more than " + std::to_string(kMaxDepth) +
                                  " levels deep; its depth is held at " + std::to_string(kMaxDepth));
    }
    s.depth[i] = static_cast<uint16_t>(std::min<size_t>(open_ends.size(), kMaxDepth));
    open_ends.push_back(s.ts_ns[i] + s.dur_ns[i]);
    open_slices.push_back(static_cast<uint32_t>(i));
  }
  if (overlaps > 0) {
    DiagnosePartialOverlap("slice_partial_overlap", first_overlap.first, first_overlap.second,
                           s.ts_ns[first_overlap.second] + s.dur_ns[first_overlap.second]);
    trace_->diagnostics.mutable_entries()["slice_partial_overlap"].count += overlaps - 1;
  }
  if (rounded > 0) {
    DiagnosePartialOverlap("slice_end_rounded", first_rounded.first, first_rounded.second, first_rounded_end);
    trace_->diagnostics.mutable_entries()["slice_end_rounded"].count += rounded - 1;
  }
}

// At a writer's 1 us resolution a child's rounded end can land 1 us past its
// parent's (each start and duration rounded on its own): both slices on whole
// microseconds, the inner one ending at most 1 us after the outer one.
bool TraceBuilder::WithinMicrosecondRounding(int64_t outer_ts, int64_t outer_end, int64_t inner_ts, int64_t inner_end) {
  constexpr int64_t kMicrosecond = 1000;
  return inner_end - outer_end <= kMicrosecond && outer_ts % kMicrosecond == 0 && outer_end % kMicrosecond == 0 &&
         inner_ts % kMicrosecond == 0 && inner_end % kMicrosecond == 0;
}

// Slices on one track either nest or follow each other; one that starts
// inside another and ends after it (torch's record_function annotation
// opened inside a short Python frame, a "Stream Sync" inside a copy) is
// kept where it is (its depth is a row below the innermost slice open at its start, so it is
// drawn below), but it is not the other's child: the query's slices.parent
// is the innermost slice that encloses it, and self time gives each
// instant to the innermost slice open at it (docs/query.md).
void TraceBuilder::DiagnosePartialOverlap(const std::string& kind, uint32_t outer, uint32_t inner, int64_t inner_end) {
  const SliceTable& s = trace_->slices;
  const TrackTable& t = trace_->tracks;
  auto slice = [&](uint32_t i, int64_t end) {
    return "'" + std::string(trace_->Str(s.name[i])) + "' [" + std::to_string(s.ts_ns[i]) + ", " + std::to_string(end) +
           ") ns";
  };
  const uint32_t track = s.track[inner];
  std::string where = sources_.size() == 1 ? sources_[0] + ": " : "";
  where += "track " + std::to_string(track) + " (pid " + std::to_string(t.pid[track]) + ", tid " +
           std::to_string(t.tid[track]) + (t.rank[track] >= 0 ? ", rank " + std::to_string(t.rank[track]) : "") +
           "): " + slice(inner, inner_end) + " starts inside " + slice(outer, s.ts_ns[outer] + s.dur_ns[outer]) +
           " and ends after it";
  if (kind == "slice_end_rounded") {
    Diagnose(kind, where,
             "a slice on whole microseconds ends at most 1 us after the one it starts in (the writer rounded "
             "each start and duration); it is read as that slice's child, its end cut to the other's (at most 1 "
             "us shorter)");
    return;
  }
  Diagnose(kind, where,
           "a slice starts inside another on its track and ends after it (they neither nest nor follow each "
           "other); it is not counted as the other's child (query: slices.parent is the innermost slice that "
           "encloses it; self time goes to the innermost open slice)");
}

// Device ids are 32-bit in the model; a device track's numeric pid outside
// 0..2^31-1 (2^32, -1) was cut to 32 bits and its activity merged into
// another device's, or the host's (D6 of the input trial). Each such pid gets
// a device id of its own past the largest one in the trace, and is counted.
void TraceBuilder::KeepWideDevicePidsApart(const std::vector<uint32_t>& tracks) {
  if (tracks.empty()) return;
  TrackTable& t = trace_->tracks;
  int64_t next = 0;
  for (size_t i = 0; i < t.size(); ++i) next = std::max<int64_t>(next, int64_t{t.device[i]} + 1);
  std::unordered_map<int64_t, int32_t> device_of_pid;
  for (uint32_t i : tracks) {
    auto [it, inserted] = device_of_pid.emplace(t.pid[i], kHostDevice);
    if (inserted && next <= INT32_MAX) it->second = static_cast<int32_t>(next++);
    t.device[i] = it->second;
    Diagnose("device_id_out_of_range",
             "device track pid " + std::to_string(t.pid[i]) + ", tid " + std::to_string(t.tid[i]) + " (track " +
                 std::to_string(i) + ")",
             it->second == kHostDevice
                 ? "a device's pid is outside the 32-bit device ids 0..2^31-1 and no device id is left; on the host"
                 : "a device's pid is outside the 32-bit device ids 0..2^31-1; its activity is kept apart as device " +
                       std::to_string(it->second) + " (not merged into the device its low 32 bits name)");
  }
}

// Each track takes the last name its process was given. One map from pid to
// name, then one pass over the tracks: O(names + tracks). (It was a pass over
// every track per process_name event: a 28 MB trace of 200k threads with the
// event repeated took 80 s.)
void TraceBuilder::ApplyProcessNames() {
  if (process_names_.empty()) return;
  std::unordered_map<TrackKey, StringId, TrackKeyHash> last_name;
  last_name.reserve(process_names_.size());
  for (const auto& [key, name] : process_names_) last_name.insert_or_assign(key, name);
  TrackTable& t = trace_->tracks;
  for (size_t i = 0; i < t.size(); ++i) {
    bool pid_is_string = !t.pid_label[i].empty();
    TrackKey key{pid_is_string, false, pid_is_string ? int64_t{t.pid_label[i].raw} : t.pid[i], 0};
    auto it = last_name.find(key);
    if (it != last_name.end()) t.process_name[i] = it->second;
  }
}

// A thread track holding device activity is a device stream: pid is the
// device index and tid the stream, as PyTorch's profiler writes GPU events.
void TraceBuilder::InferTracks() {
  TrackTable& t = trace_->tracks;
  std::vector<uint8_t> has_device(t.size(), 0), has_python(t.size(), 0), has_other(t.size(), 0),
      has_host_call(t.size(), 0);
  const SliceTable& s = trace_->slices;
  // CUPTI's synchronisation records (category cuda_sync: Context, Stream,
  // Event Sync) are recorded on the device, as its kernels are; a track of
  // them alone (a context sync has no stream) is a device stream too, as
  // Nsight Systems' importer places them, so an export read back keeps them
  // where they were.
  const std::optional<StringId> device_sync = trace_->strings.Find("cuda_sync");
  for (size_t i = 0; i < s.size(); ++i) {
    EventKind k = s.kind[i];
    if (IsDeviceActivity(k) || k == EventKind::kGpuUserAnnotation ||
        (k == EventKind::kSync && device_sync && s.category[i] == *device_sync)) {
      has_device[s.track[i]] = 1;
    } else if (k == EventKind::kPythonFunction || k == EventKind::kUserAnnotation) {
      has_python[s.track[i]] = 1;
    } else {
      has_other[s.track[i]] = 1;
      if (k == EventKind::kCpuOp || k == EventKind::kRuntime || k == EventKind::kDriver || k == EventKind::kSync) {
        has_host_call[s.track[i]] = 1;
      }
    }
  }
  // A labelled process is a process of host threads when any of its threads
  // makes host calls (below): its annotation-only threads (gloo's worker
  // threads under "CPU functions") are its threads too.
  std::unordered_set<uint32_t> labelled_with_host_calls;
  for (size_t i = 0; i < t.size(); ++i) {
    if (has_host_call[i] && !t.pid_label[i].empty()) labelled_with_host_calls.insert(t.pid_label[i].raw);
  }
  ApplyProcessNames();
  std::vector<uint32_t> wide_device_pids;
  for (size_t i = 0; i < t.size(); ++i) {
    if (default_rank_ != kNoRank && t.rank[i] == kNoRank) t.rank[i] = default_rank_;
    if (role_fixed_[i] || t.kind[i] == TrackKind::kCounter) continue;
    if (has_device[i]) {
      t.kind[i] = TrackKind::kDeviceStream;
      t.layer[i] = Layer::kDevice;
      if (!t.pid_label[i].empty() || (t.pid[i] >= 0 && t.pid[i] <= INT32_MAX)) {
        t.device[i] = static_cast<int32_t>(t.pid[i]);
      } else {
        wide_device_pids.push_back(static_cast<uint32_t>(i));
      }
      if (t.name[i].empty()) {
        t.name[i] = !t.tid_label[i].empty() ? t.tid_label[i] : Intern("stream " + std::to_string(t.tid[i]));
      }
    } else if (!t.pid_label[i].empty() && !labelled_with_host_calls.contains(t.pid_label[i].raw)) {
      // A process named by a label and holding only annotations is a lane
      // of spans. One whose threads make ops or runtime calls is a process
      // of host threads whatever its pid says: torch's legacy
      // export_chrome_trace writes every op with "pid": "CPU functions",
      // and what-if, launch, gap and attribution analyses read host
      // threads.
      t.kind[i] = TrackKind::kSpans;
      t.layer[i] = Layer::kApplication;
    } else if (has_python[i] && !has_other[i]) {
      t.layer[i] = Layer::kApplication;
    } else {
      t.layer[i] = Layer::kFramework;
    }
  }
  KeepWideDevicePidsApart(wide_device_pids);
}

// Kineto writes the same `correlation` arg on a runtime call and on the
// device activity it launched; that pair is a flow even without ac2g events.
void TraceBuilder::LinkCorrelationFlows() {
  const SliceTable& s = trace_->slices;
  const TrackTable& t = trace_->tracks;
  std::unordered_map<int64_t, uint32_t> host_by_corr;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.correlation[i] == kNoCorrelation || t.kind[s.track[i]] == TrackKind::kDeviceStream) continue;
    EventKind k = s.kind[i];
    if (k == EventKind::kRuntime || k == EventKind::kDriver || k == EventKind::kSync) {
      host_by_corr.emplace(s.correlation[i], static_cast<uint32_t>(i));
    }
  }
  StringId cat = Intern("correlation");
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.correlation[i] == kNoCorrelation || !IsDeviceActivity(s.kind[i])) continue;
    auto it = host_by_corr.find(s.correlation[i]);
    if (it == host_by_corr.end()) continue;
    trace_->flows.Append({.from_slice = SliceId{it->second},
                          .to_slice = SliceId{static_cast<uint32_t>(i)},
                          .flow_id = static_cast<uint64_t>(s.correlation[i]),
                          .category = cat});
  }
}

// The slice each flow event binds to: for an 'f' that does not bind to its
// enclosing slice, the first slice of its track starting at or after it;
// else the latest-starting slice of its track that contains it (the
// deepest; looked for among the 256 slices starting last before it).
// Events are visited in (track, time) order so each track's slices are
// swept once by two pointers instead of a binary search per event (which
// on a large trace is a cache miss per probe).
std::vector<uint32_t> TraceBuilder::BindFlowEvents() const {
  const SliceTable& s = trace_->slices;
  const size_t n = flow_events_.size();
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const PendingFlow& x = flow_events_[a];
    const PendingFlow& y = flow_events_[b];
    return x.track != y.track ? x.track < y.track : x.ts_ns != y.ts_ns ? x.ts_ns < y.ts_ns : a < b;
  });
  std::vector<uint32_t> bound(n, kNoSlice);
  constexpr int kMaxWalk = 256;
  for (size_t k = 0; k < n;) {
    const uint32_t track = flow_events_[order[k]].track;
    const uint32_t lo = track_slice_begin_[track], hi = track_slice_begin_[track + 1];
    uint32_t le = lo, lt = lo;  // first slice starting after ts / at or after ts
    for (; k < n && flow_events_[order[k]].track == track; ++k) {
      const PendingFlow& f = flow_events_[order[k]];
      while (le < hi && s.ts_ns[le] <= f.ts_ns) ++le;
      while (lt < hi && s.ts_ns[lt] < f.ts_ns) ++lt;
      if (f.phase == 'f' && !f.bind_enclosing) {
        bound[order[k]] = lt < hi ? lt : kNoSlice;
        continue;
      }
      uint32_t a = le;
      for (int steps = 0; a > lo && steps < kMaxWalk; ++steps) {
        --a;
        if (f.ts_ns < s.ts_ns[a] + std::max<int64_t>(s.dur_ns[a], 1)) {
          bound[order[k]] = a;
          break;
        }
      }
    }
  }
  return bound;
}

// A flow's one 's' event comes first even when a clock skew puts an end
// before it (torch_npu: a device task a few us before its host launch).
// Groups with several 's' (a reused id) keep their time order.
void TraceBuilder::StartFlowsFirst() {
  for (size_t begin = 0; begin < flow_events_.size();) {
    size_t end = begin, starts = 0, start_at = 0;
    while (end < flow_events_.size() && flow_events_[end].id == flow_events_[begin].id &&
           flow_events_[end].category == flow_events_[begin].category) {
      if (flow_events_[end].phase == 's') ++starts, start_at = end;
      ++end;
    }
    if (starts == 1 && start_at != begin) {
      std::rotate(flow_events_.begin() + begin, flow_events_.begin() + start_at, flow_events_.begin() + start_at + 1);
    }
    begin = end;
  }
}

// Binds s/t/f events to slices (Chrome's flow v1 rules: s binds to the
// enclosing slice; f binds to the enclosing slice with bp "e", else to the
// next slice) and links consecutive ends of each flow id.
void TraceBuilder::LinkFlowEvents() {
  if (flow_events_.empty()) return;
  std::stable_sort(flow_events_.begin(), flow_events_.end(), [](const auto& a, const auto& b) {
    if (a.id != b.id) return a.id < b.id;
    if (a.category != b.category) return a.category < b.category;
    return a.ts_ns < b.ts_ns;
  });
  StartFlowsFirst();
  std::vector<uint32_t> bound = BindFlowEvents();
  std::unordered_set<uint64_t> existing;
  for (size_t i = 0; i < trace_->flows.size(); ++i) {
    existing.insert((uint64_t{trace_->flows.from_slice[i]} << 32) | trace_->flows.to_slice[i]);
  }
  uint32_t previous = kNoSlice;
  for (size_t i = 0; i < flow_events_.size(); ++i) {
    const PendingFlow& f = flow_events_[i];
    bool new_flow = i == 0 || f.id != flow_events_[i - 1].id || f.category != flow_events_[i - 1].category;
    if (new_flow) previous = kNoSlice;
    // A flow with one event draws no arrow and is not a diagnostic: real
    // Kineto traces cut flows at the profiling window's edges (a launch
    // whose kernel ran after it; 71 of 132 ac2g ids in TraceLens's H100
    // bert-small trace), and correlation ids already tie what they can.
    uint32_t slice = bound[i];
    if (slice == kNoSlice) {
      Diagnose("flow_unbound", PlaceOf(f.place, f.ts_ns, "flow event") + ", id " + std::to_string(f.id),
               "a flow event has no slice to bind to on its thread");
      continue;
    }
    if (previous != kNoSlice && previous != slice) {
      uint64_t key = (uint64_t{previous} << 32) | slice;
      if (existing.insert(key).second) {
        trace_->flows.Append({.from_slice = SliceId{previous}, .to_slice = SliceId{slice}, .flow_id = f.id, .category = f.category});
      }
    }
    previous = slice;
  }
  flow_events_.clear();
  flow_events_.shrink_to_fit();
}

void TraceBuilder::LinkSliceFlows() {
  for (const PendingSliceFlow& f : slice_flows_) {
    AIPROF_CHECK(f.from < slice_position_.size() && f.to < slice_position_.size());
    trace_->flows.Append(
        {.from_slice = SliceId{slice_position_[f.from]}, .to_slice = SliceId{slice_position_[f.to]}, .flow_id = f.id, .category = f.category});
  }
  slice_flows_.clear();
  slice_position_.clear();
}

namespace {

constexpr int64_t kNotStep = -2;

// N of "ProfilerStep#N" (-1 when N is not a number); kNotStep otherwise.
int64_t ProfilerStepNumber(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (name.substr(0, kPrefix.size()) != kPrefix) return kNotStep;
  std::string_view digits = name.substr(kPrefix.size());
  int64_t n = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  return (ec == std::errc() && p == digits.data() + digits.size()) ? n : -1;
}

// N of a step annotation "step N" / "Step N" / "## step N ##" (the legacy
// autograd profiler's record_function("## step N ##")); kNotStep otherwise.
int64_t AnnotatedStepNumber(std::string_view name) {
  if (name.size() > 6 && name.substr(0, 3) == "## " && name.substr(name.size() - 3) == " ##") {
    name = name.substr(3, name.size() - 6);
  }
  if (name.size() < 6 || (name[0] != 's' && name[0] != 'S') || name.substr(1, 4) != "tep ") return kNotStep;
  std::string_view digits = name.substr(5);
  int64_t n = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  return (ec == std::errc() && p == digits.data() + digits.size() && n >= 0) ? n : kNotStep;
}

}  // namespace

// ProfilerStep#N slices on host tracks become steps, in time order; without
// any, step annotations ("## step N ##", "step N") do; without those, the
// repetitions of a periodic pattern of ops (src/model/periodic_steps.h),
// named "periodic step #N" and described by the metadata "steps.*".
void TraceBuilder::ExtractSteps() {
  // The model's own keys: a file's metadata of these names is not believed.
  for (auto it = trace_->metadata.begin(); it != trace_->metadata.end();) {
    it = it->first.starts_with("steps.") ? trace_->metadata.erase(it) : std::next(it);
  }
  const SliceTable& s = trace_->slices;
  const TrackTable& t = trace_->tracks;
  // Per name: (ProfilerStep number, annotation number), kNotStep when not one.
  std::unordered_map<uint32_t, std::pair<int64_t, int64_t>> number_by_name;
  std::vector<std::pair<uint32_t, int64_t>> profiler_steps, annotated_steps;
  for (size_t i = 0; i < s.size(); ++i) {
    if (t.kind[s.track[i]] == TrackKind::kDeviceStream) continue;
    auto it = number_by_name.find(s.name[i].raw);
    if (it == number_by_name.end()) {
      std::string_view name = trace_->Str(s.name[i]);
      it = number_by_name.emplace(s.name[i].raw, std::make_pair(ProfilerStepNumber(name), AnnotatedStepNumber(name)))
               .first;
    }
    auto [profiler, annotated] = it->second;
    if (profiler != kNotStep) profiler_steps.emplace_back(static_cast<uint32_t>(i), profiler);
    if (annotated != kNotStep) annotated_steps.emplace_back(static_cast<uint32_t>(i), annotated);
  }
  std::vector<std::pair<uint32_t, int64_t>>& found = profiler_steps.empty() ? annotated_steps : profiler_steps;
  std::sort(found.begin(), found.end(), [&s](const auto& a, const auto& b) { return s.ts_ns[a.first] < s.ts_ns[b.first]; });
  for (auto [i, number] : found) {
    trace_->steps.Append({.name = s.name[i],
                          .number = number,
                          .ts_ns = s.ts_ns[i],
                          .dur_ns = s.dur_ns[i],
                          .track = s.track[i],
                          .rank = t.rank[s.track[i]]});
  }
  if (!found.empty()) return;
  ScopedPhase phase("periodic steps");
  TracePattern tp = FindTracePeriodicSteps(*trace_);
  if (tp.track == kNoTrack) return;
  const PeriodicPattern& p = tp.pattern;
  for (size_t k = 0; k < p.steps.size(); ++k) {
    trace_->steps.Append({.name = Intern("periodic step #" + std::to_string(k + 1)),
                          .number = static_cast<int64_t>(k + 1),
                          .ts_ns = p.steps[k].start_ns,
                          .dur_ns = p.steps[k].dur_ns,
                          .track = TrackId{tp.track},
                          .rank = t.rank[tp.track]});
  }
  std::map<std::string, std::string>& md = trace_->metadata;
  md["steps.from"] = kPeriodicPatternSource;
  md["steps.period_ops"] = std::to_string(p.period);
  md["steps.exact"] = p.exact ? "1" : "0";
  md["steps.thread"] = !t.tid_label[tp.track].empty() ? std::string(trace_->Str(t.tid_label[tp.track]))
                                                      : std::to_string(t.tid[tp.track]);
  md["steps.thread_name"] = std::string(trace_->Str(t.name[tp.track]));
  char coverage[32];
  std::snprintf(coverage, sizeof(coverage), "%.3f", p.coverage());
  md["steps.coverage"] = coverage;
}

}  // namespace aiprof
