#include "src/analysis/llm/llm_analysis.h"

#include "src/analysis/summary/summary_analysis.h"

namespace aiprof {
namespace {

using U = MetricUnit;

// The metrics it publishes, one a line to read as a table (docs/metrics.md
// documents each).
// clang-format off
constexpr MetricInfo kLlmMetrics[] = {
        {"request_itl_p99_ns", U::kNanoseconds, "99th percentile inter-token latency: gap between a request's token events over the tokens the later one brought (SDK token calls)"},
        {"request_tokens_per_s_p50", U::kPerSecond, "median over requests of output tokens / request latency (SDK token calls)"},
        {"request_tpot_p50_ns", U::kNanoseconds, "median time per output token after the first: (last token - first token) / (tokens - first event's tokens)"},
        {"request_tpot_p99_ns", U::kNanoseconds, "99th percentile time per output token after the first"},
        {"request_ttft_p50_ns", U::kNanoseconds, "median time to first token: first token event - request begin (SDK token calls)"},
        {"request_ttft_p99_ns", U::kNanoseconds, "99th percentile time to first token"},
        {"requests_with_tokens", U::kCount, "requests that recorded output tokens through the SDK"},
};
// clang-format on

// The phases publish no metrics (computed here for the section); the SDK's
// token calls give TTFT, TPOT and ITL.
void PublishLlmAnalysis(AnalysisResults& in, MetricSet* m) {
  in.Get(kLlmPhases);
  PublishRequestTokens(in.Get(kRequestTokenStats), m);
}

}  // namespace

const ResultSpec<LlmPhasesResult> kLlmPhases{"llm", [](AnalysisResults& in) { return ComputeLlmPhases(in.trace()); }};

const AnalysisSpec kLlmAnalysis{"llm", PublishLlmAnalysis, nullptr, kLlmMetrics};

}  // namespace aiprof
