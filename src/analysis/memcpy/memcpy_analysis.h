// The memcpy analysis: its result and its spec (src/analysis/analysis_spec.h).
#ifndef AIPROF_SRC_ANALYSIS_MEMCPY_MEMCPY_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_MEMCPY_MEMCPY_ANALYSIS_H_

#include "src/analysis/analysis_spec.h"
#include "src/analysis/memcpy/memcpy_stats.h"
#include "src/analysis/results.h"

namespace aiprof {

extern const ResultSpec<MemcpyStats> kMemcpy;
extern const AnalysisSpec kMemcpyAnalysis;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_MEMCPY_MEMCPY_ANALYSIS_H_
