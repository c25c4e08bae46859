// The structural diff of two runs (src/analysis/diff) as a differential
// flame graph: the aligned tree written by the flame view's own page
// (flame_html.h; no second renderer), B's tree shown and coloured by each
// frame's change against its aligned A frame. The alignment is the diff's
// (names, the user's name map, kernels matched through the op that launched
// them, roles), not the flame view's match by path names, so `aiprof diff
// --flame` and the diff's tables agree node for node.
//
// Time bases (per steady step, as the diff's):
//   kHost    host wall time on the step's critical thread: every node but
//            device activity (which runs beside it, not in it);
//   kDevice  device time launched by each node and its subtree, device
//            activity as the leaves (where an H100 and an MI300 run differ).
// A frame's self time is its total minus its children's (never below 0).
// Nodes of A that B lacks (removed) are the page's "missing" frames.
#ifndef AIPROF_SRC_VIEW_FLAME_FLAME_FROM_DIFF_H_
#define AIPROF_SRC_VIEW_FLAME_FLAME_FROM_DIFF_H_

#include <string>
#include <vector>

#include "src/analysis/diff/attribution_diff.h"
#include "src/view/flame/flame_graph.h"
#include "src/view/view_sink.h"

namespace aiprof {

enum class DiffFlameBase : uint8_t { kHost = 0, kDevice };

struct DiffFlame {
  FrameTree shown;     // run B
  FrameTree baseline;  // run A
  std::vector<uint32_t> match;  // per shown frame: its baseline frame, or kNoFrame (added)
  std::vector<uint32_t> node_of_shown;  // per shown frame: the diff node
};

// Both trees from the aligned diff `d` of (a, ra) → (b, rb).
DiffFlame BuildDiffFlame(const Trace& a, const AttributionResult& ra, const Trace& b, const AttributionResult& rb,
                         const AttributionDiff& d, DiffFlameBase base);

// The flame view's HTML page of `flame`; `title_a`/`title_b` name the runs.
Status WriteDiffFlameHtml(const DiffFlame& flame, const std::string& title_a, const std::string& title_b,
                          ViewSink* sink);

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_FLAME_FLAME_FROM_DIFF_H_
