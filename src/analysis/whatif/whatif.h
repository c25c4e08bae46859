// What-if: change the dependency graph of the critical path
// (src/analysis/critical_path/) and replay it, respecting every dependency,
// to predict each step's time under a scenario (its grammar and parser:
// src/analysis/scenario/scenario.h, docs/whatif.md).
//
// Replay: slices are visited in the order of their measured start and end
// times; each new start is the latest of its predecessors' new times plus the
// edge's lag. A binding edge (the predecessor that finished last) keeps its
// measured lag; a non-binding one its intrinsic lag (thread gaps and nested
// offsets: the measured CPU time, except the idle gap before work another
// thread handed over; a launch: min(measured lag, the call's duration),
// binding whenever the activity did not start the moment a device
// predecessor ended; stream order and stream waits: 0). Ends: a host slice ends its
// (scaled) tail after its last child, or its scaled duration after its start;
// a sync call no earlier than the work it waited for plus its measured
// overhead; a collective its transfer time after its last rank arrives.
// With no clause the replay reproduces every measured time (tested).
#ifndef AIPROF_SRC_ANALYSIS_WHATIF_WHATIF_H_
#define AIPROF_SRC_ANALYSIS_WHATIF_WHATIF_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/roofline/device_peaks.h"
#include "src/analysis/scenario/scenario.h"
#include "src/base/status.h"

namespace aiprof {

struct AnalysisWindow;

// Whether a scenario's gain must be judged on the steady steps' mean rather
// than their median: an `every N` clause changes one step in N, which the
// median step does not see (checkpointing every 10th step instead of every
// step leaves nine steps in ten without it, so the median claims the whole
// checkpoint while the run saves nine tenths of it). The mean is of the
// steps' spans (not a throughput: spans overlap where the device runs behind).
bool ScenarioNeedsMean(const Scenario& scenario);

// The statistic a scenario's prediction is checked on, asked as "" (the
// default: the mean for an `every N` scenario, else the median), "median"
// or "mean": true for the mean. Errors: another statistic, or a scenario
// that does not parse (ParseScenario's error).
StatusOr<bool> JudgeOnMean(std::string_view scenario, std::string_view statistic);

// Looks up the devices a scenario names (data/devices.yaml, or
// `devices_file`; LoadDevices' order). Errors name the clause: an unknown
// device, or a trace whose own device is not known without `from NAME`.
Status ResolveScenarioDevices(const Trace& trace, const std::string& devices_file, Scenario* scenario);

struct StepPrediction {
  int32_t rank = kNoRank;
  int64_t number = -1;
  bool steady = false;
  int64_t measured_ns = 0;   // the step's critical-path length (its makespan)
  int64_t predicted_ns = 0;  // the same after the replay
  // On a step-period base (WhatIfResult::TimeBase::kStepPeriod), a rank's
  // first step has no period: both figures are 0 and mean nothing (not its
  // wall time), and the step is not steady.
  bool no_period = false;
};

struct WhatIfResult {
  std::string scenario;
  // The step time every figure is: its wall time (start to the end of the
  // last work it launched), or, under graph-launch, its period (from the
  // previous step's end on its rank to its own; a rank's first step has
  // none and is left out of the statistics).
  enum class TimeBase : uint8_t { kStepWallTime, kStepPeriod };
  TimeBase time_base = TimeBase::kStepWallTime;
  // The period because the trace's own steps are on it: the device runs
  // behind the host (ChooseStepTimeBase, the step analysis' base), not only
  // because the scenario (graph-launch, remove-idle sync) unties the host.
  bool device_behind = false;
  // No steady step launched device work (a CPU-only trace): a step's wall
  // time ends at its own end (StepEndText).
  bool host_only = false;
  std::vector<StepPrediction> steps;
  // Over the steady steps: the median measured and predicted step time
  // and a distribution-free interval of the predicted median (order
  // statistics, MedianWithInterval: ≥ 95% from 6 steps, [min, max] below).
  // The median, not the mean: one step slowed by the host (a page-fault
  // storm, a preempted thread) moves a mean of a few steps by tens of
  // percent (test/whatif/README.md).
  size_t steady_steps = 0;
  // No steady step, and notes[0] says why (already graph-launched; no step
  // has a period): the report leads with it instead of "no step".
  bool no_step_said = false;
  double measured_ns = 0, predicted_ns = 0, predicted_lo_ns = 0, predicted_hi_ns = 0;
  // The same steps' means (of their spans, which overlap where the device
  // runs behind: not a throughput), which a fix acting on one step in N
  // changes and a median does not see; interval: Student's t 95% of the
  // predicted steps' mean.
  double measured_mean_ns = 0, predicted_mean_ns = 0, predicted_mean_lo_ns = 0, predicted_mean_hi_ns = 0;
  uint64_t slices_changed = 0;  // slices whose duration a clause changed
  uint64_t edges_changed = 0;   // lags a remove-idle clause set to 0
  uint64_t measured_fallbacks = 0;  // predecessors replayed past the recursion bound (kept measured)
  // A trace without steps (each rank's whole trace is one step): every
  // figure is on the analysis window's per-trace base, the one diagnose's
  // impacts are shares of (src/analysis/window/analysis_window.h): the trace
  // span minus its start-up calls (and aiprof's own work). Each step's
  // measured figure is that base; its prediction the base plus the replay's
  // change of the rank's whole trace less the change of its start-up calls'
  // time (the union of their replayed spans inside the replayed trace:
  // unchanged unless a clause changes them), so start-up is left out of the
  // baseline and the prediction alike. notes[0] says so, with both figures.
  bool per_trace = false;
  double per_trace_base_ns = 0;     // the window's base (AnalysisWindow::base_ns)
  int64_t startup_left_out_ns = 0;  // the start-up it leaves out (AnalysisWindow::startup_ns)
  // What fuse, overlap-comm and device did and assumed, one line each
  // (chains found, kernels scaled by which ratio, fallbacks taken).
  std::vector<std::string> notes;

  // Corrected by past cases of the same scenario (whatif --db,
  // CorrectWhatIfByHistory), each statistic by the cases measured on it:
  // how many, and the predicted figure before the correction. The per-step
  // predictions and the critical path below stay the replay's own.
  struct History {
    size_t cases = 0;
    double uncorrected_ns = 0, uncorrected_lo_ns = 0, uncorrected_hi_ns = 0;
  };
  bool history_asked = false;  // a knowledge database was given
  History median_history, mean_history;

  // What moved on the critical path: the path walked again over the
  // replayed times (RewalkCriticalPath). Time base: the path's time per
  // steady step, the mean over the steady steps (it sums to the mean step
  // wall time), by class, measured and replayed; and the slices, by name,
  // whose time on the path, by class, changed most (largest |change|
  // first, at most kMovedTop). An idle class names the slice waited in or
  // for (the data loader, the kernel launched late); empty: no slice.
  std::array<double, kPathClassCount> measured_path_ns{}, predicted_path_ns{};
  struct Move {
    std::string name;  // the slice's name ("" for time no slice holds; "(each step's own span)")
    PathClass cls = PathClass::kIdleOther;
    double measured_ns = 0, predicted_ns = 0;  // mean per steady step
  };
  static constexpr size_t kMovedTop = 10;
  std::vector<Move> moved;
};

// A what-if's figures on one statistic: the steady steps' median, or
// (`mean`) their mean, each with its interval.
struct WhatIfFigure {
  double measured_ns = 0, predicted_ns = 0, predicted_lo_ns = 0, predicted_hi_ns = 0;
};
WhatIfFigure FigureOf(const WhatIfResult& r, bool mean);

// Replays `trace` through `path`'s graph (ComputeCriticalPath with
// keep_graph) under `scenario`. O(n log n). On whole-trace windows (no
// steps) the figures go on `window`'s per-trace base
// (WhatIfResult::per_trace); null: computed here (ComputeAnalysisWindow).
WhatIfResult PredictWhatIf(const Trace& trace, const CriticalPathResult& path, const Scenario& scenario,
                           const AnalysisWindow* window = nullptr);

// What a scenario changes most, as a knowledge card's core bottleneck
// (card --scenario): the slice whose time on the critical path its replay
// changed most (WhatIfResult::moved, mean per steady step), as "op:NAME"
// (the key the card's inferred bottleneck has: an op, kernel or region),
// or the path class (time no slice holds). The scenario's own target, not
// what else differs between the before and after runs. nullopt when the
// replay moved nothing.
struct ScenarioTarget {
  std::string bottleneck;  // "op:checkpoint"
  std::string name;        // the slice's name ("" for time no slice holds)
  PathClass cls = PathClass::kIdleOther;
  double measured_ns = 0, predicted_ns = 0;  // its time on the path, mean per steady step
};
std::optional<ScenarioTarget> ScenarioBottleneck(const WhatIfResult& r);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_WHATIF_WHATIF_H_
