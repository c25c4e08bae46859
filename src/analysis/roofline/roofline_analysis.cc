#include "src/analysis/roofline/roofline_analysis.h"

namespace aiprof {
namespace {

using U = MetricUnit;

// The metrics it publishes, one a line to read as a table (docs/metrics.md
// documents each).
// clang-format off
constexpr MetricInfo kRooflineMetrics[] = {
        {"memory_bandwidth_util", U::kRatio, "achieved bytes/s over the device peak, time-weighted over ops"},
        {"memory_bound_time_ratio", U::kRatio, "time in memory-bound ops, share of op time with a roofline"},
        {"compute_util", U::kRatio, "achieved FLOP/s over the device peak, time-weighted over ops"},
};
// clang-format on

RooflineRun ComputeRooflineRun(AnalysisResults& in) {
  RooflineRun r;
  r.device = ResolveDevice(in.trace(), in.options().device, in.options().devices_file, &r.problem);
  r.result = ComputeRoofline(in.trace(), r.device ? &*r.device : nullptr);
  return r;
}

void PublishRooflineAnalysis(AnalysisResults& in, MetricSet* m) {
  const RooflineRun& r = in.Get(kRoofline);
  PublishRoofline(r.result, r.problem, m);
}

}  // namespace

const ResultSpec<RooflineRun> kRoofline{"roofline", ComputeRooflineRun};

const AnalysisSpec kRooflineAnalysis{"roofline", PublishRooflineAnalysis, nullptr, kRooflineMetrics};

}  // namespace aiprof
