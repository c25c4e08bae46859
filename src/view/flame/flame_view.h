// aiprof view --flame: the flame graph as a self-contained HTML page, a
// static SVG, folded stacks or a speedscope file (src/view/flame/).
#ifndef AIPROF_SRC_VIEW_FLAME_FLAME_VIEW_H_
#define AIPROF_SRC_VIEW_FLAME_FLAME_VIEW_H_

#include "src/view/view_registry.h"

namespace aiprof {

ViewSpec FlameViewSpec();

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_FLAME_FLAME_VIEW_H_
