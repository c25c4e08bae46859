#include "src/analysis/summary/summary_analysis.h"

namespace aiprof {

const ResultSpec<Summary> kSummary{
    "summary", [](AnalysisResults& in) { return ComputeSummary(in.trace(), &in.Get(kRequestTokenStats)); }};

const ResultSpec<RequestTokenStats> kRequestTokenStats{
    "request_tokens", [](AnalysisResults& in) { return ComputeRequestTokens(in.trace()); }};

}  // namespace aiprof
