#include "src/report/diagnosis/diagnosis_report.h"

#include <fmt/format.h>

#include <cmath>

#include "src/render/escape.h"
#include "src/render/page.h"

namespace aiprof {
namespace {

std::string Pct(double f) { return fmt::format("{:.1f}%", f * 100); }
std::string Ms(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }

std::string ValueText(const std::string& metric, double v) {
  const MetricInfo* info = FindMetricInfo(metric);
  switch (info ? info->unit : MetricUnit::kNumber) {
    case MetricUnit::kRatio: return Pct(v);
    case MetricUnit::kNanoseconds: return Ms(v);
    case MetricUnit::kBytes: return fmt::format("{:.1f} MB", v / 1e6);
    case MetricUnit::kBytesPerSecond: return fmt::format("{:.1f} GB/s", v / 1e9);
    case MetricUnit::kFlopsPerSecond: return fmt::format("{:.1f} GFLOP/s", v / 1e9);
    default: return fmt::format("{:.4g}", v);
  }
}

std::string Indicator(const ComparisonOutcome& c) {
  return fmt::format("{} = {} ({} {}{})", c.metric, ValueText(c.metric, c.value), c.op, ValueText(c.metric, c.threshold),
                     c.measured ? "" : ", estimated");
}

std::string GainText(const SuggestionOutcome& o) {
  if (o.finding->rule->impact_on_memory) {
    return fmt::format("{}-{} of device memory", Pct(o.gain_min), Pct(o.gain_max));
  }
  if (!o.finding->impact.quantified) return "not quantified (the finding has no time impact)";
  // Amdahl: the fix removes efficacy x the impact's share of the base.
  const std::string basis = GainBasis(o);
  return fmt::format("{}-{} of the {} (x{:.2f}-x{:.2f}; {})", Pct(o.gain_min), Pct(o.gain_max),
                     basis == "trace span" || o.simulation ? basis : "time " + basis, o.speedup_min, o.speedup_max,
                     GainOrigin(o));
}

std::string RiskText(const SuggestionRisk& r) {
  std::string out = fmt::format("precision loss {}, memory {:+.0f}%, effort {}", Pct(r.precision_loss),
                                r.memory_increase * 100, r.effort);
  if (!r.note.empty()) out += "; " + r.note;
  return out;
}

// "2.5 ms per step = 25.0% of 10.0 ms (mean step time); at most x1.33 if removed".
std::string ImpactText(const Finding& f) {
  if (f.rule->impact_on_memory) return Pct(f.impact.share) + " of device memory";
  if (!f.impact.quantified) return "not quantified in wall-clock time (" + f.confidence_reason.substr(f.confidence_reason.rfind("; ") + 2) + ")";
  if (f.rule->impact_on_trace) {
    return fmt::format("{} = {} of the {} trace span (start-up; not part of the steady state)", Ms(f.impact.time_ns),
                       Pct(f.impact.share), Ms(f.impact.basis_ns));
  }
  if (f.rule->id == "unexplained_time") {
    return fmt::format("{} {} = {} of {} not explained by the findings above", Ms(f.impact.time_ns), f.impact.basis,
                       Pct(f.impact.share), Ms(f.impact.basis_ns));
  }
  std::string speed = std::isfinite(f.impact.max_speedup) ? fmt::format("x{:.2f}", f.impact.max_speedup) : "unbounded";
  return fmt::format("{} {} = {} of {} [{}]; at most {} if removed", Ms(f.impact.time_ns), f.impact.basis,
                     Pct(f.impact.share), Ms(f.impact.basis_ns), f.impact.basis_text, speed);
}

std::vector<const SuggestionOutcome*> KeptFor(const DiagnosisReport& r, const Finding& f) {
  std::vector<const SuggestionOutcome*> out;
  if (!r.suggestions) return out;
  for (const auto& o : r.suggestions->kept) {
    if (o.finding == &f) out.push_back(&o);
  }
  return out;
}

// The card store's own sentence, which states the figures and that they are measured.
std::string HistoryText(const HistoricalGain& h) { return "measured history: " + h.card; }

// ---------------------------------------------------------------- text

struct Colors {
  const char *red = "", *yellow = "", *green = "", *bold = "", *dim = "", *reset = "";
};

}  // namespace

std::string DiagnosisToText(const DiagnosisReport& r, bool color) {
  Colors c;
  if (color) c = Colors{"\x1b[31m", "\x1b[33m", "\x1b[32m", "\x1b[1m", "\x1b[2m", "\x1b[0m"};
  const Diagnosis& d = *r.diagnosis;
  std::string out = fmt::format("{}aiprof {}{}: {} (platform: {})\n", c.bold, r.suggestions ? "suggest" : "diagnose",
                                c.reset, TerminalSafe(r.source), d.platform.Describe());
  if (!d.impact_basis_text.empty()) out += "impacts are wall-clock time " + d.impact_basis_text + "\n";
  if (r.options) {
    out += fmt::format("target: {}; constraints: ", r.options->target);
    if (r.options->constraints.empty()) out += "none";
    for (size_t i = 0; i < r.options->constraints.size(); ++i) out += (i ? ", " : "") + r.options->constraints[i].text;
    out += "\n";
  }
  if (d.findings.empty()) out += "\nNo bottleneck found by the rules that could be evaluated.\n";
  int n = 0;
  for (const Finding& f : d.findings) {
    const char* pc = f.priority == Priority::kHigh ? c.red : f.priority == Priority::kMedium ? c.yellow : c.green;
    out += fmt::format("\n{}{}. [{} priority] {}{}\n", pc, ++n, PriorityName(f.priority), TerminalSafe(f.rule->title),
                       c.reset);
    out += fmt::format("   bottleneck: {}   confidence: {} ({})\n", f.rule->bottleneck, ConfidenceName(f.confidence),
                       TerminalSafe(f.confidence_reason));
    out += "   impact: " + ImpactText(f) + "\n";
    if (!f.consumers.empty()) {
      out += "   largest consumers of the unexplained time:\n";
      for (const TimeConsumer& tc : f.consumers) {
        out += fmt::format("     - {} {}: {} {} ({})\n", tc.kind, TerminalSafe(tc.name), Ms(tc.ns), f.impact.basis,
                           f.impact.basis_ns > 0 ? Pct(tc.ns / f.impact.basis_ns) : std::string("n/a"));
      }
    }
    out += "   evidence:\n";
    for (const auto& ind : f.indicators) out += "     - " + TerminalSafe(Indicator(ind)) + "\n";
    out += "   root causes (most likely first):\n";
    for (const auto& cause : f.causes) {
      out += fmt::format("     - {} {}[{}]{}\n", TerminalSafe(cause.text), c.dim, TerminalSafe(cause.why), c.reset);
      for (size_t i = 0; i < cause.evidence.size() && i < 5; ++i) out += "         " + TerminalSafe(cause.evidence[i]) + "\n";
    }
    for (const SuggestionOutcome* o : KeptFor(r, f)) {
      out += fmt::format("   {}fix:{} {} [{}]\n", c.bold, c.reset, TerminalSafe(o->suggestion->title), o->suggestion->platform);
      out += "        " + TerminalSafe(o->suggestion->action) + "\n";
      out += "        expected gain: " + GainText(*o) + "\n";
      if (o->history) out += "        " + TerminalSafe(HistoryText(*o->history)) + "\n";
      out += "        risk: " + TerminalSafe(RiskText(o->suggestion->risk)) + "\n";
    }
  }
  if (r.suggestions && !r.suggestions->excluded.empty()) {
    out += "\nExcluded suggestions:\n";
    for (const auto& o : r.suggestions->excluded) {
      out += fmt::format("  - {} ({}): {}\n", TerminalSafe(o.suggestion->title), o.finding->rule->id,
                         TerminalSafe(o.exclusion_reason));
    }
  }
  if (!d.not_evaluated.empty()) {
    out += "\nNot evaluated (the trace lacks their metrics):\n";
    for (const auto& ne : d.not_evaluated) {
      out += "  - " + ne.rule->id + ":";
      for (const auto& [m, why] : ne.missing) out += " " + m + " (" + TerminalSafe(why) + ")";
      out += "\n";
    }
  }
  if (!d.not_fired.empty()) {
    out += "\nChecked, not found:";
    for (const Rule* rule : d.not_fired) out += " " + rule->id;
    out += "\n";
  }
  return out;
}

// ---------------------------------------------------------------- markdown

std::string DiagnosisToMarkdown(const DiagnosisReport& r) {
  const Diagnosis& d = *r.diagnosis;
  std::string out = fmt::format("# aiprof {}: {}\n\nPlatform: {}.", r.suggestions ? "suggestions" : "diagnosis",
                                MarkdownEscape(r.source), d.platform.Describe());
  if (r.options) {
    out += fmt::format(" Target: **{}**. Constraints: ", r.options->target);
    if (r.options->constraints.empty()) out += "none";
    for (size_t i = 0; i < r.options->constraints.size(); ++i) {
      out += (i ? ", " : "") + std::string("`") + MarkdownEscape(r.options->constraints[i].text) + "`";
    }
    out += ".";
  }
  out += "\n\n";
  if (d.findings.empty()) out += "No bottleneck found by the rules that could be evaluated.\n";
  int n = 0;
  for (const Finding& f : d.findings) {
    out += fmt::format("## {}. {} ({} priority)\n\n", ++n, MarkdownEscape(f.rule->title), PriorityName(f.priority));
    out += "| | |\n|---|---|\n";
    out += fmt::format("| Bottleneck | `{}` |\n", f.rule->bottleneck);
    out += fmt::format("| Confidence | {} — {} |\n", ConfidenceName(f.confidence), MarkdownEscape(f.confidence_reason));
    out += "| Impact | " + MarkdownEscape(ImpactText(f)) + " |\n\n";
    if (!f.rule->description.empty()) out += "**Problem.** " + MarkdownEscape(f.rule->description) + "\n\n";
    out += "**Evidence.**\n\n";
    for (const auto& ind : f.indicators) out += "- " + MarkdownEscape(Indicator(ind)) + "\n";
    out += "\n**Root cause** (most likely first).\n\n";
    for (const auto& cause : f.causes) {
      out += "- " + MarkdownEscape(cause.text) + " — *" + MarkdownEscape(cause.why) + "*\n";
      for (size_t i = 0; i < cause.evidence.size() && i < 5; ++i) out += "  - " + MarkdownEscape(cause.evidence[i]) + "\n";
    }
    std::vector<const SuggestionOutcome*> kept = KeptFor(r, f);
    if (!kept.empty()) out += "\n**Fix.**\n\n";
    for (const SuggestionOutcome* o : kept) {
      out += fmt::format("- **{}** ({}): {}\n  - Expected gain: {}\n", MarkdownEscape(o->suggestion->title),
                         o->suggestion->platform, MarkdownEscape(o->suggestion->action), MarkdownEscape(GainText(*o)));
      if (o->history) out += "  - " + MarkdownEscape(HistoryText(*o->history)) + "\n";
      out += "  - Risk: " + MarkdownEscape(RiskText(o->suggestion->risk)) + "\n";
    }
    out += "\n";
  }
  if (r.suggestions && !r.suggestions->excluded.empty()) {
    out += "## Excluded suggestions\n\n";
    for (const auto& o : r.suggestions->excluded) {
      out += fmt::format("- {} (`{}`): {}\n", MarkdownEscape(o.suggestion->title), o.finding->rule->id,
                         MarkdownEscape(o.exclusion_reason));
    }
    out += "\n";
  }
  if (!d.not_evaluated.empty()) {
    out += "## Not evaluated\n\n";
    for (const auto& ne : d.not_evaluated) {
      out += "- `" + ne.rule->id + "`:";
      for (const auto& [m, why] : ne.missing) out += " `" + m + "` (" + MarkdownEscape(why) + ")";
      out += "\n";
    }
  }
  return out;
}

// ---------------------------------------------------------------- JSON

std::string DiagnosisToJson(const DiagnosisReport& r) {
  const Diagnosis& d = *r.diagnosis;
  std::string out = "{\n  \"schema\": \"aiprof.diagnosis/1\",\n";
  out += fmt::format("  \"source\": {},\n  \"platform\": {},\n", JsonString(r.source), JsonString(d.platform.Describe()));
  out += fmt::format("  \"impact_basis\": {},\n  \"explained_ms\": {},\n", JsonString(d.impact_basis_text),
                     d.explained_ns / 1e6);
  if (r.options) {
    out += fmt::format("  \"target\": {},\n  \"constraints\": [", JsonString(r.options->target));
    for (size_t i = 0; i < r.options->constraints.size(); ++i) {
      out += (i ? ", " : "") + JsonString(r.options->constraints[i].text);
    }
    out += "],\n";
  }
  auto suggestion_json = [](const SuggestionOutcome& o) {
    std::string s = fmt::format(
        "{{\"id\": {}, \"title\": {}, \"platform\": {}, \"action\": {}, \"expected_gain\": {{\"min\": {}, \"max\": {}, "
        "\"basis\": {}, \"source\": {}}}, "
        "\"speedup\": {{\"min\": {}, \"max\": {}}}, \"risk\": {{\"precision_loss\": {}, \"memory_increase\": {}, "
        "\"effort\": {}, \"note\": {}}}",
        JsonString(o.suggestion->id), JsonString(o.suggestion->title), JsonString(o.suggestion->platform),
        JsonString(o.suggestion->action), o.gain_min, o.gain_max, JsonString(GainBasis(o)),
        JsonString(o.gain_source), o.speedup_min, o.speedup_max,
        o.suggestion->risk.precision_loss, o.suggestion->risk.memory_increase, JsonString(o.suggestion->risk.effort),
        JsonString(o.suggestion->risk.note));
    s += ", \"changes\": [";
    for (size_t c = 0; c < o.suggestion->changes.size(); ++c) {
      const SuggestionChange& ch = o.suggestion->changes[c];
      s += fmt::format("{}{{\"tool\": {}, \"kind\": {}, \"setting\": {}, \"value\": {}}}", c ? ", " : "",
                       JsonString(ch.tool), JsonString(ch.kind), JsonString(ch.setting), JsonString(ch.value));
    }
    s += "]";
    if (o.simulation) {
      const SimulatedGain& g = *o.simulation;
      s += fmt::format(", \"simulation\": {{\"scenario\": {}, \"time_base\": \"steady step wall time\", \"steps\": {}, "
                       "\"measured_step_ms\": {}, \"predicted_step_ms\": {}, \"predicted_interval_ms\": [{}, {}], "
                       "\"history_cases\": {}, \"uncorrected_step_ms\": {}}}",
                       JsonString(g.scenario), g.steps, g.measured_ns / 1e6, g.predicted_ns / 1e6, g.predicted_lo_ns / 1e6,
                       g.predicted_hi_ns / 1e6, g.history_cases,
                       (g.history_cases ? g.uncorrected_ns : g.predicted_ns) / 1e6);
    }
    if (o.history) {
      s += fmt::format(", \"history\": {{\"gain\": {}, \"ci_low\": {}, \"ci_high\": {}, \"card\": {}}}",
                       o.history->gain_fraction, o.history->ci_low, o.history->ci_high, JsonString(o.history->card));
    }
    return s + "}";
  };
  out += "  \"findings\": [";
  for (size_t i = 0; i < d.findings.size(); ++i) {
    const Finding& f = d.findings[i];
    out += fmt::format(
        "{}\n    {{\"rule\": {}, \"bottleneck\": {}, \"title\": {}, \"description\": {}, \"priority\": \"{}\", "
        "\"confidence\": \"{}\", \"confidence_reason\": {}, \"rule_source\": {},\n     \"impact\": {{\"quantified\": {}, "
        "\"metric\": {}, \"share\": {}, \"time_ms\": {}, \"basis\": {}, \"basis_ms\": {}, \"basis_text\": {}, "
        "\"max_speedup\": {}}},\n     \"indicators\": [",
        i ? "," : "", JsonString(f.rule->id), JsonString(f.rule->bottleneck), JsonString(f.rule->title),
        JsonString(f.rule->description), PriorityName(f.priority), ConfidenceName(f.confidence),
        JsonString(f.confidence_reason), JsonString(f.rule->source), f.impact.quantified ? "true" : "false",
        JsonString(f.impact.metric), f.impact.share, f.impact.time_ns / 1e6, JsonString(f.impact.basis),
        f.impact.basis_ns / 1e6, JsonString(f.impact.basis_text),
        std::isfinite(f.impact.max_speedup) ? fmt::format("{}", f.impact.max_speedup) : std::string("null"));
    for (size_t k = 0; k < f.indicators.size(); ++k) {
      const auto& c = f.indicators[k];
      out += fmt::format("{}{{\"metric\": {}, \"value\": {}, \"op\": {}, \"threshold\": {}, \"holds\": {}, \"measured\": {}}}",
                         k ? ", " : "", JsonString(c.metric), c.value, JsonString(c.op), c.threshold, c.holds, c.measured);
    }
    out += "],\n     \"consumers\": [";
    for (size_t k = 0; k < f.consumers.size(); ++k) {
      const TimeConsumer& tc = f.consumers[k];
      out += fmt::format("{}{{\"kind\": {}, \"name\": {}, \"time_ms\": {}, \"share\": {}}}", k ? ", " : "",
                         JsonString(tc.kind), JsonString(tc.name), tc.ns / 1e6,
                         f.impact.basis_ns > 0 ? tc.ns / f.impact.basis_ns : 0.0);
    }
    out += "],\n     \"root_causes\": [";
    for (size_t k = 0; k < f.causes.size(); ++k) {
      const auto& cause = f.causes[k];
      out += fmt::format("{}{{\"id\": {}, \"text\": {}, \"why\": {}, \"evidence\": [", k ? ", " : "",
                         JsonString(cause.id), JsonString(cause.text), JsonString(cause.why));
      for (size_t e = 0; e < cause.evidence.size(); ++e) out += (e ? ", " : "") + JsonString(cause.evidence[e]);
      out += "]}";
    }
    out += "],\n     \"suggestions\": [";
    std::vector<const SuggestionOutcome*> kept = KeptFor(r, f);
    for (size_t k = 0; k < kept.size(); ++k) out += (k ? ", " : "") + suggestion_json(*kept[k]);
    out += "]}";
  }
  out += d.findings.empty() ? "],\n" : "\n  ],\n";
  out += "  \"excluded_suggestions\": [";
  if (r.suggestions) {
    for (size_t i = 0; i < r.suggestions->excluded.size(); ++i) {
      const auto& o = r.suggestions->excluded[i];
      out += fmt::format("{}\n    {{\"rule\": {}, \"id\": {}, \"title\": {}, \"reason\": {}}}", i ? "," : "",
                         JsonString(o.finding->rule->id), JsonString(o.suggestion->id), JsonString(o.suggestion->title),
                         JsonString(o.exclusion_reason));
    }
  }
  out += "],\n  \"not_evaluated\": [";
  for (size_t i = 0; i < d.not_evaluated.size(); ++i) {
    out += fmt::format("{}\n    {{\"rule\": {}, \"missing\": [", i ? "," : "", JsonString(d.not_evaluated[i].rule->id));
    for (size_t k = 0; k < d.not_evaluated[i].missing.size(); ++k) {
      const auto& [m, why] = d.not_evaluated[i].missing[k];
      out += fmt::format("{}{{\"metric\": {}, \"reason\": {}}}", k ? ", " : "", JsonString(m), JsonString(why));
    }
    out += "]}";
  }
  out += "],\n  \"not_fired\": [";
  for (size_t i = 0; i < d.not_fired.size(); ++i) out += (i ? ", " : "") + JsonString(d.not_fired[i]->id);
  out += "],\n  \"metrics\": {";
  bool first = true;
  for (const auto& [name, v] : r.metrics->values()) {
    out += fmt::format("{}\n    {}: {{\"value\": {}, \"measured\": {}}}", first ? "" : ",", JsonString(name), v.value,
                       v.measured);
    first = false;
  }
  out += first ? "}\n}\n" : "\n  }\n}\n";
  return out;
}

// ---------------------------------------------------------------- HTML

constexpr std::string_view kDiagnosisStyle =
    "body{font-family:system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#222}"
    ".f{border:1px solid #ccc;border-radius:8px;padding:1em 1.2em;margin:1em 0}"
    ".high{border-left:8px solid #c0392b}.medium{border-left:8px solid #e67e22}.low{border-left:8px solid #27ae60}"
    ".tag{display:inline-block;padding:0 .5em;border-radius:4px;background:#eee;margin-right:.4em;font-size:.9em}"
    "table{border-collapse:collapse}td{padding:.2em .8em .2em 0;vertical-align:top}"
    "code,.ev{font-family:ui-monospace,monospace;font-size:.9em}.why{color:#666}";

std::string DiagnosisToHtml(const DiagnosisReport& r) {
  const Diagnosis& d = *r.diagnosis;
  std::string title = std::string("aiprof ") + (r.suggestions ? "suggestions" : "diagnosis") + ": " + r.source;
  render::PageSpec page;
  page.title = title;
  page.generator = r.suggestions ? "aiprof suggest" : "aiprof diagnose";
  page.styles = {kDiagnosisStyle};
  std::string out = render::PageHead(page);
  out += "<h1>" + HtmlEscape(title) + "</h1>\n<p>Platform: " + HtmlEscape(d.platform.Describe());
  if (r.options) {
    out += ". Target: <b>" + HtmlEscape(r.options->target) + "</b>. Constraints: ";
    if (r.options->constraints.empty()) out += "none";
    for (size_t i = 0; i < r.options->constraints.size(); ++i) {
      out += (i ? ", " : "") + std::string("<code>") + HtmlEscape(r.options->constraints[i].text) + "</code>";
    }
  }
  out += ".</p>\n";
  if (d.findings.empty()) out += "<p>No bottleneck found by the rules that could be evaluated.</p>\n";
  int n = 0;
  for (const Finding& f : d.findings) {
    out += fmt::format("<div class=\"f {}\"><h2>{}. {}</h2>\n", PriorityName(f.priority), ++n, HtmlEscape(f.rule->title));
    out += fmt::format("<p><span class=\"tag\">{} priority</span><span class=\"tag\">confidence {}</span>"
                       "<span class=\"tag\">{}</span></p>\n",
                       PriorityName(f.priority), ConfidenceName(f.confidence), HtmlEscape(f.rule->bottleneck));
    out += "<table><tr><td>Problem</td><td>" + HtmlEscape(f.rule->description) + "</td></tr>";
    out += "<tr><td>Impact</td><td>" + HtmlEscape(ImpactText(f)) + "</td></tr>";
    out += "<tr><td>Confidence</td><td>" + HtmlEscape(f.confidence_reason) + "</td></tr><tr><td>Evidence</td><td>";
    for (const auto& ind : f.indicators) out += "<div class=\"ev\">" + HtmlEscape(Indicator(ind)) + "</div>";
    out += "</td></tr><tr><td>Root cause</td><td><ol>";
    for (const auto& cause : f.causes) {
      out += "<li>" + HtmlEscape(cause.text) + " <span class=\"why\">(" + HtmlEscape(cause.why) + ")</span>";
      for (size_t i = 0; i < cause.evidence.size() && i < 5; ++i) {
        out += "<div class=\"ev\">" + HtmlEscape(cause.evidence[i]) + "</div>";
      }
      out += "</li>";
    }
    out += "</ol></td></tr>";
    for (const SuggestionOutcome* o : KeptFor(r, f)) {
      out += "<tr><td>Fix</td><td><b>" + HtmlEscape(o->suggestion->title) + "</b> (" + HtmlEscape(o->suggestion->platform) +
             ")<br>" + HtmlEscape(o->suggestion->action) + "<br>Expected gain: " + HtmlEscape(GainText(*o));
      if (o->history) out += "<br>" + HtmlEscape(HistoryText(*o->history));
      out += "<br>Risk: " + HtmlEscape(RiskText(o->suggestion->risk)) + "</td></tr>";
    }
    out += "</table></div>\n";
  }
  if (r.suggestions && !r.suggestions->excluded.empty()) {
    out += "<h2>Excluded suggestions</h2><ul>";
    for (const auto& o : r.suggestions->excluded) {
      out += "<li>" + HtmlEscape(o.suggestion->title) + " (" + HtmlEscape(o.finding->rule->id) + "): " +
             HtmlEscape(o.exclusion_reason) + "</li>";
    }
    out += "</ul>\n";
  }
  if (!d.not_evaluated.empty()) {
    out += "<h2>Not evaluated</h2><ul>";
    for (const auto& ne : d.not_evaluated) {
      out += "<li><code>" + HtmlEscape(ne.rule->id) + "</code>:";
      for (const auto& [m, why] : ne.missing) out += " <code>" + HtmlEscape(m) + "</code> (" + HtmlEscape(why) + ")";
      out += "</li>";
    }
    out += "</ul>\n";
  }
  out += render::PageTail(page);
  return out;
}

}  // namespace aiprof
