// `aiprof whatif` as a document: per scenario, the steady state's measured
// and predicted step time (medians, with the prediction's interval), what
// the scenario changed, and each step. Rendered by the shared renderers;
// JSON keeps its published form (docs/whatif.md, "Output").
#ifndef AIPROF_SRC_REPORT_WHATIF_WHATIF_REPORT_H_
#define AIPROF_SRC_REPORT_WHATIF_WHATIF_REPORT_H_

#include <vector>

#include "src/analysis/whatif/whatif.h"
#include "src/render/document.h"

namespace aiprof {

render::Document WhatIfToDocument(const std::vector<WhatIfResult>& results);

}  // namespace aiprof

#endif  // AIPROF_SRC_REPORT_WHATIF_WHATIF_REPORT_H_
