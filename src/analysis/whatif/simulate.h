// Expected gains from simulation: each suggestion whose rule names a
// scenario (Suggestion::scenario, e.g. "remove-idle data_loading") gets the
// scenario replayed on the trace's dependency graph (whatif.h), and its
// expected gain becomes the simulated change of the steady step's wall time,
// with the interval of the prediction. Suggestions without a scenario keep
// the rule's prior (impact x efficacy), labelled as such.
#ifndef AIPROF_SRC_ANALYSIS_WHATIF_SIMULATE_H_
#define AIPROF_SRC_ANALYSIS_WHATIF_SIMULATE_H_

#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/diagnosis/suggest.h"
#include "src/analysis/validation/knowledge_card.h"

namespace aiprof {

// Simulates every kept and excluded suggestion with a scenario (each
// distinct scenario replayed once) and re-ranks the kept ones
// (RankSuggestions). Needs `path` built with its graph (the session's).
// A trace without steps (its one "step" would be the whole trace, start-up
// and idle included) or without steady steps leaves the priors in place.
void SimulateSuggestions(const Trace& trace, const CriticalPathResult& path, SuggestResult* result);

// The gain interval of a simulation: 1 - predicted/measured at the ends of
// the prediction's interval, as fractions of the measured step wall time.
void ApplySimulation(const SimulatedGain& sim, SuggestionOutcome* o);

// Corrects a simulated gain by the errors of past predictions of the same
// fix (cards whose prediction has the suggestion's id and a simulation):
// each past case gives r = ln(measured / predicted). Model: r ~ N(b, σ²) with
// a normal prior b ~ N(0, τ²), τ = kHistoryPriorSd (predictions unbiased
// a priori, a bias beyond ×0.61..×1.63 unlikely); σ is the past cases'
// sample standard deviation from 3 cases on, kHistoryCaseSd before. The
// posterior mean b̂ = (Σr/σ²) / (n/σ² + 1/τ²) shrinks the mean error toward
// 0 by how few cases there are; the prediction becomes p·exp(b̂) and its
// interval is widened to the predictive one, [lo, hi]·exp(b̂ ∓ 1.96·√(v + σ²))
// with v the posterior variance. No past case: nothing changes.
void CorrectByHistory(const std::vector<KnowledgeCard>& cards, SuggestionOutcome* o);
inline constexpr double kHistoryPriorSd = 0.25;
inline constexpr double kHistoryCaseSd = 0.15;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_WHATIF_SIMULATE_H_
