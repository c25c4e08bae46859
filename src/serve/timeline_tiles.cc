#include "src/serve/timeline_tiles.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "src/render/escape.h"
#include "src/render/units.h"

namespace aiprof {

TileIndex BuildTileIndex(const Trace& trace) {
  TileIndex index;
  const SliceTable& s = trace.slices;
  index.start_ns = std::numeric_limits<int64_t>::max();
  index.end_ns = std::numeric_limits<int64_t>::min();
  // Slices are sorted by (track, start), so each track is one run of rows.
  for (uint32_t i = 0; i < s.size();) {
    TileIndex::TrackRange r;
    r.track = s.track[i];
    r.begin = i;
    int64_t track_end = std::numeric_limits<int64_t>::min();
    for (; i < s.size() && s.track[i] == r.track; ++i) {
      r.depth_count = std::max<uint32_t>(r.depth_count, s.depth[i] + 1u);
      track_end = std::max(track_end, s.ts_ns[i] + s.dur_ns[i]);
      index.start_ns = std::min(index.start_ns, s.ts_ns[i]);
      index.end_ns = std::max(index.end_ns, s.ts_ns[i] + s.dur_ns[i]);
    }
    r.end = i;
    r.long_ns = std::max<int64_t>(1, (track_end - s.ts_ns[r.begin]) / 16);
    for (uint32_t k = r.begin; k < r.end; ++k) {
      if (s.dur_ns[k] > r.long_ns) {
        r.long_rows.push_back(k);
      } else {
        r.max_dur_ns = std::max(r.max_dur_ns, s.dur_ns[k]);
      }
    }
    index.tracks.push_back(r);
  }
  // Thread instants extend the span, as on the timeline page (a capture's
  // page faults start before its first traced op).
  const InstantTable& in = trace.instants;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in.scope[i] != 't') continue;
    index.start_ns = std::min(index.start_ns, in.ts_ns[i]);
    index.end_ns = std::max(index.end_ns, in.ts_ns[i] + 1);
  }
  if (index.start_ns > index.end_ns) index.start_ns = index.end_ns = 0;
  // Counter samples per track, by time (importers append them as read).
  const CounterTable& c = trace.counters;
  std::vector<uint32_t> rows(c.size());
  for (uint32_t i = 0; i < rows.size(); ++i) rows[i] = i;
  std::stable_sort(rows.begin(), rows.end(), [&](uint32_t x, uint32_t y) {
    return c.track[x] != c.track[y] ? c.track[x] < c.track[y] : c.ts_ns[x] < c.ts_ns[y];
  });
  for (size_t i = 0; i < rows.size();) {
    TileIndex::CounterRange r;
    r.track = c.track[rows[i]];
    for (; i < rows.size() && c.track[rows[i]] == r.track; ++i) r.rows.push_back(rows[i]);
    index.counter_tracks.push_back(std::move(r));
  }
  index.flows.resize(trace.flows.size());
  for (uint32_t i = 0; i < index.flows.size(); ++i) index.flows[i] = i;
  std::stable_sort(index.flows.begin(), index.flows.end(), [&](uint32_t x, uint32_t y) {
    return s.ts_ns[trace.flows.from_slice[x]] < s.ts_ns[trace.flows.from_slice[y]];
  });
  std::vector<uint8_t> has_slices(trace.tracks.size());
  for (const TileIndex::TrackRange& r : index.tracks) has_slices[r.track] = 1;
  index.instant_track = InstantTracks(trace, has_slices);
  index.instants_by_time = InstantsByTime(trace);
  index.track_name = ThreadTrackNames(trace);
  return index;
}

std::string TrackLabel(const Trace& trace, uint32_t track, StringId name) {
  const TrackTable& t = trace.tracks;
  std::string label;
  if (t.rank[track] != kNoRank) label = "rank " + std::to_string(t.rank[track]) + " ";
  if (!name.empty()) return label + std::string(trace.Str(name));
  const std::string pid = t.pid_label[track].empty() ? std::to_string(t.pid[track]) : std::string(trace.Str(t.pid_label[track]));
  const std::string tid = t.tid_label[track].empty() ? std::to_string(t.tid[track]) : std::string(trace.Str(t.tid_label[track]));
  return label + (t.kind[track] == TrackKind::kDeviceStream ? "device " + pid + " stream " + tid : "pid " + pid + " tid " + tid);
}

namespace {

// A tile lists up to 20,000 slices: their names are cut shorter than a
// report's (docs/serve.md). So are its other trace strings (track and
// counter labels, instant kinds, flow categories), which a native or
// Perfetto file may intern once and use many times.
constexpr size_t kTileNameBytes = 1024;
// A drawing's text (labels and <title>s) is cut shorter still: a track's
// label is in the title of each of its instant strip's columns, and a
// counter's in each of its bins' (a 1 MiB thread name over 1000 columns of
// instants made a 1 GB page from a 1 MB upload).
constexpr size_t kSvgTextBytes = 200;

// A trace string for a drawing: cut, then escaped.
std::string SvgText(std::string_view s) { return HtmlEscape(ShownText(s, kSvgTextBytes)); }
// A trace string for a tile's JSON: cut, then quoted.
std::string TileJsonText(std::string_view s) { return JsonString(ShownText(s, kTileNameBytes)); }

// Bins of one track while a tile is computed: busy time and counts per
// (depth, bin), dense over the tile's width for the depths that have any.
struct TrackBins {
  uint32_t width = 0;
  std::vector<std::vector<int64_t>> busy;   // [depth][bin]
  std::vector<std::vector<uint32_t>> count;
  void Add(uint32_t depth, int64_t from, int64_t to, int64_t ts, int64_t start, double bin_ns) {
    if (busy.size() <= depth) {
      busy.resize(depth + 1);
      count.resize(depth + 1);
    }
    if (busy[depth].empty()) {
      busy[depth].assign(width, 0);
      count[depth].assign(width, 0);
    }
    auto bin_of = [&](int64_t t) {
      return std::min<uint32_t>(width - 1, static_cast<uint32_t>(static_cast<double>(t - start) / bin_ns));
    };
    if (ts >= start) ++count[depth][bin_of(ts)];
    // A merged slice is shorter than a bin: it covers at most two.
    for (uint32_t b = bin_of(from); from < to; ++b) {
      const int64_t bin_end = b + 1 >= width ? to : start + static_cast<int64_t>(std::ceil((b + 1) * bin_ns));
      const int64_t upto = std::min(to, std::max(bin_end, from + 1));
      busy[depth][b] += upto - from;
      from = upto;
      if (b + 1 >= width) break;
    }
  }
};

// The window's thread instants, by the timeline page's LayOutInstants: one
// row per thread track, a thread's instants on the track of its ops
// (InstantTracks); a track with instants and no slice in the window gets an
// entry of its own (in track order).
void ComputeTileInstants(const Trace& trace, const TileIndex& index, int64_t start, int64_t end, size_t max_instants,
                         Tile* tile) {
  if (trace.instants.size() == 0) return;
  std::vector<int32_t> row_of(trace.tracks.size(), -1), rank_of;
  std::vector<uint32_t> track_of;
  for (uint32_t k = 0; k < trace.tracks.size(); ++k) {
    if (trace.tracks.kind[k] == TrackKind::kCounter) continue;
    row_of[k] = static_cast<int32_t>(track_of.size());
    track_of.push_back(k);
    rank_of.push_back(trace.tracks.rank[k]);
  }
  for (uint32_t k = 0; k < trace.tracks.size() && k < index.instant_track.size(); ++k) {
    if (index.instant_track[k] != k && row_of[index.instant_track[k]] >= 0) row_of[k] = row_of[index.instant_track[k]];
  }
  InstantLayoutOptions o;
  o.from_ns = start;
  o.to_ns = end;
  o.origin_ns = start;
  o.span_ns = end - start;
  o.overview_bins = tile->width;
  o.max_levels = 1;
  o.max_instants = max_instants;
  o.max_bins = std::numeric_limits<size_t>::max();
  o.by_time = &index.instants_by_time;
  InstantLayout l = LayOutInstants(trace, row_of, rank_of, o);
  tile->faults = l.own;
  tile->instant_count = l.total;
  tile->instant_unscoped = l.unscoped;
  tile->instants_binned = l.binned;
  tile->instant_bin_ns = l.level_ns.empty() ? 0 : l.level_ns[0];
  tile->instant_kinds = std::move(l.kinds);
  bool added = false;
  for (size_t r = 0; r < l.rows.size(); ++r) {
    if (l.rows[r].empty()) continue;
    auto it = std::find_if(tile->tracks.begin(), tile->tracks.end(), [&](const TileTrack& t) { return t.track == track_of[r]; });
    if (it == tile->tracks.end()) {
      TileTrack t;
      t.track = track_of[r];
      t.label = TrackLabel(trace, t.track, index.track_name[t.track]);
      tile->tracks.push_back(std::move(t));
      it = tile->tracks.end() - 1;
      added = true;
    }
    it->instants = std::move(l.rows[r]);
  }
  if (added) {
    std::stable_sort(tile->tracks.begin(), tile->tracks.end(),
                     [](const TileTrack& a, const TileTrack& b) { return a.track < b.track; });
  }
}

}  // namespace

Tile ComputeTile(const Trace& trace, const TileIndex& index, int64_t start_rel, int64_t end_rel, uint32_t width,
                 size_t max_instants) {
  Tile tile;
  tile.origin_ns = index.start_ns;
  const int64_t span = index.end_ns - index.start_ns;
  tile.start_ns = std::clamp<int64_t>(start_rel, 0, span);
  tile.end_ns = std::clamp<int64_t>(end_rel, tile.start_ns + 1, std::max<int64_t>(span, tile.start_ns + 1));
  tile.width = std::clamp<uint32_t>(width, 1, kMaxTileWidth);
  tile.bin_ns = static_cast<double>(tile.end_ns - tile.start_ns) / tile.width;
  const int64_t start = index.start_ns + tile.start_ns, end = index.start_ns + tile.end_ns;
  const SliceTable& s = trace.slices;
  size_t listed_total = 0;
  for (const TileIndex::TrackRange& r : index.tracks) {
    // Rows that can overlap [start, end): starting before `end` and not
    // before start - the track's longest slice (not counting its long ones).
    auto ts_at = [&](uint32_t i) { return s.ts_ns[i]; };
    uint32_t lo = r.begin, hi = r.end;
    const int64_t from_ts = start - r.max_dur_ns;
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (ts_at(mid) < from_ts) lo = mid + 1; else hi = mid;
    }
    TileTrack out;
    out.track = r.track;
    out.depth_count = r.depth_count;
    TrackBins bins;
    bins.width = tile.width;
    // The long slices first (in row order, so listed before the rest when
    // the tile is full), then the others that can overlap the window.
    auto visit = [&](uint32_t i) {
      const int64_t ts = s.ts_ns[i], slice_end = ts + s.dur_ns[i];
      if (ts >= end || (slice_end <= start && !(s.dur_ns[i] == 0 && ts >= start))) return;
      const bool starts_inside = ts >= start;
      if (static_cast<double>(s.dur_ns[i]) >= tile.bin_ns && listed_total < kMaxTileSlices) {
        out.slices.push_back(i);
        ++listed_total;
        tile.listed += starts_inside;
        return;
      }
      if (static_cast<double>(s.dur_ns[i]) >= tile.bin_ns) tile.truncated = true;
      tile.merged += starts_inside;
      bins.Add(s.depth[i], std::max(ts, start), std::min(slice_end, end), ts, start, tile.bin_ns);
    };
    for (uint32_t i : r.long_rows) visit(i);
    for (uint32_t i = lo; i < r.end && s.ts_ns[i] < end; ++i) {
      if (s.dur_ns[i] <= r.long_ns) visit(i);
    }
    for (uint32_t d = 0; d < bins.busy.size(); ++d) {
      for (uint32_t b = 0; b < bins.busy[d].size(); ++b) {
        if (bins.busy[d][b] || bins.count[d][b]) out.bins.push_back({d, b, bins.count[d][b], bins.busy[d][b]});
      }
    }
    if (out.slices.empty() && out.bins.empty()) continue;
    out.label = TrackLabel(trace, r.track, index.track_name[r.track]);
    tile.tracks.push_back(std::move(out));
  }
  tile.instant_budget = std::min(max_instants, kTileInstantsPerPixel * tile.width);
  ComputeTileInstants(trace, index, start, end, tile.instant_budget, &tile);
  auto bin_of = [&](int64_t t) {
    return std::min<uint32_t>(tile.width - 1, static_cast<uint32_t>(static_cast<double>(t - start) / tile.bin_ns));
  };
  // Counters: the value in effect at the start, then each bin's samples.
  const CounterTable& c = trace.counters;
  for (const TileIndex::CounterRange& r : index.counter_tracks) {
    const auto first = std::lower_bound(r.rows.begin(), r.rows.end(), start,
                                        [&](uint32_t row, int64_t t) { return c.ts_ns[row] < t; });
    TileCounter out;
    out.track = r.track;
    if (first != r.rows.begin()) {
      out.has_before = true;
      out.before = c.value[*(first - 1)];
    }
    for (auto it = first; it != r.rows.end() && c.ts_ns[*it] < end; ++it) {
      const uint32_t bin = bin_of(c.ts_ns[*it]);
      const double v = c.value[*it];
      if (out.bins.empty() || out.bins.back().bin != bin) out.bins.push_back({bin, 0, v, v, v});
      TileCounterBin& b = out.bins.back();
      ++b.count;
      b.min = std::min(b.min, v);
      b.max = std::max(b.max, v);
      b.last = v;
    }
    if (!out.has_before && out.bins.empty()) continue;
    out.label = TrackLabel(trace, r.track, index.track_name[r.track]);
    tile.counters.push_back(std::move(out));
  }
  // Flows whose source slice starts in the window.
  const auto from_ts = [&](uint32_t row) { return s.ts_ns[trace.flows.from_slice[row]]; };
  const auto lo = std::lower_bound(index.flows.begin(), index.flows.end(), start,
                                   [&](uint32_t row, int64_t t) { return from_ts(row) < t; });
  const auto hi = std::lower_bound(lo, index.flows.end(), end, [&](uint32_t row, int64_t t) { return from_ts(row) < t; });
  tile.flow_count = static_cast<uint64_t>(hi - lo);
  if (tile.flow_count <= kMaxTileFlows) {
    tile.flows.assign(lo, hi);
  } else {
    for (auto it = lo; it != hi; ++it) {
      const uint32_t bin = bin_of(from_ts(*it));
      if (tile.flow_bins.empty() || tile.flow_bins.back().first != bin) tile.flow_bins.emplace_back(bin, 0);
      ++tile.flow_bins.back().second;
    }
  }
  return tile;
}

std::string TileToJson(const Trace& trace, const Tile& tile) {
  std::string o = fmt::format(
      "{{\"start_ns\": {}, \"end_ns\": {}, \"width\": {}, \"bin_ns\": {:.17g}, \"listed\": {}, \"merged\": {}, "
      "\"truncated\": {}, \"tracks\": [",
      tile.start_ns, tile.end_ns, tile.width, tile.bin_ns, tile.listed, tile.merged, tile.truncated ? "true" : "false");
  const SliceTable& s = trace.slices;
  for (size_t t = 0; t < tile.tracks.size(); ++t) {
    const TileTrack& tr = tile.tracks[t];
    o += (t ? ",\n" : "\n") + fmt::format("{{\"track\": {}, \"label\": {}, \"depths\": {}, \"slices\": [", tr.track,
                                          TileJsonText(tr.label), tr.depth_count);
    for (size_t k = 0; k < tr.slices.size(); ++k) {
      const uint32_t i = tr.slices[k];
      o += fmt::format("{}{{\"ts_ns\": {}, \"dur_ns\": {}, \"depth\": {}, \"name\": {}}}", k ? ", " : "",
                       s.ts_ns[i] - tile.origin_ns, s.dur_ns[i], s.depth[i], TileJsonText(trace.Str(s.name[i])));
    }
    o += "], \"bins\": [";
    for (size_t k = 0; k < tr.bins.size(); ++k) {
      const TileBin& b = tr.bins[k];
      o += fmt::format("{}[{}, {}, {}, {}]", k ? ", " : "", b.depth, b.bin, b.count, b.busy_ns);
    }
    o += "]";
    if (!tr.instants.empty()) {
      // Per kind: each instant's time (ns from the origin), or [bin, count] pairs.
      o += ", \"instants\": [";
      for (size_t g = 0; g < tr.instants.size(); ++g) {
        const InstantGroup& ig = tr.instants[g];
        o += fmt::format("{}{{\"kind\": {}, \"total\": {}, ", g ? ", " : "", ig.kind, ig.total);
        if (!tile.instants_binned) {
          o += "\"ts_ns\": [";
          for (size_t k = 0; k < ig.shown.size(); ++k) {
            o += fmt::format("{}{}", k ? ", " : "", trace.instants.ts_ns[ig.shown[k]] - tile.origin_ns);
          }
        } else {
          o += "\"bins\": [";
          const InstantBins* ib = ig.lod.empty() ? nullptr : &ig.lod[0];
          for (size_t k = 0; ib != nullptr && k < ib->bin.size(); ++k) {
            o += fmt::format("{}[{}, {}]", k ? ", " : "", ib->bin[k], ib->count[k]);
          }
        }
        o += "]}";
      }
      o += "]";
    }
    o += "}";
  }
  o += "\n], \"counters\": [";
  auto num = [](double v) { return std::isfinite(v) ? fmt::format("{:.17g}", v) : std::string("null"); };
  for (size_t k = 0; k < tile.counters.size(); ++k) {
    const TileCounter& tc = tile.counters[k];
    o += (k ? ",\n" : "\n") + fmt::format("{{\"track\": {}, \"label\": {}, \"before\": {}, \"bins\": [", tc.track,
                                          TileJsonText(tc.label), tc.has_before ? num(tc.before) : std::string("null"));
    for (size_t j = 0; j < tc.bins.size(); ++j) {
      const TileCounterBin& b = tc.bins[j];
      o += fmt::format("{}[{}, {}, {}, {}, {}]", j ? ", " : "", b.bin, b.count, num(b.min), num(b.max), num(b.last));
    }
    o += "]}";
  }
  o += fmt::format("\n], \"flows\": {{\"count\": {}, \"listed\": [", tile.flow_count);
  for (size_t k = 0; k < tile.flows.size(); ++k) {
    const uint32_t f = tile.flows[k];
    const uint32_t a = trace.flows.from_slice[f], b = trace.flows.to_slice[f];
    o += fmt::format(
        "{}{{\"from_track\": {}, \"from_ts_ns\": {}, \"to_track\": {}, \"to_ts_ns\": {}, \"category\": {}}}",
        k ? ", " : "", s.track[a], s.ts_ns[a] - tile.origin_ns, s.track[b], s.ts_ns[b] - tile.origin_ns,
        TileJsonText(trace.Str(trace.flows.category[f])));
  }
  o += "], \"bins\": [";
  for (size_t k = 0; k < tile.flow_bins.size(); ++k) {
    o += fmt::format("{}[{}, {}]", k ? ", " : "", tile.flow_bins[k].first, tile.flow_bins[k].second);
  }
  o += "]}";
  // Instants: kinds, figures, and the run's fault metadata.
  o += fmt::format(", \"instants\": {{\"count\": {}, \"unscoped\": {}, \"binned\": {}, \"bin_ns\": {}, "
                   "\"max_listed\": {}, \"fault_period\": {}, \"fault_period_known\": {}, \"fault_cost_ns\": {}, "
                   "\"kinds\": [",
                   tile.instant_count, tile.instant_unscoped, tile.instants_binned ? "true" : "false",
                   tile.instant_bin_ns, tile.instant_budget, tile.faults.period, tile.faults.period_known ? "true" : "false",
                   tile.faults.cost_known ? num(tile.faults.cost_ns) : std::string("null"));
  for (size_t k = 0; k < tile.instant_kinds.size(); ++k) {
    const TimelineInstantKind& ik = tile.instant_kinds[k];
    o += fmt::format("{}{{\"category\": {}, \"name\": {}, \"page_fault\": {}, \"total\": {}}}", k ? ", " : "",
                     TileJsonText(trace.Str(ik.category)), TileJsonText(trace.Str(ik.name)),
                     ik.page_fault ? "true" : "false", ik.total);
  }
  o += "]}}";
  return o;
}

namespace {

constexpr int kInstantStrip = 7;  // px per strip of instants
constexpr int kSvgLabel = 220;

// A track's strips of instants: page fault records first, then the others
// (as the timeline page draws them), each the groups of its kinds.
std::vector<std::pair<bool, std::vector<const InstantGroup*>>> InstantStrips(const Tile& tile, const TileTrack& t) {
  std::vector<std::pair<bool, std::vector<const InstantGroup*>>> out;
  for (bool fault : {true, false}) {
    std::vector<const InstantGroup*> groups;
    for (const InstantGroup& g : t.instants) {
      if (tile.instant_kinds[g.kind].page_fault == fault) groups.push_back(&g);
    }
    if (!groups.empty()) out.emplace_back(fault, std::move(groups));
  }
  return out;
}

// The page's figures of `records` fault records: faults (records × the
// capture's period) and the estimated time (faults × the measured cost of a
// fault; unknown without one), as the timeline page's hover gives them.
std::string FaultFigures(const PageFaultMeta& m, uint64_t records) {
  const uint64_t faults = records * m.period;
  std::string out = fmt::format("{} page faults", faults);
  if (m.period > 1) out += fmt::format(" ({} records × {} faults each)", records, m.period);
  if (!m.cost_known) return out + "; estimated fault time unknown (no measured cost of a fault in the capture)";
  return out + "; estimated fault time ≈ " +
         render::FormatQuantity(static_cast<double>(faults) * m.cost_ns, render::Unit::kNs) +
         fmt::format(" (estimate: {} faults × {:.6g} ns, one first-touch fault measured at capture start)", faults, m.cost_ns);
}

// One strip: per pixel column with instants, a tick darker the more it
// holds (log scale), titled with its counts by kind (and fault figures).
void AppendInstantStrip(const Trace& trace, const Tile& tile, const TileTrack& t, bool fault,
                        const std::vector<const InstantGroup*>& groups, int y, std::string* o) {
  // Counts per pixel column and kind: exact times, or bins (each bin lies in
  // the column of its start; a bin is at least a column wide).
  std::vector<std::vector<uint32_t>> per(groups.size(), std::vector<uint32_t>(tile.width, 0));
  const int64_t start = tile.origin_ns + tile.start_ns;
  auto column = [&](double rel) {
    return std::min<uint32_t>(tile.width - 1, static_cast<uint32_t>(std::max(0.0, rel / tile.bin_ns)));
  };
  for (size_t g = 0; g < groups.size(); ++g) {
    const InstantGroup& ig = *groups[g];
    for (uint32_t i : ig.shown) ++per[g][column(static_cast<double>(trace.instants.ts_ns[i] - start))];
    if (!ig.lod.empty()) {
      for (size_t k = 0; k < ig.lod[0].bin.size(); ++k) {
        per[g][column(static_cast<double>(ig.lod[0].bin[k] * tile.instant_bin_ns))] += ig.lod[0].count[k];
      }
    }
  }
  uint32_t most = 1;
  std::vector<uint32_t> sum(tile.width, 0);
  for (uint32_t x = 0; x < tile.width; ++x) {
    for (const auto& c : per) sum[x] += c[x];
    most = std::max(most, sum[x]);
  }
  const char* rgb = fault ? "194,24,91" : "55,71,79";
  const double log_most = std::log1p(static_cast<double>(most));
  for (uint32_t x = 0; x < tile.width; ++x) {
    if (sum[x] == 0) continue;
    std::string title;
    uint64_t records = 0;
    for (size_t g = 0; g < groups.size(); ++g) {
      if (per[g][x] == 0) continue;
      const TimelineInstantKind& k = tile.instant_kinds[groups[g]->kind];
      if (!title.empty()) title += ", ";
      title += fault ? fmt::format("{} page fault records", per[g][x])
                     : fmt::format("{} {} ({})", per[g][x], ShownText(trace.Str(k.name), kSvgTextBytes),
                                   ShownText(trace.Str(k.category), kSvgTextBytes));
      if (k.page_fault) records += per[g][x];
    }
    if (records > 0) title += ": " + FaultFigures(tile.faults, records);
    *o += fmt::format(
        "<rect class=\"instant{}\" x=\"{}\" y=\"{}\" width=\"1\" height=\"{}\" fill=\"rgb({})\" "
        "fill-opacity=\"{:.2f}\" data-n=\"{}\"><title>{} ({})</title></rect>",
        fault ? " fault" : "", kSvgLabel + x, y, kInstantStrip - 1, rgb,
        0.3 + 0.7 * std::log1p(static_cast<double>(sum[x])) / log_most, sum[x], HtmlEscape(title), SvgText(t.label));
  }
}

}  // namespace

std::string TileToSvg(const Trace& trace, const Tile& tile) {
  constexpr int kRow = 14, kLabel = kSvgLabel, kCounterRow = 30;
  size_t rows = 0, strips = 0;
  for (const TileTrack& t : tile.tracks) rows += t.depth_count + 1, strips += InstantStrips(tile, t).size();
  const bool flow_row = !tile.flow_bins.empty();
  const int height = static_cast<int>(rows) * kRow + static_cast<int>(strips) * kInstantStrip + 24 +
                     static_cast<int>(tile.counters.size()) * (kCounterRow + kRow) + (flow_row ? 2 * kRow : 0);
  const double px = 1.0;  // one bin per pixel
  std::string o = fmt::format(
      "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-size=\"10\">",
      kLabel + tile.width, height, kLabel + tile.width, height);
  // Axis: up to 5 ticks (one per 120 px at least, so labels do not
  // overlap on a narrow tile), relative to the tile's origin.
  const int ticks = static_cast<int>(std::clamp<uint32_t>(tile.width / 120, 1, 4));
  for (int k = 0; k <= ticks; ++k) {
    const double x = kLabel + tile.width * static_cast<double>(k) / ticks;
    const double t = tile.start_ns + (tile.end_ns - tile.start_ns) * static_cast<double>(k) / ticks;
    o += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"14\" y2=\"{}\" stroke=\"#ddd\"/><text x=\"{:.1f}\" y=\"10\" "
                     "text-anchor=\"{}\">{}</text>",
                     x, x, height, x, k == 0 ? "start" : k == ticks ? "end" : "middle",
                     HtmlEscape(render::FormatQuantity(t, render::Unit::kNs)));
  }
  const SliceTable& s = trace.slices;
  const int64_t start = tile.origin_ns + tile.start_ns;
  int y = 18;
  std::vector<std::pair<uint32_t, int>> track_y;  // each drawn track's first depth row
  for (const TileTrack& t : tile.tracks) {
    o += fmt::format("<text x=\"2\" y=\"{}\" font-weight=\"bold\">{}</text>", y + 10, SvgText(t.label));
    y += kRow;
    track_y.emplace_back(t.track, y);
    for (const TileBin& b : t.bins) {
      const double share = std::min(1.0, static_cast<double>(b.busy_ns) / tile.bin_ns);
      o += fmt::format("<rect class=\"bin\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"#4c72b0\" "
                       "fill-opacity=\"{:.2f}\"><title>{} short slices, {} busy</title></rect>",
                       kLabel + b.bin * px, y + b.depth * kRow, px, kRow - 2, 0.15 + 0.85 * share, b.count,
                       HtmlEscape(render::FormatQuantity(static_cast<double>(b.busy_ns), render::Unit::kNs)));
    }
    for (uint32_t i : t.slices) {
      const double x0 = std::max(0.0, static_cast<double>(s.ts_ns[i] - start) / tile.bin_ns);
      const double x1 = std::min<double>(tile.width, static_cast<double>(s.ts_ns[i] + s.dur_ns[i] - start) / tile.bin_ns);
      const std::string name = SvgText(trace.Str(s.name[i]));
      o += fmt::format("<rect class=\"slice\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"hsl({},55%,62%)\">"
                       "<title>{} ({})</title></rect>",
                       kLabel + x0, y + s.depth[i] * kRow, std::max(0.5, x1 - x0), kRow - 2, (s.name[i].raw * 47) % 360,
                       name, HtmlEscape(render::FormatQuantity(static_cast<double>(s.dur_ns[i]), render::Unit::kNs)));
      if (x1 - x0 > 40) {
        // As much of the name as fits (about 6 px a character), cut on a UTF-8 boundary.
        const std::string_view shown = Utf8Prefix(trace.Str(s.name[i]), static_cast<size_t>((x1 - x0) / 6));
        o += fmt::format("<text x=\"{:.1f}\" y=\"{}\">{}</text>", kLabel + x0 + 2, y + s.depth[i] * kRow + 10,
                         HtmlEscape(shown));
      }
    }
    y += static_cast<int>(t.depth_count) * kRow;
    for (const auto& [fault, groups] : InstantStrips(tile, t)) {
      AppendInstantStrip(trace, tile, t, fault, groups, y, &o);
      y += kInstantStrip;
    }
  }
  auto x_of = [&](double t) { return kLabel + std::clamp((t - static_cast<double>(start)) / tile.bin_ns, 0.0, double(tile.width)); };
  // Counters: a band per track, each bin's samples from min to max, the
  // value at the start as a line from the left edge to the first sample.
  for (const TileCounter& c : tile.counters) {
    double lo = c.has_before ? c.before : std::numeric_limits<double>::infinity(), hi = c.has_before ? c.before : -lo;
    for (const TileCounterBin& b : c.bins) {
      lo = std::min(lo, b.min);
      hi = std::max(hi, b.max);
    }
    const double range = hi > lo ? hi - lo : 1.0;
    auto y_of = [&](double v) { return y + kRow + kCounterRow - 2 - (kCounterRow - 4) * (v - lo) / range; };
    o += fmt::format(
        "<text x=\"2\" y=\"{}\" font-weight=\"bold\">{}</text><text x=\"2\" y=\"{}\" class=\"note\">{} to {}</text>",
        y + 10, SvgText(c.label), y + kRow + 12, HtmlEscape(fmt::format("{:.6g}", lo)),
        HtmlEscape(fmt::format("{:.6g}", hi)));
    double prev = c.has_before ? c.before : std::nan("");
    double prev_x = kLabel;
    for (const TileCounterBin& b : c.bins) {
      const double x = kLabel + b.bin;
      if (!std::isnan(prev)) {
        o += fmt::format("<line class=\"counter\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#b05c1f\"/>",
                         prev_x, x, y_of(prev), y_of(prev));
      }
      o += fmt::format(
          "<rect class=\"counter\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"1\" height=\"{:.1f}\" fill=\"#b05c1f\">"
          "<title>{}: {} sample(s), {} to {}, last {}</title></rect>",
          x, y_of(b.max), std::max(1.0, y_of(b.min) - y_of(b.max)), SvgText(c.label), b.count,
          fmt::format("{:.6g}", b.min), fmt::format("{:.6g}", b.max), fmt::format("{:.6g}", b.last));
      prev = b.last;
      prev_x = x + 1;
    }
    if (!std::isnan(prev)) {
      o += fmt::format("<line class=\"counter\" x1=\"{:.1f}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#b05c1f\"/>", prev_x,
                       kLabel + tile.width, y_of(prev), y_of(prev));
    }
    y += kRow + kCounterRow;
  }
  // Flows: each listed one as a line between its slices' starts (where both
  // tracks are drawn), or, when there are too many, a count per bin.
  const SliceTable& sl = trace.slices;
  auto row_y = [&](uint32_t slice) -> int {
    for (const auto& [track, ty] : track_y) {
      if (track == sl.track[slice]) return ty + static_cast<int>(sl.depth[slice]) * kRow + kRow / 2;
    }
    return -1;
  };
  for (uint32_t f : tile.flows) {
    const uint32_t a = trace.flows.from_slice[f], b = trace.flows.to_slice[f];
    const int ya = row_y(a), yb = row_y(b);
    if (ya < 0 || yb < 0) continue;
    o += fmt::format(
        "<line class=\"flow\" x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#6a3d9a\" "
        "stroke-opacity=\"0.6\"><title>flow {}</title></line>",
        x_of(static_cast<double>(sl.ts_ns[a])), ya, x_of(static_cast<double>(sl.ts_ns[b])), yb,
        SvgText(trace.Str(trace.flows.category[f])));
  }
  if (flow_row) {
    uint32_t most = 1;
    for (const auto& [bin, n] : tile.flow_bins) most = std::max(most, n);
    o += fmt::format("<text x=\"2\" y=\"{}\" font-weight=\"bold\">flows ({} starting here)</text>", y + 10, tile.flow_count);
    for (const auto& [bin, n] : tile.flow_bins) {
      const double h = std::max(1.0, (2 * kRow - 4) * static_cast<double>(n) / most);
      o += fmt::format("<rect class=\"flowbin\" x=\"{}\" y=\"{:.1f}\" width=\"1\" height=\"{:.1f}\" fill=\"#6a3d9a\">"
                       "<title>{} flows</title></rect>",
                       kLabel + bin, y + 2 * kRow - 2 - h, h, n);
    }
  }
  o += "</svg>";
  return o;
}

std::pair<int64_t, int64_t> FitWindow(int64_t a, int64_t len, int64_t span) {
  span = std::max<int64_t>(span, 1);
  len = std::clamp<int64_t>(len, 1, span);
  a = std::clamp<int64_t>(a, 0, span - len);
  return {a, a + len};
}

std::string ZoomLinks(const std::string& base, int64_t start, int64_t end, int64_t span, const char* whole) {
  const int64_t len = std::max<int64_t>(1, end - start);
  auto link = [&](const char* text, int64_t a, int64_t l) {
    const auto [from, to] = FitWindow(a, l, span);
    return "<a href=\"" + base + "start=" + std::to_string(from) + "&amp;end=" + std::to_string(to) + "\">" + text +
           "</a> ";
  };
  return link("« pan", start - len / 2, len) + link("zoom in", start + len / 4, len / 2) +
         link("zoom out", start - len / 2, 2 * len) + link("pan »", start + len / 2, len) + link(whole, 0, span);
}

}  // namespace aiprof
