// Timeline tiles for `aiprof serve`: the part of a run's timeline between
// two times, at the detail a given width in pixels can show, computed by
// the server from the run's native file, so the browser never holds the
// whole trace and a multi-GB trace pans like a small one.
//
// Level of detail for a tile of W bins of width b = (end - start) / W:
//   * a slice at least one bin long is listed on its own (at most
//     kMaxTileSlices per tile, longest tracks' order kept; past that the
//     rest are binned and the tile says it is truncated);
//   * every shorter slice is merged into its (track, depth)'s bins: the
//     number of slices starting in the bin and the time they cover inside
//     it (a slice spills into the next bin by its overhang);
//   * counters: per counter track, the value in effect when the window
//     starts and, per bin with samples, their count, min, max and last
//     value (at a zoom where a bin holds one sample, every sample);
//   * flows (launch -> kernel, correlation, fwd/bwd) whose source slice
//     starts in the window: each listed (both ends) while there are at most
//     kMaxTileFlows, else counted per bin of their source's start.
//   * thread-scoped instants (e.g. `aiprof trace`'s page fault records) on
//     the thread's track, by kind, laid out by the timeline page's own code
//     (LayOutInstants, src/view/timeline/timeline_model.h): each instant's
//     time while the window holds at most kMaxTileInstants, else per (track,
//     kind) the count in each bin of ceil(window / W) ns from the window's
//     start (exact counts, at most W bins a kind). Fault records carry the
//     run's capture.page_faults.period and cost (the figures of the tile).
// Counts and covered times are exact: over a tile, listed slices plus bin
// counts are the slices starting inside it, and covered time is the sum of
// the slices' durations clipped to it (timeline_tiles_test.cc checks both
// against a brute-force pass on real traces).
//
// Cost: O(log n) per track to find the window, then linear in the slices
// that overlap it (plus those starting up to the track's longest slice
// before it, not counting the few longer than a 16th of the track's time,
// which are visited apart); instants: one pass over the instant table (the
// window's sorted per track and kind).
#ifndef AIPROF_SRC_SERVE_TIMELINE_TILES_H_
#define AIPROF_SRC_SERVE_TIMELINE_TILES_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "src/model/trace.h"
#include "src/view/timeline/timeline_model.h"

namespace aiprof {

inline constexpr uint32_t kMaxTileWidth = 4000;
inline constexpr size_t kMaxTileSlices = 20000;
inline constexpr size_t kMaxTileFlows = 2000;
// Instants listed one by one in a tile at most (the timeline page's budget,
// TimelineOptions::max_instants); over it, counted in bins.
inline constexpr size_t kMaxTileInstants = kDefaultMaxInstants;
// ... and at most this many per pixel column of the tile: the SVG draws one
// tick per column, so more listed times only grow the tile (a whole-run
// tile of a 77,000-fault capture was 959 KB of JSON); zooming in lists them.
inline constexpr size_t kTileInstantsPerPixel = 16;

// Per-track ranges of a trace's slices, built once per run (O(slices)).
struct TileIndex {
  int64_t start_ns = 0, end_ns = 0;  // over all slices and thread instants (absolute, the trace's clock)
  struct TrackRange {
    uint32_t track = 0;
    uint32_t begin = 0, end = 0;  // slice rows
    // Slices longer than a 16th of the track's time (a few per depth, e.g.
    // a profiler span over the whole run) are kept apart, so a window is
    // found from the longest of the others, not from the whole run.
    int64_t long_ns = 0;
    std::vector<uint32_t> long_rows;
    int64_t max_dur_ns = 0;  // of the other slices
    uint32_t depth_count = 0;
  };
  std::vector<TrackRange> tracks;  // slice tracks, in track order
  struct CounterRange {
    uint32_t track = 0;
    std::vector<uint32_t> rows;  // counter rows by time
  };
  std::vector<CounterRange> counter_tracks;  // in track order
  std::vector<uint32_t> flows;               // flow rows by their source slice's start
  std::vector<uint32_t> instant_track;       // per track: whose entry draws its thread instants (InstantTracks)
  std::vector<StringId> track_name;          // per track: its name for TrackLabel (ThreadTrackNames)
  std::vector<uint32_t> instants_by_time;    // instant rows by time (InstantsByTime): a tile visits its window's
};
TileIndex BuildTileIndex(const Trace& trace);

struct TileBin {
  uint32_t depth = 0;
  uint32_t bin = 0;
  uint32_t count = 0;    // slices starting in the bin
  int64_t busy_ns = 0;   // time merged slices cover inside the bin
};

struct TileTrack {
  uint32_t track = 0;
  std::string label;
  uint32_t depth_count = 0;
  std::vector<uint32_t> slices;  // rows listed on their own
  std::vector<TileBin> bins;     // by depth, then bin
  // Thread instants in the window, by kind (Tile::instant_kinds): each one's
  // row of Trace::instants (InstantGroup::shown), or, binned, lod[0]: bins
  // of Tile::instant_bin_ns from the window's start.
  std::vector<InstantGroup> instants;
};

struct TileCounterBin {
  uint32_t bin = 0;
  uint32_t count = 0;  // samples in the bin
  double min = 0, max = 0, last = 0;
};

struct TileCounter {
  uint32_t track = 0;
  std::string label;
  bool has_before = false;  // a sample before the window: its value holds at the start
  double before = 0;
  std::vector<TileCounterBin> bins;  // bins with samples, in order
};

struct Tile {
  int64_t origin_ns = 0;             // TileIndex::start_ns: the trace's first slice or thread instant (its clock)
  int64_t start_ns = 0, end_ns = 0;  // relative to origin_ns, as are the listed slices' times in JSON
  uint32_t width = 0;
  double bin_ns = 0;
  std::vector<TileTrack> tracks;     // tracks with something in the window
  uint64_t listed = 0, merged = 0;   // slices starting in the window: on their own, in bins
  bool truncated = false;            // kMaxTileSlices reached
  std::vector<TileCounter> counters;  // counter tracks with a value in the window
  uint64_t flow_count = 0;            // flows whose source slice starts in the window
  std::vector<uint32_t> flows;        // those flows' rows, when at most kMaxTileFlows
  std::vector<std::pair<uint32_t, uint32_t>> flow_bins;  // else (bin, flows starting in it)
  std::vector<TimelineInstantKind> instant_kinds;  // kinds of the window's thread instants
  uint64_t instant_count = 0;     // thread instants in the window (on their tracks)
  uint64_t instant_unscoped = 0;  // process- or global-scoped instants in the window (not drawn)
  bool instants_binned = false;   // over kMaxTileInstants: counts per bin only
  int64_t instant_bin_ns = 0;     // binned: the bins' width
  size_t instant_budget = 0;      // instants listed one by one at most in this tile
  PageFaultMeta faults;           // the run's fault records' period and cost
};

// The tile [start_ns, end_ns) (relative to the trace's first slice or thread instant; clamped
// to it) at `width` bins (1..kMaxTileWidth); instants listed one by one up
// to min(`max_instants` (a parameter for tests), kTileInstantsPerPixel x
// width), else binned.
Tile ComputeTile(const Trace& trace, const TileIndex& index, int64_t start_ns, int64_t end_ns, uint32_t width,
                 size_t max_instants = kMaxTileInstants);
// A track's row name: "rank R " + thread or stream name (`name`: the
// track's, or its thread's from another track, TileIndex::track_name; else
// pid/tid).
std::string TrackLabel(const Trace& trace, uint32_t track, StringId name);
// JSON (docs/serve.md: the timeline tile).
std::string TileToJson(const Trace& trace, const Tile& tile);
// An SVG drawing of the tile; every name escaped.
std::string TileToSvg(const Trace& trace, const Tile& tile);

// Zoom and pan links over [start, end) of [0, span) (the run and compare
// timelines): "« pan", "zoom in", "zoom out", "pan »", then `whole` for the
// whole span; each link is `base` + "start=A&amp;end=B" (base HTML-escaped,
// ending in '?' or '&amp;'). Windows keep their length when panned against
// an end and never leave [0, span).
std::string ZoomLinks(const std::string& base, int64_t start, int64_t end, int64_t span, const char* whole);
// [a, a + len) moved (not shrunk) into [0, span), len at least 1 and at most span.
std::pair<int64_t, int64_t> FitWindow(int64_t a, int64_t len, int64_t span);

}  // namespace aiprof

#endif  // AIPROF_SRC_SERVE_TIMELINE_TILES_H_
