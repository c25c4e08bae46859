// The flame graph as a static SVG: one <rect> and <text> per frame wider
// than 0.1 px, a <title> tooltip with self and total time and share.
#ifndef AIPROF_SRC_VIEW_FLAME_FLAME_SVG_H_
#define AIPROF_SRC_VIEW_FLAME_FLAME_SVG_H_

#include <string>

#include "src/view/flame/flame_html.h"

namespace aiprof {

std::string FlameSvg(const FrameTree& tree, const FlameDiff& diff, const ViewOptions& options);

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_FLAME_FLAME_SVG_H_
