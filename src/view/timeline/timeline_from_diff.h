// A timeline of two runs aligned on steps (`aiprof diff A B --timeline
// OUT.html`, docs/diff.md): the steps the structural diff compares, paired in
// order, drawn one above the other on one time axis so that step k of A and
// step k of B start at the same x.
//
// Steps: each run's steady steps as the diff takes them (attribution's
// per-step rows with `steady` set: the analysis window's steps without its
// warm-up; the pseudo-step of a trace without steps), per rank, each rank's
// in time order. Step k of every rank of A and of B starts at slot k. When
// one run or rank has more steady steps, its extra steps get slots of their
// own with the other side empty ("B —").
//
// Slots: slot k starts where slot k-1 ends (slot 0 at 0) and lasts T_k =
// the longest step k of any rank of A or B. Each run's slices that overlap its step k are
// cut to the step (a slice across a step boundary becomes one piece per step
// it overlaps; nesting is kept, since a child lies in its parent) and moved
// by (slot start - step start): every piece lies in [slot start, slot start
// + the run's step duration] ⊆ the slot. Time of the run outside its steady
// steps (between them, the warm-up, before and after) is dropped; the
// figures say how much.
//
// The result is one Trace (MergeTraces of the two shifted runs), rendered by
// the timeline view's own page (timeline_html.h): rank 0 holds the slots as
// steps named "step k: A x ms, B y ms"; then one rank per source rank of A,
// then of B (rank 1 is A and rank 2 is B for single-rank runs), each with its
// own steps lane and that rank's tracks (tracks without a rank go with the
// run's first rank); process names prefixed "A: " / "B: " ("A rank 3: ").
// Names the diff paired under different names share a colour (color_as). The diff's largest changes (AttributionDiff::
// ranked) are markers on both runs: per slot, the span from the first to the
// last piece whose name is the node's name (host nodes: on the step's
// critical thread, under enclosing slices named as the node's named
// ancestors, in order; device activity: on any track; a ranked call-site
// row of an op: the op's slices at that call site). Counters and
// thread-scoped instants (e.g. `aiprof trace`'s page fault records) of the
// kept tracks are carried, shifted like slices (those in no steady step are
// dropped and counted); the page draws the instants as the timeline view
// does, each run's fault records with its own capture's period and cost
// (TimelineOptions::fault_sources). Process- and global-scoped instants,
// stack samples and slice args are not carried.
//
// Cost: one pass over each run's slices (plus a binary search of the steps
// per slice), a sort of the kept pieces per run, then the timeline model.
#ifndef AIPROF_SRC_VIEW_TIMELINE_TIMELINE_FROM_DIFF_H_
#define AIPROF_SRC_VIEW_TIMELINE_TIMELINE_FROM_DIFF_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/analysis/attribution/attribution.h"
#include "src/analysis/diff/attribution_diff.h"
#include "src/model/trace.h"
#include "src/view/timeline/timeline_model.h"

namespace aiprof {

// The merged trace's ranks: 0 the slots; A's ranks from 1 (one output rank
// per source rank with steady steps, ascending), then B's. With one rank per
// run (most traces), A is rank 1 and B rank 2.
inline constexpr int32_t kDiffTimelineSlotRank = 0;
inline constexpr int32_t kDiffTimelineRankA = 1;
inline constexpr int32_t kDiffTimelineRankB = 2;  // B's rank when A shows one rank
// Top changes marked by default.
inline constexpr size_t kDiffTimelineMarkedChanges = 5;

struct DiffTimelineStep {
  bool present = false;
  int64_t number = -1;    // N of ProfilerStep#N, -1 unknown
  int64_t start_ns = 0;   // in the run's own clock
  int64_t dur_ns = 0;
};

struct DiffTimelineSlot {
  int64_t start_ns = 0, width_ns = 0;  // on the merged trace's clock (slot 0 at 0)
  DiffTimelineStep a, b;  // the first shown rank's step k of each run
  int64_t a_longest_ns = 0, b_longest_ns = 0;  // the longest step k over each run's ranks (0: none)
};

struct DiffTimelineRun {
  int32_t rank = kNoRank;        // the first rank shown (the lowest with steady steps)
  std::vector<int32_t> ranks;    // every rank shown: those with steady steps, ascending
  std::vector<int32_t> out_ranks;  // their ranks in the merged trace, in the same order
  size_t steps = 0;              // steady steps shown (the most of any rank)
  uint64_t pieces = 0;           // slice pieces kept
  uint64_t clipped = 0;          // slices cut at a step boundary (each piece counted)
  uint64_t slices_out = 0;       // slices of the shown tracks in no steady step (dropped)
  int64_t between_ns = 0;        // time between the first steady step's start and the last's end in no step,
                                 // summed over the ranks
  uint64_t instants = 0;           // thread instants kept (in a steady step, on a kept track)
  uint64_t instants_out = 0;       // thread instants of the kept tracks in no steady step (dropped)
  uint64_t instants_unscoped = 0;  // process- or global-scoped instants of the kept tracks (not carried)
  PageFaultMeta faults;            // the run's page fault metadata (capture.page_faults.period, cost)
};

struct DiffTimeline {
  bool available = false;
  std::string problem;  // why not, when !available
  std::unique_ptr<Trace> trace;  // the merged, shifted trace (see above)
  std::vector<DiffTimelineSlot> slots;
  DiffTimelineRun a, b;
  std::vector<TimelineMarker> markers;  // on the merged trace's clock
  size_t marked_changes = 0;            // top changes with a marker on some side
  // Slice names coloured as another name (name, colour name): the pairs the
  // diff made under different names (map always; through the op and by role
  // when one to one), so a renamed pair has one colour in both runs.
  std::vector<std::pair<std::string, std::string>> color_as;
};

// `top_changes`: how many of d.ranked to mark (0: none).
DiffTimeline BuildDiffTimeline(const Trace& a, const AttributionResult& ra, const Trace& b,
                               const AttributionResult& rb, const AttributionDiff& d,
                               size_t top_changes = kDiffTimelineMarkedChanges);

// The page: the timeline view's HTML for t.trace with the slots, the markers,
// rank labels naming the runs, and a note saying what was dropped.
void AppendDiffTimelineHtml(const DiffTimeline& t, const std::string& name_a, const std::string& name_b,
                            std::string* out);

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_TIMELINE_TIMELINE_FROM_DIFF_H_
