// The breakdown analysis (busy time by class and idle gaps): its results
// and its spec (src/analysis/analysis_spec.h).
#ifndef AIPROF_SRC_ANALYSIS_GAPS_GAPS_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_GAPS_GAPS_ANALYSIS_H_

#include "src/analysis/analysis_spec.h"
#include "src/analysis/gaps/idle_gaps.h"
#include "src/analysis/results.h"

namespace aiprof {

// Breakdown and idle gaps, with the window's figures (and every gap when
// AnalyzeOptions::keep_all_gaps).
extern const ResultSpec<GapsResult> kGaps;
// The same with every gap kept: kGaps itself when keep_all_gaps was set
// (front ends that draw gaps set it, so the gaps are computed once).
extern const ResultSpec<GapsResult> kAllGaps;
extern const AnalysisSpec kBreakdownAnalysis;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_GAPS_GAPS_ANALYSIS_H_
