// The loop closed: the prediction made for a before run, for the fix the
// after run applied, against what the after run measured. Both on one time
// base: the steady steps' median wall time (step start to the end of its last
// device work, the critical path's length), each with a distribution-free
// interval of the median (MedianWithInterval: order statistics of the
// before run's predicted steps, and of the after run's measured steps).
//
// The fix: `--fix-id ID` (a suggestion id of the before run), else inferred
// from what changed (InferAppliedFix) and the finding's best ranked
// suggestion.
#ifndef AIPROF_SRC_SESSION_PREDICTION_CHECK_H_
#define AIPROF_SRC_SESSION_PREDICTION_CHECK_H_

#include <optional>
#include <string>
#include <vector>

#include "src/analysis/scenario/scenario.h"
#include "src/analysis/validation/knowledge_card.h"
#include "src/analysis/validation/prediction.h"
#include "src/analysis/validation/statistics.h"
#include "src/base/status.h"
#include "src/session/session.h"

namespace aiprof {

// The finding whose fix the after run applied, inferred from what changed
// between the two diagnoses, and how (PredictionCheck::matched_by).
// Candidates: the before run's findings that are gone after or whose impact
// fell to less than half, except the descriptive one (compute), the spread
// of step or op times (long_tail: any change moves it), and a finding that
// names ops (fusion_missing: its candidates' ops) whose ops take at least
// kNamedOpsFasterRatio of their time per step after (they were neither
// fused nor removed: the finding went for another reason). Of the rest, an
// exclusive impact (ExclusiveImpact: a disjoint part of the step, which
// others' time may lie inside and leave with) first, then the most time per
// step no longer spent. Confidence "medium" for one candidate, "low" for
// several. nullopt (and *why_not, when given, says why) when none is left.
struct InferredFix {
  const Finding* finding = nullptr;
  std::string confidence;
  std::string how;
};
inline constexpr double kNamedOpsFasterRatio = 0.75;
std::optional<InferredFix> InferAppliedFix(AnalysisSession& before, AnalysisSession& after, const Diagnosis& db,
                                           const Diagnosis& da, std::string* why_not = nullptr);

// The suggestion `id` among a run's kept or excluded suggestions; nullptr
// when it has none of that id (CheckPrediction's unknown --fix-id).
const SuggestionOutcome* FindSuggestionOutcome(const SuggestResult& r, const std::string& id);

// A suggestion's expected gain that no replay gives (a prior: impact x
// efficacy; or the stored cards' measured gains) on a check's time base: the
// gain is a share of the time per step (suggest: "28.0% to 35.1% of the time
// per step"), so the step on `base_ns` is predicted as base x (1 - share):
// the central figure at the midpoint share (suggest states no central
// value), the interval base x (1 - gain_max) .. base x (1 - gain_min). The
// check thereby restates suggest's own range as a change of its base, on
// whichever base it measures (the finding's basis, the mean steady host
// step, is a share's denominator, not a time to take off another base).
struct GainOnBase {
  double predicted_ns = 0, lo_ns = 0, hi_ns = 0;
};
GainOnBase PredictGainOnBase(double base_ns, double gain_min, double gain_max);

// nullopt when no fix is named and none could be inferred (*why_not, when
// given, says why), or a run has no steady step. An unknown --fix id is an
// error listing the before run's suggestion ids.
StatusOr<std::optional<PredictionCheck>> CheckPrediction(AnalysisSession& before, AnalysisSession& after,
                                                         const std::string& fix_id, std::string* why_not = nullptr);

// ResolveScenarioDevices for a scenario a user stated (a flag's text:
// whatif, validate, card and report --scenario): a device clause naming a
// device the devices files lack, or one that needs 'from NAME', is a bad
// command line (Status::Usage, exit 2) as ParseScenario's errors are; a
// devices file that cannot be read stays an error of its own (exit 1).
Status ResolveStatedScenarioDevices(const Trace& trace, const std::string& devices_file, Scenario* scenario);

// The fix stated as a what-if scenario (card --scenario) instead of a
// suggestion: the before run's replay of `scenario` against the after run,
// on the steady steps' mean when `mean`, else their median, corrected by
// the past cases of the same scenario among `history`
// (CorrectWhatIfByHistory; empty: none). The error names the scenario's bad
// clause or unknown device (ResolveStatedScenarioDevices). nullopt when a
// run has no steady step.
StatusOr<std::optional<PredictionCheck>> CheckScenarioPrediction(AnalysisSession& before, AnalysisSession& after,
                                                                 const std::string& scenario, bool mean,
                                                                 const std::string& devices_file,
                                                                 const std::vector<KnowledgeCard>& history);

// Before run `before`'s prediction of `fix_id` for pooling (several runs a
// side): CheckPrediction's, or, when this run does not suggest the fix (its
// finding did not fire here), a prediction of no change (the run's own
// steady median and its interval; `mean`: its mean, as the first pair's
// check), with *suggested false. nullopt when a
// run has no steady step.
StatusOr<std::optional<PredictionCheck>> PredictFixForRun(AnalysisSession& before, AnalysisSession& after,
                                                          const std::string& fix_id, bool mean, bool* suggested);

// One run's figure on the prediction's time base: the median of its steady
// steps' wall time and that median's interval, or (`mean`) their mean and
// its Student's t interval (n = its steady steps).
MeanInterval SteadyStepWallTime(AnalysisSession& s, bool mean = false);
// The steady steps' periods (ComputeStepPeriods: end of the previous step's
// device work on its rank to the end of its own; a rank's first step has
// none), median or mean as above: what a simulation on the step period
// (the device runs behind the host) is checked against.
MeanInterval SteadyStepPeriod(AnalysisSession& s, bool mean = false);
// The after run's figure on `c`'s base: SteadyStepPeriod when
// c.step_period, else SteadyStepWallTime.
MeanInterval SteadyStepTime(AnalysisSession& s, const PredictionCheck& c);

// Several runs a side (validate --before A1 --before A2 ... --after B1 ...):
// `before[i]` is before run i's check of one fix (the fix the first pair
// matched, named by id for the others), `after[j]` after run j's
// SteadyStepWallTime. Each side's figure is the mean over its runs, and its
// interval Student's t interval over the runs when the side has at least
// kMinRunsForTest runs (the run is the unit, as in validate's verdict: fresh
// processes of one program differ by more than a run's own interval), else
// the span of the runs' own intervals. `before` must not be empty.
PredictionCheck PoolPredictionRuns(const std::vector<PredictionCheck>& before, const std::vector<MeanInterval>& after);

}  // namespace aiprof

#endif  // AIPROF_SRC_SESSION_PREDICTION_CHECK_H_
