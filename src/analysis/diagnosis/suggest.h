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

// Parses "memory<3GB,precision_loss<1%,effort<=medium".
StatusOr<std::vector<Constraint>> ParseConstraints(const std::string& text);

// A measured gain from a stored knowledge card (validate/card).
struct HistoricalGain {
  double gain_fraction = 0;  // measured reduction of latency
  double ci_low = 0, ci_high = 0;
  std::string card;          // a sentence describing the cards it comes from
};

struct SuggestionOutcome {
  const Finding* finding = nullptr;
  const Suggestion* suggestion = nullptr;
  double gain_min = 0, gain_max = 0;  // expected fraction of the basis time removed
  double speedup_min = 1, speedup_max = 1;
  std::optional<HistoricalGain> history;
  // "impact x efficacy" (Amdahl over the finding's impact share), or
  // "knowledge card" (the measured gain's interval, capped at the impact share).
  std::string gain_source = "impact x efficacy";
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

// `metrics` supplies peak memory for memory constraints.
SuggestResult Suggest(const Diagnosis& diagnosis, const MetricSet& metrics, const SuggestOptions& options);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_DIAGNOSIS_SUGGEST_H_
