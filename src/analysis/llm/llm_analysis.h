// The llm analysis (prefill/decode phases, request tokens): its result
// and its spec (src/analysis/analysis_spec.h).
#ifndef AIPROF_SRC_ANALYSIS_LLM_LLM_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_LLM_LLM_ANALYSIS_H_

#include "src/analysis/analysis_spec.h"
#include "src/analysis/llm/llm_phases.h"
#include "src/analysis/results.h"

namespace aiprof {

// LLM prefill/decode phases.
extern const ResultSpec<LlmPhasesResult> kLlmPhases;
extern const AnalysisSpec kLlmAnalysis;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_LLM_LLM_ANALYSIS_H_
