// A prediction checked against what was measured (src/session/
// prediction_check.h computes it; validate, report --before and card show
// and store it). Both figures on one time base: the steady steps' median wall
// time (step start to the end of its last device work), each with its 95%
// interval; their mean for a scenario that acts on one step in N.
#ifndef AIPROF_SRC_ANALYSIS_WHATIF_PREDICTION_H_
#define AIPROF_SRC_ANALYSIS_WHATIF_PREDICTION_H_

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
  size_t history_cases = 0;   // past cases (cards) the prediction was corrected by
  // The prediction before that correction, and its interval (the
  // prediction itself when nothing corrected it).
  double uncorrected_ns = 0, uncorrected_lo_ns = 0, uncorrected_hi_ns = 0;
  // The past cases' scenes and what was left out (DescribePastCases: the
  // cases of the very inputs checked among them); "" when none was found.
  std::string history_from{};
};

// One line: "prediction for dataloader_workers (simulation: 'remove-idle
// data_loading'): 129.2 ms (123.7 .. 134.7) vs measured 134.2 ms (120.1 ..
// 148.3) per step: -3.7%, inside the predicted interval".
std::string DescribePredictionCheck(const PredictionCheck& c);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_WHATIF_PREDICTION_H_
