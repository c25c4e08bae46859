#include "src/analysis/validation/knowledge_card.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "src/analysis/validation/baseline_store.h"
#include "src/analysis/validation/statistics.h"

namespace aiprof {

StatusOr<std::vector<KnowledgeCard>> FindCards(BaselineStore* store, std::string_view bottleneck) {
  return store->Cards(bottleneck);
}

StatusOr<std::vector<KnowledgeCard>> FindCards(const std::string& db_path, std::string_view bottleneck) {
  ASSIGN_OR_RETURN(std::unique_ptr<BaselineStore> store, BaselineStore::Open(db_path));
  return store->Cards(bottleneck);
}

StatusOr<std::vector<KnowledgeCard>> AllCards(const std::string& db_path) {
  std::string path = db_path;
  if (path.empty()) {
    StatusOr<std::string> d = DefaultBaselineDbPath();
    if (!d.ok()) return std::vector<KnowledgeCard>();
    path = *d;
  }
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::vector<KnowledgeCard>();
  ASSIGN_OR_RETURN(std::unique_ptr<BaselineStore> store, BaselineStore::Open(path));
  return store->RecentCards(0);
}

ExpectedGain EstimateGain(const std::vector<KnowledgeCard>& cards) {
  ExpectedGain g;
  if (cards.empty()) return g;
  g.metric = cards[0].metric;
  g.confidence = cards[0].confidence;
  std::vector<double> changes, checked;
  bool first = true;
  for (const KnowledgeCard& c : cards) {
    if (c.metric != g.metric) continue;
    changes.push_back(c.change_rel);
    if (c.prediction && c.prediction->before_ns > 0 && c.prediction->measured_ns > 0) {
      checked.push_back(c.prediction->measured_ns / c.prediction->before_ns - 1);
    }
    g.lowest_ci_rel = first ? c.ci_low_rel : std::min(g.lowest_ci_rel, c.ci_low_rel);
    g.highest_ci_rel = first ? c.ci_high_rel : std::max(g.highest_ci_rel, c.ci_high_rel);
    first = false;
  }
  g.cards = changes.size();
  g.median_change_rel = Quantile(changes, 0.5);
  g.checked_cards = checked.size();
  if (!checked.empty()) g.median_checked_change_rel = Quantile(checked, 0.5);
  return g;
}

std::string DescribeExpectedGain(const ExpectedGain& g) {
  if (g.cards == 0) return "No measured history for this bottleneck.";
  char buf[320];
  std::snprintf(buf, sizeof(buf),
                "Expected from measured history (%zu knowledge card%s): %s %+.1f%% (median; %.0f%% confidence "
                "intervals span %+.1f%% .. %+.1f%%).",
                g.cards, g.cards == 1 ? "" : "s", g.metric.c_str(), 100 * g.median_change_rel, 100 * g.confidence,
                100 * g.lowest_ci_rel, 100 * g.highest_ci_rel);
  std::string out = buf;
  if (g.checked_cards > 0) {
    std::snprintf(buf, sizeof(buf),
                  " On the base of the predictions they checked (each card's before -> measured step time, as its "
                  "prediction compared them): %+.1f%% (median of %zu card%s).",
                  100 * g.median_checked_change_rel, g.checked_cards, g.checked_cards == 1 ? "" : "s");
    out += buf;
  }
  return out;
}

// The op that lost the most time per sample (ops gone after count in full),
// as "op:NAME", or "" when the inputs carry no ops.
std::string InferCardBottleneck(const RunSamples& before, const RunSamples& after, double* saved_ns) {
  double na = std::max<double>(1, static_cast<double>(before.latency_ns.size()));
  double nb = std::max<double>(1, static_cast<double>(after.latency_ns.size()));
  std::string best;
  *saved_ns = 0;
  for (const auto& [name, a] : before.op_dur_ns) {
    double before_total = 0, after_total = 0;
    for (double d : a) before_total += d;
    if (auto it = after.op_dur_ns.find(name); it != after.op_dur_ns.end()) {
      for (double d : it->second) after_total += d;
    }
    double saved = before_total / na - after_total / nb;
    if (saved > *saved_ns) {
      *saved_ns = saved;
      best = name;
    }
  }
  return best.empty() ? "" : "op:" + best;
}

}  // namespace aiprof
