// Knowledge cards: what one optimisation measurably did. A card holds the
// scene (workload and setting), the core bottleneck it addressed, the fix,
// and the measured gain with its confidence interval, from `aiprof card`.
//
// Use from other commands (e.g. `suggest`), where a finding has a bottleneck type:
//
//   StatusOr<std::vector<KnowledgeCard>> cards = FindCards(DefaultBaselineDbPath(), "layout_conversion");
//   if (cards.ok() && !cards->empty()) {
//     ExpectedGain g = EstimateGain(*cards);
//     // "Expected gain from 3 measured fixes: latency -9.8% (range of 95% CIs -12.1% .. -7.0%)"
//     std::string line = DescribeExpectedGain(g);
//   }
//
// Bottleneck types are free strings matched exactly (case-insensitive); use
// the rule or finding id the finding already has.
#ifndef AIPROF_SRC_ANALYSIS_VALIDATION_KNOWLEDGE_CARD_H_
#define AIPROF_SRC_ANALYSIS_VALIDATION_KNOWLEDGE_CARD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/analysis/validation/run_samples.h"
#include "src/base/status.h"

namespace aiprof {

// The prediction that was made for the card's before run, for its fix, and
// what the after run measured, on one time base: the steady steps' wall time
// (ns), their median or their mean (`statistic`; src/session/
// prediction_check.h).
struct CardPrediction {
  std::string fix_id;    // the suggestion id; "" for a fix stated as a scenario (card --scenario)
  std::string source;    // "simulation" or "prior: impact x efficacy"
  std::string scenario;  // "" for a prior
  double predicted_ns = 0, predicted_lo_ns = 0, predicted_hi_ns = 0;
  double measured_ns = 0, measured_lo_ns = 0, measured_hi_ns = 0;
  std::string statistic = "median";  // "median" or "mean" of the steady steps
  // What the case is tied to (src/analysis/validation/trace_identity.h):
  // the before and after inputs' InputIdentity (one measured pair is one
  // case, and a check of that very pair leaves it out) and the before
  // trace's WorkloadSignature (a case corrects only the same workload).
  // "" in a card stored before aiprof recorded them.
  std::string before_input{}, after_input{}, workload{};
  // The before run's figure on the same base (PredictionCheck::before_ns),
  // so the card reads before -> predicted -> measured; 0 in a card stored
  // before aiprof recorded it.
  double before_ns = 0;
};

struct KnowledgeCard {
  int64_t id = 0;  // 0 until stored
  int64_t created_unix_ms = 0;
  std::string scene;       // workload and setting, e.g. "convnet bs8 64x64, CPU, torch 1.13"
  std::string bottleneck;  // core bottleneck type, e.g. "layout_conversion"
  std::string fix;         // the effective fix, e.g. "channels_last model and input"
  std::string metric;      // the metric measured, e.g. "latency"
  std::string statistic;   // "mean" or "median"
  std::string unit;        // of before/after: "ns", "items/s", ...
  bool higher_is_better = false;
  std::string before_label, after_label;
  size_t n_before = 0, n_after = 0;
  double before = 0, after = 0;
  double change_rel = 0;                 // after / before - 1
  double ci_low_rel = 0, ci_high_rel = 0;  // bootstrap interval of change_rel
  double confidence = 0.95;
  double p_value = 1;
  std::string test;     // the test that decided
  std::string verdict;  // VerdictId of the metric: "improved", ...
  std::optional<CardPrediction> prediction;
};

// What stored cards for one bottleneck say a fix should gain.
struct ExpectedGain {
  size_t cards = 0;
  std::string metric;
  double median_change_rel = 0;  // median over cards of change_rel
  double lowest_ci_rel = 0, highest_ci_rel = 0;  // envelope of the cards' intervals
  double confidence = 0.95;
  // The cards that checked a prediction with its before figure: the median
  // of their measured change on the prediction's own base (before_ns ->
  // measured_ns), which a simulated gain beside this history is comparable
  // with; the metric's change above is on the card's samples (for a trace,
  // its recorded step spans), another base (trial sceptic, finding 6).
  size_t checked_cards = 0;
  double median_checked_change_rel = 0;
};

class BaselineStore;

// Cards whose bottleneck equals `bottleneck` (case-insensitive), newest first.
StatusOr<std::vector<KnowledgeCard>> FindCards(BaselineStore* store, std::string_view bottleneck);
// The same, opening the database at `db_path` read-write (it is created if missing).
StatusOr<std::vector<KnowledgeCard>> FindCards(const std::string& db_path, std::string_view bottleneck);

// Every card, newest first, from the database at `db_path` ("": the user's
// default, DefaultBaselineDbPath, as the suggestions' history uses); none
// when the file does not exist (it is not created) or, for "", when there
// is no default path (no HOME).
StatusOr<std::vector<KnowledgeCard>> AllCards(const std::string& db_path);

// Summarises cards measured on one metric (the first card's; others are skipped).
ExpectedGain EstimateGain(const std::vector<KnowledgeCard>& cards);
// One sentence saying that the figure comes from measured history.
std::string DescribeExpectedGain(const ExpectedGain& gain);

// The op that lost the most time per sample between two runs (ops gone after
// count in full), as "op:NAME", with the time saved per sample in
// `saved_ns`; "" when the runs carry no ops.
std::string InferCardBottleneck(const RunSamples& before, const RunSamples& after, double* saved_ns);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_VALIDATION_KNOWLEDGE_CARD_H_
