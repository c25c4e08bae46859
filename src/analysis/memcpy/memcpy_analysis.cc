#include "src/analysis/memcpy/memcpy_analysis.h"

namespace aiprof {
namespace {

using U = MetricUnit;

// The metrics it publishes, one a line to read as a table (docs/metrics.md
// documents each).
// clang-format off
constexpr MetricInfo kMemcpyMetrics[] = {
        {"memcpy_step_ratio", U::kRatio, "memory copy time inside steps, share of total step time"},
        {"pageable_memcpy_count", U::kCount, "copies from or to pageable host memory"},
};
// clang-format on

void PublishMemcpyAnalysis(AnalysisResults& in, MetricSet* m) { PublishMemcpyStats(in.trace(), in.Get(kMemcpy), m); }

}  // namespace

const ResultSpec<MemcpyStats> kMemcpy{"memcpy", [](AnalysisResults& in) { return ComputeMemcpyStats(in.trace()); }};

const AnalysisSpec kMemcpyAnalysis{"memcpy", PublishMemcpyAnalysis, nullptr, kMemcpyMetrics};

}  // namespace aiprof
