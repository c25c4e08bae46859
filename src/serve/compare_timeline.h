// A timeline of two runs aligned on steps, for `aiprof serve`'s compare
// page: steady step k of run A (before) drawn above steady step k of run B
// (after), both from their step's start and at the same time per pixel, so
// where B's step spends its time differently shows at the same x.
//
// Steps are aligned as the structural diff compares them
// (src/analysis/diff: attribution over the analysis window's steady
// steps): each run's steps (FindSteps) of its first rank that has step
// starts, in time order, without the leading warm-up steps the analysis
// window leaves out; the k-th of A pairs with the k-th of B. Only steps and
// the tiles of the two windows are computed (no analysis), so it costs a
// pass over the steps and the window's slices, at any trace size.
#ifndef AIPROF_SRC_SERVE_COMPARE_TIMELINE_H_
#define AIPROF_SRC_SERVE_COMPARE_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "src/model/trace.h"
#include "src/serve/timeline_tiles.h"

namespace aiprof {

struct AlignedStep {
  int32_t rank = kNoRank;
  int64_t number = -1;  // N of ProfilerStep#N; -1 unknown
  int64_t start_ns = 0;  // the trace's clock
  int64_t dur_ns = 0;
};

// The run's steady steps with starts, on its first rank, in time order.
std::vector<AlignedStep> AlignableSteps(const Trace& trace);

// One run's side: its step and the tile of that step, with times relative
// to the step's start (tile.origin_ns is the step's start).
struct StepTile {
  AlignedStep step;
  Tile tile;
};

// The tiles of step `a` of trace A and step `b` of trace B at one scale: the
// longer step gets `width` bins, the shorter as many of the same length as
// it covers (at least 1).
std::vector<StepTile> AlignStepTiles(const Trace& trace_a, const TileIndex& index_a, const AlignedStep& a,
                                     const Trace& trace_b, const TileIndex& index_b, const AlignedStep& b,
                                     uint32_t width);

// JSON (docs/serve.md: the compare timeline): {"step", "steps",
// "runs": [{"run", "step_number", "rank", "step_start_ns", "step_dur_ns",
// "tile"}, ...]}; `ids` and `traces` in the order of `tiles`.
std::string AlignedTilesToJson(const std::vector<const Trace*>& traces, const std::vector<int64_t>& ids,
                               const std::vector<StepTile>& tiles, size_t step, size_t steps);

// The compare page's section: heading, navigation (previous / next step,
// the JSON), and each run's step drawn as SVG (ids timeline-a, timeline-b),
// every name escaped.
std::string AlignedTilesToHtml(const std::vector<const Trace*>& traces, const std::vector<int64_t>& ids,
                               const std::vector<StepTile>& tiles, size_t step, size_t steps);

}  // namespace aiprof

#endif  // AIPROF_SRC_SERVE_COMPARE_TIMELINE_H_
