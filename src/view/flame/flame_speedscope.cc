#include "src/view/flame/flame_speedscope.h"

namespace aiprof {

Status WriteSpeedscope(const Trace& trace, const ViewOptions& options, ViewSink* sink) {
  return ErrStatus("--format speedscope: not written yet");
}

}  // namespace aiprof
