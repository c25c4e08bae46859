// A prediction checked against what was measured (src/session/
// prediction_check.h computes it; validate, report --before and card show
// and store it). Both figures on one time base: the steady steps' median wall
// time (step start to the end of its last device work), each with its 95%
// interval; their mean for a scenario that acts on one step in N.
#ifndef AIPROF_SRC_ANALYSIS_VALIDATION_PREDICTION_H_
#define AIPROF_SRC_ANALYSIS_VALIDATION_PREDICTION_H_

#include <cstddef>
#include <string>

namespace aiprof {

struct PredictionCheck {
  std::string fix_id, fix_title, bottleneck;
  std::string matched_by;  // "--fix-id" or "finding '...' gone after" / "... fell from X to Y"
  std::string source;      // kGainFromSimulation, kGainFromPrior, kGainFromCards
  std::string scenario;    // the simulated scenario ("" for a prior)
  std::string time_base = "steady step wall time: step start to the end of its last device work";
  // Every figure below is the steady steps' mean (with Student's t
  // intervals) instead of their median: the simulated scenario acts on one
  // step in N (SimulatedGain::mean).
  bool mean = false;
  // Every figure is a step period (the simulation's base where the device
  // runs behind the host, SimulatedGain::step_period): end of the previous
  // step's device work to the end of its own, measured so on both runs
  // (SteadyStepPeriod), not the step wall time.
  bool step_period = false;
  // No steady step launched device work (SimulatedGain::host_only): the
  // step wall time ends at the step's own end (StepEndText).
  bool host_only = false;
  size_t before_steps = 0, after_steps = 0;  // steady steps, summed over the runs
  size_t before_runs = 1, after_runs = 1;    // runs pooled (PoolPredictionRuns)
  double before_ns = 0;  // measured before (median of the steady steps)
  double predicted_ns = 0, predicted_lo_ns = 0, predicted_hi_ns = 0;
  double measured_ns = 0, measured_lo_ns = 0, measured_hi_ns = 0;  // after
  double error = 0;      // predicted / measured - 1
  bool within = false;   // the measured median lies inside the predicted interval
  bool agrees = false;   // the two intervals overlap
  // |error| <= kPredictionAccuracyBar: the verdict a reader gets first
  // (within/agrees say nothing on their own when the interval is wide).
  bool hit = false;
  // The predicted interval reaches below (1 - kTooWideInterval) or above
  // (1 + kTooWideInterval) times the prediction: too wide for "inside" to
  // confirm anything (zero_grad_set_to_none: 64.11 ms [3.38, 66.93] against
  // 4.04 ms measured, +1488.7%, "inside").
  bool too_wide = false;
  // The predicted interval's coverage and how it was made (IntervalLabel):
  // 0.96875, "[min, max] of the 6 steps"; a history-corrected prediction's
  // is the correction model's, not the replay's. 0 and "" where no level
  // can be stated (a prior's range of gains, a span of runs' intervals).
  double predicted_interval_level = 0;
  std::string predicted_interval_kind{};
  // The same for the measured interval (the after run's steady steps, or
  // the runs pooled).
  double measured_interval_level = 0;
  std::string measured_interval_kind{};
  size_t history_cases = 0;   // past cases (cards) the prediction was corrected by
  // The prediction before that correction, and its interval (the
  // prediction itself when nothing corrected it).
  double uncorrected_ns = 0, uncorrected_lo_ns = 0, uncorrected_hi_ns = 0;
  // The past cases' scenes and what was left out (DescribePastCases: the
  // cases of the very inputs checked among them); "" when none was found.
  std::string history_from{};
};

// The accuracy bar of issue #23 (docs/whatif.md, "Accuracy on real pairs"):
// a prediction within 15% of the measured figure is a hit.
inline constexpr double kPredictionAccuracyBar = 0.15;
// An interval that reaches beyond ±50% of its prediction is too wide to tell
// a hit from a miss.
inline constexpr double kTooWideInterval = 0.5;

// An interval's coverage (0: none stated) and how it was made, for people.
struct IntervalLabel {
  double level = 0;
  std::string kind;
};
// MedianWithInterval's order-statistic interval of the median of n values:
// its coverage 1 - 2·P(Binomial(n, 1/2) <= k - 1), at least 95% from 6
// values, [min, max] below (1 - 2^(1-n)); n < 2: level 0, "one step: no
// interval (zero width)". `what`: "step" ("the 6 steps").
IntervalLabel MedianIntervalLabel(size_t n, const std::string& what = "step");
// Student's t over n values: 95%.
IntervalLabel MeanIntervalLabel(size_t n, const std::string& what = "step");
// A prediction corrected by `cases` past cases (CorrectionFromLogErrors,
// docs/whatif.md "Predictions corrected by history"): the replay's interval
// widened by the 95% predictive spread of a new case's log error (normal,
// σ plugged in), so at least 95% under that model, nominally.
IntervalLabel HistoryIntervalLabel(size_t cases);
// "96.9%: [min, max] of the 6 steps"; "no stated level: KIND" at level 0.
std::string DescribeIntervalLabel(double level, const std::string& kind);

// Sets error, within, agrees, hit and too_wide from the figures.
void JudgePrediction(PredictionCheck* c);

// The time base every figure of `c` is on, short: its time_base up to the
// first "; " ("steady step wall time, median: step start to the end of its
// last device work").
std::string PredictionBaseName(const PredictionCheck& c);

// One line: "prediction for dataloader_workers (simulation: 'overlap-data-
// loading 4'): hit, +3.0% against the measured after run (within the 15%
// accuracy bar); on its base, the steady step wall time, median: ...: before
// 189.08 ms -> predicted 130.66 ms (-30.9%) -> measured 126.86 ms (-32.9%) per
// step; predicted interval ... (96.9%: [min, max] of the 6 steps), the
// measurement inside it; measured interval ...".
std::string DescribePredictionCheck(const PredictionCheck& c);
// Its verdict and three figures alone (up to "per step"), for a headline
// card; the full line goes where the intervals are read.
std::string BriefPredictionCheck(const PredictionCheck& c);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_VALIDATION_PREDICTION_H_
