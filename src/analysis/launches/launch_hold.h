// The line between a launch's own latency and the device holding launched
// work: one definition for the critical path (critical_path.cc,
// DeviceStart), the what-if replay (whatif.cc) and the launch statistics
// (launch_stats.cc, the launch delay).
#ifndef AIPROF_SRC_ANALYSIS_LAUNCHES_LAUNCH_HOLD_H_
#define AIPROF_SRC_ANALYSIS_LAUNCHES_LAUNCH_HOLD_H_

#include <cstdint>

namespace aiprof {

// The shortest wait, after a launch call returned, before its activity
// started, that is the device holding launched work and not the launch's
// own latency: that latency is 1-2 us on H100 and 14-19 us on MI300X
// (TraceLens's BERT-small traces: medians 1.7 and 14.3 us, at most 2.1 and
// 19.4), while the vLLM decode replay's first copy started 7.83 ms after its
// call returned and MTIA's activities 6.2 ms (median). On the critical path
// (on an idle stream) such a wait is unexplained device idle
// (StepPath::device_idle_unexplained_ns), not idle_host_bound, and
// `remove-idle host_bound` keeps it; the launch statistics count such calls
// as held (LaunchStats::held_calls), out of the launch delay.
inline constexpr int64_t kMinLaunchHoldNs = 100'000;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_LAUNCHES_LAUNCH_HOLD_H_
