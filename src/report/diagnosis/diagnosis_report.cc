#include "src/report/diagnosis/diagnosis_report.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "src/analysis/common/text_format.h"
#include "src/analysis/critical_path/critical_path.h"
#include "src/report/metric_unit.h"

namespace aiprof {
namespace {

// The analyses' number formats (text_format.h), as ImpactText writes them.
std::string PercentText(double f) { return FormatPercent(f); }
std::string MsFixed(double ns) { return FormatFixed(ns / 1e6, 3) + " ms"; }

// "33.1% (29.1% to 36.9%)": a simulated gain's central value before its
// interval; other gains are their interval; "9.2%" where both ends read the same.
std::string GainRangeText(const SuggestionOutcome& o) {
  const std::string lo = PercentText(o.gain_min), hi = PercentText(o.gain_max);
  if (lo == hi) return lo;  // one step, or a replay that changes nothing: one figure
  std::string range = lo + " to " + hi;
  if (const std::optional<double> central = CentralSimulatedGain(o)) return PercentText(*central) + " (" + range + ")";
  return range;
}

// The value of the base a gain is a share of, to open the parenthesis after
// it: "of the step wall time (189.08 ms; x1.41 to x1.59; ...", "of the time
// per step (174.83 ms; ..." (trial sceptic, finding 9: two bases side by
// side, told apart only by their names).
std::string BasisValue(const SuggestionOutcome& o) {
  const double ns = o.simulation ? o.simulation->measured_ns : o.finding->impact.basis_ns;
  return ns > 0 ? FormatDurationNs(ns) + "; " : std::string();
}

}  // namespace

std::string GainText(const SuggestionOutcome& o) {
  if (o.finding->rule->impact_on_memory) {
    return fmt::format("{} to {} of device memory", PercentText(o.gain_min), PercentText(o.gain_max));
  }
  if (!o.finding->impact.quantified) return "not quantified (the finding has no time impact)";
  // A measurement or diagnosis fix (efficacy [0, 0]: start-up, caveats, a
  // failed rank) gains nothing by itself: said so, not "0.0% to 0.0%" (its
  // risk note says what it is for).
  if (o.gain_source == kGainFromPrior && o.suggestion->efficacy_max == 0 && o.gain_max == 0) {
    return "none by itself (a measurement or diagnosis step, not a speed-up)";
  }
  // Amdahl: the fix removes efficacy x the impact's share of the base.
  const std::string basis = GainBasis(o);
  std::string out = fmt::format("{} of the {} ({}x{:.2f} to x{:.2f}; {})", GainRangeText(o),
                                basis == "trace span" || o.simulation ? basis : "time " + basis, BasisValue(o),
                                o.speedup_min, o.speedup_max, GainOrigin(o));
  if (o.simulation && o.simulation->history_cases > 0) {
    out += fmt::format(
        "; the interval holds the prediction's own error, estimated from {} past case{} and a prior, besides the "
        "steps' spread: it narrows as more cases agree (docs/whatif.md)",
        o.simulation->history_cases, o.simulation->history_cases == 1 ? "" : "s");
  }
  const Impact& im = o.finding->impact;
  if (o.simulation && std::isfinite(im.max_speedup) && im.max_speedup > 1 && o.speedup_max > im.max_speedup + 1e-9) {
    // Two measures on two bases, said so where they seem to contradict.
    // The whole range above the bound, or only its upper end (with the
    // step edges counted, ResNet50's bound is x1.52 beside x1.41 to x1.59).
    out += fmt::format(
        "; {} more than the finding's x{:.2f}, which bounds removing its measured impact ({}) from the mean host "
        "step; the simulation replays the whole step (start to {}) without the cause, and what waited on it moves "
        "too",
        o.speedup_min > im.max_speedup + 1e-9 ? "all" : "its upper end", im.max_speedup,
        im.metric.empty() ? "its metric" : im.metric, StepEndText(o.simulation->host_only));
  }
  if (o.gain_source == kGainFromPrior) {
    // A prior over the impact's share, where removing the whole cause in the
    // replay gains less than the prior's low end: said beside it.
    if (const std::optional<double> removal = ReplayedGain(im); removal && *removal < o.gain_min) {
      out += fmt::format("; removing the whole cause replays at x{:.2f} ('{}'), below this prior",
                         1 / (1 - std::min(*removal, 0.999)), im.replayed->scenario);
    }
  }
  return out;
}

std::string BriefGainText(const SuggestionOutcome& o) {
  if (!o.simulation || o.finding->rule->impact_on_memory || !o.finding->impact.quantified) return GainText(o);
  const SimulatedGain& s = *o.simulation;
  const std::string each = s.step_period ? "each the device period (end of one step's device work to the next's)"
                                         : std::string("each from its start to ") + StepEndText(s.host_only);
  std::string out =
      fmt::format("{} of the {} ({}x{:.2f} to x{:.2f}); simulated '{}' over {} step{}, {}: {} {} -> {}", GainRangeText(o),
                  GainBasis(o), BasisValue(o), o.speedup_min, o.speedup_max, s.scenario, s.steps, s.steps == 1 ? "" : "s", each,
                  s.mean ? "mean" : "median", FormatDurationNs(s.measured_ns), FormatDurationNs(s.predicted_ns));
  if (s.history_cases > 0) {
    out += fmt::format(", corrected by {} past case{}", s.history_cases, s.history_cases == 1 ? "" : "s");
  }
  return out;
}

std::string ImpactTextOnStatedBase(const Finding& f, std::string_view stated_basis_text, bool brief) {
  std::string text = ImpactText(f);
  const Impact& im = f.impact;
  if (!im.basis_text.empty() && im.basis_text == stated_basis_text) {
    // ImpactText writes the base as " [basis_text]" after the share.
    const std::string bracket = " [" + im.basis_text + "]";
    if (const size_t at = text.find(bracket); at != std::string::npos) text.erase(at, bracket.size());
  }
  if (brief && im.replayed && !text.empty() && text.back() == ')') {
    // ImpactText ends with the replay's "('scenario'; its step, statistic
    // and figures)": the scenario's name stays.
    const std::string scenario = "('" + im.replayed->scenario + "'";
    if (const size_t at = text.rfind(scenario); at != std::string::npos) {
      text.erase(at + scenario.size(), text.size() - 1 - (at + scenario.size()));
    }
  }
  return text;
}

namespace {

using render::Unit;
using render::Value;

std::string RiskText(const SuggestionRisk& r) {
  std::string out = fmt::format("precision loss {}, memory {:+.0f}%, effort {}", PercentText(r.precision_loss),
                                r.memory_increase * 100, r.effort);
  if (!r.note.empty()) out += "; " + r.note;
  return out;
}

std::vector<const SuggestionOutcome*> KeptFor(const DiagnosisReport& r, const Finding& f) {
  std::vector<const SuggestionOutcome*> out;
  if (!r.suggestions) return out;
  for (const auto& o : r.suggestions->kept) {
    if (o.finding == &f) out.push_back(&o);
  }
  return out;
}

// ---------------------------------------------------------------- machine form

Tree TreeNum(double v) { return Tree::Number(v); }
Tree TreeStr(std::string_view s) { return Tree::String(s); }

}  // namespace

Tree PriorCapTree(const SuggestionOutcome& o) {
  // A prior's bound only: a simulated (or measured) gain replaces the prior
  // and its cap, which said "applied" beside a larger simulated maximum
  // (trial sceptic, finding 4).
  if (o.gain_source != kGainFromPrior || !o.prior_cap || !o.finding->impact.replayed) return Tree::Null();
  Tree cap = Tree::Map();
  cap.Set("max", TreeNum(*o.prior_cap));
  cap.Set("scenario", TreeStr(o.finding->impact.replayed->scenario));
  cap.Set("applied", Tree::Bool(o.prior_capped));
  return cap;
}

Tree SimulatedGainTree(const SimulatedGain& g) {
  Tree sim = Tree::Map();
  sim.Set("scenario", TreeStr(g.scenario));
  sim.Set("time_base",
          TreeStr(g.step_period ? "steady step period: end of the previous step's work to the end of its "
                                  "own"
                                : std::string("steady step wall time: step start to ") + StepEndText(g.host_only)));
  sim.Set("statistic", TreeStr(g.mean ? "mean" : "median"));
  sim.Set("steps", TreeNum(static_cast<double>(g.steps)));
  sim.Set("measured_step_ms", TreeNum(g.measured_ns / 1e6));
  sim.Set("predicted_step_ms", TreeNum(g.predicted_ns / 1e6));
  Tree& interval = sim.Set("predicted_interval_ms", Tree::List());
  interval.Push(TreeNum(g.predicted_lo_ns / 1e6));
  interval.Push(TreeNum(g.predicted_hi_ns / 1e6));
  sim.Set("history_cases", TreeNum(static_cast<double>(g.history_cases)));
  sim.Set("uncorrected_step_ms", TreeNum((g.history_cases ? g.uncorrected_ns : g.predicted_ns) / 1e6));
  // The cases counted and those left out, and why (with a database only).
  if (!g.history_from.empty()) sim.Set("history_from", TreeStr(g.history_from));
  return sim;
}

namespace {

Tree SuggestionTree(const SuggestionOutcome& o) {
  const Suggestion& sg = *o.suggestion;
  Tree s = Tree::Map();
  s.Set("id", TreeStr(sg.id));
  s.Set("title", TreeStr(sg.title));
  s.Set("platform", TreeStr(sg.platform));
  s.Set("action", TreeStr(sg.action));
  Tree& gain = s.Set("expected_gain", Tree::Map());
  gain.Set("min", TreeNum(o.gain_min));
  gain.Set("max", TreeNum(o.gain_max));
  if (std::optional<double> central = CentralSimulatedGain(o)) gain.Set("central", TreeNum(*central));
  gain.Set("basis", TreeStr(GainBasis(o)));
  gain.Set("source", TreeStr(o.gain_source));
  if (Tree cap = PriorCapTree(o); cap.kind() == Tree::Kind::kMap) gain.Set("cap", std::move(cap));
  Tree& speedup = s.Set("speedup", Tree::Map());
  speedup.Set("min", TreeNum(o.speedup_min));
  speedup.Set("max", TreeNum(o.speedup_max));
  Tree& risk = s.Set("risk", Tree::Map());
  risk.Set("precision_loss", TreeNum(sg.risk.precision_loss));
  risk.Set("memory_increase", TreeNum(sg.risk.memory_increase));
  risk.Set("effort", TreeStr(sg.risk.effort));
  risk.Set("note", TreeStr(sg.risk.note));
  Tree& changes = s.Set("changes", Tree::List());
  for (const SuggestionChange& ch : sg.changes) {
    Tree& c = changes.Push(Tree::Map());
    c.Set("tool", TreeStr(ch.tool));
    c.Set("kind", TreeStr(ch.kind));
    c.Set("setting", TreeStr(ch.setting));
    c.Set("value", TreeStr(ch.value));
  }
  if (o.simulation) s.Set("simulation", SimulatedGainTree(*o.simulation));
  if (o.history) {
    Tree& h = s.Set("history", Tree::Map());
    h.Set("gain", TreeNum(o.history->gain_fraction));
    h.Set("ci_low", TreeNum(o.history->ci_low));
    h.Set("ci_high", TreeNum(o.history->ci_high));
    h.Set("card", TreeStr(o.history->card));
    if (o.history->checked_gain) h.Set("checked_gain", TreeNum(*o.history->checked_gain));
  }
  return s;
}

Tree FindingTree(const DiagnosisReport& r, const Finding& f) {
  Tree out = Tree::Map();
  out.Set("rule", TreeStr(f.rule->id));
  out.Set("bottleneck", TreeStr(f.rule->bottleneck));
  out.Set("title", TreeStr(f.rule->title));
  out.Set("description", TreeStr(f.rule->description));
  out.Set("priority", TreeStr(PriorityName(f.priority)));
  out.Set("confidence", TreeStr(ConfidenceName(f.confidence)));
  out.Set("confidence_reason", TreeStr(f.confidence_reason));
  out.Set("rule_source", TreeStr(f.rule->source));
  Tree& impact = out.Set("impact", Tree::Map());
  impact.Set("quantified", Tree::Bool(f.impact.quantified));
  impact.Set("metric", TreeStr(f.impact.metric));
  impact.Set("share", TreeNum(f.impact.share));
  impact.Set("time_ms", TreeNum(f.impact.time_ns / 1e6));
  impact.Set("basis", TreeStr(f.impact.basis));
  impact.Set("basis_ms", TreeNum(f.impact.basis_ns / 1e6));
  impact.Set("basis_text", TreeStr(f.impact.basis_text));
  impact.Set("max_speedup", TreeNum(f.impact.max_speedup));  // unbounded: null
  // The rule's removal scenario replayed: the dependency-aware figure.
  if (f.impact.replayed) impact.Set("replayed", SimulatedGainTree(*f.impact.replayed));
  Tree& indicators = out.Set("indicators", Tree::List());
  for (const ComparisonOutcome& c : f.indicators) {
    Tree& i = indicators.Push(Tree::Map());
    i.Set("metric", TreeStr(c.metric));
    i.Set("value", TreeNum(c.value));
    i.Set("op", TreeStr(c.op));
    i.Set("threshold", TreeNum(c.threshold));
    i.Set("holds", Tree::Bool(c.holds));
    i.Set("measured", Tree::Bool(c.measured));
  }
  Tree& consumers = out.Set("consumers", Tree::List());
  for (const TimeConsumer& tc : f.consumers) {
    Tree& c = consumers.Push(Tree::Map());
    c.Set("kind", TreeStr(tc.kind));
    c.Set("name", TreeStr(tc.name));
    c.Set("time_ms", TreeNum(tc.ns / 1e6));
    c.Set("share", TreeNum(f.impact.basis_ns > 0 ? tc.ns / f.impact.basis_ns : 0.0));
  }
  Tree& causes = out.Set("root_causes", Tree::List());
  for (const RankedCause& cause : f.causes) {
    Tree& c = causes.Push(Tree::Map());
    c.Set("id", TreeStr(cause.id));
    c.Set("text", TreeStr(cause.text));
    c.Set("why", TreeStr(cause.why));
    Tree& evidence = c.Set("evidence", Tree::List());
    for (const std::string& e : cause.evidence) evidence.Push(TreeStr(e));
  }
  Tree& suggestions = out.Set("suggestions", Tree::List());
  for (const SuggestionOutcome* o : KeptFor(r, f)) suggestions.Push(SuggestionTree(*o));
  return out;
}

// ---------------------------------------------------------------- document

// Platform, time base, target and constraints.
void AddRun(const DiagnosisReport& r, render::Section* sec) {
  const Diagnosis& d = *r.diagnosis;
  render::KeyValues& kv = sec->Add(render::KeyValues{{{"platform", "Platform", Value::String(d.platform.Describe())}}});
  if (!d.impact_basis_text.empty()) {
    kv.items.push_back({"impact_basis", "Impacts", Value::String("wall-clock time " + d.impact_basis_text)});
  }
  if (r.options) {
    std::string constraints;
    for (const Constraint& c : r.options->constraints) constraints += (constraints.empty() ? "" : ", ") + c.text;
    kv.items.push_back({"target", "Target", Value::String(r.options->target)});
    kv.items.push_back({"constraints", "Constraints", Value::String(constraints.empty() ? "none" : constraints)});
  }
  // Caveats (CaveatFinding: what the trace lets the analyses see) are
  // listed after the findings about the program, and named here first so
  // that they are read before any per-op figure.
  for (size_t i = 0; i < d.findings.size(); ++i) {
    const Finding& f = d.findings[i];
    if (!CaveatFinding(f.rule->bottleneck)) continue;
    std::string measured;
    for (const ComparisonOutcome& c : f.indicators) {
      if (c.holds) measured += (measured.empty() ? "" : "; ") + DescribeComparison(c);
    }
    kv.items.push_back(
        {"caveat_" + f.rule->id, "Caveat",
         Value::String(fmt::format("{}{} (finding {} below: a caveat on what the trace shows, not a bottleneck; {})",
                                   f.rule->title, measured.empty() ? "" : " [" + measured + "]", i + 1,
                                   i == 0 ? "no finding about the program ranks before it"
                                          : "listed after the findings about the program"))});
  }
  if (d.findings.empty()) sec->Add(render::Paragraph{"No bottleneck found by the rules that could be evaluated."});
}

// The rule's conditions with the measured values, each in its metric's unit,
// and what the metric is (a ratio's base: "28.9%" alone did not say of what).
render::Table IndicatorTable(const Finding& f) {
  render::Table t{"evidence",
                  "Evidence",
                  {{"metric", "Metric"},
                   {"value", "Value"},
                   {"op", "Test"},
                   {"threshold", "Threshold"},
                   {"measured", "Measured"},
                   {"meaning", "What it is"}},
                  {},
                  ""};
  for (const ComparisonOutcome& c : f.indicators) {
    const MetricInfo* info = FindMetricInfo(c.metric);
    Unit unit = MetricDisplayUnit(info);
    t.rows.push_back({Value::String(c.metric), Value::Number(c.value).In(unit), Value::String(c.op),
                      Value::Number(c.threshold).In(unit), Value::Bool(c.measured),
                      Value::String(info != nullptr ? std::string(info->description) : std::string())});
  }
  return t;
}

render::Table ConsumerTable(const Finding& f) {
  render::Table t{"consumers",
                  "Largest consumers of the unexplained time",
                  {{"kind", "Kind"},
                   {"name", "Name"},
                   {"time_ns", "Time " + f.impact.basis, Unit::kNs},
                   {"share", "Share of " + MsFixed(f.impact.basis_ns), Unit::kFraction}},
                  {},
                  ""};
  for (const TimeConsumer& tc : f.consumers) {
    t.rows.push_back({Value::String(tc.kind), Value::String(tc.name), Value::Number(tc.ns),
                      f.impact.basis_ns > 0 ? Value::Number(tc.ns / f.impact.basis_ns) : Value::Null()});
  }
  return t;
}

void AddFinding(const DiagnosisReport& r, const Finding& f, render::Section* sec) {
  render::KeyValues& kv = sec->Add(render::KeyValues{
      {{"priority", "Priority", Value::String(PriorityName(f.priority))},
       {"bottleneck", "Bottleneck", Value::String(f.rule->bottleneck)},
       {"confidence", "Confidence",
        Value::String(std::string(ConfidenceName(f.confidence)) + " (" + f.confidence_reason + ")")},
       // The base is said once, in the run's "Impacts" line (AddRun).
       {"impact", "Impact", Value::String(ImpactTextOnStatedBase(f, r.diagnosis->impact_basis_text))}}});
  if (!f.rule->description.empty()) kv.items.push_back({"problem", "Problem", Value::String(f.rule->description)});
  if (!f.consumers.empty()) sec->Add(ConsumerTable(f));
  sec->Add(IndicatorTable(f));
  render::List& causes = sec->Add(render::List{"root_causes", "Root causes (most likely first)", {}});
  for (const RankedCause& cause : f.causes) {
    render::ListItem& item = causes.items.emplace_back(render::ListItem{cause.text, cause.why, {}});
    // Every line up to kEvidenceLinesShown, and how many were left out past
    // it (the machine form lists all): a cut without a word hid the compute
    // classes after the fifth line (ResNet50's data movement).
    for (size_t i = 0; i < cause.evidence.size() && i < kEvidenceLinesShown; ++i) {
      item.details.push_back(cause.evidence[i]);
    }
    if (cause.evidence.size() > kEvidenceLinesShown) {
      const size_t more = cause.evidence.size() - kEvidenceLinesShown;
      item.details.push_back(
          fmt::format("... and {} more evidence line{} (--format json lists every line)", more, more == 1 ? "" : "s"));
    }
  }
  std::vector<const SuggestionOutcome*> kept = KeptFor(r, f);
  if (kept.empty()) return;
  render::List& fixes = sec->Add(render::List{"fixes", "Fixes", {}});
  for (const SuggestionOutcome* o : kept) {
    render::ListItem& item = fixes.items.emplace_back(
        render::ListItem{o->suggestion->title + ": " + o->suggestion->action, o->suggestion->platform, {}});
    item.details.push_back("expected gain: " + GainText(*o));
    for (const SuggestionChange& c : o->suggestion->changes) {
      item.details.push_back("change: " + c.tool + ": " + c.setting + " = " + c.value);
    }
    if (o->history) item.details.push_back("measured history: " + o->history->card);
    item.details.push_back("risk: " + RiskText(o->suggestion->risk));
  }
}

void AddLeftOut(const DiagnosisReport& r, render::Document* doc) {
  const Diagnosis& d = *r.diagnosis;
  if (r.suggestions && !r.suggestions->excluded.empty()) {
    render::Table t{"excluded", "", {{"suggestion", "Suggestion"}, {"rule", "Rule"}, {"reason", "Reason"}}, {}, ""};
    for (const SuggestionOutcome& o : r.suggestions->excluded) {
      t.rows.push_back({Value::String(o.suggestion->title), Value::String(o.finding->rule->id),
                        Value::String(o.exclusion_reason)});
    }
    doc->AddSection("excluded_suggestions", "Excluded suggestions").Add(std::move(t));
  }
  if (!d.not_evaluated.empty()) {
    render::Table t{"not_evaluated", "", {{"rule", "Rule"}, {"metric", "Missing metric"}, {"reason", "Reason"}}, {}, ""};
    for (const NotEvaluated& ne : d.not_evaluated) {
      for (const auto& [metric, why] : ne.missing) {
        t.rows.push_back({Value::String(ne.rule->id), Value::String(metric), Value::String(why)});
      }
    }
    doc->AddSection("not_evaluated", "Not evaluated (the trace lacks their metrics)").Add(std::move(t));
  }
  if (!d.not_fired.empty()) {
    std::string ids;
    for (const Rule* rule : d.not_fired) ids += (ids.empty() ? "" : ", ") + rule->id;
    doc->AddSection("not_fired", "Checked, not found").Add(render::Paragraph{ids});
  }
}

}  // namespace

Tree DiagnosisTree(const DiagnosisReport& r) {
  const Diagnosis& d = *r.diagnosis;
  Tree out = Tree::Map();
  out.Set("schema", TreeStr("aiprof.diagnosis/1"));
  out.Set("source", TreeStr(r.source));
  out.Set("platform", TreeStr(d.platform.Describe()));
  out.Set("impact_basis", TreeStr(d.impact_basis_text));
  out.Set("explained_ms", TreeNum(d.explained_ns / 1e6));
  if (r.options) {
    out.Set("target", TreeStr(r.options->target));
    Tree& constraints = out.Set("constraints", Tree::List());
    for (const Constraint& c : r.options->constraints) constraints.Push(TreeStr(c.text));
  }
  Tree& findings = out.Set("findings", Tree::List());
  for (const Finding& f : d.findings) findings.Push(FindingTree(r, f));
  Tree& excluded = out.Set("excluded_suggestions", Tree::List());
  if (r.suggestions) {
    for (const SuggestionOutcome& o : r.suggestions->excluded) {
      Tree& e = excluded.Push(Tree::Map());
      e.Set("rule", TreeStr(o.finding->rule->id));
      e.Set("id", TreeStr(o.suggestion->id));
      e.Set("title", TreeStr(o.suggestion->title));
      e.Set("reason", TreeStr(o.exclusion_reason));
    }
  }
  Tree& not_evaluated = out.Set("not_evaluated", Tree::List());
  for (const NotEvaluated& ne : d.not_evaluated) {
    Tree& n = not_evaluated.Push(Tree::Map());
    n.Set("rule", TreeStr(ne.rule->id));
    Tree& missing = n.Set("missing", Tree::List());
    for (const auto& [metric, why] : ne.missing) {
      Tree& m = missing.Push(Tree::Map());
      m.Set("metric", TreeStr(metric));
      m.Set("reason", TreeStr(why));
    }
  }
  Tree& not_fired = out.Set("not_fired", Tree::List());
  for (const Rule* rule : d.not_fired) not_fired.Push(TreeStr(rule->id));
  Tree& metrics = out.Set("metrics", Tree::Map());
  for (const auto& [name, v] : r.metrics->values()) {
    Tree& m = metrics.Set(name, Tree::Map());
    m.Set("value", TreeNum(v.value));
    m.Set("measured", Tree::Bool(v.measured));
  }
  return out;
}

render::Document DiagnosisToDocument(const DiagnosisReport& r) {
  render::Document doc;
  doc.key = r.suggestions ? "suggestions" : "diagnosis";
  doc.title = "aiprof " + doc.key + ": " + r.source;
  doc.generator = r.suggestions ? "aiprof suggest" : "aiprof diagnose";
  doc.machine = DiagnosisTree(r);
  AddRun(r, &doc.AddSection("run", ""));
  int n = 0;
  for (const Finding& f : r.diagnosis->findings) {
    ++n;
    AddFinding(r, f, &doc.AddSection("finding_" + std::to_string(n), std::to_string(n) + ". " + f.rule->title));
  }
  AddLeftOut(r, &doc);
  return doc;
}

}  // namespace aiprof
