// `aiprof view IN --topology -o topology.html|topology.svg|topology.dot`.
#ifndef AIPROF_SRC_VIEW_TOPOLOGY_TOPOLOGY_VIEW_H_
#define AIPROF_SRC_VIEW_TOPOLOGY_TOPOLOGY_VIEW_H_

#include "src/view/view_registry.h"

namespace aiprof {

ViewSpec TopologyViewSpec();

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_TOPOLOGY_TOPOLOGY_VIEW_H_
