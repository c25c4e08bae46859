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
    for (; i < s.size() && s.track[i] == r.track; ++i) {
      r.max_dur_ns = std::max(r.max_dur_ns, s.dur_ns[i]);
      r.depth_count = std::max<uint32_t>(r.depth_count, s.depth[i] + 1u);
      index.start_ns = std::min(index.start_ns, s.ts_ns[i]);
      index.end_ns = std::max(index.end_ns, s.ts_ns[i] + s.dur_ns[i]);
    }
    r.end = i;
    index.tracks.push_back(r);
  }
  if (index.tracks.empty()) index.start_ns = index.end_ns = 0;
  return index;
}

std::string TrackLabel(const Trace& trace, uint32_t track) {
  const TrackTable& t = trace.tracks;
  std::string label;
  if (t.rank[track] != kNoRank) label = "rank " + std::to_string(t.rank[track]) + " ";
  if (!t.name[track].empty()) return label + std::string(trace.Str(t.name[track]));
  const std::string pid = t.pid_label[track].empty() ? std::to_string(t.pid[track]) : std::string(trace.Str(t.pid_label[track]));
  const std::string tid = t.tid_label[track].empty() ? std::to_string(t.tid[track]) : std::string(trace.Str(t.tid_label[track]));
  return label + (t.kind[track] == TrackKind::kDeviceStream ? "device " + pid + " stream " + tid : "pid " + pid + " tid " + tid);
}

namespace {

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

}  // namespace

Tile ComputeTile(const Trace& trace, const TileIndex& index, int64_t start_rel, int64_t end_rel, uint32_t width) {
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
    // before start - the track's longest slice.
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
    for (uint32_t i = lo; i < r.end && s.ts_ns[i] < end; ++i) {
      const int64_t ts = s.ts_ns[i], slice_end = ts + s.dur_ns[i];
      if (slice_end <= start && !(s.dur_ns[i] == 0 && ts >= start)) continue;
      const bool starts_inside = ts >= start;
      if (static_cast<double>(s.dur_ns[i]) >= tile.bin_ns && listed_total < kMaxTileSlices) {
        out.slices.push_back(i);
        ++listed_total;
        tile.listed += starts_inside;
        continue;
      }
      if (static_cast<double>(s.dur_ns[i]) >= tile.bin_ns) tile.truncated = true;
      tile.merged += starts_inside;
      bins.Add(s.depth[i], std::max(ts, start), std::min(slice_end, end), ts, start, tile.bin_ns);
    }
    for (uint32_t d = 0; d < bins.busy.size(); ++d) {
      for (uint32_t b = 0; b < bins.busy[d].size(); ++b) {
        if (bins.busy[d][b] || bins.count[d][b]) out.bins.push_back({d, b, bins.count[d][b], bins.busy[d][b]});
      }
    }
    if (out.slices.empty() && out.bins.empty()) continue;
    out.label = TrackLabel(trace, r.track);
    tile.tracks.push_back(std::move(out));
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
                                          JsonString(tr.label), tr.depth_count);
    for (size_t k = 0; k < tr.slices.size(); ++k) {
      const uint32_t i = tr.slices[k];
      o += fmt::format("{}{{\"ts_ns\": {}, \"dur_ns\": {}, \"depth\": {}, \"name\": {}}}", k ? ", " : "", s.ts_ns[i] - tile.origin_ns,
                       s.dur_ns[i], s.depth[i], JsonString(trace.Str(s.name[i])));
    }
    o += "], \"bins\": [";
    for (size_t k = 0; k < tr.bins.size(); ++k) {
      const TileBin& b = tr.bins[k];
      o += fmt::format("{}[{}, {}, {}, {}]", k ? ", " : "", b.depth, b.bin, b.count, b.busy_ns);
    }
    o += "]}";
  }
  o += "\n]}";
  return o;
}

std::string TileToSvg(const Trace& trace, const Tile& tile) {
  constexpr int kRow = 14, kLabel = 220;
  size_t rows = 0;
  for (const TileTrack& t : tile.tracks) rows += t.depth_count + 1;
  const int height = static_cast<int>(rows) * kRow + 24;
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
  for (const TileTrack& t : tile.tracks) {
    o += fmt::format("<text x=\"2\" y=\"{}\" font-weight=\"bold\">{}</text>", y + 10, HtmlEscape(t.label));
    y += kRow;
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
      const std::string name = HtmlEscape(trace.Str(s.name[i]));
      o += fmt::format("<rect class=\"slice\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"hsl({},55%,62%)\">"
                       "<title>{} ({})</title></rect>",
                       kLabel + x0, y + s.depth[i] * kRow, std::max(0.5, x1 - x0), kRow - 2, (s.name[i].raw * 47) % 360,
                       name, HtmlEscape(render::FormatQuantity(static_cast<double>(s.dur_ns[i]), render::Unit::kNs)));
      if (x1 - x0 > 40) {
        // As much of the name as fits (about 6 px a character), cut on a UTF-8 boundary.
        const std::string_view full = trace.Str(s.name[i]);
        size_t n = std::min(full.size(), static_cast<size_t>((x1 - x0) / 6));
        while (n > 0 && n < full.size() && (static_cast<unsigned char>(full[n]) & 0xC0) == 0x80) --n;
        o += fmt::format("<text x=\"{:.1f}\" y=\"{}\">{}</text>", kLabel + x0 + 2, y + s.depth[i] * kRow + 10,
                         HtmlEscape(full.substr(0, n)));
      }
    }
    y += static_cast<int>(t.depth_count) * kRow;
  }
  o += "</svg>";
  return o;
}

}  // namespace aiprof
