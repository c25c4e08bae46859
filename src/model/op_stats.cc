#include "src/model/op_stats.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "src/base/quantile.h"
#include "src/model/graph_capture_tracks.h"

namespace aiprof {

namespace {

// Tracks whose slices the op statistics leave out (graph-capture copies);
// empty when there are none.
std::vector<uint8_t> SkippedTracks(const Trace& trace) {
  std::vector<uint8_t> skip(trace.tracks.size(), 0);
  bool any = false;
  for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
    skip[t] = IsGraphCaptureTrack(trace, t);
    any |= skip[t] != 0;
  }
  if (!any) skip.clear();
  return skip;
}

}  // namespace

uint64_t OpStatsCountedSlices(const Trace& trace) {
  const std::vector<uint8_t> skip_track = SkippedTracks(trace);
  if (skip_track.empty()) return trace.slices.size();
  const SliceTable& s = trace.slices;
  uint64_t counted = 0;
  for (size_t b = 0; b < s.track.block_count(); ++b) {
    const TrackId* tracks = s.track.block(b);
    for (size_t k = 0; k < s.track.block_items(b); ++k) counted += skip_track[tracks[k]] == 0;
  }
  return counted;
}

OpStatTable ComputeOpStats(const Trace& trace) {
  const SliceTable& s = trace.slices;
  constexpr uint32_t kNone = UINT32_MAX;
  struct Group {
    StringId category, name;
    uint32_t next;  // next group with the same name
    uint64_t count;
    __int128 total;
    int64_t max;
  };
  std::vector<uint32_t> head(trace.strings.size(), kNone);
  std::vector<Group> groups;
  auto find_group = [&](StringId name, StringId cat) {
    uint32_t g = head[name.raw];
    while (g != kNone && groups[g].category != cat) g = groups[g].next;
    return g;
  };
  // Graph-capture copies are not counted (see the header).
  const std::vector<uint8_t> skip_track = SkippedTracks(trace);
  const bool any_skipped = !skip_track.empty();
  for (size_t b = 0; b < s.name.block_count(); ++b) {
    const StringId* names = s.name.block(b);
    const StringId* cats = s.category.block(b);
    const int64_t* durs = s.dur_ns.block(b);
    const TrackId* tracks = s.track.block(b);
    for (size_t k = 0; k < s.name.block_items(b); ++k) {
      if (any_skipped && skip_track[tracks[k]]) continue;
      StringId name = names[k], cat = cats[k];
      uint32_t g = find_group(name, cat);
      if (g == kNone) {
        g = static_cast<uint32_t>(groups.size());
        groups.push_back({cat, name, head[name.raw], 0, 0, std::numeric_limits<int64_t>::min()});
        head[name.raw] = g;
      }
      Group& gr = groups[g];
      ++gr.count;
      gr.total += durs[k];
      gr.max = std::max(gr.max, durs[k]);
    }
  }
  std::vector<uint64_t> start(groups.size() + 1, 0);
  for (size_t g = 0; g < groups.size(); ++g) start[g + 1] = start[g] + groups[g].count;
  // The durations grouped by op, for the percentiles. Each slice's group is
  // looked up again rather than kept from the pass above: a group per slice
  // was 4 bytes per slice more at the peak of writing a .aiprof file.
  std::vector<int64_t> durs(start.back());
  {
    std::vector<uint64_t> fill(start.begin(), start.end() - 1);
    for (size_t b = 0; b < s.name.block_count(); ++b) {
      const StringId* names = s.name.block(b);
      const StringId* cats = s.category.block(b);
      const int64_t* block_durs = s.dur_ns.block(b);
      const TrackId* tracks = s.track.block(b);
      for (size_t k = 0; k < s.name.block_items(b); ++k) {
        if (any_skipped && skip_track[tracks[k]]) continue;
        durs[fill[find_group(names[k], cats[k])]++] = block_durs[k];
      }
    }
  }
  OpStatTable out;
  for (size_t g = 0; g < groups.size(); ++g) {
    const Group& gr = groups[g];
    int64_t* d = durs.data() + start[g];
    out.category.push_back(gr.category);
    out.name.push_back(gr.name);
    out.count.push_back(gr.count);
    __int128 cap = std::numeric_limits<int64_t>::max();
    out.total_ns.push_back(static_cast<int64_t>(std::min(gr.total, cap)));
    out.max_ns.push_back(gr.max);
    out.p50_ns.push_back(QuantileSelect(d, gr.count, 0.5));
    out.p99_ns.push_back(QuantileSelect(d, gr.count, 0.99));
  }
  return out;
}

}  // namespace aiprof
