// The critical-path analysis: its result and its spec
// (src/analysis/analysis_spec.h).
#ifndef AIPROF_SRC_ANALYSIS_CRITICAL_PATH_CRITICAL_PATH_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_CRITICAL_PATH_CRITICAL_PATH_ANALYSIS_H_

#include "src/analysis/analysis_spec.h"
#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/results.h"

namespace aiprof {

// The dependency graph and each step's critical path (collectives joined
// across ranks when kCommunication finds their clocks agree).
extern const ResultSpec<CriticalPathResult> kCriticalPath;
extern const AnalysisSpec kCriticalPathAnalysis;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_CRITICAL_PATH_CRITICAL_PATH_ANALYSIS_H_
