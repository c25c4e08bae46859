// Communication per rank: time per collective type, and exposed
// communication per step.
//
// Per (rank, collective type): count, total and longest duration, and where
// the trace gives message sizes (Kineto NCCL args), bytes, algorithm
// bandwidth algbw = bytes / time and bus bandwidth busbw = algbw × the
// nccl-tests factor for the group size (collective_type.h).
//
// Per step (Trace::steps, a host window [ts, ts + dur) of one rank; where
// the device runs behind the host, the step's device period instead when it
// has one: AnalysisWindow::device_periods), on each device of that rank,
// with C = ∪ collectives and K = ∪ kernels (the breakdown's definitions):
//   comm    = |C ∩ step|
//   exposed = |C ∩ step| − |C ∩ K ∩ step|   (communication no compute hides)
// summed over the rank's devices. When the trace carries the profiler's own
// per-step figures (torch_npu step_trace_time.csv: "Communication",
// "Communication(Not Overlapped)"), they are kept beside ours; steps known
// only from that file report the profiler's figures alone.
// O(n log n) in slices plus O(log n) per step.
#ifndef AIPROF_SRC_ANALYSIS_COMMUNICATION_COLLECTIVE_STATS_H_
#define AIPROF_SRC_ANALYSIS_COMMUNICATION_COLLECTIVE_STATS_H_

#include <cstdint>
#include <vector>

#include "src/analysis/communication/collectives.h"
#include "src/model/trace.h"

namespace aiprof {

struct CollectiveTypeStats {
  int32_t rank = kNoRank;
  CollectiveType type = CollectiveType::kOther;
  uint64_t count = 0;
  int64_t total_ns = 0, max_ns = 0;
  // Instances with a known message size, their bytes and time.
  uint64_t sized = 0;
  double bytes = 0;
  int64_t sized_time_ns = 0;
  int64_t group_size = 0;  // largest seen; 0 when unknown

  // Bytes per second over the sized instances; 0 when there are none.
  double AlgBandwidthBytesPerSecond() const;
  double BusBandwidthBytesPerSecond() const;
};

struct StepCommunication {
  int32_t rank = kNoRank;
  int64_t number = -1;         // step number (ProfilerStep#N), -1 unknown
  int64_t step_ns = 0;         // the step's duration: its host span, or its device period (on_device_period)
  // Measured over the step's device period (the previous step's work end to
  // its own) where the device runs behind the host (AnalysisWindow::
  // device_periods), not over its host span, which the device spends on
  // earlier steps' queued work.
  bool on_device_period = false;
  int64_t comm_ns = -1;        // ours: -1 when the step is known only from the profiler's file
  int64_t exposed_ns = -1;
  int64_t profiler_comm_ns = -1;     // step_trace_time.csv "Communication", -1 absent
  int64_t profiler_exposed_ns = -1;  // "Communication(Not Overlapped)", -1 absent
};

struct CollectiveStats {
  std::vector<CollectiveTypeStats> by_type;  // by (rank, type)
  std::vector<StepCommunication> steps;      // by (rank, step number)
  int64_t total_ns = 0;                      // Σ collective durations
};

struct AnalysisWindow;
// `window` (may be null): where the device runs behind the host, steps with a
// device period are measured over it.
CollectiveStats ComputeCollectiveStats(const Trace& trace, const std::vector<CollectiveSlice>& collectives,
                                       const AnalysisWindow* window = nullptr);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_COMMUNICATION_COLLECTIVE_STATS_H_
