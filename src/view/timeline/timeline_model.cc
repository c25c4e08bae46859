#include "src/view/timeline/timeline_model.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "src/analysis/attribution/attribution.h"
#include "src/analysis/diagnosis/bottleneck_types.h"
#include "src/analysis/diagnosis/diagnose.h"
#include "src/analysis/fusion/fusion_candidates.h"
#include "src/analysis/layout/layout_conversions.h"
#include "src/analysis/page_faults/page_faults.h"
#include "src/analysis/steps/step_stats.h"
#include "src/model/page_fault_records.h"
#include "src/render/escape.h"

namespace aiprof {
namespace {

constexpr int kBucketCount = 256;
constexpr int64_t kInf = std::numeric_limits<int64_t>::max();

// The lowest bucket b such that the items in buckets >= b number at most
// `budget`; kBucketCount when even the top bucket alone is over it.
int PickThresholdBucket(const std::array<uint64_t, kBucketCount>& hist, uint64_t budget) {
  uint64_t sum = 0;
  for (int b = kBucketCount - 1; b >= 0; --b) {
    if (sum + hist[b] > budget) return b + 1;
    sum += hist[b];
  }
  return 0;
}

// Display order of layers inside a rank: the model's order, unknown last.
int LayerOrder(Layer layer) { return layer == Layer::kUnknown ? 100 : static_cast<int>(layer); }

std::string PidText(const Trace& t, uint32_t track) {
  if (!t.tracks.process_name[track].empty()) return std::string(t.Str(t.tracks.process_name[track]));
  if (!t.tracks.pid_label[track].empty()) return std::string(t.Str(t.tracks.pid_label[track]));
  return "pid " + std::to_string(t.tracks.pid[track]);
}

// Accumulates merged slices of one (row, depth, level) into sparse bins.
// `emit(bin, count, busy_ns, repeat)` receives finished bins in ascending
// order; `repeat` > 1 stands for that many consecutive bins fully covered
// (count 0, busy = bin width each), so counting need not walk them.
struct BinCursor {
  int64_t bin = -1;
  uint32_t count = 0;
  int64_t busy = 0;

  template <typename Emit>
  void Add(int64_t start, int64_t end, int64_t origin, int64_t width, Emit&& emit) {
    int64_t b0 = (start - origin) / width;
    if (b0 > bin) {
      Flush(emit);
      bin = b0;
    }
    // b0 < bin only when slices of one depth overlap (malformed nesting):
    // the slice is counted in the open bin, so totals stay exact.
    ++count;
    if (end <= start) return;
    int64_t last = (end - 1 - origin) / width;
    if (last <= bin) {
      busy += end - start;
      return;
    }
    busy += origin + (bin + 1) * width - start;
    Flush(emit);
    if (last - bin - 1 > 0) emit(bin + 1, 0, width, last - bin - 1);
    bin = last;
    busy = end - (origin + last * width);
  }

  template <typename Emit>
  void Flush(Emit&& emit) {
    if (bin >= 0 && (count > 0 || busy > 0)) emit(bin, count, busy, int64_t{1});
    count = 0;
    busy = 0;
  }
};

struct TrackRange {
  uint32_t first = 0;
  uint32_t count = 0;
  uint32_t depth_count = 0;  // wider than a depth: max depth + 1 must not wrap
};

void ComputeSpan(const Trace& t, const TimelineOptions& o, TimelineModel* m) {
  int64_t lo = kInf, hi = std::numeric_limits<int64_t>::min();
  auto see = [&](int64_t a, int64_t b) {
    lo = std::min(lo, a);
    hi = std::max(hi, b);
  };
  for (size_t i = 0; i < t.slices.size(); ++i) see(t.slices.ts_ns[i], t.slices.ts_ns[i] + t.slices.dur_ns[i]);
  for (size_t i = 0; i < t.counters.size(); ++i) see(t.counters.ts_ns[i], t.counters.ts_ns[i]);
  for (size_t i = 0; i < t.samples.size(); ++i) see(t.samples.ts_ns[i], t.samples.ts_ns[i]);
  if (o.instants) {
    for (size_t i = 0; i < t.instants.size(); ++i) {
      if (t.instants.scope[i] == 't') see(t.instants.ts_ns[i], t.instants.ts_ns[i]);
    }
  }
  for (size_t i = 0; i < t.steps.size(); ++i) see(t.steps.ts_ns[i], t.steps.ts_ns[i] + t.steps.dur_ns[i]);
  if (lo > hi) lo = hi = 0;
  m->start_ns = lo;
  m->end_ns = std::max(hi, lo + 1);
}

// Rows in display order: (rank, layer, slices before counters, pid, tid, name).
std::vector<TimelineRow> MakeRows(const Trace& t, const std::vector<TrackRange>& ranges,
                                  const std::vector<uint64_t>& counters_per_track,
                                  const std::vector<uint64_t>& samples_per_track,
                                  const std::vector<uint64_t>& instants_per_track, const std::vector<uint8_t>& shown) {
  std::vector<uint32_t> order;
  for (uint32_t k = 0; k < t.tracks.size(); ++k) {
    if (!shown.empty() && !shown[k]) continue;
    bool has = t.tracks.kind[k] == TrackKind::kCounter ? counters_per_track[k] > 0
                                                        : ranges[k].count > 0 || samples_per_track[k] > 0 ||
                                                              instants_per_track[k] > 0;
    if (has) order.push_back(k);
  }
  auto key = [&](uint32_t k) {
    int32_t rank = t.tracks.rank[k];
    return std::make_tuple(rank == kNoRank ? std::numeric_limits<int32_t>::max() : rank, LayerOrder(t.tracks.layer[k]),
                           t.tracks.kind[k] == TrackKind::kCounter, t.tracks.pid[k], t.tracks.tid[k], k);
  };
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  const std::vector<StringId> names = ThreadTrackNames(t);
  std::vector<TimelineRow> rows;
  rows.reserve(order.size());
  for (uint32_t k : order) {
    TimelineRow row;
    row.kind = t.tracks.kind[k] == TrackKind::kCounter ? TimelineRowKind::kCounter : TimelineRowKind::kSlices;
    row.track = k;
    row.rank = t.tracks.rank[k];
    row.layer = t.tracks.layer[k];
    row.label = RowLabel(t, k, names[k]);
    row.depth_count = ranges[k].depth_count;
    row.slice_count = ranges[k].count;
    row.counter_total = counters_per_track[k];
    row.sample_total = samples_per_track[k];
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<TrackRange> SliceRanges(const Trace& t) {
  std::vector<TrackRange> r(t.tracks.size());
  const SliceTable& s = t.slices;
  for (uint32_t i = 0; i < s.size(); ++i) {
    TrackRange& tr = r[s.track[i]];
    if (tr.count == 0) tr.first = i;
    ++tr.count;
    tr.depth_count = std::max<uint32_t>(tr.depth_count, uint32_t{s.depth[i]} + 1);
  }
  return r;
}

// Picks the detail threshold and marks the detailed slices.
std::vector<uint8_t> PickDetailed(const Trace& t, const TimelineOptions& o, TimelineModel* m) {
  std::array<uint64_t, kBucketCount> hist{};
  const SliceTable& s = t.slices;
  auto shown = [&](size_t i) { return o.track_shown.empty() || o.track_shown[s.track[i]]; };
  for (size_t i = 0; i < s.size(); ++i) {
    if (shown(i)) ++hist[DurationBucket(s.dur_ns[i])], ++m->slice_count;
  }
  int bmin = PickThresholdBucket(hist, o.max_detailed_slices);
  m->detail_threshold_ns = bmin == 0 ? 0 : bmin >= kBucketCount ? kInf : BucketLowerBound(bmin);
  std::vector<uint8_t> detailed(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    detailed[i] = shown(i) && DurationBucket(s.dur_ns[i]) >= bmin;
    m->detailed_count += detailed[i];
  }
  return detailed;
}

// Walks the merged slices of every row at every candidate level, calling
// emit(row, depth, level, bin, count, busy, repeat).
template <typename Emit>
void WalkMerged(const Trace& t, const std::vector<TrackRange>& ranges, const std::vector<uint8_t>& detailed,
                const TimelineModel& m, const std::vector<int64_t>& widths, Emit&& emit) {
  const SliceTable& s = t.slices;
  const size_t levels = widths.size();
  std::vector<BinCursor> cursors;
  for (uint32_t r = 0; r < m.rows.size(); ++r) {
    const TimelineRow& row = m.rows[r];
    if (row.kind != TimelineRowKind::kSlices) continue;
    const TrackRange& tr = ranges[row.track];
    cursors.assign(size_t(tr.depth_count) * levels, BinCursor{});
    for (uint32_t i = tr.first; i < tr.first + tr.count; ++i) {
      if (detailed[i]) continue;
      uint32_t d = s.depth[i];
      for (size_t l = 0; l < levels; ++l) {
        cursors[d * levels + l].Add(s.ts_ns[i], s.ts_ns[i] + s.dur_ns[i], m.start_ns, widths[l],
                                    [&](int64_t b, uint32_t c, int64_t busy, int64_t rep) {
                                      emit(r, d, l, b, c, busy, rep);
                                    });
      }
    }
    for (size_t c = 0; c < cursors.size(); ++c) {
      uint32_t d = static_cast<uint32_t>(c / levels);
      size_t l = c % levels;
      cursors[c].Flush([&](int64_t b, uint32_t n, int64_t busy, int64_t rep) { emit(r, d, l, b, n, busy, rep); });
    }
  }
}

void BuildDensity(const Trace& t, const std::vector<TrackRange>& ranges, const std::vector<uint8_t>& detailed,
                  const TimelineOptions& o, TimelineModel* m) {
  if (m->detailed_count == m->slice_count) return;
  int64_t span = m->end_ns - m->start_ns;
  int64_t w0 = std::max<int64_t>(1, (span + int64_t(o.overview_bins) - 1) / int64_t(std::max<size_t>(1, o.overview_bins)));
  // Finer than a sixteenth of the threshold is no use: a merged slice is
  // shorter than the threshold, so its outline is already 16 bins wide.
  int64_t finest = std::max<int64_t>(1, m->detail_threshold_ns == kInf ? 1 : m->detail_threshold_ns / kLodFinestFraction);
  std::vector<int64_t> widths;
  for (int64_t w = w0; w >= finest && widths.size() < kMaxLodLevels; w /= 4) widths.push_back(w);
  if (widths.empty()) widths.push_back(w0);
  // Pass 1: bins per level, to keep the levels that fit the budget.
  std::vector<uint64_t> per_level(widths.size());
  WalkMerged(t, ranges, detailed, *m, widths,
             [&](uint32_t, uint32_t, size_t l, int64_t, uint32_t, int64_t, int64_t rep) { per_level[l] += rep; });
  size_t keep = 0;
  uint64_t total = 0;
  while (keep < widths.size() && total + per_level[keep] <= o.max_density_bins) total += per_level[keep++];
  widths.resize(keep);
  m->level_bin_ns = widths;
  m->density_bin_count = total;
  if (keep == 0) return;
  for (TimelineRow& row : m->rows) {
    if (row.kind != TimelineRowKind::kSlices) continue;
    row.density.assign(keep, std::vector<DensityBins>(row.depth_count));
    for (auto& level : row.density) {
      for (uint32_t d = 0; d < row.depth_count; ++d) level[d].depth = d;
    }
  }
  // Pass 2: store them.
  WalkMerged(t, ranges, detailed, *m, widths,
             [&](uint32_t r, uint32_t d, size_t l, int64_t b, uint32_t c, int64_t busy, int64_t rep) {
               DensityBins& db = m->rows[r].density[l][d];
               for (int64_t k = 0; k < rep; ++k) {
                 db.bin.push_back(b + k);
                 db.count.push_back(c);
                 db.busy_ns.push_back(busy);
               }
             });
  for (TimelineRow& row : m->rows) {
    for (auto& level : row.density) {
      level.erase(std::remove_if(level.begin(), level.end(), [](const DensityBins& db) { return db.bin.empty(); }),
                  level.end());
    }
  }
}

void FillDetailed(const Trace& t, const std::vector<TrackRange>& ranges, const std::vector<uint8_t>& detailed,
                  TimelineModel* m) {
  for (TimelineRow& row : m->rows) {
    if (row.kind != TimelineRowKind::kSlices) continue;
    const TrackRange& tr = ranges[row.track];
    for (uint32_t i = tr.first; i < tr.first + tr.count; ++i) {
      if (detailed[i]) row.detailed.push_back(i);
    }
  }
  const FlowTable& f = t.flows;
  m->flows_total = f.size();
  for (uint32_t i = 0; i < f.size(); ++i) {
    uint32_t a = f.from_slice[i], b = f.to_slice[i];
    if (a < detailed.size() && b < detailed.size() && detailed[a] && detailed[b]) m->flows.push_back(i);
  }
}

// The critical path overlay, part 1: the on-path slices of the shown tracks
// join the detailed set (with their ancestors, so nesting stays whole) up to
// max_path_slices forced slices.
void MarkPathSlices(const Trace& t, const TimelineInputs& in, const TimelineOptions& o,
                    std::vector<uint8_t>* detailed, TimelineModel* m) {
  const CriticalPathResult* cp = in.critical_path;
  if (cp == nullptr) return;
  TimelinePath& p = m->path;
  p.present = true;
  const SliceTable& s = t.slices;
  auto shown = [&](size_t i) { return o.track_shown.empty() || o.track_shown[s.track[i]]; };
  const std::vector<uint32_t>& host_parent = cp->graph.parent;
  // The enclosing slice of `i` (kNoSlice at depth 0): the dependency graph's
  // parent on host threads; else the nearest earlier slice of the track one
  // level up (a device activity under a GPU annotation), searched a bounded way.
  auto parent_of = [&](uint32_t i) -> uint32_t {
    if (s.depth[i] == 0) return kNoSlice;
    if (i < host_parent.size() && host_parent[i] != kNoSlice) return host_parent[i];
    constexpr uint32_t kMaxBack = 4096;
    for (uint32_t k = i, n = 0; k-- > 0 && n < kMaxBack && s.track[k] == s.track[i]; ++n) {
      if (s.depth[k] + 1 == s.depth[i] && s.ts_ns[k] <= s.ts_ns[i]) return k;
    }
    return kNoSlice;
  };
  size_t forced = 0;
  const size_t n = std::min<size_t>(cp->on_path.size(), s.size());
  for (uint32_t i = 0; i < n; ++i) {
    if (!cp->on_path[i] || !shown(i)) continue;
    ++p.slices_total;
    if (!(*detailed)[i]) {
      if (forced >= o.max_path_slices) continue;
      for (uint32_t a = i; a != kNoSlice && !(*detailed)[a]; a = parent_of(a)) {
        (*detailed)[a] = 1;
        ++m->detailed_count;
        ++forced;
      }
    }
    p.slices.push_back(i);
  }
}

// Part 2: the dependencies between shown slices, and the path's figures.
void FillPathEdges(const TimelineInputs& in, const std::vector<uint8_t>& detailed, TimelineModel* m) {
  const CriticalPathResult* cp = in.critical_path;
  if (cp == nullptr) return;
  TimelinePath& p = m->path;
  std::vector<int32_t> ranks;
  for (const TimelineRow& r : m->rows) ranks.push_back(r.rank);
  auto rank_shown = [&](int32_t rank) { return std::find(ranks.begin(), ranks.end(), rank) != ranks.end(); };
  for (const StepPath& sp : cp->steps) {
    if (sp.segment_count == 0 || !rank_shown(sp.rank)) continue;
    ++p.steps;
    for (size_t k = sp.first_edge; k < sp.first_edge + sp.edge_count; ++k) {
      const PathEdge& e = cp->edges[k];
      ++p.edges_total;
      if (e.from_slice >= detailed.size() || e.to_slice >= detailed.size() || !detailed[e.from_slice] ||
          !detailed[e.to_slice]) {
        continue;
      }
      p.edges.push_back(
          TimelinePathEdge{e.from_slice, e.to_slice, e.kind, DepLeavesFromEnd(e.kind), DepArrivesAtEnd(e.kind)});
    }
  }
  p.window_steps = cp->window_steps;
  p.window_path_ns = cp->window_path_ns;
  p.window_by_class_ns = cp->window_by_class_ns;
}

// Colour by module: the modules by exclusive time, and each detailed slice's.
void FillModules(const Trace& t, const TimelineInputs& in, const TimelineOptions& o, TimelineModel* m) {
  const SliceModuleMap* map = in.slice_modules;
  if (map == nullptr || map->of.size() != t.slices.size()) return;
  const SliceTable& s = t.slices;
  TimelineModules& out = m->modules;
  out.present = true;
  auto shown = [&](size_t i) { return o.track_shown.empty() || o.track_shown[s.track[i]]; };
  // Exclusive time per module slice, then per name.
  std::vector<int64_t> by_name(t.strings.size(), 0);
  std::vector<uint8_t> seen(t.strings.size(), 0);
  std::vector<StringId> names;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (map->of[i] != i || !shown(i)) continue;
    const uint32_t id = s.name[i].raw;
    if (!seen[id]) seen[id] = 1, names.push_back(s.name[i]);
    by_name[id] += s.dur_ns[i];
    if (uint32_t up = map->outer[i]; up != kNoSlice) by_name[s.name[up].raw] -= s.dur_ns[i];
  }
  std::stable_sort(names.begin(), names.end(), [&](StringId a, StringId b) { return by_name[a.raw] > by_name[b.raw]; });
  std::vector<int32_t> index(t.strings.size(), -1);
  for (size_t k = 0; k < names.size(); ++k) {
    index[names[k].raw] = static_cast<int32_t>(k);
    out.names.push_back(names[k]);
    out.self_ns.push_back(std::max<int64_t>(0, by_name[names[k].raw]));
  }
  for (TimelineRow& row : m->rows) {
    if (row.kind != TimelineRowKind::kSlices) continue;
    row.module.reserve(row.detailed.size());
    for (uint32_t i : row.detailed) {
      const uint32_t mod = map->of[i];
      row.module.push_back(mod == kNoSlice ? -1 : index[s.name[mod].raw]);
    }
  }
}

// Counters: all points if they fit; else per row the first, min, max and
// last point of each of (budget / 4) bins.
void FillCounters(const Trace& t, const TimelineOptions& o, TimelineModel* m) {
  std::vector<int32_t> row_of(t.tracks.size(), -1);
  size_t counter_rows = 0;
  for (size_t r = 0; r < m->rows.size(); ++r) {
    if (m->rows[r].kind == TimelineRowKind::kCounter) row_of[m->rows[r].track] = int32_t(r), ++counter_rows;
  }
  if (counter_rows == 0) return;
  const CounterTable& c = t.counters;
  std::vector<std::vector<uint32_t>> points(m->rows.size());
  for (uint32_t i = 0; i < c.size(); ++i) {
    if (row_of[c.track[i]] >= 0) points[row_of[c.track[i]]].push_back(i);
  }
  bool thin = c.size() > o.max_counter_points;
  int64_t bins = std::max<int64_t>(1, int64_t(o.max_counter_points / counter_rows / 4));
  int64_t width = std::max<int64_t>(1, (m->end_ns - m->start_ns) / bins + 1);
  for (size_t r = 0; r < m->rows.size(); ++r) {
    std::vector<uint32_t>& p = points[r];
    std::stable_sort(p.begin(), p.end(), [&](uint32_t a, uint32_t b) { return c.ts_ns[a] < c.ts_ns[b]; });
    if (!thin) {
      m->rows[r].counter_points = std::move(p);
      continue;
    }
    std::vector<uint32_t>& out = m->rows[r].counter_points;
    for (size_t i = 0; i < p.size();) {
      int64_t bin = (c.ts_ns[p[i]] - m->start_ns) / width;
      size_t j = i, lo = i, hi = i;
      while (j < p.size() && (c.ts_ns[p[j]] - m->start_ns) / width == bin) {
        if (c.value[p[j]] < c.value[p[lo]]) lo = j;
        if (c.value[p[j]] > c.value[p[hi]]) hi = j;
        ++j;
      }
      size_t pick[4] = {i, lo, hi, j - 1};
      std::sort(pick, pick + 4);
      for (size_t k = 0; k < 4; ++k) {
        if (k == 0 || pick[k] != pick[k - 1]) out.push_back(p[pick[k]]);
      }
      i = j;
    }
  }
}

void FillSamples(const Trace& t, const TimelineOptions& o, TimelineModel* m) {
  const StackSampleTable& s = t.samples;
  if (s.size() == 0) return;
  m->sample_stride = s.size() > o.max_samples ? uint32_t((s.size() + o.max_samples - 1) / o.max_samples) : 1;
  std::vector<int32_t> row_of(t.tracks.size(), -1);
  for (size_t r = 0; r < m->rows.size(); ++r) {
    if (m->rows[r].kind == TimelineRowKind::kSlices) row_of[m->rows[r].track] = int32_t(r);
  }
  std::vector<uint64_t> seen(m->rows.size());
  for (uint32_t i = 0; i < s.size(); ++i) {
    int32_t r = row_of[s.track[i]];
    if (r >= 0 && seen[r]++ % m->sample_stride == 0) m->rows[r].samples.push_back(i);
  }
}

// Instants on the shown slice rows (LayOutInstants over the whole span).
void FillInstants(const Trace& t, const TimelineOptions& o, const std::vector<uint32_t>& instant_track,
                  TimelineModel* m) {
  if (!o.instants || t.instants.size() == 0) return;
  std::vector<int32_t> row_of(t.tracks.size(), -1), rank_of(m->rows.size());
  for (size_t r = 0; r < m->rows.size(); ++r) {
    if (m->rows[r].kind == TimelineRowKind::kSlices) row_of[m->rows[r].track] = int32_t(r);
    rank_of[r] = m->rows[r].rank;
  }
  // Each track's instants on the row of instant_track (its thread's ops).
  std::vector<int32_t> instant_row(t.tracks.size());
  for (uint32_t k = 0; k < t.tracks.size(); ++k) instant_row[k] = row_of[instant_track[k]];
  InstantLayoutOptions lo;
  lo.origin_ns = m->start_ns;
  lo.span_ns = m->end_ns - m->start_ns;
  lo.overview_bins = o.overview_bins;
  lo.max_instants = o.max_instants;
  lo.max_bins = o.max_instant_bins;
  lo.fault_sources = o.fault_sources;
  InstantLayout l = LayOutInstants(t, instant_row, rank_of, lo);
  m->instant_kinds = std::move(l.kinds);
  for (size_t r = 0; r < m->rows.size(); ++r) m->rows[r].instants = std::move(l.rows[r]);
  m->instant_total = l.total;
  m->instant_hidden = l.hidden;
  m->instant_unscoped = l.unscoped;
  m->instants_binned = l.binned;
  m->instant_level_ns = std::move(l.level_ns);
  m->instant_bin_count = l.bin_count;
  m->fault_sources = std::move(l.fault_sources);
  const PageFaultMeta& first = m->fault_sources.empty() ? l.own : m->fault_sources.front().meta;
  m->fault_period = first.period;
  m->fault_period_known = first.period_known;
  m->fault_cost_ns = first.cost_ns;
  m->fault_cost_known = first.cost_known;
}

void FillGaps(const Trace& t, const TimelineInputs& in, const TimelineOptions& o, TimelineModel* m) {
  if (in.gaps == nullptr) return;
  std::array<uint64_t, kBucketCount> hist{};
  for (const TimelineBreakdown& tl : in.gaps->timelines) {
    for (const Gap& g : tl.gaps) ++hist[DurationBucket(g.end_ns - g.start_ns)];
    m->gaps_total += tl.gap_count;
  }
  int bmin = PickThresholdBucket(hist, o.max_gaps);
  for (const TimelineBreakdown& tl : in.gaps->timelines) {
    GapRow row;
    row.rank = tl.rank;
    row.device = tl.device;
    row.track = tl.track;
    row.label = tl.device == kHostDevice ? "idle gaps: main thread" : "idle gaps: device " + std::to_string(tl.device);
    row.total = tl.gap_count;
    row.idle_by_cause_ns = tl.idle_by_cause_ns;
    for (const Gap& g : tl.gaps) {
      if (DurationBucket(g.end_ns - g.start_ns) >= bmin) row.gaps.push_back(g);
    }
    m->gaps_kept += row.gaps.size();
    m->gap_rows.push_back(std::move(row));
  }
}

// Markers for the findings: at the largest gaps of the matching cause for
// host_bound / sync_bound / data_loading, and at the startup gaps for
// startup / graph_capture (a capture's idle), else at the slowest step (the
// finding is over all steps; the slowest one shows it most), else across the
// whole trace.
void FillMarkers(const Trace& t, const TimelineInputs& in, TimelineModel* m) {
  if (in.diagnosis == nullptr) return;
  constexpr size_t kGapMarkersPerTimeline = 3;
  for (const Finding& f : in.diagnosis->findings) {
    TimelineMarker base;
    base.rule_id = f.rule->id;
    base.title = f.rule->title;
    base.bottleneck = f.rule->bottleneck;
    base.priority = PriorityName(f.priority);
    base.confidence = ConfidenceName(f.confidence);
    base.impact = ImpactText(f);
    if (f.rule->bottleneck == "layout_conversion" && in.layout && !in.layout->groups.empty()) {
      base.search = in.layout->groups[0].op;
    } else if (f.rule->bottleneck == "fusion_missing" && in.fusion && !in.fusion->top.empty() &&
               !in.fusion->top[0].ops.empty()) {
      base.search = std::string(t.Str(in.fusion->top[0].ops[0]));
    }
    // The gaps of the finding's cause (its bottleneck type's gap_cause).
    const BottleneckType* type = FindBottleneckType(f.rule->bottleneck);
    const std::string_view cause = type != nullptr ? type->gap_cause : std::string_view();
    size_t placed = 0;
    if (!cause.empty() && in.gaps) {
      for (const TimelineBreakdown& tl : in.gaps->timelines) {
        size_t here = 0;
        for (const Gap& g : tl.largest_gaps) {
          if (GapCauseName(g.cause) != cause || here == kGapMarkersPerTimeline) continue;
          TimelineMarker mk = base;
          mk.where = std::string("idle gap (") + GapCauseName(g.cause) + ")";
          mk.rank = tl.rank;
          mk.ts_ns = g.start_ns;
          mk.dur_ns = g.end_ns - g.start_ns;
          m->markers.push_back(std::move(mk));
          ++here, ++placed;
        }
      }
    }
    if (placed > 0) continue;
    TimelineMarker mk = base;
    if (in.steps && !in.steps->slowest.empty()) {
      uint32_t s = in.steps->slowest[0].step;
      mk.where = "slowest step (" + std::string(t.Str(t.steps.name[s])) + "); the finding covers all steps";
      mk.rank = t.steps.rank[s];
      mk.ts_ns = t.steps.ts_ns[s];
      mk.dur_ns = t.steps.dur_ns[s];
    } else {
      mk.where = "whole trace (no step to place it at)";
      mk.ts_ns = m->start_ns;
      mk.dur_ns = m->end_ns - m->start_ns;
    }
    m->markers.push_back(std::move(mk));
  }
}

// With a track filter: gaps, steps and markers only of the ranks shown.
void KeepShownRanks(TimelineModel* m, const Trace& t) {
  std::vector<int32_t> ranks;
  for (const TimelineRow& r : m->rows) ranks.push_back(r.rank);
  auto shown = [&](int32_t rank) { return std::find(ranks.begin(), ranks.end(), rank) != ranks.end(); };
  std::erase_if(m->gap_rows, [&](const GapRow& g) { return !shown(g.rank); });
  std::erase_if(m->steps, [&](uint32_t s) { return !shown(t.steps.rank[s]); });
  std::erase_if(m->markers, [&](const TimelineMarker& k) { return k.rank != kNoRank && !shown(k.rank); });
  m->gaps_kept = 0;
  for (const GapRow& g : m->gap_rows) m->gaps_kept += g.gaps.size();
}

}  // namespace

int DurationBucket(int64_t dur_ns) {
  if (dur_ns <= 0) return 0;
  if (dur_ns < 8) return int(dur_ns);
  int bw = std::bit_width(static_cast<uint64_t>(dur_ns));
  int top3 = int(dur_ns >> (bw - 3));  // 4..7
  return 4 * (bw - 4) + (top3 - 4) + 8;
}

int64_t BucketLowerBound(int bucket) {
  if (bucket < 8) return bucket;
  int k = bucket - 8;
  int bw = k / 4 + 4;
  return int64_t(k % 4 + 4) << (bw - 3);
}

std::string RowLabel(const Trace& t, uint32_t k, StringId fallback) {
  const TrackTable& tr = t.tracks;
  // Each part cut (ShownText): a process's name is in the label of every
  // row of the process, so a 1 MiB one over 500 threads was 524 MB of page
  // (from a 1.1 MB trace).
  const std::string pid = ShownText(PidText(t, k), kMaxRowLabelPartBytes);
  std::string name = ShownText(t.Str(tr.name[k]), kMaxRowLabelPartBytes);
  switch (tr.kind[k]) {
    case TrackKind::kCounter: return pid + ": " + (name.empty() ? "counter" : name);
    case TrackKind::kDeviceStream: return pid + ": " + (name.empty() ? "stream " + std::to_string(tr.tid[k]) : name);
    default: {
      std::string tid = !tr.tid_label[k].empty() ? ShownText(t.Str(tr.tid_label[k]), kMaxRowLabelPartBytes)
                                                 : std::to_string(tr.tid[k]);
      if (name.empty() && !fallback.empty()) name = ShownText(t.Str(fallback), kMaxRowLabelPartBytes);
      return pid + ": " + (name.empty() ? "thread " + tid : name + " (" + tid + ")");
    }
  }
}

std::vector<StringId> ThreadTrackNames(const Trace& t) {
  const TrackTable& tr = t.tracks;
  std::map<std::pair<int64_t, int64_t>, StringId> named;  // (pid, tid) -> a thread track's name
  for (uint32_t k = 0; k < tr.size(); ++k) {
    if (tr.kind[k] == TrackKind::kThread && !tr.name[k].empty()) named.try_emplace({tr.pid[k], tr.tid[k]}, tr.name[k]);
  }
  std::vector<StringId> out(tr.size());
  for (uint32_t k = 0; k < tr.size(); ++k) {
    out[k] = tr.name[k];
    if (out[k].empty() && tr.kind[k] == TrackKind::kThread) {
      auto it = named.find({tr.pid[k], tr.tid[k]});
      if (it != named.end()) out[k] = it->second;
    }
  }
  return out;
}

std::vector<uint32_t> InstantsByTime(const Trace& t) {
  std::vector<uint32_t> v(t.instants.size());
  std::iota(v.begin(), v.end(), 0u);
  std::stable_sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) { return t.instants.ts_ns[a] < t.instants.ts_ns[b]; });
  return v;
}

std::vector<uint32_t> InstantTracks(const Trace& t, const std::vector<uint8_t>& has_slices) {
  const TrackTable& tr = t.tracks;
  std::vector<uint32_t> out(tr.size());
  std::map<std::pair<int64_t, int64_t>, uint32_t> ops;  // (pid, tid) -> its thread track with slices, first by layer
  for (uint32_t k = 0; k < tr.size(); ++k) {
    out[k] = k;
    if (tr.kind[k] != TrackKind::kThread || k >= has_slices.size() || !has_slices[k]) continue;
    auto [it, added] = ops.try_emplace({tr.pid[k], tr.tid[k]}, k);
    if (!added && LayerOrder(tr.layer[k]) < LayerOrder(tr.layer[it->second])) it->second = k;
  }
  for (uint32_t k = 0; k < tr.size(); ++k) {
    if (tr.kind[k] != TrackKind::kThread || (k < has_slices.size() && has_slices[k])) continue;
    auto it = ops.find({tr.pid[k], tr.tid[k]});
    if (it != ops.end()) out[k] = it->second;
  }
  return out;
}

InstantLayout LayOutInstants(const Trace& t, const std::vector<int32_t>& row_of, const std::vector<int32_t>& rank_of,
                             const InstantLayoutOptions& o) {
  InstantLayout out;
  const InstantTable& in = t.instants;
  const size_t rows = rank_of.size();
  out.rows.resize(rows);
  out.own = ReadPageFaultMeta(t);
  // Each row's fault source: the one whose ranks hold the row's rank, else
  // the trace's own metadata (source 0 without sources; with them, a source
  // appended the first time a fault record needs it).
  out.fault_sources = o.fault_sources;
  std::vector<int32_t> row_source(rows, o.fault_sources.empty() ? 0 : -1);
  int32_t own_source = o.fault_sources.empty() ? 0 : -1;
  for (size_t r = 0; r < rows && !o.fault_sources.empty(); ++r) {
    for (size_t k = 0; k < o.fault_sources.size() && row_source[r] < 0; ++k) {
      const std::vector<int32_t>& ranks = o.fault_sources[k].ranks;
      if (std::find(ranks.begin(), ranks.end(), rank_of[r]) != ranks.end()) row_source[r] = int32_t(k);
    }
  }
  const std::optional<StringId> fault_cat = t.strings.Find(kPageFaultCategory);
  // (category, name) -> kind, in order of first appearance; fault records per source.
  std::vector<std::unordered_map<uint64_t, uint32_t>> kind_of(1);
  std::vector<std::unordered_map<uint32_t, std::vector<uint32_t>>> per_row(rows);
  auto visit = [&](uint32_t i) {
    if (in.ts_ns[i] < o.from_ns || in.ts_ns[i] >= o.to_ns) return;
    if (in.scope[i] != 't') {
      ++out.unscoped;
      return;
    }
    const int32_t r = in.track[i] < row_of.size() ? row_of[in.track[i]] : -1;
    if (r < 0 || size_t(r) >= rows) {
      ++out.hidden;
      return;
    }
    const bool fault = fault_cat && in.category[i] == *fault_cat;
    uint32_t source = 0;
    if (fault) {
      if (row_source[r] < 0) {
        if (own_source < 0) {
          own_source = int32_t(out.fault_sources.size());
          out.fault_sources.push_back(TimelineFaultSource{"", {}, out.own});
        }
        row_source[r] = own_source;
      }
      source = uint32_t(row_source[r]);
    }
    if (kind_of.size() <= source) kind_of.resize(source + 1);
    const uint64_t key = (uint64_t{in.category[i].raw} << 32) | in.name[i].raw;
    auto [it, added] = kind_of[source].try_emplace(key, uint32_t(out.kinds.size()));
    if (added) out.kinds.push_back(TimelineInstantKind{in.category[i], in.name[i], fault, 0, source});
    ++out.kinds[it->second].total;
    per_row[r][it->second].push_back(i);
    ++out.total;
  };
  if (o.by_time && o.by_time->size() == in.size()) {
    const std::vector<uint32_t>& v = *o.by_time;
    auto first = std::lower_bound(v.begin(), v.end(), o.from_ns, [&](uint32_t i, int64_t t) { return in.ts_ns[i] < t; });
    for (auto it = first; it != v.end() && in.ts_ns[*it] < o.to_ns; ++it) visit(*it);
  } else {
    for (uint32_t i = 0; i < in.size(); ++i) visit(i);
  }
  for (size_t r = 0; r < rows; ++r) {
    std::vector<InstantGroup>& groups = out.rows[r];
    for (auto& [kind, list] : per_row[r]) {
      std::stable_sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) { return in.ts_ns[a] < in.ts_ns[b]; });
      InstantGroup g;
      g.kind = kind;
      g.total = list.size();
      g.shown = std::move(list);
      groups.push_back(std::move(g));
    }
    std::sort(groups.begin(), groups.end(),
              [](const InstantGroup& a, const InstantGroup& b) { return a.kind < b.kind; });
  }
  if (out.total <= o.max_instants) return out;
  // Over the budget: count bins, levels coarse to fine while they fit.
  out.binned = true;
  const int64_t bins0 = int64_t(std::max<size_t>(1, o.overview_bins));
  std::vector<int64_t> widths;
  for (int64_t w = std::max<int64_t>(1, (std::max<int64_t>(1, o.span_ns) + bins0 - 1) / bins0);
       w >= 1 && widths.size() < std::min(o.max_levels, kMaxLodLevels); w /= 4) {
    widths.push_back(w);
  }
  std::vector<uint64_t> per_level(widths.size());
  for (const std::vector<InstantGroup>& groups : out.rows) {
    for (const InstantGroup& g : groups) {
      for (size_t l = 0; l < widths.size(); ++l) {
        int64_t last = -1;
        for (uint32_t i : g.shown) {
          const int64_t b = (in.ts_ns[i] - o.origin_ns) / widths[l];
          if (b != last) ++per_level[l], last = b;
        }
      }
    }
  }
  size_t keep = 0;
  while (keep < widths.size() && out.bin_count + per_level[keep] <= o.max_bins) out.bin_count += per_level[keep++];
  widths.resize(keep);
  out.level_ns = widths;
  for (std::vector<InstantGroup>& groups : out.rows) {
    for (InstantGroup& g : groups) {
      g.lod.resize(keep);
      for (size_t l = 0; l < keep; ++l) {
        InstantBins& ib = g.lod[l];
        for (uint32_t i : g.shown) {
          const int64_t b = (in.ts_ns[i] - o.origin_ns) / widths[l];
          if (ib.bin.empty() || ib.bin.back() != b) ib.bin.push_back(b), ib.count.push_back(0);
          ++ib.count.back();
        }
      }
      g.shown.clear();
      g.shown.shrink_to_fit();
    }
  }
  return out;
}

TimelineModel BuildTimelineModel(const Trace& t, const TimelineInputs& in, const TimelineOptions& o) {
  TimelineModel m;
  ComputeSpan(t, o, &m);
  std::vector<TrackRange> ranges = SliceRanges(t);
  std::vector<uint64_t> counters(t.tracks.size()), samples(t.tracks.size()), instants(t.tracks.size());
  for (size_t i = 0; i < t.counters.size(); ++i) ++counters[t.counters.track[i]];
  for (size_t i = 0; i < t.samples.size(); ++i) ++samples[t.samples.track[i]];
  std::vector<uint8_t> has_slices(t.tracks.size());
  for (size_t k = 0; k < t.tracks.size(); ++k) has_slices[k] = ranges[k].count > 0;
  // The track whose row draws each track's instants; a track whose ops'
  // track the filter hides keeps its own (and so gets a row of its own).
  std::vector<uint32_t> instant_track = InstantTracks(t, has_slices);
  for (uint32_t k = 0; k < t.tracks.size() && !o.track_shown.empty(); ++k) {
    if (!o.track_shown[instant_track[k]]) instant_track[k] = k;
  }
  if (o.instants) {
    for (size_t i = 0; i < t.instants.size(); ++i) {
      if (t.instants.track[i] < t.tracks.size() && t.instants.scope[i] == 't') ++instants[instant_track[t.instants.track[i]]];
    }
  }
  m.rows = MakeRows(t, ranges, counters, samples, instants, o.track_shown);
  std::vector<uint8_t> detailed = PickDetailed(t, o, &m);
  MarkPathSlices(t, in, o, &detailed, &m);
  FillDetailed(t, ranges, detailed, &m);
  FillPathEdges(in, detailed, &m);
  FillModules(t, in, o, &m);
  BuildDensity(t, ranges, detailed, o, &m);
  FillCounters(t, o, &m);
  FillSamples(t, o, &m);
  FillInstants(t, o, instant_track, &m);
  FillGaps(t, in, o, &m);
  for (uint32_t s = 0; s < t.steps.size(); ++s) m.steps.push_back(s);
  FillMarkers(t, in, &m);
  if (!o.track_shown.empty()) KeepShownRanks(&m, t);
  return m;
}

}  // namespace aiprof
