// The analysis window: the one time base every impact is measured over.
//
// Impacts (docs/diagnosis-schema.md) are wall-clock time per step — or per
// trace when the trace has no steps — that removing a cause would save. They
// are measured over the *steady state*:
//   - traces with steps (FindSteps): the steps that are neither warm-up nor
//     truncated. Warm-up steps are leading steps that are outliers against
//     the rest (LeadingWarmup below); truncated steps are trailing steps cut
//     short where the recording stopped (TrailingTruncated below); base =
//     mean duration of the steady steps; "per step";
//   - traces without steps: the trace span minus start-up time; base = that
//     time; "per trace".
// Start-up time: host runtime/driver calls that are one-off start-up work —
// CUDA context creation (cudaDeviceGetStreamPriorityRange, cudaFree(0), ...),
// first-call allocations, module loading, autotuning — detected as calls of
// at least kStartupCallMinNs that take at least kStartupOutlierFactor × the
// median of their name (or are a known initialisation call of that length).
// Such a call is not start-up but a wait, and stays in the window, when
//   - the device (of its rank) is busy for at least kStartupMaxDeviceBusyShare
//     of it: the host waits on the device (a full launch queue, a copy behind
//     the stream's kernels, an implicit sync);
//   - it is a copy or sync (a memcpy or blocking sync call) inside a step or a
//     user annotation and the device has already done work (so its context
//     exists): a .cpu() / .item() / pageable copy the program asks for, which is
//     sync or host-bound time of the steady state.
// A trace is start-up dominated when that time (as a union) is more than half
// of the trace span.
#ifndef AIPROF_SRC_ANALYSIS_WINDOW_ANALYSIS_WINDOW_H_
#define AIPROF_SRC_ANALYSIS_WINDOW_ANALYSIS_WINDOW_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "src/analysis/common/capture_windows.h"
#include "src/analysis/common/intervals.h"
#include "src/analysis/common/steps.h"
#include "src/analysis/window/startup_work.h"
#include "src/model/trace.h"

namespace aiprof {

class MetricSet;

inline constexpr int64_t kStartupCallMinNs = 1'000'000;  // 1 ms
inline constexpr double kStartupOutlierFactor = 20;
inline constexpr double kStartupMaxDeviceBusyShare = 0.5;
inline constexpr double kStartupDominatedShare = 0.5;
// Warm-up: a leading step slower than median(rest) + max(3 × 1.4826 × MAD(rest),
// 20% of median(rest)); at most half the steps, and at least 3 steps stay.
inline constexpr double kWarmupMadFactor = 3 * 1.4826;
inline constexpr double kWarmupMinExcess = 0.2;

// Number of leading warm-up steps among `durs` (in time order). `forced` >= 0
// overrides the detection (clamped to durs.size() - 1).
size_t LeadingWarmup(const std::vector<double>& durs, int forced = -1);

// Truncated steps. The profiler stops inside a step: Kineto's last
// ProfilerStep#N ends where profiling stopped, so it can be a fragment of a
// step (mi250_minitoy's ProfilerStep#2: 49 us holding nothing, beside a
// 9.29 ms step). Such a step is not a steady step: kept, it drags the mean
// down and the spread up (4.67 ms +- 4.62 ms there) and every per-step impact
// with them. A rank's last step is truncated when it is both
//   - short: faster than median(earlier) - max(3 x 1.4826 x MAD(earlier), 20%
//     of median(earlier)), over the rank's earlier steps (LeadingWarmup's
//     robust rule, mirrored: the same constants); and
//   - empty: it owns no device work (StepPeriods::device_activities) while
//     more than half of the earlier steps own some, or no host op starts
//     inside it while more than half of the earlier steps hold one.
// Then the step before it is tested likewise, against the steps before it.
// Shortness alone is no proof: a last, smaller batch is a real step, and
// CPU traces alternate fast and slow steps that hold the same ops (the pairs'
// zero_grad_set_to_none run: 2.6 ms and 47 ms steps). Nor is a span that ends
// where the recording ends: a CPU trace's last ProfilerStep always does, as
// the profiler closes it (three pairs' runs whose last steps are 6-55% of
// the median and hold 46-238 ops each). At least one step stays: the
// evidence is in the step itself, not in a distribution (LeadingWarmup keeps
// 3 to judge an outlier by), and Kineto's schedules often record 2 active
// steps, the second cut. Steps alike (all short, all empty) are not changed.
// Truncated steps leave the steady state as warm-up steps do
// (AnalysisWindow::warmup holds both; `truncated` says which), before warm-up
// is looked for among the rest.
//
// A last step cut inside (CutLastStep below) is truncated too, however long
// it is against the spread of the steps before it.
//
// Number of trailing truncated steps among a rank's steps in time order:
// `durs`, whether each owns device work and whether a host op starts inside
// each (all three the same size).
size_t TrailingTruncated(const std::vector<double>& durs, const std::vector<char>& owns_device_work,
                         const std::vector<char>& holds_ops);

// The truncated steps of `list` (indices into list.steps, ascending): each
// rank's timeline steps with a start, in time order, by TrailingTruncated.
// `periods` is ComputeStepPeriods(trace, list). Steps from a breakdown file
// (no start) are never truncated.
// `why`, when given, gets one entry per returned step: "" for a step
// TrailingTruncated found, CutLastStep's reason for one it found.
std::vector<size_t> FindTruncatedSteps(const Trace& trace, const StepList& list, const StepPeriods& periods,
                                       std::vector<std::string>* why = nullptr);

// A rank's last step cut where the recording stopped mid-step (an exception
// leaving the training loop in a step's forward: the profiler stops there,
// and its last ProfilerStep holds zero_grad and forward, no backward, no
// optimizer step; fresh's exc_out, test/data/fresh/exc_out.kineto.json:
// 171 us beside 725 and 401 us steps, too few and too spread for
// TrailingTruncated's shortness test). It is cut when all of
//   - at least 2 steps of the rank come before it (with 1, names that only a
//     first, warm-up step holds would count);
//   - it is shorter than each of them;
//   - no host slice of the rank starts at or after its end (the recording
//     ends inside it; device work may still drain);
//   - some host slice name (any depth, on any thread of the rank: backward
//     on the autograd thread counts; ProfilerStep markers left out) starting
//     inside each earlier step is not among those starting inside it.
// The evidence is an op the loop runs every step and this one never reached;
// names only some steps hold (a skipped optimizer step) do not count. Any
// depth, not top-level names: nesting changes from step to step. An
// enclosing annotation opened inside a step ("epoch 2" of fresh's midepoch,
// opened in its last, whole step, ProfilerStep#9, 320 us beside 366 and
// 7361 us) moves every op of that step below the top level, and µs rounding
// lifts a child to it in some steps only. Returns the reason ("the recording
// ends inside it, before ops every earlier step holds: A, B, C and 3 more"),
// or "" when the step is not cut. `names[j]`: the names of the slices
// starting inside the rank's j-th step in time order (the last is the step
// judged); `durs[j]`: its duration; `ends_recording`: the third condition.
std::string CutLastStep(const std::vector<double>& durs, const std::vector<std::vector<std::string>>& names,
                        bool ends_recording);

struct StartupCall {
  uint32_t slice = kNoSlice;
  double name_median_ns = 0;
};

struct AnalysisWindow {
  Intervals intervals;            // sorted, disjoint: where impacts are measured
  size_t steps = 0;               // steady-state steps; 0: per trace
  double base_ns = 0;             // mean steady step (on step_base), or the steady-state time
  // The step time's base (src/analysis/common/steps.h): the steady steps'
  // host spans, or, where the device runs behind the host, their device
  // periods (`periods` of them: a rank's first step has none). The window's
  // intervals are the host spans either way; host_base_ns is their mean.
  StepTimeBase step_base = StepTimeBase::kHostSpan;
  size_t periods = 0;
  double host_base_ns = 0;
  // Only where the device runs behind: each rank's steady periods as
  // intervals (the previous step's work end to the step's own), where the
  // device does that step's work while the host is already steps ahead.
  // Device-side impacts (device idle, exposed copies and collectives, device
  // consumers, conversion and fused kernels, kernel tails) are measured over
  // them and divided by `periods`; host-side ones over the host spans.
  std::map<int32_t, Intervals> device_intervals_by_rank;
  Intervals device_intervals;  // their union over ranks
  // The same per steady step that has a period: its row in Trace::steps and
  // its period's interval, by row.
  struct DevicePeriod {
    uint32_t row = 0;
    int64_t begin_ns = 0, end_ns = 0;
  };
  std::vector<DevicePeriod> device_periods;
  bool device_behind() const { return step_base == StepTimeBase::kDevicePeriod && !device_intervals.empty(); }
  std::string base;               // "per step" or "per trace"
  std::string step_source;        // FindSteps' source
  // Indices into FindSteps().steps left out of the steady state: the leading
  // warm-up steps and the trailing truncated steps (TrailingTruncated), as
  // every consumer leaves both out alike; `truncated` lists the latter again
  // (its size is what is said as truncated, the rest as warm-up).
  std::vector<size_t> warmup;
  std::vector<size_t> truncated;
  // Per entry of `truncated`: "" (short and empty, TrailingTruncated) or
  // CutLastStep's reason; said in the "warmup" evidence line of the step.
  std::vector<std::string> truncated_why;
  // Ops in 1 step in N (aiprof trace --torch-every N, N > 1: TorchEvery):
  // the op figures are per profiled step, so the window is the steady steps
  // that carry ops (StepsCarryingOps), and `steps`, `base_ns`, the
  // intervals and steps_by_rank are theirs. The steady steps without ops
  // are listed in `unprofiled` and again at the end of `warmup`, so that
  // every consumer leaving the warm-up out of op figures leaves them out
  // too; the step-time figures (src/analysis/steps) count them.
  // unprofiled_mean_ns: their mean duration. torch_every: N (1: every step).
  int torch_every = 1;
  std::vector<size_t> unprofiled;
  double unprofiled_mean_ns = 0;
  size_t warmup_only() const { return warmup.size() - truncated.size() - unprofiled.size(); }
  // Of them, the steps holding an LLM prefill (or mixed) step annotation: a
  // generate loop's first step is long by nature and leaves with the
  // warm-up, so the steady steps are the decode steps; said in Describe(),
  // and the llm section has the prefill.
  size_t warmup_prefill_steps = 0;
  // The count --warmup-steps forced (-1: detected), and the ranks whose
  // steps it would have left without a steady one (each keeps its last step
  // instead): both said in Describe(), as is a count forced on a trace
  // without steps, where it does nothing.
  int warmup_forced = -1;
  size_t warmup_clamped_ranks = 0;
  int64_t trace_start_ns = 0, trace_span_ns = 0;
  int64_t startup_ns = 0;         // union of start-up calls
  // aiprof's own work inside the target (the torch hook's chunk exports,
  // slices of category aiprof_overhead): not the program's time, so it is
  // cut out of every interval above (and said in Describe()); the steps'
  // durations, and so the base, still hold it. Union within the window.
  int64_t aiprof_overhead_ns = 0;
  std::vector<StartupCall> startup_calls;  // longest first (at most 8: the evidence lines)
  // Every start-up call's interval, merged per rank (the gaps' and the
  // critical path's startup rule reads them all, not the 8 listed).
  std::map<int32_t, Intervals> startup_by_rank;
  // The host's one-off work by rank: those calls and the stream capture
  // windows (startup_work.h), the one the gaps, the critical path and what-if
  // read.
  StartupWork startup_work;
  // The stream capture windows themselves (common/capture_windows.h, found
  // once here), by thread: the launch statistics count the calls inside them.
  std::vector<CaptureWindow> capture_windows;
  bool startup_dominated = false;
  // Time in the window, per rank's steps when steps have starts; rank
  // kNoRank windows apply to every rank.
  bool has_step_starts = false;
  // Only for per-step windows: number of steady steps of each rank.
  std::vector<std::pair<int32_t, size_t>> steps_by_rank;
  // Only with step starts: each rank's own steady steps (merged); `intervals`
  // is their union over ranks.
  std::map<int32_t, Intervals> intervals_by_rank;
  // The window of one rank's timelines: its own steady steps with those of
  // rank kNoRank (steps of no rank apply to every rank); `intervals` when the
  // window has no step starts or the rank has no such steps.
  Intervals IntervalsOfRank(int32_t rank) const;
  // Converts a total over the window (summed over ranks) to the base:
  // per step = total / steps; per trace = total (one trace).
  double PerBase(double total_ns) const { return steps > 0 ? total_ns / static_cast<double>(steps) : total_ns; }
  // The same from per-rank totals (each already averaged over the rank's
  // devices): per step = sum / steps; per trace = mean over the trace's ranks
  // (trace_ranks: a rank missing from the map had none of it).
  double PerBase(const std::map<int32_t, double>& per_rank_total_ns) const;
  // Ranks of the tracks that hold slices (at least 1): what a per-trace mean
  // over ranks divides by.
  size_t trace_ranks = 1;
  // The window and base of device-side measurements: the device periods'
  // intervals and per period where the device runs behind, else the same
  // as IntervalsOfRank, `intervals` and PerBase.
  Intervals DeviceIntervalsOfRank(int32_t rank) const;
  const Intervals& DeviceIntervals() const { return device_behind() ? device_intervals : intervals; }
  double PerDeviceBase(double total_ns) const {
    return device_behind() ? total_ns / static_cast<double>(periods) : PerBase(total_ns);
  }
  double PerDeviceBase(const std::map<int32_t, double>& per_rank_total_ns) const;
  // A sentence naming the base (DescribeImpactBase).
  std::string Describe() const;
};

// The sentence naming an impact base, e.g. "per step (mean of 5 steady-state
// steps, 126.300 ms); 1 warm-up step left out", "per step (mean of 4
// steady-state steps, 2 on each of 2 ranks, ...)" or "per trace (40.000 ms of
// steady-state time; 3.000 ms of start-up left out)". `steps` counts steps
// over all `ranks` (0 steps: per trace); `warmup` likewise.
// `warmup_prefill`: how many of the warm-up steps hold an LLM prefill step
// annotation (AnalysisWindow::warmup_prefill_steps), said beside them.
// `truncated`: trailing truncated steps left out ("; 1 truncated last step
// left out"), counted apart from `warmup`.
std::string DescribeImpactBase(size_t steps, size_t ranks, double base_ns, size_t warmup, int64_t startup_ns,
                               size_t warmup_prefill = 0, size_t truncated = 0);
// The same, for a base on the device's period: "per step (mean of 3
// steady-state steps, 18.771 ms: the device's period, mean of 2, as the device
// runs behind the host, whose steps take 16.212 ms; ...)".
std::string DescribeDevicePeriodBase(size_t steps, size_t periods, double base_ns, double host_base_ns, size_t warmup,
                                     size_t warmup_prefill = 0, size_t truncated = 0);

// "; 1 truncated last step left out" ("2 truncated last steps"), or "" for 0:
// what the impact base, the report's step time and analyze say of them.
std::string TruncatedText(size_t truncated);

// What a forced warm-up count (--warmup-steps, `forced` >= 0) did not do:
// "; --warmup-steps 3 does nothing here: the trace has no steps" (`steps`
// 0) or "; --warmup-steps 9 asks for every step, so the last one stays"
// (`clamped_ranks` of `ranks` kept their last step); "" otherwise.
std::string WarmupForcedText(int forced, size_t steps, size_t clamped_ranks, size_t ranks);

// `warmup_steps` >= 0 forces the number of leading warm-up steps.
AnalysisWindow ComputeAnalysisWindow(const Trace& trace, int warmup_steps = -1);

// N of aiprof trace --torch-every N (metadata capture.torch_every, or a
// merged part's "<prefix>.capture.torch_every"; the largest), 1 when the
// trace says nothing: the torch layer recorded ops in 1 step in N.
int TorchEvery(const Trace& trace);

// Per step of `list` (timeline steps), whether it carries ops: a host op,
// runtime call or device activity (not aiprof's own work, not annotations)
// of its rank starts strictly inside it (a step of no rank: of any rank).
std::vector<char> StepsCarryingOps(const Trace& trace, const StepList& list);

// "; ops recorded in 1 step in 5 (aiprof trace --torch-every 5): impacts
// are per profiled step, ...", or "" when every step was profiled.
std::string SampledStepsText(int torch_every, size_t unprofiled, double unprofiled_mean_ns);

// aiprof's own work inside the target, by rank: the slices of category
// aiprof_overhead (the capture's torch hook exporting its chunks), merged.
// Not the program's time: the window and the breakdown cut it out.
std::map<int32_t, Intervals> AiprofOverheadByRank(const Trace& trace);

// Publishes impact_base_ns, impact_steps, warmup_steps, truncated_steps,
// startup_ns, startup_ratio, trace_span_ns and "startup" / "warmup" evidence
// (the warm-up and truncated steps left out, one line each).
void PublishAnalysisWindow(const Trace& trace, const AnalysisWindow& w, MetricSet* metrics);

// Records the largest time consumers inside the window (device ops by name,
// top-level host ops by name, host threads), per the base, as
// MetricSet::consumers().
void PublishConsumers(const Trace& trace, const AnalysisWindow& w, MetricSet* metrics);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_WINDOW_ANALYSIS_WINDOW_H_
