// The launches analysis: its result and its spec (src/analysis/analysis_spec.h).
#ifndef AIPROF_SRC_ANALYSIS_LAUNCHES_LAUNCHES_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_LAUNCHES_LAUNCHES_ANALYSIS_H_

#include "src/analysis/analysis_spec.h"
#include "src/analysis/launches/launch_stats.h"
#include "src/analysis/results.h"

namespace aiprof {

extern const ResultSpec<LaunchStats> kLaunches;
extern const AnalysisSpec kLaunchesAnalysis;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_LAUNCHES_LAUNCHES_ANALYSIS_H_
