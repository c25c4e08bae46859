#include "src/analysis/fusion/fusion_analysis.h"

#include "src/analysis/window/window_analysis.h"

namespace aiprof {
namespace {

using U = MetricUnit;

// The metrics it publishes, one a line to read as a table (docs/metrics.md
// documents each).
// clang-format off
constexpr MetricInfo kFusionMetrics[] = {
        {"fusion_candidate_ratio", U::kRatio, "time in the top fusion-candidate sequences, share of op time"},
        {"fusion_candidate_boundaries_per_step", U::kCount, "op boundaries (launches/dispatches) per step that fusing the top candidate removes"},
        {"fusion_candidate_occurrences_per_step", U::kCount, "occurrences per step of the top fusion candidate"},
        {"small_op_ratio", U::kRatio, "share of op time in ops shorter than the small-op threshold"},
        {"fusion_saving_ns", U::kNanoseconds, "impact: gaps plus op time beyond the longest op in the top fusion candidates' occurrences, each op and gap counted once, per base"},
};
// clang-format on

void PublishFusionAnalysis(AnalysisResults& in, MetricSet* m) {
  const FusionResult& r = in.Get(kFusion);
  PublishFusionCandidates(in.trace(), r, m);
  PublishFusionImpact(r, in.Get(kWindow), m);
}

}  // namespace

const ResultSpec<FusionResult> kFusion{
    "fusion", [](AnalysisResults& in) { return ComputeFusionCandidates(in.trace(), &in.Get(kWindow)); }};

const AnalysisSpec kFusionAnalysis{"fusion", PublishFusionAnalysis, nullptr, kFusionMetrics};

}  // namespace aiprof
