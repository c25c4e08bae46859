#include "src/view/timeline/timeline_from_diff.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "src/analysis/common/text_format.h"
#include "src/model/trace_merge.h"
#include "src/view/timeline/timeline_html.h"

namespace aiprof {
namespace {

struct RunStep {
  int64_t start = 0, dur = 0, number = -1;
  StringId name;
  uint32_t track = kNoTrack;
};

// The run's steady steps as the diff takes them, on the rank of its first
// steady step, in time order.
std::vector<RunStep> SteadySteps(const AttributionResult& r, int32_t* rank) {
  std::vector<RunStep> out;
  bool have = false;
  for (const AttributionStep& s : r.per_step) {
    if (!s.steady) continue;
    if (!have || s.rank < *rank) *rank = s.rank;
    have = true;
  }
  for (const AttributionStep& s : r.per_step) {
    if (!s.steady || s.rank != *rank || s.wall_ns <= 0) continue;
    out.push_back({s.start_ns, s.wall_ns, s.number, s.name, s.track});
  }
  std::stable_sort(out.begin(), out.end(), [](const RunStep& x, const RunStep& y) { return x.start < y.start; });
  return out;
}

std::string Ms(int64_t ns) { return FormatFixed(static_cast<double>(ns) / 1e6, 2) + " ms"; }

bool UnderPath(const std::vector<uint32_t>& path, const std::vector<uint32_t>& enclosing);

// A top change to mark in one run: the source name, whether it is looked
// for on the critical thread only, and per slot the span of its pieces.
struct MarkTarget {
  size_t change = 0;  // index into the marked changes
  // Host nodes: looked for on the step's critical thread, under enclosing
  // slices named as the node's named ancestors (`path`, outermost first, in
  // order, others may sit between). Device activity: by name on any track.
  bool critical_only = true;
  std::vector<uint32_t> path;  // source StringId raws
};
struct MarkSpan {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
};

// One run copied onto the slots' clock: tracks of the step's rank (and of
// no rank), process names prefixed, pieces cut to the steps and shifted.
class RunShifter {
 public:
  RunShifter(const Trace& in, const std::vector<RunStep>& steps, const std::vector<DiffTimelineSlot>& slots,
             int32_t step_rank, int32_t out_rank, const std::string& prefix)
      : in_(in), steps_(steps), slots_(slots), step_rank_(step_rank), out_rank_(out_rank), prefix_(prefix),
        strings_(in.strings.size(), UINT32_MAX) {}

  // Marks: names (source StringId) → targets, filled before Run().
  void AddMark(StringId name, MarkTarget target) { marks_[name.raw].push_back(std::move(target)); }

  std::unique_ptr<Trace> Run(DiffTimelineRun* stats, size_t changes) {
    out_ = std::make_unique<Trace>();
    spans_.assign(changes * slots_.size(), MarkSpan{});
    Tracks();
    Slices(stats);
    Flows();
    Counters();
    Steps();
    return std::move(out_);
  }
  // Per marked change c and slot k (at c * slots + k), the span its pieces
  // cover (empty: lo > hi).
  const std::vector<MarkSpan>& mark_spans() const { return spans_; }
  // The first kept track (slot steps hang on it), kNoTrack when none.
  uint32_t first_track() const { return first_track_; }

 private:
  StringId S(StringId id) {
    uint32_t& slot = strings_[id.raw];
    if (slot == UINT32_MAX) slot = out_->strings.Intern(in_.Str(id)).raw;
    return StringId{slot};
  }

  bool Kept(uint32_t track) const {
    const int32_t r = in_.tracks.rank[track];
    return r == step_rank_ || r == kNoRank;
  }

  std::string ProcessText(uint32_t k) const {
    const TrackTable& t = in_.tracks;
    if (!t.process_name[k].empty()) return std::string(in_.Str(t.process_name[k]));
    if (!t.pid_label[k].empty()) return std::string(in_.Str(t.pid_label[k]));
    return "pid " + std::to_string(t.pid[k]);
  }

  void Tracks() {
    const TrackTable& t = in_.tracks;
    track_map_.assign(t.size(), kNoTrack);
    for (uint32_t k = 0; k < t.size(); ++k) {
      if (!Kept(k)) continue;
      track_map_[k] = static_cast<uint32_t>(out_->tracks.size());
      if (first_track_ == kNoTrack) first_track_ = track_map_[k];
      TrackTable::Row row{.kind = t.kind[k],
                          .layer = t.layer[k],
                          .pid = t.pid[k],
                          .tid = t.tid[k],
                          .pid_label = S(t.pid_label[k]),
                          .tid_label = S(t.tid_label[k]),
                          .name = S(t.name[k]),
                          .process_name = out_->strings.Intern(prefix_ + ProcessText(k)),
                          .rank = out_rank_,
                          .device = t.device[k]};
      out_->tracks.Append(row);
    }
  }

  // The index of the first step that ends after `ts` (steps are in time
  // order and do not overlap).
  size_t FirstStepEndingAfter(int64_t ts) const {
    auto it = std::upper_bound(steps_.begin(), steps_.end(), ts,
                               [](int64_t v, const RunStep& s) { return v < s.start + s.dur; });
    return static_cast<size_t>(it - steps_.begin());
  }

  struct Piece {
    uint32_t track;
    int64_t ts, dur;
    uint32_t src;
    uint16_t depth;
  };

  void Slices(DiffTimelineRun* stats) {
    const SliceTable& s = in_.slices;
    std::vector<Piece> pieces;
    std::vector<uint32_t> enclosing;  // names of the slice's enclosing slices, by depth
    uint32_t enclosing_track = kNoTrack;
    for (uint32_t i = 0; i < s.size(); ++i) {
      const uint32_t track = s.track[i];
      if (track_map_[track] == kNoTrack) continue;
      if (track != enclosing_track) {
        enclosing.clear();
        enclosing_track = track;
      }
      enclosing.resize(s.depth[i], UINT32_MAX);
      enclosing.push_back(s.name[i].raw);
      const int64_t ts = s.ts_ns[i], end = ts + s.dur_ns[i];
      bool any = false;
      for (size_t k = FirstStepEndingAfter(ts); k < steps_.size(); ++k) {
        const RunStep& st = steps_[k];
        const int64_t st_end = st.start + st.dur;
        if (st.start > ts && st.start >= end) break;  // starts after the slice (a zero-length slice: at it)
        const int64_t lo = std::max(ts, st.start), hi = std::min(end, st_end);
        if (hi < lo || (hi == lo && !(s.dur_ns[i] == 0 && ts >= st.start && ts < st_end))) continue;
        any = true;
        if (lo != ts || hi != end) ++stats->clipped;
        const int64_t shift = slots_[k].start_ns - st.start;
        pieces.push_back({track_map_[track], lo + shift, hi - lo, i, s.depth[i]});
        if (!marks_.empty()) {
          auto it = marks_.find(s.name[i].raw);
          if (it != marks_.end()) {
            for (const MarkTarget& m : it->second) {
              if (m.critical_only && (track != st.track || !UnderPath(m.path, enclosing))) continue;
              MarkSpan& span = spans_[m.change * slots_.size() + k];
              span.lo = std::min(span.lo, lo + shift);
              span.hi = std::max(span.hi, hi + shift);
            }
          }
        }
      }
      if (!any) ++stats->slices_out;
    }
    // Finalize()'s order: (track, start, longest first); a parent and a child
    // cut to the same extent keep parent first by depth.
    std::stable_sort(pieces.begin(), pieces.end(), [](const Piece& x, const Piece& y) {
      return std::tie(x.track, x.ts, y.dur, x.depth) < std::tie(y.track, y.ts, x.dur, y.depth);
    });
    first_piece_.assign(s.size(), kNoSlice);
    for (const Piece& p : pieces) {
      const uint32_t row = static_cast<uint32_t>(out_->slices.size());
      if (first_piece_[p.src] == kNoSlice || row < first_piece_[p.src]) first_piece_[p.src] = row;
      SliceTable::Row r{.ts_ns = p.ts,
                        .dur_ns = p.dur,
                        .name = S(s.name[p.src]),
                        .category = S(s.category[p.src]),
                        .kind = s.kind[p.src],
                        .track = TrackId{p.track},
                        .depth = p.depth,
                        .correlation = s.correlation[p.src],
                        .arg_begin = 0,
                        .arg_count = 0};
      out_->slices.Append(r);
    }
    stats->pieces = pieces.size();
  }

  void Flows() {
    const FlowTable& f = in_.flows;
    for (size_t i = 0; i < f.size(); ++i) {
      const uint32_t from = first_piece_[f.from_slice[i]], to = first_piece_[f.to_slice[i]];
      if (from == kNoSlice || to == kNoSlice) continue;
      out_->flows.Append({.from_slice = SliceId{from},
                          .to_slice = SliceId{to},
                          .flow_id = f.flow_id[i],
                          .category = S(f.category[i])});
    }
  }

  void Counters() {
    const CounterTable& c = in_.counters;
    for (size_t i = 0; i < c.size(); ++i) {
      if (track_map_[c.track[i]] == kNoTrack) continue;
      const int64_t ts = c.ts_ns[i];
      const size_t k = FirstStepEndingAfter(ts);
      if (k >= steps_.size() || ts < steps_[k].start) continue;
      out_->counters.Append({.ts_ns = ts + slots_[k].start_ns - steps_[k].start,
                             .track = TrackId{track_map_[c.track[i]]},
                             .value = c.value[i]});
    }
  }

  // The run's own steps, each at its slot's start with its own duration.
  void Steps() {
    for (size_t k = 0; k < steps_.size(); ++k) {
      const RunStep& st = steps_[k];
      const uint32_t track = st.track < track_map_.size() && track_map_[st.track] != kNoTrack ? track_map_[st.track]
                                                                                              : first_track_;
      if (track == kNoTrack) continue;
      std::string name = st.name.empty() ? "step" : std::string(in_.Str(st.name));
      out_->steps.Append({.name = out_->strings.Intern(prefix_ + name),
                          .number = st.number,
                          .ts_ns = slots_[k].start_ns,
                          .dur_ns = st.dur,
                          .track = TrackId{track},
                          .rank = out_rank_});
    }
  }

  const Trace& in_;
  const std::vector<RunStep>& steps_;
  const std::vector<DiffTimelineSlot>& slots_;
  int32_t step_rank_, out_rank_;
  std::string prefix_;
  std::vector<uint32_t> strings_;
  std::vector<uint32_t> track_map_, first_piece_;
  uint32_t first_track_ = kNoTrack;
  std::unordered_map<uint32_t, std::vector<MarkTarget>> marks_;
  std::vector<MarkSpan> spans_;
  std::unique_ptr<Trace> out_;
};

// Whether `path` is a subsequence of the enclosing names (the slice's own
// name, last, left out).
bool UnderPath(const std::vector<uint32_t>& path, const std::vector<uint32_t>& enclosing) {
  size_t j = 0;
  for (size_t d = 0; d + 1 < enclosing.size() && j < path.size(); ++d) {
    if (enclosing[d] == path[j]) ++j;
  }
  return j == path.size();
}

int64_t BetweenSteps(const std::vector<RunStep>& steps) {
  int64_t gap = 0;
  for (size_t k = 1; k < steps.size(); ++k) {
    gap += std::max<int64_t>(0, steps[k].start - (steps[k - 1].start + steps[k - 1].dur));
  }
  return gap;
}

bool MarkableKind(AttributionKind k) {
  return k == AttributionKind::kModule || k == AttributionKind::kOp || k == AttributionKind::kRuntime ||
         k == AttributionKind::kDevice;
}

}  // namespace

DiffTimeline BuildDiffTimeline(const Trace& a, const AttributionResult& ra, const Trace& b,
                               const AttributionResult& rb, const AttributionDiff& d, size_t top_changes) {
  DiffTimeline out;
  if (!d.available) {
    out.problem = "the diff is not available: " + d.problem;
    return out;
  }
  const std::vector<RunStep> sa = SteadySteps(ra, &out.a.rank), sb = SteadySteps(rb, &out.b.rank);
  if (sa.empty() || sb.empty()) {
    out.problem = std::string("run ") + (sa.empty() ? "A" : "B") + " has no steady step with a start to align";
    return out;
  }
  out.a.steps = sa.size();
  out.b.steps = sb.size();
  out.a.between_ns = BetweenSteps(sa);
  out.b.between_ns = BetweenSteps(sb);
  const size_t n = std::max(sa.size(), sb.size());
  int64_t at = 0;
  for (size_t k = 0; k < n; ++k) {
    DiffTimelineSlot slot;
    slot.start_ns = at;
    if (k < sa.size()) slot.a = {true, sa[k].number, sa[k].start, sa[k].dur};
    if (k < sb.size()) slot.b = {true, sb[k].number, sb[k].start, sb[k].dur};
    slot.width_ns = std::max(slot.a.dur_ns, slot.b.dur_ns);
    at += slot.width_ns;
    out.slots.push_back(slot);
  }

  // The top changes that a slice name can find in a run.
  struct Change {
    uint32_t node;
    uint32_t rank_in_diff;
  };
  std::vector<Change> changes;
  for (size_t r = 0; r < d.ranked.size() && changes.size() < top_changes; ++r) {
    const uint32_t node = d.ranked[r];
    if (!MarkableKind(d.nodes.kind[node])) continue;
    changes.push_back({node, static_cast<uint32_t>(r)});
  }

  RunShifter shift_a(a, sa, out.slots, out.a.rank, kDiffTimelineRankA, "A: ");
  RunShifter shift_b(b, sb, out.slots, out.b.rank, kDiffTimelineRankB, "B: ");
  for (size_t c = 0; c < changes.size(); ++c) {
    const uint32_t node = changes[c].node;
    const bool critical = d.nodes.kind[node] != AttributionKind::kDevice;
    for (int side = 0; side < 2; ++side) {
      const AttributionResult& r = side == 0 ? ra : rb;
      const uint32_t src = side == 0 ? d.nodes.a[node] : d.nodes.b[node];
      if (src == kNoNode) continue;
      MarkTarget target{c, critical, {}};
      if (critical) {
        for (uint32_t p = r.nodes.parent[src]; p != kNoNode && p != 0; p = r.nodes.parent[p]) {
          if (MarkableKind(r.nodes.kind[p]) && !r.nodes.name[p].empty()) target.path.push_back(r.nodes.name[p].raw);
        }
        std::reverse(target.path.begin(), target.path.end());
      }
      (side == 0 ? shift_a : shift_b).AddMark(r.nodes.name[src], std::move(target));
    }
  }
  std::unique_ptr<Trace> ta = shift_a.Run(&out.a, changes.size());
  std::unique_ptr<Trace> tb = shift_b.Run(&out.b, changes.size());

  // The slots, as steps of rank 0 hung on A's first track (B's when A kept none).
  Trace* host = ta.get();
  uint32_t host_track = shift_a.first_track();
  if (host_track == kNoTrack) {
    host = tb.get();
    host_track = shift_b.first_track();
  }
  if (host_track == kNoTrack) {
    out.problem = "neither run has a track on the steps' rank";
    return out;
  }
  for (size_t k = 0; k < out.slots.size(); ++k) {
    const DiffTimelineSlot& s = out.slots[k];
    std::string label = "step " + std::to_string(k + 1) + ": A " + (s.a.present ? Ms(s.a.dur_ns) : "—") + ", B " +
                        (s.b.present ? Ms(s.b.dur_ns) : "—");
    host->steps.Append({.name = host->strings.Intern(label),
                        .number = static_cast<int64_t>(k + 1),
                        .ts_ns = s.start_ns,
                        .dur_ns = s.width_ns,
                        .track = TrackId{host_track},
                        .rank = kDiffTimelineSlotRank});
  }

  // Markers: per change, run and slot where its name was found.
  std::vector<uint8_t> marked(changes.size(), 0);
  for (int side = 0; side < 2; ++side) {
    const RunShifter& sh = side == 0 ? shift_a : shift_b;
    const char* run = side == 0 ? "A" : "B";
    for (size_t c = 0; c < changes.size(); ++c) {
      const uint32_t node = changes[c].node;
      const std::string label = DiffNodeLabel(a, ra, b, rb, d, node);
      const double delta = d.nodes.Delta(node);
      for (size_t k = 0; k < out.slots.size(); ++k) {
        const MarkSpan& span = sh.mark_spans()[c * out.slots.size() + k];
        if (span.lo > span.hi) continue;
        marked[c] = 1;
        TimelineMarker m;
        m.rule_id = "diff change #" + std::to_string(changes[c].rank_in_diff + 1);
        m.title = std::string(run) + ": #" + std::to_string(changes[c].rank_in_diff + 1) + " " +
                  DiffChangeName(d.nodes.change[node]) + " " + label;
        m.bottleneck = DiffChangeName(d.nodes.change[node]);
        m.priority = std::string("run ") + run;
        m.confidence = std::string("matched by ") + (d.nodes.match[node] == DiffMatch::kNone
                                                          ? "none (" + std::string(DiffChangeName(d.nodes.change[node])) + ")"
                                                          : DiffMatchName(d.nodes.match[node]));
        m.where = std::string(run) + ", step " + std::to_string(k + 1) +
                  ": first to last slice of this name" +
                  (d.nodes.kind[node] == AttributionKind::kDevice ? ""
                                                                   : " under the node's path on the step's thread");
        m.impact = "per steady step: A " + FormatDurationNs(d.nodes.a_ns[node]) + ", B " +
                   FormatDurationNs(d.nodes.b_ns[node]) + " (" + (delta >= 0 ? "+" : "") + FormatDurationNs(delta) +
                   ")";
        const uint32_t src = side == 0 ? d.nodes.a[node] : d.nodes.b[node];
        m.search = std::string(side == 0 ? a.Str(ra.nodes.name[src]) : b.Str(rb.nodes.name[src]));
        m.rank = side == 0 ? kDiffTimelineRankA : kDiffTimelineRankB;
        m.ts_ns = span.lo;
        m.dur_ns = span.hi - span.lo;
        out.markers.push_back(std::move(m));
      }
    }
  }
  for (uint8_t m : marked) out.marked_changes += m;

  std::vector<std::unique_ptr<Trace>> parts;
  parts.push_back(std::move(ta));
  parts.push_back(std::move(tb));
  out.trace = MergeTraces(std::move(parts));
  out.available = true;
  return out;
}

void AppendDiffTimelineHtml(const DiffTimeline& t, const std::string& name_a, const std::string& name_b,
                            std::string* out) {
  TimelineOptions options;
  options.title = "diff " + name_a + " → " + name_b + " (steps aligned)";
  options.generator = "aiprof diff --timeline";
  options.rank_labels = {"aligned steps (" + std::to_string(t.slots.size()) + " slots, each max(A, B))",
                         "A (before): " + name_a + (t.a.rank == kNoRank ? "" : ", rank " + std::to_string(t.a.rank)),
                         "B (after): " + name_b + (t.b.rank == kNoRank ? "" : ", rank " + std::to_string(t.b.rank))};
  options.markers_label = "largest changes of the diff";
  options.note =
      "Steps aligned: steady step k of A and of B (warm-up left out, as the diff does) both start at slot k's start; "
      "slot k lasts the longer of the two steps (dashed lines: the slots' boundaries). A: " + std::to_string(t.a.steps) + " steady steps, B: " +
      std::to_string(t.b.steps) + (t.a.steps == t.b.steps ? "" : " (the longer run's extra steps have slots of their own)") +
      ". Time between steps is dropped (A: " + Ms(t.a.between_ns) + ", B: " + Ms(t.b.between_ns) +
      "), as is everything before the first and after the last steady step (A: " + std::to_string(t.a.slices_out) +
      ", B: " + std::to_string(t.b.slices_out) + " slices); slices across a step boundary are cut to the step (A: " +
      std::to_string(t.a.clipped) + ", B: " + std::to_string(t.b.clipped) +
      " pieces). Only the tracks of the steps' rank are shown; instants, stack samples and slice args are left out. "
      "Markers: the diff's largest changes (" + std::to_string(t.marked_changes) +
      " found by name), per step from the first to the last slice of that name.";
  for (const DiffTimelineSlot& s : t.slots) options.boundaries_ns.push_back(s.start_ns);
  if (!t.slots.empty()) options.boundaries_ns.push_back(t.slots.back().start_ns + t.slots.back().width_ns);
  TimelineModel model = BuildTimelineModel(*t.trace, TimelineInputs{}, options);
  model.markers = t.markers;
  AppendTimelineHtml(*t.trace, model, options, out);
}

}  // namespace aiprof
