#include "src/analysis/long_tail/long_tail_analysis.h"

#include "src/analysis/window/window_analysis.h"

namespace aiprof {
namespace {

using U = MetricUnit;

// The metrics it publishes, one a line to read as a table (docs/metrics.md
// documents each).
// clang-format off
constexpr MetricInfo kLongTailMetrics[] = {
        {"long_tail_time_ratio", U::kRatio, "time tail instances take beyond their op's median, share of op time"},
        {"long_tail_ratio", U::kRatio, "largest share of an op's total time spent in instances beyond 3x its median"},
        {"long_tail_excess_ns", U::kNanoseconds, "impact: top-level tail instances' time beyond their op's steady median, per base"},
};
// clang-format on

void PublishLongTailAnalysis(AnalysisResults& in, MetricSet* m) {
  const LongTailResult& r = in.Get(kLongTail);
  PublishLongTails(in.trace(), r, m);
  PublishLongTailImpact(r, in.Get(kWindow), m);
}

}  // namespace

const ResultSpec<LongTailResult> kLongTail{
    "long_tail", [](AnalysisResults& in) { return ComputeLongTails(in.trace(), &in.Get(kWindow)); }};

const AnalysisSpec kLongTailAnalysis{"long_tail", PublishLongTailAnalysis, nullptr, kLongTailMetrics};

}  // namespace aiprof
