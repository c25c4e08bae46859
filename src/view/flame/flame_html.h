// The flame graph as one self-contained HTML page (inline CSS and JS, the
// data as JSON in a <script type="application/json"> block).
#ifndef AIPROF_SRC_VIEW_FLAME_FLAME_HTML_H_
#define AIPROF_SRC_VIEW_FLAME_FLAME_HTML_H_

#include <string>
#include <vector>

#include "src/view/flame/flame_graph.h"

namespace aiprof {

// The baseline of a differential flame graph: the baseline's tree and, for
// each frame of the shown tree, its matching baseline frame (MatchFrames).
struct FlameDiff {
  const FrameTree* baseline = nullptr;
  const std::vector<uint32_t>* match = nullptr;
};

// The frame tree as the page's JSON data (columns; '<', '>' and '&' written
// as \u escapes so the text can sit inside a <script> element).
std::string FlameJson(const FrameTree& tree, const FlameDiff& diff, const ViewOptions& options);
Status WriteFlameHtml(const FrameTree& tree, const FlameDiff& diff, const ViewOptions& options, ViewSink* sink);

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_FLAME_FLAME_HTML_H_
