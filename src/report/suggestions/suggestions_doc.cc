#include "src/report/suggestions/suggestions_doc.h"

#include <optional>

#include "src/analysis/diagnosis/suggest.h"
#include "src/analysis/rules/rule.h"
#include "src/report/diagnosis/diagnosis_report.h"

namespace aiprof {
namespace {

Tree Changes(const Suggestion& s) {
  Tree list = Tree::List();
  for (const SuggestionChange& c : s.changes) {
    Tree& m = list.Push(Tree::Map());
    m.Set("tool", Tree::String(c.tool));
    m.Set("kind", Tree::String(c.kind));
    m.Set("setting", Tree::String(c.setting));
    m.Set("value", Tree::String(c.value));
  }
  return list;
}

Tree Answers(const Finding& f) {
  Tree m = Tree::Map();
  m.Set("finding", Tree::String(f.rule->id));
  m.Set("bottleneck", Tree::String(f.rule->bottleneck));
  m.Set("title", Tree::String(f.rule->title));
  m.Set("confidence", Tree::String(ConfidenceName(f.confidence)));
  m.Set("priority", Tree::String(PriorityName(f.priority)));
  Tree& impact = m.Set("impact", Tree::Map());
  impact.Set("share", Tree::Number(f.impact.share));
  impact.Set("time_ms", Tree::Number(f.impact.time_ns / 1e6));
  impact.Set("of", Tree::String(f.impact.basis));
  impact.Set("of_ms", Tree::Number(f.impact.basis_ns / 1e6));
  return m;
}

Tree Outcome(const SuggestionOutcome& o) {
  const Suggestion& s = *o.suggestion;
  Tree m = Tree::Map();
  m.Set("id", Tree::String(s.id));
  m.Set("title", Tree::String(s.title));
  m.Set("platform", Tree::String(s.platform));
  m.Set("answers", Answers(*o.finding));
  m.Set("action", Tree::String(s.action));
  m.Set("changes", Changes(s));
  Tree& gain = m.Set("expected_gain", Tree::Map());
  gain.Set("min", Tree::Number(o.gain_min));
  gain.Set("max", Tree::Number(o.gain_max));
  if (std::optional<double> central = CentralSimulatedGain(o)) gain.Set("central", Tree::Number(*central));
  gain.Set("of", Tree::String(GainBasis(o)));
  gain.Set("of_ms", Tree::Number(o.simulation ? o.simulation->measured_ns / 1e6 : o.finding->impact.basis_ns / 1e6));
  gain.Set("source", Tree::String(o.gain_source));
  gain.Set("origin", Tree::String(GainOrigin(o)));
  if (Tree cap = PriorCapTree(o); cap.kind() == Tree::Kind::kMap) gain.Set("cap", std::move(cap));
  Tree& speedup = m.Set("speedup", Tree::Map());
  speedup.Set("min", Tree::Number(o.speedup_min));
  speedup.Set("max", Tree::Number(o.speedup_max));
  Tree& risk = m.Set("risk", Tree::Map());
  risk.Set("precision_loss", Tree::Number(s.risk.precision_loss));
  risk.Set("memory_increase", Tree::Number(s.risk.memory_increase));
  risk.Set("effort", Tree::String(s.risk.effort));
  risk.Set("note", Tree::String(s.risk.note));
  if (o.simulation) {
    m.Set("simulation", SimulatedGainTree(*o.simulation));
  } else {
    m.Set("scenario", Tree::String(s.scenario));
  }
  if (o.history) {
    Tree& h = m.Set("history", Tree::Map());
    h.Set("gain", Tree::Number(o.history->gain_fraction));
    h.Set("ci_low", Tree::Number(o.history->ci_low));
    h.Set("ci_high", Tree::Number(o.history->ci_high));
    h.Set("card", Tree::String(o.history->card));
    if (o.history->checked_gain) h.Set("checked_gain", Tree::Number(*o.history->checked_gain));
  }
  return m;
}

}  // namespace

Tree SuggestionsTree(const DiagnosisReport& r) {
  Tree doc = Tree::Map();
  doc.Set("schema", Tree::String(kSuggestionsSchema));
  doc.Set("generated_by", Tree::String("aiprof " AIPROF_VERSION));
  doc.Set("source", Tree::String(r.source));
  doc.Set("platform", Tree::String(r.diagnosis->platform.Describe()));
  doc.Set("target", Tree::String(r.options ? r.options->target : std::string("latency")));
  Tree& constraints = doc.Set("constraints", Tree::List());
  if (r.options) {
    for (const Constraint& c : r.options->constraints) constraints.Push(Tree::String(c.text));
  }
  Tree& kept = doc.Set("suggestions", Tree::List());
  Tree& excluded = doc.Set("excluded", Tree::List());
  if (r.suggestions) {
    for (const SuggestionOutcome& o : r.suggestions->kept) kept.Push(Outcome(o));
    for (const SuggestionOutcome& o : r.suggestions->excluded) {
      Tree& m = excluded.Push(Tree::Map());
      m.Set("id", Tree::String(o.suggestion->id));
      m.Set("finding", Tree::String(o.finding->rule->id));
      m.Set("title", Tree::String(o.suggestion->title));
      m.Set("reason", Tree::String(o.exclusion_reason));
    }
  }
  return doc;
}

std::string SuggestionsToYaml(const DiagnosisReport& r) { return TreeToYaml(SuggestionsTree(r)); }
std::string SuggestionsToJson(const DiagnosisReport& r) { return TreeToJson(SuggestionsTree(r)); }

}  // namespace aiprof
