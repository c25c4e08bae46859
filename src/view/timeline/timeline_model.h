// The timeline view's data: which rows the page shows, in which order, and
// what each row carries, computed once from the Trace and the analyses'
// structured results (gaps, steps, diagnosis). timeline_html.cc only writes
// this out; the page's script only draws it.
//
// Rows are grouped by rank, then layer (application, framework, runtime,
// device, communication, host, unknown), then thread or stream (by pid, tid).
//
// Level of detail. A page cannot hold every slice of a 600 MB trace, so:
//   * Full detail for at most `max_detailed_slices`: the longest ones. A
//     duration threshold T is picked from a histogram of durations (buckets
//     of a quarter power of two); a slice is detailed iff its bucket is at or
//     above T's. A child is never longer than its parent, so the detailed set
//     holds every ancestor of a detailed slice: nesting stays whole.
//   * Every other slice is merged into density bins: for each zoom level L
//     (bin width w_L = w_0 / 4^L, w_0 = span / overview_bins) and each
//     (row, depth), the sparse list of bins that merged slices touch, with the
//     number of slices starting in the bin and the time they cover inside it.
//     Counts and covered time are exact sums. Levels are kept from coarse to
//     fine while the total number of bins fits `max_density_bins`, and stop
//     at a width of T / 16 (a merged slice's outline is then 16 bins wide).
//   * Thread-scoped instants (Trace::instants with scope 't', e.g. `aiprof
//     trace`'s minor page faults: 100,000s in a capture; process- and
//     global-scoped ones are counted, not drawn) sit on their thread's row
//     and extend the span, grouped by kind
//     (category, name). All of them are kept, each as its time, while the
//     shown instants number at most `max_instants`. Over it, none is kept one
//     by one: per (row, kind), the sparse bins that hold instants, with their
//     counts (exact sums), at levels of width w_0 / 4^L (w_0 as above), kept
//     from coarse to fine while the total number of bins fits
//     `max_instant_bins`.
// Gaps, counter points and samples have their own budgets (longest gaps
// kept; counters thinned to the first/min/max/last point per fine bin;
// samples thinned by a stride), and the model says how many were left out.
//
// Linear in slices × levels (levels ≤ kMaxLodLevels), plus sorting rows.
#ifndef AIPROF_SRC_VIEW_TIMELINE_TIMELINE_MODEL_H_
#define AIPROF_SRC_VIEW_TIMELINE_TIMELINE_MODEL_H_

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/gaps/idle_gaps.h"
#include "src/analysis/page_faults/page_faults.h"
#include "src/model/trace.h"

namespace aiprof {

struct Diagnosis;
struct SliceModuleMap;

// Where page fault records' period and cost come from, for pages that show
// several captures (aiprof diff --timeline: run A's ranks and run B's): the
// fault records on rows of `ranks` stand for `meta.period` faults each and
// cost `meta.cost_ns` each; `label` names the capture in the page's text.
struct TimelineFaultSource {
  std::string label;
  std::vector<int32_t> ranks;
  PageFaultMeta meta;
};
struct StepStats;
struct LayoutResult;
struct FusionResult;

inline constexpr size_t kMaxLodLevels = 12;
// Levels stop at a bin width of threshold / kLodFinestFraction.
inline constexpr int64_t kLodFinestFraction = 16;

// Instants a page lists one by one at most (TimelineOptions::max_instants).
inline constexpr size_t kDefaultMaxInstants = 100'000;

struct TimelineOptions {
  size_t max_detailed_slices = 400'000;
  size_t max_density_bins = 1'500'000;  // over all rows, depths and levels
  size_t overview_bins = 2048;          // level-0 bins across the whole span
  size_t max_gaps = 100'000;            // longest kept
  size_t max_counter_points = 300'000;  // over all counter rows
  size_t max_samples = 300'000;
  size_t max_instants = kDefaultMaxInstants;  // instants kept one by one (over all rows)
  size_t max_instant_bins = 100'000;    // instant count bins over all rows, kinds and levels
  bool instants = true;                 // false: no instants on the page (the page as before they were drawn)
  size_t max_path_slices = 200'000;     // critical-path slices forced into full detail
  std::string title;                    // page title (the input's name)
  // Tracks to show (index = Trace track); empty shows all. Budgets apply to
  // the shown tracks; gaps, steps and findings are kept for their ranks.
  std::vector<uint8_t> track_shown;
  // Page text for callers other than `view --timeline` (aiprof diff
  // --timeline): rank_labels[r] names rank r's header ("" or past the end:
  // "rank r"); markers_label names the markers lane ("": diagnose's
  // findings); note is shown above the legend; generator is the page's
  // generator meta ("": "aiprof view --timeline").
  std::vector<std::string> rank_labels;
  std::string markers_label, note, generator;
  // Times (the trace's clock) drawn as dashed lines across every lane.
  std::vector<int64_t> boundaries_ns;
  // Slices named `first` are coloured as if named `second` (aiprof diff
  // --timeline: a pair the diff made under different names, one colour).
  std::vector<std::pair<std::string, std::string>> color_as;
  // Fault metadata per group of ranks (see TimelineFaultSource); empty: the
  // trace's own metadata for every row. With sources, instants of rows of
  // no source's ranks use the trace's own.
  std::vector<TimelineFaultSource> fault_sources;
};

// Analyses' results the view shows; any may be null.
struct TimelineInputs {
  const GapsResult* gaps = nullptr;  // computed with keep_all_gaps
  const Diagnosis* diagnosis = nullptr;
  const StepStats* steps = nullptr;
  const LayoutResult* layout = nullptr;
  const FusionResult* fusion = nullptr;
  // The critical path overlay (aiprof view --timeline --critical-path): the
  // slices on some step's path are shown in full detail (with their
  // ancestors, up to TimelineOptions::max_path_slices) and flagged, and the
  // dependencies the path follows between tracks are drawn.
  const CriticalPathResult* critical_path = nullptr;
  // Colour by module (--color-by module): each slice's module, as
  // SliceModules (src/analysis/attribution/attribution.h) gives it.
  const SliceModuleMap* slice_modules = nullptr;
};

// Merged slices of one (row, depth) at one level: sparse bins, ascending.
struct DensityBins {
  uint32_t depth = 0;
  std::vector<int64_t> bin;       // index: (ts - model start) / bin_ns
  std::vector<uint32_t> count;    // slices starting in the bin
  std::vector<int64_t> busy_ns;   // time those slices (and earlier ones spilling in) cover in the bin
};

// Instants of one kind on one row: each one's time (full detail), or count
// bins per level (TimelineModel::instant_level_ns) when over the budget.
struct InstantBins {
  std::vector<int64_t> bin;     // index: (ts - model start) / bin_ns, ascending
  std::vector<uint32_t> count;  // instants in the bin
};
struct InstantGroup {
  uint32_t kind = 0;             // index into TimelineModel::instant_kinds
  uint64_t total = 0;            // instants of this kind on the row
  std::vector<uint32_t> shown;   // rows of Trace::instants, in time order (empty when binned)
  std::vector<InstantBins> lod;  // per kept level, when binned
};

// A kind of instant: its category and name, and whether it is a minor page
// fault record of `aiprof trace` (category kPageFaultCategory). With fault
// sources (TimelineOptions::fault_sources), a kind is also per source, so
// each run's fault records are a kind of their own with its own period.
struct TimelineInstantKind {
  StringId category, name;
  bool page_fault = false;
  uint64_t total = 0;  // on the shown rows
  uint32_t source = 0;  // index into TimelineModel::fault_sources (0 without sources)
};

enum class TimelineRowKind : uint8_t { kSlices = 0, kCounter };

struct TimelineRow {
  TimelineRowKind kind = TimelineRowKind::kSlices;
  uint32_t track = kNoTrack;  // Trace track
  int32_t rank = kNoRank;
  Layer layer = Layer::kUnknown;
  std::string label;
  uint32_t depth_count = 0;          // rows of nesting (max depth + 1)
  std::vector<uint32_t> detailed;    // slice rows shown in full, in Trace order
  std::vector<int32_t> module;       // with modules: per detailed slice, its index in TimelineModules (-1: none)
  uint64_t slice_count = 0;          // all slices of the track
  // density[L] for level L (TimelineModel::level_bin_ns), one entry per depth that has merged slices.
  std::vector<std::vector<DensityBins>> density;
  std::vector<uint32_t> counter_points;  // rows of Trace::counters shown, in time order
  uint64_t counter_total = 0;
  std::vector<uint32_t> samples;     // rows of Trace::samples shown (ticks)
  uint64_t sample_total = 0;
  std::vector<InstantGroup> instants;  // by kind index, ascending
};

struct GapRow {
  int32_t rank = kNoRank;
  int32_t device = kHostDevice;  // kHostDevice: the CPU main thread
  uint32_t track = kNoTrack;     // the main thread's track (CPU-only traces)
  std::string label;
  std::vector<Gap> gaps;         // kept gaps, in time order
  uint64_t total = 0;            // all gaps of the timeline
  std::array<int64_t, kGapCauseCount> idle_by_cause_ns{};
};

// A finding of `diagnose`, placed on the timeline.
struct TimelineMarker {
  std::string rule_id, title, bottleneck, priority, confidence;
  std::string where;        // why it is here: "gap (host_bound)", "slowest step #5", ...
  std::string impact;       // "12.3% of mean step time"
  std::string search;       // representative op name to search for, or ""
  int32_t rank = kNoRank;
  int64_t ts_ns = 0, dur_ns = 0;
};

// A dependency of the critical path between two shown slices; the arrow runs
// from one end of `from` to one end of `to` (e.g. a launch: the call's start
// to the kernel's start; a sync: the kernel's end to the sync call's end).
struct TimelinePathEdge {
  uint32_t from = kNoSlice, to = kNoSlice;
  DepKind kind = DepKind::kNone;
  bool from_end = true, to_end = false;
};

// Colour by module: the modules' names (distinct, by their exclusive time:
// their slices' time outside the module slices nested in them, over the
// shown tracks; largest first).
struct TimelineModules {
  bool present = false;
  std::vector<StringId> names;
  std::vector<int64_t> self_ns;
};

// The critical path overlay's data (TimelineInputs::critical_path).
struct TimelinePath {
  bool present = false;
  std::vector<uint32_t> slices;        // slices on some step's path that are shown, ascending
  uint64_t slices_total = 0;           // on-path slices on the shown tracks
  std::vector<TimelinePathEdge> edges; // both ends shown, in the path's order
  uint64_t edges_total = 0;
  size_t steps = 0;                    // steps with a path (on the shown ranks)
  size_t window_steps = 0;             // steady steps summed below
  int64_t window_path_ns = 0;
  std::array<int64_t, kPathClassCount> window_by_class_ns{};
};

struct TimelineModel {
  int64_t start_ns = 0, end_ns = 0;  // over slices, counters, samples, steps
  int64_t detail_threshold_ns = 0;   // slices shorter than this are merged (0: none)
  uint64_t slice_count = 0, detailed_count = 0;
  std::vector<int64_t> level_bin_ns;  // bin width of each kept level, coarse to fine
  uint64_t density_bin_count = 0;
  std::vector<TimelineRow> rows;      // display order
  std::vector<GapRow> gap_rows;
  uint64_t gaps_total = 0, gaps_kept = 0;
  std::vector<uint32_t> steps;        // rows of Trace::steps
  std::vector<uint32_t> flows;        // rows of Trace::flows whose both ends are detailed
  uint64_t flows_total = 0;
  std::vector<TimelineMarker> markers;
  uint32_t sample_stride = 1;         // every sample_stride-th sample of a thread is shown
  TimelinePath path;
  TimelineModules modules;
  // Instants (TimelineOptions::instants).
  std::vector<TimelineInstantKind> instant_kinds;
  uint64_t instant_total = 0;    // on the shown rows
  uint64_t instant_hidden = 0;   // on tracks not shown (filtered out, or counter tracks)
  uint64_t instant_unscoped = 0; // process- or global-scoped ('p', 'g'): not drawn
  bool instants_binned = false;  // over max_instants: counts in bins only
  std::vector<int64_t> instant_level_ns;  // bin width of each kept level, coarse to fine (binned only)
  uint64_t instant_bin_count = 0;
  // Page fault records' metadata: faults per record (capture.page_faults.period,
  // 1 when absent or malformed) and the measured cost of one fault
  // (capture.page_fault_cost_ns; known only when a positive finite number).
  uint64_t fault_period = 1;
  bool fault_period_known = false;
  bool fault_cost_known = false;
  double fault_cost_ns = 0;
  // With TimelineOptions::fault_sources: each source's label and metadata
  // (the options' order, then the trace's own, labelled "", when some row
  // of a kind with fault records is in no source's ranks); the fields
  // above are then the first source's. Empty without sources.
  std::vector<TimelineFaultSource> fault_sources;
};

// Thread instants laid out for drawing: the one implementation behind the
// timeline page's instants (BuildTimelineModel) and `aiprof serve`'s tiles
// (src/serve/timeline_tiles.h). Thread-scoped instants with from <= ts < to
// on a track that has a row (row_of_track[track] >= 0) are grouped per row
// and kind, kinds in order of first appearance (fault records per fault
// source: the one whose ranks hold the row's rank, else the trace's own).
// While they number at most max_instants each is kept (InstantGroup::shown,
// time order); over it, none is: count bins at levels of width w_0 / 4^L
// (w_0 = ceil(span_ns / overview_bins), bin = (ts - origin_ns) / width, at
// most max_levels levels down to 1 ns), kept from coarse to fine while the
// total number of bins fits max_bins.
struct InstantLayoutOptions {
  int64_t from_ns = std::numeric_limits<int64_t>::min(), to_ns = std::numeric_limits<int64_t>::max();
  int64_t origin_ns = 0, span_ns = 1;
  size_t overview_bins = 2048;
  size_t max_levels = kMaxLodLevels;
  size_t max_instants = 100'000, max_bins = 100'000;
  std::vector<TimelineFaultSource> fault_sources;  // as TimelineOptions::fault_sources
  // When set: every instant row sorted by time (InstantsByTime); only those
  // in [from_ns, to_ns) are visited (a binary search, then the window's
  // instants) instead of the whole table. The same instants and counts;
  // kinds (and fault sources) are numbered in order of first appearance in
  // time rather than in the table.
  const std::vector<uint32_t>* by_time = nullptr;
};
// Every instant row of `trace`, sorted by time (stable). O(n log n), once per
// trace, for InstantLayoutOptions::by_time.
std::vector<uint32_t> InstantsByTime(const Trace& trace);
struct InstantLayout {
  std::vector<TimelineInstantKind> kinds;
  std::vector<std::vector<InstantGroup>> rows;  // per row, groups by kind index ascending
  uint64_t total = 0;     // kept (on rows, in range)
  uint64_t hidden = 0;    // thread-scoped, in range, on a track without a row
  uint64_t unscoped = 0;  // process- or global-scoped, in range: not laid out
  bool binned = false;
  std::vector<int64_t> level_ns;
  uint64_t bin_count = 0;
  // Without options' sources: empty (every kind's source 0 is the trace's
  // own metadata, `own`); with them: theirs, then the trace's own when a
  // fault record needed it (see TimelineModel::fault_sources).
  std::vector<TimelineFaultSource> fault_sources;
  PageFaultMeta own;  // the trace's own fault metadata
};
// The track whose row draws each track's thread instants: a thread track
// without slices hands them to the thread track of the same (pid, tid) that
// has slices (the first in layer order); every other track keeps its own.
// On an `aiprof trace` capture the page faults are recorded on the host
// thread track (where the thread's stack samples are) and the thread's ops
// on its framework track: the faults are drawn under the ops that took them.
// `has_slices[k]`: track k holds a slice. O(tracks).
std::vector<uint32_t> InstantTracks(const Trace& trace, const std::vector<uint8_t>& has_slices);

// Per track: its name, or for an unnamed thread track the name of another
// track of the same (pid, tid) (an aiprof capture names the host track from
// /proc; the framework track of the same thread has none). O(tracks).
std::vector<StringId> ThreadTrackNames(const Trace& trace);

// `rank_of_row[r]`: row r's rank (for the fault sources). O(instants) plus
// sorting each row's kept instants, plus one pass per level when binned.
InstantLayout LayOutInstants(const Trace& trace, const std::vector<int32_t>& row_of_track,
                             const std::vector<int32_t>& rank_of_row, const InstantLayoutOptions& options);

// Quarter-power-of-two bucket of a duration (monotone). Visible for testing.
int DurationBucket(int64_t dur_ns);
// The smallest duration in bucket `b`. Visible for testing.
int64_t BucketLowerBound(int bucket);

TimelineModel BuildTimelineModel(const Trace& trace, const TimelineInputs& inputs, const TimelineOptions& options);

// "process: name (tid)" for a thread; an unnamed track takes `name` (its
// ThreadTrackNames entry); each part cut after kMaxRowLabelPartBytes
// ("… (N bytes in all)"). Visible for testing.
inline constexpr size_t kMaxRowLabelPartBytes = 256;
std::string RowLabel(const Trace& trace, uint32_t track, StringId name = {});

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_TIMELINE_TIMELINE_MODEL_H_
