// The fusion analysis: its result and its spec (src/analysis/analysis_spec.h).
#ifndef AIPROF_SRC_ANALYSIS_FUSION_FUSION_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_FUSION_FUSION_ANALYSIS_H_

#include "src/analysis/analysis_spec.h"
#include "src/analysis/fusion/fusion_candidates.h"
#include "src/analysis/results.h"

namespace aiprof {

// Fusion candidates, with the window's savings.
extern const ResultSpec<FusionResult> kFusion;
extern const AnalysisSpec kFusionAnalysis;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_FUSION_FUSION_ANALYSIS_H_
