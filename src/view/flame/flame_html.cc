#include "src/view/flame/flame_html.h"

namespace aiprof {

std::string FlameJson(const FrameTree& tree, const FlameDiff& diff, const ViewOptions& options) { return "{}"; }

Status WriteFlameHtml(const FrameTree& tree, const FlameDiff& diff, const ViewOptions& options, ViewSink* sink) {
  return ErrStatus("--format html: not written yet");
}

}  // namespace aiprof
