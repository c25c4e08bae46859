// The memory analysis: its results and its spec (src/analysis/analysis_spec.h).
#ifndef AIPROF_SRC_ANALYSIS_MEMORY_MEMORY_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_MEMORY_MEMORY_ANALYSIS_H_

#include <cstddef>
#include <vector>

#include "src/analysis/analysis_spec.h"
#include "src/analysis/memory/memory_peaks.h"
#include "src/analysis/memory/memory_series.h"
#include "src/analysis/results.h"

namespace aiprof {

extern const ResultSpec<MemoryResult> kMemory;
// Points of the memory series (the report's chart).
inline constexpr size_t kMemorySeriesPoints = 400;
// Each memory timeline, in at most kMemorySeriesPoints points.
extern const ResultSpec<std::vector<MemorySeries>> kMemorySeries;
extern const AnalysisSpec kMemoryAnalysis;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_MEMORY_MEMORY_ANALYSIS_H_
