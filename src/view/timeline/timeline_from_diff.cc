#include "src/view/timeline/timeline_from_diff.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
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

// The run's steady steps as the diff takes them, per rank (ranks ascending),
// each rank's in time order.
std::vector<std::pair<int32_t, std::vector<RunStep>>> SteadyStepsByRank(const AttributionResult& r) {
  std::vector<std::pair<int32_t, std::vector<RunStep>>> out;
  for (const AttributionStep& s : r.per_step) {
    if (!s.steady || s.wall_ns <= 0) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& x) { return x.first == s.rank; });
    if (it == out.end()) {
      out.push_back({s.rank, {}});
      it = out.end() - 1;
    }
    it->second.push_back({s.start_ns, s.wall_ns, s.number, s.name, s.track});
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto& [rank, steps] : out) {
    std::stable_sort(steps.begin(), steps.end(), [](const RunStep& x, const RunStep& y) { return x.start < y.start; });
  }
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
  // A ranked call-site row: only the instances at this call site (as
  // attribution keys them: the "Call stack" arg's cut, else the innermost
  // enclosing python_function frame that is a call site); empty: all.
  std::string site;
};
struct MarkSpan {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
};

// One run copied onto the slots' clock: tracks of the step's rank (and of
// no rank), process names prefixed, pieces cut to the steps and shifted.
class RunShifter {
 public:
  // `keep_unranked`: also the tracks without a rank (one shifter per run keeps them).
  RunShifter(const Trace& in, const std::vector<RunStep>& steps, const std::vector<DiffTimelineSlot>& slots,
             int32_t step_rank, int32_t out_rank, const std::string& prefix, bool keep_unranked)
      : in_(in), steps_(steps), slots_(slots), step_rank_(step_rank), out_rank_(out_rank), prefix_(prefix),
        keep_unranked_(keep_unranked), strings_(in.strings.size(), UINT32_MAX) {}

  // Marks: names (source StringId) → targets, filled before Run().
  void AddMark(StringId name, MarkTarget target) { marks_[name.raw].push_back(std::move(target)); }

  std::unique_ptr<Trace> Run(DiffTimelineRun* stats, size_t changes) {
    out_ = std::make_unique<Trace>();
    spans_.assign(changes * slots_.size(), MarkSpan{});
    Tracks();
    Slices(stats);
    Flows();
    Counters();
    Instants(stats);
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
    return r == step_rank_ || (keep_unranked_ && r == kNoRank);
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
    std::vector<uint32_t> enclosing_slice;  // the slices themselves
    uint32_t enclosing_track = kNoTrack;
    for (uint32_t i = 0; i < s.size(); ++i) {
      const uint32_t track = s.track[i];
      if (track_map_[track] == kNoTrack) continue;
      if (track != enclosing_track) {
        enclosing.clear();
        enclosing_slice.clear();
        enclosing_track = track;
      }
      enclosing.resize(s.depth[i], UINT32_MAX);
      enclosing.push_back(s.name[i].raw);
      enclosing_slice.resize(s.depth[i], kNoSlice);
      enclosing_slice.push_back(i);
      std::optional<std::string> site;  // this slice's call site, looked up once when a row target needs it
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
              if (!m.site.empty()) {
                if (!site) site = SiteOf(i, enclosing_slice);
                if (*site != m.site) continue;
              }
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

  // Thread-scoped instants in a steady step, shifted like slices (a step
  // holds [start, end)); the others of the kept tracks are counted.
  void Instants(DiffTimelineRun* stats) {
    const InstantTable& in = in_.instants;
    for (size_t i = 0; i < in.size(); ++i) {
      if (in.track[i] >= track_map_.size() || track_map_[in.track[i]] == kNoTrack) continue;
      if (in.scope[i] != 't') {
        ++stats->instants_unscoped;
        continue;
      }
      const int64_t ts = in.ts_ns[i];
      const size_t k = FirstStepEndingAfter(ts);
      if (k >= steps_.size() || ts < steps_[k].start) {
        ++stats->instants_out;
        continue;
      }
      ++stats->instants;
      out_->instants.Append({.ts_ns = ts + slots_[k].start_ns - steps_[k].start,
                             .name = S(in.name[i]),
                             .category = S(in.category[i]),
                             .track = TrackId{track_map_[in.track[i]]},
                             .scope = 't',
                             .arg_begin = 0,
                             .arg_count = 0});
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

  // The slice's call site as attribution keys it (CallSiteOfStack of its
  // "Call stack" arg, else the innermost enclosing python_function frame
  // that is a call site); "" when none.
  std::string SiteOf(uint32_t i, const std::vector<uint32_t>& enclosing_slice) {
    if (!stack_key_looked_up_) {
      stack_key_ = in_.strings.Find("Call stack");
      stack_key_looked_up_ = true;
    }
    if (stack_key_) {
      const Arg* a = in_.FindSliceArg(i, *stack_key_);
      if (a != nullptr && (a->type == ArgType::kJson || a->type == ArgType::kString)) {
        return CallSiteOfStack(in_.Str(StringId{a->str}));
      }
    }
    for (size_t d = enclosing_slice.size() - 1; d-- > 0;) {
      const uint32_t e = enclosing_slice[d];
      if (e == kNoSlice || in_.slices.kind[e] != EventKind::kPythonFunction) continue;
      const std::string_view name = in_.Str(in_.slices.name[e]);
      if (IsCallSiteFrame(name)) return CallSiteLabel(name);
    }
    return {};
  }

  const Trace& in_;
  std::optional<StringId> stack_key_;
  bool stack_key_looked_up_ = false;
  const std::vector<RunStep>& steps_;
  const std::vector<DiffTimelineSlot>& slots_;
  int32_t step_rank_, out_rank_;
  std::string prefix_;
  bool keep_unranked_ = true;
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

// Names the diff paired under different names, coloured alike: the pairs
// made by the name map always (the user said they are one thing: all names
// of one map entry share a colour), and those made through the launching op
// or by role where the pairing is one to one over the whole diff (a name
// paired with several others, as kernels paired by position can be, keeps
// its own colour). Names joined by pairs form groups (union-find); each
// group is coloured as its first A name (sorted), so A keeps the colours the
// timeline view gives it.
std::vector<std::pair<std::string, std::string>> ColorAliases(const Trace& a, const AttributionResult& ra,
                                                              const Trace& b, const AttributionResult& rb,
                                                              const AttributionDiff& d) {
  struct Pair {
    std::string_view na, nb;
    bool map;
  };
  std::vector<Pair> pairs;
  std::map<std::string_view, std::set<std::string_view>> partners_a, partners_b;
  for (size_t i = 1; i < d.nodes.size(); ++i) {
    const DiffMatch m = d.nodes.match[i];
    if (m != DiffMatch::kMap && m != DiffMatch::kLaunchOrder && m != DiffMatch::kRole) continue;
    const uint32_t x = d.nodes.a[i], y = d.nodes.b[i];
    if (ra.nodes.name[x].empty() || rb.nodes.name[y].empty()) continue;
    const std::string_view na = a.Str(ra.nodes.name[x]), nb = b.Str(rb.nodes.name[y]);
    if (na == nb) continue;
    pairs.push_back({na, nb, m == DiffMatch::kMap});
    partners_a[na].insert(nb);
    partners_b[nb].insert(na);
  }
  std::map<std::string_view, size_t> id;
  std::vector<size_t> up;
  std::vector<uint8_t> from_a;
  auto node = [&](std::string_view name, bool in_a) {
    auto [it, fresh] = id.emplace(name, up.size());
    if (fresh) {
      up.push_back(up.size());
      from_a.push_back(0);
    }
    if (in_a) from_a[it->second] = 1;
    return it->second;
  };
  auto find = [&](size_t v) {
    while (up[v] != v) v = up[v] = up[up[v]];
    return v;
  };
  for (const Pair& p : pairs) {
    if (!p.map && (partners_a[p.na].size() != 1 || partners_b[p.nb].size() != 1)) continue;
    const size_t u = find(node(p.na, true)), v = find(node(p.nb, false));
    if (u != v) up[std::max(u, v)] = std::min(u, v);
  }
  // The colour of a group: its smallest A name (id is sorted by name), else its smallest name.
  std::vector<std::string_view> colour(up.size());
  std::vector<uint8_t> colour_from_a(up.size(), 0);
  for (const auto& [name, v] : id) {
    const size_t root = find(v);
    if (colour[root].empty() || (from_a[v] && !colour_from_a[root])) {
      colour[root] = name;
      colour_from_a[root] = from_a[v];
    }
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, v] : id) {
    const std::string_view c = colour[find(v)];
    if (c != name) out.emplace_back(std::string(name), std::string(c));
  }
  return out;
}

}  // namespace

DiffTimeline BuildDiffTimeline(const Trace& a, const AttributionResult& ra, const Trace& b,
                               const AttributionResult& rb, const AttributionDiff& d, size_t top_changes) {
  DiffTimeline out;
  if (!d.available) {
    out.problem = "the diff is not available: " + d.problem;
    return out;
  }
  // Every rank's steady steps, per run; step k of every rank of both runs
  // starts at slot k.
  const auto by_rank_a = SteadyStepsByRank(ra), by_rank_b = SteadyStepsByRank(rb);
  if (by_rank_a.empty() || by_rank_b.empty()) {
    out.problem = std::string("run ") + (by_rank_a.empty() ? "A" : "B") + " has no steady step with a start to align";
    return out;
  }
  size_t n = 0;
  for (const auto* runs : {&by_rank_a, &by_rank_b}) {
    DiffTimelineRun& run = runs == &by_rank_a ? out.a : out.b;
    run.rank = runs->front().first;
    for (const auto& [rank, steps] : *runs) {
      run.ranks.push_back(rank);
      run.steps = std::max(run.steps, steps.size());
      run.between_ns += BetweenSteps(steps);
      n = std::max(n, steps.size());
    }
  }
  const std::vector<RunStep>& sa = by_rank_a.front().second;
  const std::vector<RunStep>& sb = by_rank_b.front().second;
  int64_t at = 0;
  for (size_t k = 0; k < n; ++k) {
    DiffTimelineSlot slot;
    slot.start_ns = at;
    if (k < sa.size()) slot.a = {true, sa[k].number, sa[k].start, sa[k].dur};
    if (k < sb.size()) slot.b = {true, sb[k].number, sb[k].start, sb[k].dur};
    for (const auto& [rank, steps] : by_rank_a) {
      if (k < steps.size()) slot.a_longest_ns = std::max(slot.a_longest_ns, steps[k].dur);
    }
    for (const auto& [rank, steps] : by_rank_b) {
      if (k < steps.size()) slot.b_longest_ns = std::max(slot.b_longest_ns, steps[k].dur);
    }
    slot.width_ns = std::max(slot.a_longest_ns, slot.b_longest_ns);
    at += slot.width_ns;
    out.slots.push_back(slot);
  }

  // The top changes that a slice name can find in a run.
  struct Change {
    uint32_t node;
    uint32_t rank_in_diff;
    int32_t row;  // the op's call-site / shape row the entry names, -1: the node
  };
  std::vector<Change> changes;
  for (size_t r = 0; r < d.ranked.size() && changes.size() < top_changes; ++r) {
    const uint32_t node = d.ranked[r];
    if (!MarkableKind(d.nodes.kind[node])) continue;
    changes.push_back({node, static_cast<uint32_t>(r), r < d.ranked_row.size() ? d.ranked_row[r] : -1});
  }

  // One shifter per (run, rank): A's ranks on output ranks 1.., then B's.
  struct Part {
    int side;
    int32_t source_rank, out_rank;
    std::unique_ptr<RunShifter> shifter;
    std::unique_ptr<Trace> trace;
  };
  std::vector<Part> parts;
  int32_t next_rank = kDiffTimelineRankA;
  for (int side = 0; side < 2; ++side) {
    const auto& runs = side == 0 ? by_rank_a : by_rank_b;
    for (size_t i = 0; i < runs.size(); ++i) {
      const int32_t rank = runs[i].first;
      std::string prefix = std::string(side == 0 ? "A" : "B") +
                           (runs.size() > 1 && rank != kNoRank ? " rank " + std::to_string(rank) : "") + ": ";
      parts.push_back({side, rank, next_rank,
                       std::make_unique<RunShifter>(side == 0 ? a : b, runs[i].second, out.slots, rank, next_rank,
                                                    prefix, /*keep_unranked=*/i == 0),
                       nullptr});
      (side == 0 ? out.a : out.b).out_ranks.push_back(next_rank);
      ++next_rank;
    }
  }
  for (size_t c = 0; c < changes.size(); ++c) {
    const uint32_t node = changes[c].node;
    const bool critical = d.nodes.kind[node] != AttributionKind::kDevice;
    for (Part& part : parts) {
      const AttributionResult& r = part.side == 0 ? ra : rb;
      const uint32_t src = part.side == 0 ? d.nodes.a[node] : d.nodes.b[node];
      if (src == kNoNode) continue;
      MarkTarget target{c, critical, {}, {}};
      if (changes[c].row >= 0) {
        const uint32_t row = part.side == 0 ? d.shapes.a[changes[c].row] : d.shapes.b[changes[c].row];
        if (row == kNoNode) continue;  // the row is not in this run
        target.site = DiffSiteLabel(r, row);
      }
      if (critical) {
        for (uint32_t p = r.nodes.parent[src]; p != kNoNode && p != 0; p = r.nodes.parent[p]) {
          if (MarkableKind(r.nodes.kind[p]) && !r.nodes.name[p].empty()) target.path.push_back(r.nodes.name[p].raw);
        }
        std::reverse(target.path.begin(), target.path.end());
      }
      part.shifter->AddMark(r.nodes.name[src], std::move(target));
    }
  }
  for (Part& part : parts) part.trace = part.shifter->Run(part.side == 0 ? &out.a : &out.b, changes.size());
  out.a.faults = ReadPageFaultMeta(a);
  out.b.faults = ReadPageFaultMeta(b);

  // The slots, as steps of rank 0 hung on the first part's first track (the next part's when it kept none).
  Trace* host = nullptr;
  uint32_t host_track = kNoTrack;
  for (Part& part : parts) {
    if (part.shifter->first_track() == kNoTrack) continue;
    host = part.trace.get();
    host_track = part.shifter->first_track();
    break;
  }
  if (host_track == kNoTrack) {
    out.problem = "neither run has a track on the steps' ranks";
    return out;
  }
  const bool many = by_rank_a.size() > 1 || by_rank_b.size() > 1;
  for (size_t k = 0; k < out.slots.size(); ++k) {
    const DiffTimelineSlot& s = out.slots[k];
    const bool has_a = k < n && s.a_longest_ns > 0, has_b = k < n && s.b_longest_ns > 0;
    std::string label = "step " + std::to_string(k + 1) + ": A " + (has_a ? Ms(s.a_longest_ns) : "—") + ", B " +
                        (has_b ? Ms(s.b_longest_ns) : "—") + (many ? " (longest rank)" : "");
    host->steps.Append({.name = host->strings.Intern(label),
                        .number = static_cast<int64_t>(k + 1),
                        .ts_ns = s.start_ns,
                        .dur_ns = s.width_ns,
                        .track = TrackId{host_track},
                        .rank = kDiffTimelineSlotRank});
  }

  // Markers: per change, run, rank and slot where its name was found.
  std::vector<uint8_t> marked(changes.size(), 0);
  for (const Part& part : parts) {
    const int side = part.side;
    const RunShifter& sh = *part.shifter;
    const std::string run = std::string(side == 0 ? "A" : "B") +
                            (many && part.source_rank != kNoRank ? " rank " + std::to_string(part.source_rank) : "");
    for (size_t c = 0; c < changes.size(); ++c) {
      const uint32_t node = changes[c].node;
      const int32_t row = changes[c].row;
      std::string label = DiffNodeLabel(a, ra, b, rb, d, node);
      if (row >= 0) label += " at " + DiffRowSite(ra, rb, d.shapes, static_cast<uint32_t>(row));
      const double a_ns = row >= 0 ? d.shapes.a_ns[row] : d.nodes.a_ns[node];
      const double b_ns = row >= 0 ? d.shapes.b_ns[row] : d.nodes.b_ns[node];
      const double delta = b_ns - a_ns;
      const DiffChange change = row >= 0 ? d.shapes.change[row] : d.nodes.change[node];
      for (size_t k = 0; k < out.slots.size(); ++k) {
        const MarkSpan& span = sh.mark_spans()[c * out.slots.size() + k];
        if (span.lo > span.hi) continue;
        marked[c] = 1;
        TimelineMarker m;
        m.rule_id = "diff change #" + std::to_string(changes[c].rank_in_diff + 1);
        m.title = run + ": #" + std::to_string(changes[c].rank_in_diff + 1) + " " + DiffChangeName(change) + " " + label;
        m.bottleneck = DiffChangeName(change);
        m.priority = "run " + run;
        const bool paired = row >= 0 ? d.shapes.match[row] != DiffShapeMatch::kNone
                                     : d.nodes.match[node] != DiffMatch::kNone;
        m.confidence = std::string("matched by ") +
                       (!paired ? "none (" + std::string(DiffChangeName(change)) + ")"
                        : row >= 0 ? DiffShapeMatchName(d.shapes.match[row])
                                   : DiffMatchName(d.nodes.match[node]));
        m.where = run + ", step " + std::to_string(k + 1) + ": first to last slice of this name" +
                  (d.nodes.kind[node] == AttributionKind::kDevice ? ""
                                                                   : " under the node's path on the step's thread") +
                  (row >= 0 ? " at the row's call site (all its shapes)" : "");
        m.impact = "per steady step: A " + FormatDurationNs(a_ns) + ", B " + FormatDurationNs(b_ns) + " (" +
                   (delta >= 0 ? "+" : "") + FormatDurationNs(delta) + ")";
        const uint32_t src = side == 0 ? d.nodes.a[node] : d.nodes.b[node];
        m.search = std::string(side == 0 ? a.Str(ra.nodes.name[src]) : b.Str(rb.nodes.name[src]));
        m.rank = part.out_rank;
        m.ts_ns = span.lo;
        m.dur_ns = span.hi - span.lo;
        out.markers.push_back(std::move(m));
      }
    }
  }
  for (uint8_t m : marked) out.marked_changes += m;

  std::vector<std::unique_ptr<Trace>> traces;
  for (Part& part : parts) traces.push_back(std::move(part.trace));
  out.trace = MergeTraces(std::move(traces));
  out.color_as = ColorAliases(a, ra, b, rb, d);
  out.available = true;
  return out;
}

void AppendDiffTimelineHtml(const DiffTimeline& t, const std::string& name_a, const std::string& name_b,
                            std::string* out) {
  TimelineOptions options;
  options.title = "diff " + name_a + " → " + name_b + " (steps aligned)";
  options.generator = "aiprof diff --timeline";
  options.rank_labels = {"aligned steps (" + std::to_string(t.slots.size()) + " slots, each max(A, B))"};
  for (const auto& [run, head, name] : {std::tuple{&t.a, "A (before): ", &name_a}, std::tuple{&t.b, "B (after): ", &name_b}}) {
    for (size_t i = 0; i < run->out_ranks.size(); ++i) {
      const int32_t rank = run->ranks[i];
      const size_t at = static_cast<size_t>(run->out_ranks[i]);
      if (options.rank_labels.size() <= at) options.rank_labels.resize(at + 1);
      options.rank_labels[at] = head + *name + (rank == kNoRank ? "" : ", rank " + std::to_string(rank));
    }
  }
  options.color_as = t.color_as;
  options.fault_sources = {TimelineFaultSource{"A", t.a.out_ranks, t.a.faults},
                           TimelineFaultSource{"B", t.b.out_ranks, t.b.faults}};
  options.markers_label = "largest changes of the diff";
  options.note =
      "Steps aligned: steady step k of A and of B (warm-up left out, as the diff does) both start at slot k's start; "
      "slot k lasts the longest step k of A and B (of any rank; dashed lines: the slots' boundaries). A: " + std::to_string(t.a.steps) + " steady steps, B: " +
      std::to_string(t.b.steps) + (t.a.steps == t.b.steps ? "" : " (the longer run's extra steps have slots of their own)") +
      ". Time between steps is dropped (A: " + Ms(t.a.between_ns) + ", B: " + Ms(t.b.between_ns) +
      "), as is everything before the first and after the last steady step (A: " + std::to_string(t.a.slices_out) +
      ", B: " + std::to_string(t.b.slices_out) + " slices); slices across a step boundary are cut to the step (A: " +
      std::to_string(t.a.clipped) + ", B: " + std::to_string(t.b.clipped) +
      " pieces). Every rank with steady steps is shown (A: " + std::to_string(t.a.ranks.size()) + ", B: " +
      std::to_string(t.b.ranks.size()) + "), each rank's step k at slot k. Thread instants in the steps are drawn "
      "(A: " + std::to_string(t.a.instants) + ", B: " + std::to_string(t.b.instants) + "; outside them dropped, A: " +
      std::to_string(t.a.instants_out) + ", B: " + std::to_string(t.b.instants_out) +
      "), each run's page fault records with its own capture's period and cost; process- and global-scoped "
      "instants (A: " + std::to_string(t.a.instants_unscoped) + ", B: " + std::to_string(t.b.instants_unscoped) +
      "), stack samples and slice args are left out. Names the diff paired under different names (by the name map; through the op or by role when "
      "one to one) share a colour (" + std::to_string(t.color_as.size()) + " names recoloured). "
      "Markers: the diff's largest changes (" + std::to_string(t.marked_changes) +
      " found by name), per step from the first to the last slice of that name.";
  for (const DiffTimelineSlot& s : t.slots) options.boundaries_ns.push_back(s.start_ns);
  if (!t.slots.empty()) options.boundaries_ns.push_back(t.slots.back().start_ns + t.slots.back().width_ns);
  TimelineModel model = BuildTimelineModel(*t.trace, TimelineInputs{}, options);
  model.markers = t.markers;
  AppendTimelineHtml(*t.trace, model, options, out);
}

}  // namespace aiprof
