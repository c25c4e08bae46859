// The attribution tree (src/analysis/attribution) as a document: the step's
// wall time by class, the module table (per module path: instances, total
// and self host time, device time, all per step) and the tree itself, which
// HTML shows as nested collapsible <details> and the other formats as an
// indented table. `aiprof report` embeds it; every format renders it.
#ifndef AIPROF_SRC_REPORT_ATTRIBUTION_ATTRIBUTION_REPORT_H_
#define AIPROF_SRC_REPORT_ATTRIBUTION_ATTRIBUTION_REPORT_H_

#include <cstddef>

#include "src/analysis/attribution/attribution.h"
#include "src/render/document.h"

namespace aiprof {

// Rows of the module table and nodes of the tree shown (the largest first);
// nodes under 0.5% of the step's host and device time are left out: under
// each parent one "other (N nodes under 0.5% of the step each)" row holds
// their count and time, so a parent's self time and its rows add up to its
// total. Beyond kAttributionTreeNodes nodes the table's note says how many
// more were not shown.
inline constexpr size_t kAttributionModuleRows = 40;
inline constexpr size_t kAttributionTreeNodes = 400;
inline constexpr double kAttributionTreeMinShare = 0.005;

render::Document AttributionToDocument(const Trace& trace, const AttributionResult& result);

}  // namespace aiprof

#endif  // AIPROF_SRC_REPORT_ATTRIBUTION_ATTRIBUTION_REPORT_H_
