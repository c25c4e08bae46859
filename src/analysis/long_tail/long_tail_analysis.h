// The long-tail analysis: its result and its spec (src/analysis/analysis_spec.h).
#ifndef AIPROF_SRC_ANALYSIS_LONG_TAIL_LONG_TAIL_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_LONG_TAIL_LONG_TAIL_ANALYSIS_H_

#include "src/analysis/analysis_spec.h"
#include "src/analysis/long_tail/op_tails.h"
#include "src/analysis/results.h"

namespace aiprof {

// Steady-state instances.
extern const ResultSpec<LongTailResult> kLongTail;
extern const AnalysisSpec kLongTailAnalysis;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_LONG_TAIL_LONG_TAIL_ANALYSIS_H_
