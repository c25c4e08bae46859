// Steps: per-step time statistics and what differs in the slowest steps.
//
// Steps come from Trace::steps (ProfilerStep#N markers, else "## step N ##"
// / "step N" annotations, found by TraceBuilder). A trace without any but
// with a profiler-written step breakdown (torch_npu step_trace_time.csv,
// Trace::step_breakdown) uses one step per (rank, step) row there, lasting
//   Computing + Communication(Not Overlapped) + Free
// (the device-side step time: compute, exposed communication and idle time;
// torch_npu's Stage column is the same sum written rounded, so it is the
// fallback, then msprof's "Iteration Time(us)"). Such steps have no start
// time, so the slow ones are explained by their breakdown columns instead of
// by host ops. Definitions:
//   - mean and population standard deviation (numpy's np.std, ddof=0) of step
//     durations; cv = stddev / mean (0 when mean is 0);
//   - p50/p99 interpolate linearly between closest ranks (QuantileSorted);
//   - for each of the slowest steps, the host ops (kCpuOp slices on the
//     step's track that start inside it) whose summed duration exceeds that
//     op's median per-step total by the most: "what differs" (host spans
//     only: host ops do not explain a device period); where the capture
//     recorded ops in 1 step in N, the median is over the steps with ops.
// Timeline steps are on one of two bases (StepTimeBase, src/analysis/common/
// steps.h): each step's host span, or, where the device runs behind the host
// (the host runs ahead into a growing queue), each step's device period, the
// time from the previous step's device work end to its own; then the
// distribution is over the steps with a period (a rank's first step has
// none) and both means are kept.
#ifndef AIPROF_SRC_ANALYSIS_STEPS_STEP_STATS_H_
#define AIPROF_SRC_ANALYSIS_STEPS_STEP_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "src/analysis/common/steps.h"
#include "src/model/trace.h"

namespace aiprof {

class MetricSet;

// How many slowest steps to explain, and how many differing ops for each.
inline constexpr size_t kSlowStepsReported = 3;
inline constexpr size_t kStepDiffOpsReported = 3;
// step_time_excess_ratio needs a typical (median) step to compare with.
inline constexpr size_t kMinStepsForExcess = 3;
// Where most steps are the slow ones, the median is a slow step and the
// slow steps' cost (mean − median) reads 0. A fast mode is a fastest quarter
// of the steps (at least 2 of them, so 8 steps or more) whose median is
// under kFastModeShare of the median: the typical step is then that
// quarter's median (StepStats::typical_ns). zero_grad_set_to_none's before
// run (test/data/pairs): 4 of 12 steps 5.10-5.30 ms, the rest 57.75-79.19 ms.
inline constexpr size_t kMinStepsForFastMode = 8;
inline constexpr double kFastModeShare = 0.5;

// A step of the step chart is slow when it is this much longer than the
// median of every step (StepStats::every_step_median_ns).
inline constexpr double kSlowStepFactor = 1.2;

// One step of the trace, warm-up and truncated ones included: the report's
// step chart.
struct StepTime {
  uint32_t row = kNoSlice;  // row in Trace::steps; kNoSlice: a breakdown step (rank and number say which)
  int32_t rank = kNoRank;
  int64_t number = -1;  // breakdown steps only
  int64_t dur_ns = -1;  // on StepStats::base; -1: none (a rank's first step has no device period)
  int64_t host_ns = 0;  // its host span (breakdown steps: their written duration)
  bool slow = false;    // dur_ns > kSlowStepFactor × every_step_median_ns, with 3 or more steps timed
};

struct StepDiffOp {
  StringId name;
  int64_t step_total_ns = 0;  // this op's summed time in the slow step
  double median_total_ns = 0;  // its median per-step total over all steps
};

struct SlowStep {
  uint32_t step = 0;  // row in Trace::steps
  int64_t dur_ns = 0;                     // its time on StepStats::base
  std::vector<StepDiffOp> differing_ops;  // largest excess first
};

// One step of the step breakdown table; times in ns, -1 when not written.
struct BreakdownStep {
  int32_t rank = kNoRank;
  int64_t number = -1;
  int64_t dur_ns = 0;
  int64_t computing_ns = -1, communication_not_overlapped_ns = -1, free_ns = -1;
};

struct StepStats {
  size_t count = 0;
  // Where the steps came from: "timeline" (Trace::steps from markers),
  // "periodic pattern" (Trace::steps found from a repeating op pattern,
  // src/model/periodic_steps.h) or the breakdown file
  // ("step_trace_time.csv"); empty when there are none.
  std::string source;
  double mean_ns = 0, stddev_ns = 0, cv = 0;
  double p50_ns = 0, p99_ns = 0;
  int64_t min_ns = 0, max_ns = 0;
  // The step the slow ones are compared with: the median, or the fastest
  // quarter's median where that quarter is a fast mode (fast_mode,
  // kFastModeShare). The impact of unstable steps is mean − typical_ns.
  double typical_ns = 0;
  bool fast_mode = false;
  // What the distribution above is of (StepTimeBase, src/analysis/common/
  // steps.h): each step's host span, or, where the device runs behind the
  // host, each step's device period (the steps with one: a rank's first step
  // has none). Both readings, over the same (steady) steps, for the report:
  StepTimeBase base = StepTimeBase::kHostSpan;
  size_t host_count = 0;  // timeline steps (host spans)
  double host_mean_ns = 0;
  size_t period_count = 0;  // steps with a device period; 0: none
  double period_mean_ns = 0;
  std::vector<SlowStep> slowest;               // slowest first (on `base`); timeline steps only
  // How many steps an op's median per-step total (StepDiffOp) is over: every
  // step, or, where the capture recorded ops in 1 step in N (aiprof trace
  // --torch-every N), the steps that carry ops.
  size_t op_median_steps = 0;
  std::vector<BreakdownStep> breakdown_steps;  // by (rank, step); breakdown steps only
  // Every step, warm-up and truncated ones included, on `base` (the steady
  // steps' choice): timeline steps in Trace::steps order, else the breakdown
  // file's by (rank, step); and the median of those with a time.
  std::vector<StepTime> every_step;
  double every_step_median_ns = 0;
};

struct AnalysisWindow;
// O(n log n) in slices + steps. With `window`, its warm-up steps are left out.
StepStats ComputeStepStats(const Trace& trace, const AnalysisWindow* window = nullptr);

// Publishes steps, step_time_mean_ns, step_time_cv, step_time_p99_ns.
void PublishStepStats(const Trace& trace, const StepStats& stats, MetricSet* metrics);
// Publishes step_time_excess_ns = mean − typical step time (what the slow
// steps cost per step: the median, or the fast mode's median where most
// steps are slow), with 3 or more steps.
void PublishStepImpact(const StepStats& stats, MetricSet* metrics);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_STEPS_STEP_STATS_H_
