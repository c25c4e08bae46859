#include "src/analysis/steps/steps_analysis.h"

#include "src/analysis/window/window_analysis.h"

namespace aiprof {
namespace {

using U = MetricUnit;

// The metrics it publishes, one a line to read as a table (docs/metrics.md
// documents each).
// clang-format off
constexpr MetricInfo kStepsMetrics[] = {
        {"step_time_cv", U::kRatio, "step time standard deviation / mean"},
        {"step_time_excess_ratio", U::kRatio,
         "(mean - typical step time) / mean: share of the step lost to slow steps (typical: the median, or the fast "
         "mode's median where most steps are slow)"},
        {"step_time_fast_mode", U::kCount,
         "1: the fastest quarter of the steps (8 or more) has a median under half the median, and is the typical step"},
        {"step_time_mean_ns", U::kNanoseconds, "mean step time, on the step time's base (step_time_device_period: 1 when it is the device's period because the device runs behind the host, 0 the host span)"},
        {"step_time_device_period", U::kCount, "1: step times are device periods (end of one step's device work to the next's; the device runs behind the host), 0: host spans"},
        {"step_time_host_mean_ns", U::kNanoseconds, "mean host span of the steps (ProfilerStep#N or annotation), whatever the step time's base"},
        {"step_time_device_period_mean_ns", U::kNanoseconds, "mean device period of the steps with one (end of the previous step's device work to the end of the step's own; a rank's first step has none)"},
        {"step_time_p99_ns", U::kNanoseconds, "99th percentile step time"},
        {"steps", U::kCount, "number of steps found"},
        {"step_time_excess_ns", U::kNanoseconds,
         "impact: mean - typical steady-state step time (the median, or the fast mode's median)"},
};
// clang-format on

void PublishStepsAnalysis(AnalysisResults& in, MetricSet* m) {
  const StepStats& r = in.Get(kSteps);
  PublishStepStats(in.trace(), r, m);
  PublishStepImpact(r, m);
}

}  // namespace

const ResultSpec<StepStats> kSteps{"steps",
                                   [](AnalysisResults& in) { return ComputeStepStats(in.trace(), &in.Get(kWindow)); }};

const ResultSpec<StepStats> kAllSteps{"steps_all", [](AnalysisResults& in) { return ComputeStepStats(in.trace()); }};

const AnalysisSpec kStepsAnalysis{"steps", PublishStepsAnalysis, nullptr, kStepsMetrics};

}  // namespace aiprof
