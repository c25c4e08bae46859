// Suggestions: the fixes of each finding that fit the platform, the user's
// target and constraints, with an expected gain range and the risks.
#ifndef AIPROF_SRC_ANALYSIS_DIAGNOSIS_SUGGEST_H_
#define AIPROF_SRC_ANALYSIS_DIAGNOSIS_SUGGEST_H_

#include <optional>
#include <string>
#include <vector>

#include "src/analysis/diagnosis/diagnose.h"
#include "src/base/status.h"

namespace aiprof {

// One constraint such as "memory<3GB" or "precision_loss<1%".
struct Constraint {
  std::string name;  // memory | memory_increase | precision_loss | effort
  std::string op;    // < <= > >=
  double value = 0;  // bytes, fraction, or effort rank (low 0, medium 1, high 2)
  std::string text;  // as written
};

// A suggestion's effort as a rank: low 0, medium 1, high 2.
int EffortRank(const std::string& effort);

// Parses "memory<3GB,precision_loss<1%,effort<=medium".
StatusOr<std::vector<Constraint>> ParseConstraints(const std::string& text);

// A measured gain from a stored knowledge card (validate/card).
struct HistoricalGain {
  double gain_fraction = 0;  // measured reduction of latency
  double ci_low = 0, ci_high = 0;
  std::string card;          // a sentence describing the cards it comes from
  // The measured reduction on the base of the predictions the cards checked
  // (ExpectedGain::median_checked_change_rel), comparable with a simulated
  // gain; nullopt when no card checked one.
  std::optional<double> checked_gain;
};

// Where a suggestion's expected gain comes from.
inline constexpr char kGainFromSimulation[] = "simulation";
inline constexpr char kGainFromPrior[] = "prior: impact x efficacy";
inline constexpr char kGainFromCards[] = "knowledge card";

struct SuggestionOutcome {
  const Finding* finding = nullptr;
  const Suggestion* suggestion = nullptr;
  double gain_min = 0, gain_max = 0;  // expected fraction of the basis time removed
  double speedup_min = 1, speedup_max = 1;
  std::optional<HistoricalGain> history;
  std::optional<SimulatedGain> simulation;
  // kGainFromSimulation (the scenario replayed: 1 - predicted/measured step
  // wall time), kGainFromPrior (Amdahl over the finding's impact share times
  // the rule's efficacy range: the rule's prior belief), or kGainFromCards
  // (measured gains of stored cards, capped at the impact share).
  std::string gain_source = kGainFromPrior;
  // Why a suggestion with a scenario keeps the rule's prior (set by
  // SimulateSuggestions): "the trace has no steady steps", "the scenario
  // changes no slice of this trace", ...
  std::string not_simulated;
  // The most the fix can gain, where the finding's rule names a `removal`
  // (Rule::removal: the cause removed) and the diagnosis replayed it
  // (Impact::replayed): no fix of a cause gains more than removing it (no
  // overlap of communication gains more than `remove-comm`). A prior above
  // it is lowered to it (gain_min and gain_max each at most the cap) and
  // `prior_capped` says so; a simulation of the fix's own scenario replaces
  // both. nullopt: no replayed removal.
  std::optional<double> prior_cap;
  bool prior_capped = false;
  bool excluded = false;
  std::string exclusion_reason;
};

struct SuggestOptions {
  std::string target = "latency";  // latency | throughput | memory
  std::vector<Constraint> constraints;
};

struct SuggestResult {
  std::vector<SuggestionOutcome> kept;      // best expected gain first
  std::vector<SuggestionOutcome> excluded;  // with the reason
};

// Replaces the expected gain of `o` by a matching card's measured interval,
// bounded by Amdahl: never more than the finding's impact share.
void ApplyHistory(const HistoricalGain& history, SuggestionOutcome* o);

// What a suggestion's gain is a share of: "step wall time" (step start to
// the end of its last device work, the steady steps' median) for a simulated
// gain, else the finding's impact basis.
std::string GainBasis(const SuggestionOutcome& o);
// Where the gain comes from, in one sentence: "simulated 'remove-idle
// data_loading': 188.21 ms → 129.23 ms per step (95% interval 123.73 ms ..
// 134.73 ms, 6 steps)", or the prior or the cards it comes from.
std::string GainOrigin(const SuggestionOutcome& o);

// A simulated gain's central value: 1 − predicted / measured (corrected by
// history where it was); nullopt without a simulation.
std::optional<double> CentralSimulatedGain(const SuggestionOutcome& o);

// True when this trace says the fix pays: a gain measured on it (simulated,
// or from knowledge cards) whose interval lies above zero. A simulation
// corrected by history is judged by its replay's own interval (the steps'
// spread) and its corrected central value: the corrected interval also holds
// the prediction's error estimated from few past cases (docs/whatif.md), so
// one case that confirmed the fix widens it past zero (ResNet50's
// num_workers fix: 29.1% to 36.9% replayed, −2.2% to 58.1% after one card
// measured −28.4%) without saying the fix may not pay.
bool MeasuredToPay(const SuggestionOutcome& o);

// Orders kept suggestions, best first, in three tiers: (1) gains measured on
// this trace (simulated, or corrected by knowledge cards) that pay
// (MeasuredToPay); (2) priors (the rule's belief, not a measurement of this
// trace); (3) measured gains whose interval reaches zero or below (the trace
// says the fix may not pay). Within a tier by expected gain per effort (the
// middle of the gain interval; effort low 1, medium 2, high 4); ties keep
// the diagnosis' order of findings. `report`'s "Best fix": ChooseBestFix.
void RankSuggestions(SuggestResult* result);

// `metrics` supplies peak memory for memory constraints.
SuggestResult Suggest(const Diagnosis& diagnosis, const MetricSet& metrics, const SuggestOptions& options);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_DIAGNOSIS_SUGGEST_H_
