// The trace summary and the SDK's request tokens, as results of the
// session (src/analysis/results.h).
#ifndef AIPROF_SRC_ANALYSIS_SUMMARY_SUMMARY_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_SUMMARY_SUMMARY_ANALYSIS_H_

#include "src/analysis/results.h"
#include "src/analysis/summary/request_tokens.h"
#include "src/analysis/summary/summary.h"

namespace aiprof {

extern const ResultSpec<Summary> kSummary;
// TTFT, TPOT and ITL from the SDK's token calls (published by the llm analysis).
extern const ResultSpec<RequestTokenStats> kRequestTokenStats;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_SUMMARY_SUMMARY_ANALYSIS_H_
