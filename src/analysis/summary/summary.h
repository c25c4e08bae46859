// The figures `aiprof summary` reports: per-op duration statistics, per-device
// busy time, steps, event counts and import diagnostics.
//
// Definitions (docs/summary-schema.md; host samples: host_samples.h):
//   - op: all slices with one (category, name); percentiles interpolate
//     linearly between closest ranks (numpy's default);
//   - busy: length of the union of device-activity intervals (kernels,
//     copies, sets, collectives) per (rank, device); span: first start to
//     last end of that activity; utilization = busy / span.
#ifndef AIPROF_SRC_ANALYSIS_SUMMARY_SUMMARY_H_
#define AIPROF_SRC_ANALYSIS_SUMMARY_SUMMARY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "src/analysis/common/steps.h"
#include "src/analysis/summary/host_samples.h"
#include "src/analysis/summary/request_tokens.h"
#include "src/analysis/summary/step_breakdown.h"
#include "src/base/quantile.h"
#include "src/model/trace.h"

namespace aiprof {

struct OpStat {
  StringId name, category;
  uint64_t count = 0;
  int64_t total_ns = 0;
  // Self time: total minus the time of the slices directly nested in its
  // slices on the same track (clipped to them), so nested ops are not
  // counted twice.
  int64_t self_ns = 0;
  // The profiler's own spans (ProfilerStep#N, "PyTorch Profiler (N)",
  // record_param_comms, the Trace span): structure, never ranked.
  bool profiler_wrapper = false;
  // Records on device tracks that are not device activity: the profiler's
  // summary bands (torch_npu's Overlap Analysis "Communication", "Free"),
  // HCCL's sub-tasks of a collective, NPU event waits, CUDA's
  // gpu_user_annotation ranges. They re-count time the device activity or
  // the ops already hold (one allreduce wait filled 4 of Ascend's top 5
  // rows), so they are listed apart, never ranked among the ops.
  bool device_record = false;
  int64_t max_ns = 0;
  double mean_ns = 0, p50_ns = 0, p99_ns = 0;
};

struct DeviceStat {
  int32_t rank = kNoRank;
  int32_t device = 0;
  int64_t busy_ns = 0;
  int64_t span_ns = 0;
  double utilization = 0;  // busy / span, 0 when span is 0
};

// One step as FindSteps (src/analysis/common/steps.h) defines it.
struct StepStat {
  StringId name;             // empty for steps from a step breakdown file
  int64_t number = -1;       // step number, -1 unknown
  int32_t rank = kNoRank;
  int64_t start_ns = 0;      // kUnknownStart for steps from a step breakdown file
  int64_t dur_ns = 0;
  // A trailing step cut short where the recording stopped (FindTruncatedSteps):
  // listed, but left out of every steady-state figure as warm-up is.
  bool truncated = false;
  // Why, when the recording ended inside it before ops every earlier step
  // holds (CutLastStep); "" for a short step without device work or ops.
  std::string truncated_why;
};

struct Summary {
  std::vector<OpStat> ops;  // by total time, largest first
  std::vector<DeviceStat> devices;
  std::vector<StepStat> steps;
  // "timeline" (ProfilerStep#N / step annotations), "periodic pattern"
  // (timeline steps found from a repeating op sequence, `step_pattern`
  // says which), "step_trace_time.csv", or empty without steps.
  std::string step_source;
  StepPattern step_pattern;      // when step_source is "periodic pattern"
  std::string step_hook_source;  // StepList::hook_source (aiprof trace's step markers)
  std::map<std::string, uint64_t> events_by_category;  // slices + instants
  std::vector<RankStat> ranks;                // per rank (kNoRank included when present)
  std::vector<StepBreakdown> step_breakdowns;  // timeline-computed, then as the profiler wrote them
  std::vector<OpTypeStat> op_types;            // device slices by joined op type
  RequestTokenStats requests;                  // LLM serving: TTFT, TPOT, ITL, tokens/s (SDK token calls)
  HostSampleStats host_samples;                // host CPU stack samples: functions, threads
  uint64_t slice_count = 0, instant_count = 0, counter_count = 0, flow_count = 0, track_count = 0;
};

// Computes the summary in O(n log n) over slices. `requests`: the trace's
// request tokens where a session already holds them (kRequestTokenStats,
// src/analysis/summary/summary_analysis.h); null computes them here.
Summary ComputeSummary(const Trace& trace, const RequestTokenStats* requests = nullptr);

// Indices into `summary.ops` for a top-ops table: by self time, largest
// first (then total, then name), profiler wrappers and device records left
// out.
std::vector<size_t> TopOpsBySelf(const Trace& trace, const Summary& summary);


// Length of the union of [start, end) intervals (sorted by start in place).
int64_t UnionLengthNs(std::vector<std::pair<int64_t, int64_t>>* intervals);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_SUMMARY_SUMMARY_H_
