#include "src/session/session.h"

#include <sys/stat.h>

#include <map>

#include "src/analysis/critical_path/critical_path_analysis.h"
#include "src/analysis/page_faults/page_faults.h"
#include "src/analysis/page_faults/page_faults_analysis.h"
#include "src/analysis/rules/rule_loader.h"
#include "src/analysis/validation/baseline_store.h"
#include "src/analysis/validation/knowledge_card.h"
#include "src/analysis/validation/trace_identity.h"
#include "src/analysis/whatif/simulate.h"
#include "src/analysis/window/window_analysis.h"
#include "src/base/phase_log.h"
#include "src/importers/common/importer_registry.h"

namespace aiprof {

StatusOr<std::unique_ptr<AnalysisSession>> AnalysisSession::Open(SessionOptions options) {
  std::unique_ptr<Trace> trace;
  {
    ScopedPhase timed("import");
    ASSIGN_OR_RETURN(trace, ImportTrace(options.input));
  }
  return std::make_unique<AnalysisSession>(std::shared_ptr<const Trace>(std::move(trace)), std::move(options));
}

AnalysisSession::AnalysisSession(std::shared_ptr<const Trace> trace, SessionOptions options)
    : trace_(std::move(trace)), options_(std::move(options)), results_(*trace_, options_.analyze) {}

std::unique_ptr<AnalysisSession> AnalysisSession::ForTrace(const Trace& trace, SessionOptions options) {
  return std::make_unique<AnalysisSession>(std::shared_ptr<const Trace>(&trace, [](const Trace*) {}),
                                           std::move(options));
}

AnalysisSession::~AnalysisSession() = default;

const AnalysisReport& AnalysisSession::analyses() {
  std::call_once(analyses_once_, [&] { analyses_.emplace(RunAnalyses(results_)); });
  return *analyses_;
}

StatusOr<const std::vector<Rule>*> AnalysisSession::rules() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!rules_) {
    ScopedPhase timed(options_.analyze.phase_prefix, "rules");
    rules_.emplace([&]() -> StatusOr<std::vector<Rule>> {
      std::vector<Rule> rules;
      if (!options_.no_builtin_rules) {
        ASSIGN_OR_RETURN(rules, LoadBuiltinRules());
      }
      for (const std::string& path : options_.rule_paths) {
        ASSIGN_OR_RETURN(std::vector<Rule> more, LoadRules(path));
        MergeRules(&rules, std::move(more));
      }
      if (rules.empty()) return ErrStatus("no rules to apply (--no-builtin-rules without --rules)");
      return rules;
    }());
  }
  if (!rules_->ok()) return rules_->status();
  return &rules_->value();
}

StatusOr<const Diagnosis*> AnalysisSession::diagnosis() {
  ASSIGN_OR_RETURN(const std::vector<Rule>* rules, this->rules());
  const MetricSet& m = metrics();
  std::lock_guard<std::mutex> lock(mu_);
  if (!diagnosis_) {
    Diagnosis d;
    {
      ScopedPhase timed(options_.analyze.phase_prefix, "diagnose");
      d = Diagnose(*trace_, m, *rules);
    }
    // Each finding's cause removed in the replay, beside its Amdahl bound
    // (the dependency graph is built only when a rule names a removal).
    if (NeedsRemovalReplays(d)) {
      ScopedPhase sim(options_.analyze.phase_prefix, "simulate removals");
      SimulateRemovals(*trace_, results_.Get(kCriticalPath), &d);
    }
    diagnosis_.emplace(std::move(d));
  }
  return &*diagnosis_;
}

StatusOr<const SuggestResult*> AnalysisSession::suggestions() {
  ASSIGN_OR_RETURN(const Diagnosis* d, diagnosis());
  const MetricSet& m = metrics();
  std::lock_guard<std::mutex> lock(mu_);
  if (!suggestions_) {
    ScopedPhase timed(options_.analyze.phase_prefix, "suggest");
    SuggestResult s = Suggest(*d, m, options_.suggest);
    std::string db = options_.db;
    if (db.empty()) {
      StatusOr<std::string> default_db = DefaultBaselineDbPath();
      if (default_db.ok()) db = default_db.value();
    }
    // The dependency graph is built only when a suggestion has a scenario.
    bool scenarios = false;
    for (const auto* list : {&s.kept, &s.excluded}) {
      for (const SuggestionOutcome& o : *list) scenarios |= !o.suggestion->scenario.empty();
    }
    if (scenarios) {
      ScopedPhase sim(options_.analyze.phase_prefix, "simulate suggestions");
      SimulateSuggestions(*trace_, results_.Get(kCriticalPath), &s);
    }
    if (options_.attach_history) {
      RETURN_IF_ERROR(AttachHistory(db, &s, history_scope(db)));
      RankSuggestions(&s);
    }
    suggestions_.emplace(std::move(s));
  }
  return &*suggestions_;
}

HistoryScope AnalysisSession::history_scope(const std::string& db) const {
  HistoryScope scope;
  scope.workload = WorkloadSignature(*trace_);
  scope.checked_inputs = options_.history_checked_inputs;
  struct stat st;
  if (!db.empty() && ::stat(db.c_str(), &st) == 0) {
    StatusOr<std::string> id = InputIdentity(options_.input);
    if (id.ok()) scope.predicted_input = std::move(id).value();
  }
  return scope;
}

StatusOr<RunSamples> AnalysisSession::samples(const TraceSampleOptions& options) {
  TraceSampleOptions o = options;
  o.results = &results_;  // request tokens read from the session's results
  return SamplesFromTrace(*trace_, options_.input, o);
}

Status AttachHistory(const std::string& db_path, SuggestResult* result, const HistoryScope& scope) {
  struct stat st;
  if (db_path.empty() || ::stat(db_path.c_str(), &st) != 0) return OkStatus();
  std::map<std::string, std::optional<HistoricalGain>> by_bottleneck;
  std::map<std::string, std::vector<KnowledgeCard>> cards_of;
  for (SuggestionOutcome& o : result->kept) {
    const std::string& bottleneck = o.finding->rule->bottleneck;
    auto it = by_bottleneck.find(bottleneck);
    if (it == by_bottleneck.end()) {
      ASSIGN_OR_RETURN(std::vector<KnowledgeCard> cards, FindCards(db_path, bottleneck));
      cards_of[bottleneck] = cards;
      std::optional<HistoricalGain> h;
      if (!cards.empty()) {
        ExpectedGain g = EstimateGain(cards);
        // Cards store after/before - 1 (negative = faster); gains are reductions.
        h.emplace();
        h->gain_fraction = -g.median_change_rel;
        h->ci_low = -g.highest_ci_rel;
        h->ci_high = -g.lowest_ci_rel;
        h->card = DescribeExpectedGain(g);
        if (g.checked_cards > 0) h->checked_gain = -g.median_checked_change_rel;
      }
      it = by_bottleneck.emplace(bottleneck, h).first;
    }
    if (it->second) ApplyHistory(*it->second, &o);
    CorrectByHistory(cards_of[bottleneck], &o, scope);
  }
  return OkStatus();
}

WhatIfResult AnalysisSession::WhatIf(const Scenario& scenario) {
  // The window memoised with the session's options (a trace without steps
  // is predicted on its per-trace base).
  WhatIfResult r = PredictWhatIf(trace(), results().Get(kCriticalPath), scenario, &results().Get(kWindow));
  // A trace with page-fault records: how much of the step they hold, which
  // the replay keeps where they were.
  if (HasPageFaultData(trace())) {
    std::string note = PageFaultWhatIfNote(results().Get(kPageFaults));
    if (!note.empty()) r.notes.push_back(std::move(note));
  }
  return r;
}

}  // namespace aiprof
