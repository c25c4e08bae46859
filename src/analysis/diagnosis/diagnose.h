// Diagnosis in four steps: feature extraction (the MetricSet from the
// analyses), pattern matching (each rule's indicators), root cause (causes
// ranked by their own conditions and evidence) and impact (time attributable,
// and the most removing it could gain by Amdahl's law).
#ifndef AIPROF_SRC_ANALYSIS_DIAGNOSIS_DIAGNOSE_H_
#define AIPROF_SRC_ANALYSIS_DIAGNOSIS_DIAGNOSE_H_

#include <optional>
#include <string>
#include <vector>

#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/rules/rule.h"
#include "src/model/trace.h"

namespace aiprof {

// Where the trace came from, for picking suggestions. A suggestion's
// platform is one tag or several that must all hold (docs/rules.md):
// generic (any trace), pytorch, native (no PyTorch ops: a program that calls
// the runtime itself), cuda (NVIDIA), rocm (AMD), gpu (either: the advice
// works through torch.cuda / HIP alike), ascend, cpu.
struct Platform {
  bool pytorch = false;  // PyTorch profiler categories present
  bool cuda = false;     // NVIDIA GPU: CUDA runtime calls or kernels
  bool rocm = false;     // AMD GPU: HIP runtime calls or ROCm profiler keys
  bool ascend = false;   // torch_npu / msprof tracks present
  bool cpu_only = true;  // no device activity at all
  // Another accelerator the importer recognised (mtia, xpu, hpu): neither
  // CUDA nor ROCm advice applies.
  std::string other_device;
  // One tag, or tags joined by ", " (all must hold).
  bool Matches(const std::string& platform) const;
  std::string Describe() const;
};
Platform DetectPlatform(const Trace& trace);

// "page_fault_ratio = 31.2% (> 10.0%, estimated)": one comparison of a rule
// expression, in the metric's unit.
std::string DescribeComparison(const ComparisonOutcome& c);

struct RankedCause {
  std::string id;
  std::string text;
  std::vector<std::string> evidence;
  std::string why;  // "condition holds: ...", or "general cause"
};

// A what-if scenario replayed on the trace's dependency graph
// (src/analysis/whatif/): a suggestion's fix (SuggestionOutcome::simulation),
// or a finding's cause removed (Impact::replayed). The steady steps' median wall time (step start to the end of its
// last device work) measured and predicted, with the 95% interval of the prediction from the step-to-step variation.
struct SimulatedGain {
  std::string scenario;
  size_t steps = 0;
  // The steady steps' median wall time and its distribution-free interval,
  // or, when `mean` (below), their mean and its Student's t interval.
  double measured_ns = 0, predicted_ns = 0, predicted_lo_ns = 0, predicted_hi_ns = 0;
  // Corrected by the prediction errors of past cases (CorrectByHistory):
  // how many, and the prediction before the correction.
  size_t history_cases = 0;
  double uncorrected_ns = 0, uncorrected_lo_ns = 0, uncorrected_hi_ns = 0;
  // The past cases' scenes and what was left out (DescribePastCases); "":
  // no history consulted, or nothing in it.
  std::string history_from{};
  // The figures are means: the scenario acts on one step in N
  // (ScenarioNeedsMean), which the median step does not see.
  bool mean = false;
  // The figures are step periods (WhatIfResult::TimeBase::kStepPeriod: the
  // device runs behind the host, or graph-launch): end of the previous
  // step's device work to the end of its own, not the step wall time
  // validate measures on an after run.
  bool step_period = false;
  // No steady step launched device work (WhatIfResult::host_only): the
  // step wall time ends at the step's own end (StepEndText).
  bool host_only = false;
};

// What removing a finding's cause would save: wall-clock time per step (or
// per trace without steps) on the critical path, measured by the analysis
// that owns the metric over the steady-state window (src/analysis/window).
struct Impact {
  bool quantified = false;   // false: the rule has no time impact (or the metric is unavailable)
  double time_ns = 0;        // time saved per basis (ns per step, or per trace)
  double basis_ns = 0;       // the time it is a share of (mean steady step, steady-state time, trace span)
  std::string basis;         // "per step", "per trace", "trace span" or "device memory"
  std::string basis_text;    // e.g. "per step (mean of 5 steady-state steps, 126.3 ms)"
  std::string metric;        // the metric it came from
  double share = 0;          // time_ns / basis_ns (memory findings: share of device memory)
  double max_speedup = 1;    // Amdahl: 1 / (1 - share)
  // The rule's `removal` scenario replayed (SimulateRemovals, simulate.h):
  // what removing the cause does to the step once the dependencies are
  // respected, which the Amdahl bound above does not see (other work on the
  // critical path may take its place). Absent without a scenario or steps.
  std::optional<SimulatedGain> replayed;
};

enum class Priority { kLow = 0, kMedium = 1, kHigh = 2 };
const char* PriorityName(Priority p);

// The share of the step that the replayed removal saves (1 - predicted /
// measured, on the replay's own base), or nullopt without a replay.
std::optional<double> ReplayedGain(const Impact& im);

struct Finding;
// A finding's impact in one line, with the time base it is a share of:
// "2.500 ms per step = 25.0% of 10.000 ms [per step (mean of 5 steady-state
// steps, 10.000 ms)]; at most x1.33 if removed" (report, views).
std::string ImpactText(const Finding& f);

struct Finding {
  const Rule* rule = nullptr;
  Confidence confidence = Confidence::kLow;
  std::string confidence_reason;
  std::vector<ComparisonOutcome> indicators;
  std::vector<RankedCause> causes;
  Impact impact;
  Priority priority = Priority::kLow;
  // Unexplained-time findings: the largest consumers of the unexplained time.
  std::vector<TimeConsumer> consumers;
};

struct NotEvaluated {
  const Rule* rule = nullptr;
  // Metrics the trace lacks, with the analyses' reasons.
  std::vector<std::pair<std::string, std::string>> missing;
};

struct Diagnosis {
  Platform platform;
  std::string impact_basis_text;  // the window every time impact is per
  double explained_ns = 0;        // time per base the findings explain (exclusive parts, plus the largest other)
  std::vector<Finding> findings;  // `first` rules, findings about the program (removable causes by priority and
                                  // impact, then compute), caveats, unexplained time, negligible ones
  std::vector<NotEvaluated> not_evaluated;
  std::vector<const Rule*> not_fired;  // evaluated, indicators false
};

// ImpactText says the replay finds the cause's time taken by other work when
// the impact is at least this share and the replay gains under a quarter of it.
inline constexpr double kReplayHiddenMinShare = 0.05;

// Thresholds of the confidence and priority rules (docs/rules.md).
inline constexpr double kHighMargin = 1.0;    // value at least 2x past the threshold
inline constexpr double kMediumMargin = 0.3;  // value at least 30% past it
inline constexpr double kHighPriorityScore = 0.10;
inline constexpr double kMediumPriorityScore = 0.03;
// Priority score = impact share x the weight of the finding's confidence.
inline constexpr double kHighConfidenceWeight = 1.0;
inline constexpr double kMediumConfidenceWeight = 0.6;
inline constexpr double kLowConfidenceWeight = 0.3;
// An unexplained-time finding when the findings explain less than this share of the base.
inline constexpr double kExplainedMinShare = 0.5;
// With the attribution tree: an unexplained-time finding only when the
// untraced host time (no op, module or wait) is at least this share of the base.
inline constexpr double kUntracedMinShare = 0.10;
// A finding whose steady-state impact is below this share of the base is low confidence.
inline constexpr double kNegligibleImpactShare = 0.01;

// The traits of a finding's bottleneck type (bottleneck_types.h; false for
// a type of a user's own rule). Bottlenecks whose impacts are disjoint parts
// of the step by construction (idle by cause, exposed copies, exposed
// communication, conversion kernels): their impacts add up. Other impacts
// overlap these.
bool ExclusiveImpact(const std::string& bottleneck);

// Findings about the spread of step or op times (unstable steps, a long
// tail of slow instances): any change of the step moves them.
bool SpreadFinding(const std::string& bottleneck);

// Findings that say what the time is rather than a cause to remove (the
// compute finding): ordered after the removable causes, no Amdahl bound.
bool DescriptiveFinding(const std::string& bottleneck);

// Findings about what the trace lets the analyses see rather than about the
// program (bottleneck "attribution": op coverage): caveats. Ordered after
// every other finding but the unexplained time and the negligible ones, so
// a caveat never displaces a finding about the program as the headline; the
// diagnosis names them first, as caveats (DiagnosisToDocument).
bool CaveatFinding(const std::string& bottleneck);

// The built-in rule of unexplained-time findings (not from YAML).
const Rule& UnexplainedTimeRule();

// Applies `rules` to `metrics`. `rules` must outlive the result.
Diagnosis Diagnose(const Trace& trace, const MetricSet& metrics, const std::vector<Rule>& rules);

// Confidence from a rule's own levels, else from the margin past the
// threshold; estimated metrics lower it one level. Visible for testing.
Confidence DecideConfidence(const Rule& rule, const MetricSet& metrics, const EvalResult& when,
                            std::string* reason);
// Priority from impact share and confidence. Visible for testing.
Priority DecidePriority(double share, Confidence confidence);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_DIAGNOSIS_DIAGNOSE_H_
