// The layout analysis (layout conversions and dtype round trips): its
// result and its spec (src/analysis/analysis_spec.h).
#ifndef AIPROF_SRC_ANALYSIS_LAYOUT_LAYOUT_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_LAYOUT_LAYOUT_ANALYSIS_H_

#include "src/analysis/analysis_spec.h"
#include "src/analysis/layout/layout_conversions.h"
#include "src/analysis/results.h"

namespace aiprof {

extern const ResultSpec<LayoutResult> kLayout;
extern const AnalysisSpec kLayoutAnalysis;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_LAYOUT_LAYOUT_ANALYSIS_H_
