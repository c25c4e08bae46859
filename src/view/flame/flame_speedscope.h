// speedscope's file format (https://www.speedscope.app/file-format-schema.json):
// one profile per selected thread; an "evented" profile (open/close events at
// the slices' times, in ns) when the stacks come from span nesting, a
// "sampled" one (a stack and weight per sample) when they come from stack
// samples. Frames are shared across profiles, one per distinct name.
#ifndef AIPROF_SRC_VIEW_FLAME_FLAME_SPEEDSCOPE_H_
#define AIPROF_SRC_VIEW_FLAME_FLAME_SPEEDSCOPE_H_

#include "src/base/status.h"
#include "src/view/view_registry.h"

namespace aiprof {

struct Trace;

Status WriteSpeedscope(const Trace& trace, const ViewOptions& options, ViewSink* sink);

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_FLAME_FLAME_SPEEDSCOPE_H_
