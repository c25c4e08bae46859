#include "src/analysis/layout/layout_analysis.h"

#include "src/analysis/casts/casts_analysis.h"
#include "src/analysis/window/window_analysis.h"

namespace aiprof {
namespace {

using U = MetricUnit;

// The metrics it publishes, one a line to read as a table (docs/metrics.md
// documents each).
// clang-format off
constexpr MetricInfo kLayoutMetrics[] = {
        {"layout_conversion_count_per_step", U::kCount, "layout/format conversion ops per step"},
        {"layout_conversion_ratio", U::kRatio, "layout/format conversion time, share of device (or CPU op) time"},
        {"layout_conversion_ns", U::kNanoseconds, "impact: layout/format conversion time (union), per base"},
        {"cast_roundtrip_ns", U::kNanoseconds, "impact: time of dtype round trips (a cast and the cast straight back: op time on CPU, copy-kernel time on the device; union), per base"},
        {"cast_roundtrip_ratio", U::kRatio, "cast_roundtrip_ns, share of the base (the mean steady step)"},
        {"cast_roundtrip_count_per_step", U::kCount, "dtype round trips per base (steady steps)"},
};
// clang-format on

void PublishLayoutAnalysis(AnalysisResults& in, MetricSet* m) {
  const LayoutResult& r = in.Get(kLayout);
  const AnalysisWindow& w = in.Get(kWindow);
  PublishLayoutConversions(in.trace(), r, m);
  PublishLayoutImpact(in.trace(), r, w, m);
  PublishCastRoundtrips(in.trace(), in.Get(kCastRoundtrips), w, m);  // dtype round trips
}

}  // namespace

const ResultSpec<LayoutResult> kLayout{"layout",
                                       [](AnalysisResults& in) { return ComputeLayoutConversions(in.trace()); }};

const AnalysisSpec kLayoutAnalysis{"layout", PublishLayoutAnalysis, nullptr, kLayoutMetrics};

}  // namespace aiprof
