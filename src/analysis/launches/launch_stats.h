// Launches: how many kernel/task launches, how long each waits to start, and
// kernels too short to be worth their launch.
//
// A launch is a runtime/driver call linked (Trace::flows) to a kernel or
// collective. launches_per_step counts launches whose call starts inside a
// step, divided by the number of steps. Launch delay = device start − call
// end (can be negative when the device starts before the call returns).
// Launch cost = median duration of the launch calls; a kernel is short when
// its duration is below that cost. Runtime-call outliers: runtime calls
// longer than kRuntimeOutlierFactor × the median of calls with the same name
// (names with at least kRuntimeOutlierMinCount calls).
#ifndef AIPROF_SRC_ANALYSIS_LAUNCHES_LAUNCH_STATS_H_
#define AIPROF_SRC_ANALYSIS_LAUNCHES_LAUNCH_STATS_H_

#include <cstdint>
#include <vector>

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
  uint64_t kernels = 0;          // kernels + collectives
  uint64_t launches = 0;         // of those, linked to a launching call
  uint64_t launches_in_steps = 0;
  double delay_p50_ns = 0, delay_p90_ns = 0;
  int64_t delay_max_ns = 0;
  double launch_cost_ns = 0;     // median launch call duration
  uint64_t short_kernels = 0;
  std::vector<RuntimeOutlier> outliers;  // longest first
};

// O(n log n) in slices.
LaunchStats ComputeLaunchStats(const Trace& trace);

// Publishes launches_per_step, launch_delay_p50_ns, short_kernel_ratio and
// "host_bound" evidence for runtime outliers.
void PublishLaunchStats(const Trace& trace, const LaunchStats& stats, MetricSet* metrics);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_LAUNCHES_LAUNCH_STATS_H_
