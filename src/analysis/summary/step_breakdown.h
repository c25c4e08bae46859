// Per-step time breakdown computed from the timeline, in the terms of
// Ascend's step_trace_time.csv, and per-rank / per-op-type figures for
// multi-rank and Ascend inputs.
//
// Step i of a rank starts at start_i; its window runs to start_{i+1} (the
// last step's to the end of the trace), because device work of a step often
// ends after its host-side ProfilerStep slice. Two methods:
//   - "overlap_analysis": where the rank has torch_npu's Overlap Analysis
//     tracks, their slices (Computing, Communication, Communication(Not
//     Overlapped), Free) are summed, clipped to the window;
//   - "device_activity": otherwise over the device activity the step owns
//     (the step its launching call starts in, else the step its own start
//     falls in: the rule of the step time's work end, steps.h), whole:
//     Computing is the union of its kernels, copies and sets; Communication
//     and Communication(Not Overlapped) are analyze's per-step figures'
//     rule (collective_stats.h): per device |C| and |C| - |C ∩ K|, C its
//     collectives, K its kernels (HidesCommunication, steps.h: copies and
//     sets beside a collective hide none of it), summed over the rank's
//     devices; Free the
//     gaps inside its first-to-last activity span, Preparing the device's
//     wait for the step: from its start, or from the end of the previous
//     step's device work when that is later (a device that runs behind is
//     busy, not waiting), to its first device work. A kernel of step i-1 that
//     runs past start_i stays step i-1's, so it neither hides step i's wait
//     for data nor turns it into Free.
// Then Overlapped = Communication - Communication(Not Overlapped), Stage =
// last end - first start of that activity, Preparing = first start - step
// start (device_activity: see above).
#ifndef AIPROF_SRC_ANALYSIS_SUMMARY_STEP_BREAKDOWN_H_
#define AIPROF_SRC_ANALYSIS_SUMMARY_STEP_BREAKDOWN_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

struct StepBreakdown {
  int32_t rank = kNoRank;
  int64_t step = -1;
  std::string source;                      // "timeline" or the file it was read from
  std::string method;                      // for "timeline": overlap_analysis / device_activity
  std::map<std::string, int64_t> values_ns;  // key as in step_trace_time.csv
};

// Breakdowns computed from the timeline (one per step with device activity)
// followed by those the profiler wrote (Trace::step_breakdown).
std::vector<StepBreakdown> ComputeStepBreakdowns(const Trace& trace);

struct RankStat {
  int32_t rank = kNoRank;
  uint64_t tracks = 0, slices = 0, steps = 0;
  int64_t device_busy_ns = 0;  // sum over the rank's devices of busy time
  std::vector<int32_t> devices;
};
std::vector<RankStat> ComputeRankStats(const Trace& trace);

// Device slices grouped by the op type joined to them (kernel_details "Type",
// op_summary "OP Type"), per rank: the timeline's counterpart of op_statistic.
struct OpTypeStat {
  int32_t rank = kNoRank;
  StringId type;
  uint64_t count = 0;
  int64_t total_ns = 0;
};
std::vector<OpTypeStat> ComputeOpTypeStats(const Trace& trace);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_SUMMARY_STEP_BREAKDOWN_H_
