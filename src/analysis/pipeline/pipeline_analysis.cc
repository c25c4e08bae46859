#include "src/analysis/pipeline/pipeline_analysis.h"

namespace aiprof {
namespace {

using U = MetricUnit;

// The metrics it publishes, one a line to read as a table (docs/metrics.md
// documents each).
// clang-format off
constexpr MetricInfo kPipelineMetrics[] = {
        {"pipeline_top_stage_share", U::kRatio, "latency share of the slowest pipeline stage"},
};
// clang-format on

void PublishPipelineAnalysis(AnalysisResults& in, MetricSet* m) { PublishPipelineStages(in.Get(kPipeline), m); }

}  // namespace

const ResultSpec<PipelineResult> kPipeline{"pipeline",
                                           [](AnalysisResults& in) { return ComputePipelineStages(in.trace()); }};

const AnalysisSpec kPipelineAnalysis{"pipeline", PublishPipelineAnalysis, nullptr, kPipelineMetrics};

}  // namespace aiprof
