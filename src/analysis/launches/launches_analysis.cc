#include "src/analysis/launches/launches_analysis.h"

#include "src/analysis/window/window_analysis.h"

namespace aiprof {
namespace {

using U = MetricUnit;

// The metrics it publishes, one a line to read as a table (docs/metrics.md
// documents each).
// clang-format off
constexpr MetricInfo kLaunchesMetrics[] = {
        {"graph_capture_launch_ratio", U::kRatio, "share of the host's launch calls (kernels, copies, sets) made inside a stream capture (cudaStreamBeginCapture..EndCapture): recorded into a graph, not run; 0 without launch calls"},
        {"graph_capture_ns", U::kNanoseconds, "time inside stream capture windows (StreamBeginCapture end to StreamEndCapture start), summed over the host threads"},
        {"graph_gap_p50_ns", U::kNanoseconds, "median device gap between consecutive CUDA/HIP graph replays on a stream"},
        {"graph_kernel_ratio", U::kRatio, "share of kernels replayed by CUDA/HIP graph launches"},
        {"graph_launch_cost_ns", U::kNanoseconds, "median duration of a graph-launch call (cudaGraphLaunch, hipGraphLaunch)"},
        {"launch_delay_p50_ns", U::kNanoseconds, "median device start minus launching runtime call end, over launch calls whose work started under 100 us after the call returned (later: the device held it, not launch latency)"},
        {"launches_per_step", U::kCount, "launch calls per step (a graph launch counts once)"},
        {"op_coverage", U::kRatio, "share of device-activity time attributed to a host op (cpu_op)"},
        {"short_kernel_ratio", U::kRatio, "share of kernels shorter than the launch cost"},
};
// clang-format on

void PublishLaunchesAnalysis(AnalysisResults& in, MetricSet* m) {
  PublishLaunchStats(in.trace(), in.Get(kLaunches), m);
}

}  // namespace

const ResultSpec<LaunchStats> kLaunches{"launches", [](AnalysisResults& in) {
                                          // The stream capture windows are the window's, found once.
                                          return ComputeLaunchStats(in.trace(), &in.Get(kWindow).capture_windows);
                                        }};

const AnalysisSpec kLaunchesAnalysis{"launches", PublishLaunchesAnalysis, nullptr, kLaunchesMetrics};

}  // namespace aiprof
