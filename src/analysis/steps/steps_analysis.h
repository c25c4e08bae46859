// The steps analysis: its results and its spec (src/analysis/analysis_spec.h).
#ifndef AIPROF_SRC_ANALYSIS_STEPS_STEPS_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_STEPS_STEPS_ANALYSIS_H_

#include "src/analysis/analysis_spec.h"
#include "src/analysis/results.h"
#include "src/analysis/steps/step_stats.h"

namespace aiprof {

// Warm-up steps of the window left out.
extern const ResultSpec<StepStats> kSteps;
// Every step (charts, the timeline).
extern const ResultSpec<StepStats> kAllSteps;
extern const AnalysisSpec kStepsAnalysis;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_STEPS_STEPS_ANALYSIS_H_
