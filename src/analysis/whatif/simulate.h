// Expected gains from simulation: each suggestion whose rule names a
// scenario (Suggestion::scenario, e.g. "remove-idle data_loading") gets the
// scenario replayed on the trace's dependency graph (whatif.h), and its
// expected gain becomes the simulated change of the steady step's wall time,
// with the interval of the prediction. Suggestions without a scenario keep
// the rule's prior (impact x efficacy), labelled as such.
#ifndef AIPROF_SRC_ANALYSIS_WHATIF_SIMULATE_H_
#define AIPROF_SRC_ANALYSIS_WHATIF_SIMULATE_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/diagnosis/suggest.h"
#include "src/analysis/validation/knowledge_card.h"
#include "src/analysis/whatif/whatif.h"

namespace aiprof {

// Simulates every kept and excluded suggestion with a scenario (each
// distinct scenario replayed once) and re-ranks the kept ones
// (RankSuggestions). Needs `path` built with its graph (the session's).
// A trace without steps (its one "step" would be the whole trace, start-up
// and idle included) or without steady steps leaves the priors in place.
void SimulateSuggestions(const Trace& trace, const CriticalPathResult& path, SuggestResult* result);

// Replays each finding's rule `removal` scenario (Rule::removal; each
// distinct one once) and sets Impact::replayed: the dependency-aware
// counterpart of the impact's Amdahl bound. Per-step impacts only; a trace
// without steps or steady steps leaves them unset.
void SimulateRemovals(const Trace& trace, const CriticalPathResult& path, Diagnosis* diagnosis);
// Whether SimulateRemovals has anything to replay (the dependency graph is
// built only then).
bool NeedsRemovalReplays(const Diagnosis& diagnosis);

// The gain interval of a simulation: 1 - predicted/measured at the ends of
// the prediction's interval, as fractions of the measured step wall time.
void ApplySimulation(const SimulatedGain& sim, SuggestionOutcome* o);

// Which past cases may correct a prediction (docs/whatif.md "Predictions
// corrected by history"). Whatever the scope, one measured pair is one case:
// cards of the same before and after inputs (InputIdentity) count once, the
// newest.
struct HistoryScope {
  // The WorkloadSignature of the trace predicted: only cases of a workload
  // at least kSameWorkloadSimilarity alike count (a case stored without one
  // does not). "": every workload counts.
  std::string workload;
  // InputIdentity of the inputs a check compares (validate, report
  // --before): a case whose before or after input is one of them is the
  // measurement being checked, and is left out.
  std::vector<std::string> checked_inputs;
  // InputIdentity of the trace being predicted (whatif, suggest, report):
  // a case measured from it (its before input) is this very trace's
  // outcome, not a past case: counting it would correct the prediction by
  // the answer it predicts (trial sceptic, finding 2). Left out.
  std::string predicted_input;
};

// The cases that count, and what was left out.
struct PastCases {
  std::vector<double> r;            // ln(measured / predicted), one per case
  std::vector<std::string> scenes;  // each case's card scene, in the same order
  size_t repeats = 0;               // cards of a pair already counted
  size_t other_workload = 0;        // of another workload, or of none recorded
  size_t checked = 0;               // of the inputs being checked
  size_t same_trace = 0;            // measured from the trace being predicted
};
PastCases SelectPastCases(const std::vector<KnowledgeCard>& cards, const std::string& statistic,
                          const std::function<bool(const CardPrediction&)>& same_fix, const HistoryScope& scope);
// "2 past case(s) (scenes: 'resnet50 bs32' x2); left out: 3 repeated cards
// of a counted pair, 1 of another workload"; "" when nothing counted and
// nothing was left out.
std::string DescribePastCases(const PastCases& cases);

// Corrects a simulated gain by the errors of past predictions of the same
// fix (cards whose prediction has the suggestion's id and a simulation, in
// `scope`): each past case gives r = ln(measured / predicted). Model:
// r ~ N(b, σ²) with a normal prior b ~ N(0, τ²), τ = kHistoryPriorSd
// (predictions unbiased a priori, a bias beyond ×0.61..×1.63 unlikely). σ² is
// the cases' variance moderated by a prior worth kHistoryPriorDof cases at
// σ0 = kHistoryCaseSd: σ² = (ν0·σ0² + Σ(r - r̄)²) / (ν0 + n - 1), so one case
// reads σ0 and a few cases that happen to agree do not read as certainty.
// The posterior mean b̂ = (Σr/σ²) / (n/σ² + 1/τ²) shrinks the mean error
// toward 0 by how few cases there are; the prediction becomes p·exp(b̂) and
// its interval is widened to the predictive one, [lo, hi]·exp(b̂ ∓
// 1.96·√(v + σ²)) with v the posterior variance. No past case: nothing
// changes. Only cases measured on the simulation's statistic (median, or
// mean for a scenario that acts on one step in N) count.
void CorrectByHistory(const std::vector<KnowledgeCard>& cards, SuggestionOutcome* o, const HistoryScope& scope = {});
inline constexpr double kHistoryPriorSd = 0.25;
inline constexpr double kHistoryCaseSd = 0.15;
inline constexpr double kHistoryPriorDof = 4;

// The model above, on past cases' log errors r = ln(measured / predicted):
// the prediction is multiplied by exp(bias) and its interval's ends by
// exp(bias ∓ spread). nullopt without a case.
struct HistoryCorrection {
  size_t cases = 0;
  double bias = 0;    // the posterior mean b̂
  double spread = 0;  // 1.96·√(v + σ²)
};
std::optional<HistoryCorrection> CorrectionFromLogErrors(const std::vector<double>& r);
// Applies `h` to a prediction and its interval.
void ApplyCorrection(const HistoryCorrection& h, double* predicted, double* lo, double* hi);

// The log errors of the cards' simulated predictions on `statistic`
// ("median" or "mean") that `same_fix` accepts: SelectPastCases(..., {}).r.
std::vector<double> PastLogErrors(const std::vector<KnowledgeCard>& cards, const std::string& statistic,
                                  const std::function<bool(const CardPrediction&)>& same_fix);

// whatif --db: corrects a what-if's median and mean predictions by the past
// cases of the same scenario (cards whose simulated scenario has the same
// CanonicalScenarioText, whichever suggestion or `card --scenario` stored
// them) in `scope`, each statistic by the cases measured on it; a note
// names the cases' scenes and what was left out.
void CorrectWhatIfByHistory(const std::vector<KnowledgeCard>& cards, WhatIfResult* r, const HistoryScope& scope = {});

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_WHATIF_SIMULATE_H_
