#include "src/view/flame/flame_svg.h"

namespace aiprof {

std::string FlameSvg(const FrameTree& tree, const FlameDiff& diff, const ViewOptions& options) {
  return "";  // WIP: not written yet
}

}  // namespace aiprof
