// `aiprof whatif` as a document: per scenario, the steady state's measured
// and predicted step time (median and mean, each with its interval and the
// interval's level; an `every N` scenario leads with the mean it is judged
// on), what the scenario changed, and each step. Rendered by the shared
// renderers; JSON keeps its published form (docs/whatif.md, "Output"); CSV
// is every scenario's steps in one table with a scenario column.
#ifndef AIPROF_SRC_REPORT_WHATIF_WHATIF_REPORT_H_
#define AIPROF_SRC_REPORT_WHATIF_WHATIF_REPORT_H_

#include <string_view>
#include <vector>

#include "src/analysis/whatif/whatif.h"
#include "src/render/document.h"

namespace aiprof {

// Whether the critical path's windows are whole traces, one per rank (no
// steps found), rather than steps.
bool WholeTraceWindows(const CriticalPathResult& path);

// `whole_trace`: the results were replayed on whole-trace windows
// (WholeTraceWindows of the path they replayed): every format says so.
// `source`: the input path as given, named in the title ("aiprof whatif: PATH").
render::Document WhatIfToDocument(const std::vector<WhatIfResult>& results, bool whole_trace,
                                  std::string_view source = {});

}  // namespace aiprof

#endif  // AIPROF_SRC_REPORT_WHATIF_WHATIF_REPORT_H_
