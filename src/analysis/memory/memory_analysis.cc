#include "src/analysis/memory/memory_analysis.h"

namespace aiprof {
namespace {

using U = MetricUnit;

// The metrics it publishes, one a line to read as a table (docs/metrics.md
// documents each).
// clang-format off
constexpr MetricInfo kMemoryMetrics[] = {
        {"memory_peak_allocated_bytes", U::kBytes, "peak allocated memory"},
        {"memory_peak_reserved_bytes", U::kBytes, "peak reserved memory"},
        {"memory_peak_util", U::kRatio, "peak reserved (or allocated) memory over device memory capacity"},
};
// clang-format on

void PublishMemoryAnalysis(AnalysisResults& in, MetricSet* m) { PublishMemoryPeaks(in.trace(), in.Get(kMemory), m); }

}  // namespace

const ResultSpec<MemoryResult> kMemory{"memory", [](AnalysisResults& in) { return ComputeMemoryPeaks(in.trace()); }};

const ResultSpec<std::vector<MemorySeries>> kMemorySeries{
    "memory_series", [](AnalysisResults& in) { return ComputeMemorySeries(in.trace(), kMemorySeriesPoints); }};

const AnalysisSpec kMemoryAnalysis{"memory", PublishMemoryAnalysis, nullptr, kMemoryMetrics};

}  // namespace aiprof
