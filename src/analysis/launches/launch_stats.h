// Launches: how many kernel/task launches, how long each waits to start, and
// kernels too short to be worth their launch.
//
// A launch is a runtime/driver call linked (Trace::flows) to a kernel or
// collective. Statistics are per launch call: a graph launch
// (cudaGraphLaunch, hipGraphLaunch, cuGraphLaunch) that replays N kernels
// counts once, with its own duration. launches_per_step counts launch calls
// starting inside a step, divided by the number of steps; kernels_in_steps
// counts the kernels those calls launched (all a graph launch replays).
// Launch delay = start of the call's first kernel − call end (can be negative
// when the device starts before the call returns), over the calls whose
// first kernel started less than kMinLaunchHoldNs (launch_hold.h, 100 us)
// after the call returned; a later start is the device holding the work
// (queued behind earlier work: TraceLens's vLLM decode replay, 5 of 5 calls
// 6.4-16.7 ms), not launch latency, and such calls are counted apart as
// held (held_calls, their median and longest wait). Launch cost = median duration of
// the calls that launch kernels one by one (graph launches have their own,
// graph_launch_cost_ns); a kernel launched one by one is short when its
// duration is below that cost — a kernel replayed by a graph pays no launch
// of its own and is never short. Graph gaps: device time between the last
// kernel of one graph replay and the first of the next on the same stream.
// Op coverage: the share of device-activity time (kernels, copies, sets,
// collectives) whose launching call or launching flow lies under a host op
// (cpu_op); graph-replayed kernels are covered only through a flow from an
// op or through their captured launch call once a graph capture trace is
// merged (src/importers/graph_capture/), never by the op enclosing the graph
// launch.
// Runtime-call outliers: host runtime calls longer than kRuntimeOutlierFactor
// × the median of calls with the same name (names with at least
// kRuntimeOutlierMinCount calls); the copies on graph-capture tracks
// (IsGraphCaptureTrack) are no host calls and are left out, as in the op
// statistics.
#ifndef AIPROF_SRC_ANALYSIS_LAUNCHES_LAUNCH_STATS_H_
#define AIPROF_SRC_ANALYSIS_LAUNCHES_LAUNCH_STATS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "src/analysis/common/capture_windows.h"
#include "src/model/trace.h"

namespace aiprof {

class MetricSet;

inline constexpr double kRuntimeOutlierFactor = 10.0;
inline constexpr uint64_t kRuntimeOutlierMinCount = 5;
inline constexpr size_t kRuntimeOutliersReported = 5;

struct RuntimeOutlier {
  uint32_t slice = kNoSlice;
  double median_ns = 0;  // of calls with its name
};

struct LaunchStats {
  bool host_ops = false;         // the trace holds host ops (cpu_op): op coverage can be measured
  uint64_t kernels = 0;          // kernels + collectives
  uint64_t launches = 0;         // of those, linked to a launching call
  uint64_t launch_calls = 0;     // distinct launching calls (a graph launch once)
  uint64_t launch_calls_in_steps = 0;         // launch calls starting inside a step (launches_per_step)
  uint64_t kernels_in_steps = 0;              // kernels + collectives whose launch call starts inside a step
  // Per launch call not held (its first kernel started under
  // kMinLaunchHoldNs after the call returned); 0 when every call was held.
  double delay_p50_ns = 0, delay_p90_ns = 0;
  int64_t delay_max_ns = 0;
  // Launch calls whose first kernel started kMinLaunchHoldNs or more after
  // the call returned: the device held the work. Median and longest wait.
  uint64_t held_calls = 0;
  double held_p50_ns = 0;
  int64_t held_max_ns = 0;
  double launch_cost_ns = 0;     // median duration of one-by-one launch calls
  uint64_t short_kernels = 0;    // one-by-one launched kernels shorter than launch_cost_ns
  // CUDA/HIP graphs:
  uint64_t graph_launches = 0;   // graph-launch calls linked to kernels
  uint64_t graph_kernels = 0;    // kernels + collectives they replayed
  uint64_t graph_kernels_captured = 0;  // of them, tied to a captured launch call (capture trace merged)
  double graph_launch_cost_ns = 0;  // median graph-launch call duration
  double graph_gap_p50_ns = 0;      // median device gap between consecutive replays (0 with < 2)
  int64_t graph_gap_total_ns = 0;
  uint64_t graph_gaps = 0;
  // Stream capture (cudaStreamBeginCapture .. cudaStreamEndCapture on one
  // thread): launch calls inside a capture window are recorded into a graph
  // and run nothing. A trace whose launches are mostly captured is a capture
  // trace (vLLM's and TraceLens's capture_traces/), not a run of the work.
  uint64_t work_launch_calls = 0;      // host calls that launch work one item at a time (IsWorkLaunchName)
  uint64_t captured_launch_calls = 0;  // of them, inside a capture window
  uint64_t capture_windows = 0;
  int64_t capture_ns = 0;  // the windows' summed time (a thread captures one at a time)
  // Op coverage (device-activity time):
  int64_t device_time_ns = 0;
  int64_t attributed_time_ns = 0;  // under a host op
  std::vector<RuntimeOutlier> outliers;  // longest first
};

// O(n log n) in slices. `capture_windows`: the trace's stream capture
// windows when the caller has found them (AnalysisWindow::capture_windows);
// null finds them here.
LaunchStats ComputeLaunchStats(const Trace& trace, const std::vector<CaptureWindow>* capture_windows = nullptr);

// Publishes launches_per_step, launch_delay_p50_ns (unavailable, with the
// holds, when every launch call was held), short_kernel_ratio,
// graph_kernel_ratio, graph_launch_cost_ns, graph_gap_p50_ns, op_coverage,
// graph_capture_launch_ratio and graph_capture_ns (with "graph_capture"
// evidence) and
// "host_bound" evidence for runtime outliers and graph launches.
void PublishLaunchStats(const Trace& trace, const LaunchStats& stats, MetricSet* metrics);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_LAUNCHES_LAUNCH_STATS_H_
