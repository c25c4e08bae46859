// A timeline of two runs aligned on steps, for `aiprof serve`'s compare
// page: steady step k of run A (before) drawn above steady step k of run B
// (after), both from their step's start and at the same time per pixel, so
// where B's step spends its time differently shows at the same x.
//
// Steps are aligned as the structural diff compares them
// (src/analysis/diff: attribution over the analysis window's steady
// steps): each run's timeline steps (Trace::steps, FindSteps' steps with
// starts) of its first rank, in time order, without the leading warm-up steps the analysis
// window leaves out; the k-th of A pairs with the k-th of B. Only steps and
// the tiles of the two windows are computed (no analysis), so it costs a
// pass over the steps and the window's slices, at any trace size; the
// window is the run's session's.
#ifndef AIPROF_SRC_SERVE_COMPARE_TIMELINE_H_
#define AIPROF_SRC_SERVE_COMPARE_TIMELINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/model/trace.h"
#include "src/serve/timeline_tiles.h"

namespace aiprof {

struct AnalysisWindow;

struct AlignedStep {
  int32_t rank = kNoRank;
  int64_t number = -1;  // N of ProfilerStep#N; -1 unknown
  int64_t start_ns = 0;  // the trace's clock
  int64_t dur_ns = 0;
};

// The run's steady steps with starts, on its first rank, in time order:
// Trace::steps less the window's warm-up and truncated ones (`window`:
// the run's session's, AnalysisResults::window(), computed once).
std::vector<AlignedStep> AlignableSteps(const Trace& trace, const AnalysisWindow& window);

// The part of the aligned steps shown: [start_ns, end_ns) from each step's
// start, the same for both runs (zoom and pan move it); span_ns is the
// longer step's duration, the whole view.
struct CompareWindow {
  int64_t start_ns = 0, end_ns = 0, span_ns = 0;
};
// The window [start, end) clamped to the longer step of `a` and `b`
// (end -1: to its end); nullopt when it is empty after clamping.
std::optional<CompareWindow> ClampCompareWindow(const AlignedStep& a, const AlignedStep& b, int64_t start_ns,
                                                int64_t end_ns);

// One run's side: its step and the tile of the window of that step, with
// times relative to the step's start (tile.origin_ns is the step's start).
// A step that ends before the window starts has no tile (in_window false).
struct StepTile {
  AlignedStep step;
  bool in_window = true;
  Tile tile;
};

// The tiles of `window` of step `a` of trace A and step `b` of trace B at
// one scale: the window gets `width` bins; each run's tile covers the part
// of the window its step lasts, in as many bins of the same length (at
// least 1). The default window is both steps whole (the longer one `width`
// bins wide).
std::vector<StepTile> AlignStepTiles(const Trace& trace_a, const TileIndex& index_a, const AlignedStep& a,
                                     const Trace& trace_b, const TileIndex& index_b, const AlignedStep& b,
                                     uint32_t width, std::optional<CompareWindow> window = std::nullopt);

// JSON (docs/serve.md: the compare timeline): {"step", "steps", "start_ns",
// "end_ns", "span_ns", "runs": [{"run", "step_number", "rank",
// "step_start_ns", "step_dur_ns", "tile"}, ...]} ("tile" null for a step
// that ends before the window); `ids` and `traces` in the order of `tiles`.
std::string AlignedTilesToJson(const std::vector<const Trace*>& traces, const std::vector<int64_t>& ids,
                               const std::vector<StepTile>& tiles, size_t step, size_t steps,
                               const CompareWindow& window);

// The compare page's section: heading, navigation (zoom and pan links over
// the window, previous / next step, the JSON; the element carries the data
// the page's zoom script reads: data-zoom-base, data-start, data-end,
// data-span, data-px), and each run's window drawn as SVG (ids timeline-a,
// timeline-b), every name escaped. `fix`: the page's &fix= (kept by the
// links; "" for none).
std::string AlignedTilesToHtml(const std::vector<const Trace*>& traces, const std::vector<int64_t>& ids,
                               const std::vector<StepTile>& tiles, size_t step, size_t steps,
                               const CompareWindow& window, uint32_t width, const std::string& fix = "");


}  // namespace aiprof

#endif  // AIPROF_SRC_SERVE_COMPARE_TIMELINE_H_
