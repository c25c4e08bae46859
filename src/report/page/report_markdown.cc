// The Markdown rendering of ReportData: the same sections as the HTML page,
// tables instead of charts (Markdown has none), every string escaped.
#include <cmath>

#include <fmt/format.h>

#include "src/analysis/rules/rule.h"
#include "src/render/escape.h"
#include "src/render/renderers.h"
#include "src/report/page/report_data.h"
#include "src/report/page/report_format.h"
#include "src/report/validation/validation_report.h"

namespace aiprof {
namespace {

std::string M(std::string_view s) { return MarkdownEscape(s); }
using report_format::Ms;
using report_format::Pct;

}  // namespace

std::string ReportToMarkdown(const ReportData& r) {
  std::string out = fmt::format("# aiprof report: {}\n\n{} · aiprof {} · {}\n\n## Headline\n\n", M(r.source), M(r.platform),
                                M(r.version), M(r.generated_utc));
  if (!r.context.empty()) {
    out.insert(out.size() - std::string_view("## Headline\n\n").size(),
               "## " + M(r.context_title.empty() ? "Context" : r.context_title) + "\n\n| | |\n|---|---|\n");
    std::string rows;
    for (const auto& [k, v] : r.context) rows += "| " + M(k) + " | " + M(v) + " |\n";
    out.insert(out.size() - std::string_view("## Headline\n\n").size(), rows + "\n");
  }
  const StepStats& s = r.steps_stats;
  if (s.count > 0) {
    out += fmt::format("- **Step time**: {} ± {} (mean ± sd over {} steps, {}); p50 {}, p99 {}\n", Ms(s.mean_ns / 1e6),
                       Ms(s.stddev_ns / 1e6), s.count, M(s.source), Ms(s.p50_ns / 1e6), Ms(s.p99_ns / 1e6));
  } else {
    out += "- **Step time**: the trace marks no steps\n";
  }
  out += fmt::format("- **Device utilisation**: {}{}\n", r.device_util >= 0 ? Pct(r.device_util) : "n/a",
                     r.device_util >= 0 ? " (" + M(r.device_util_basis) + ")" : std::string());
  if (r.top_finding) {
    const Finding& f = *r.top_finding;
    out += fmt::format("- **Top bottleneck**: {} ({} confidence; impact {} = {} of {})\n", M(f.rule->title),
                       ConfidenceName(f.confidence), Ms(f.impact.time_ns / 1e6), Pct(f.impact.share), M(f.impact.basis));
  } else {
    out += "- **Top bottleneck**: none found\n";
  }
  if (!r.host_functions.empty()) {
    const ReportHostFunction& f = r.host_functions[0];
    out += fmt::format("- **Hottest host function**: {} — {} of {} CPU samples (self), {} on the stack ({})\n", M(f.name),
                       Pct(f.self_share), r.host_stacks, Pct(f.total_share), M(f.module));
  }
  if (r.best_fix) {
    out += fmt::format("- **Best fix**: {} — expected gain {}–{} of {} ({})\n", M(r.best_fix->suggestion->title),
                       Pct(r.best_fix->gain_min), Pct(r.best_fix->gain_max), M(GainBasis(*r.best_fix)),
                       M(GainOrigin(*r.best_fix)));
  }
  if (!r.breakdown.empty()) {
    out += "\n## Time breakdown per device and rank\n\n| timeline | span | compute | communication (not overlapped) | "
           "memory copy | idle: data loading | idle: sync | idle: host bound | idle: other |\n|---|---|---|---|---|---|---|---|---|\n";
    for (const ReportBreakdownRow& row : r.breakdown) {
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", M(row.label), Ms(row.span_ms), Ms(row.compute_ms),
                         Ms(row.comm_ms), Ms(row.memcpy_ms), Ms(row.idle_by_cause_ms[0]), Ms(row.idle_by_cause_ms[1]),
                         Ms(row.idle_by_cause_ms[2]), Ms(row.idle_by_cause_ms[3]));
    }
  }
  if (!r.steps.empty()) {
    out += fmt::format("\n## Step times\n\nMedian {}; slow = more than {:.1f}× the median.\n\n| step | time | slow |\n|---|---|---|\n",
                       Ms(r.median_step_ms), kSlowStepFactor);
    for (const ReportStep& st : r.steps) out += fmt::format("| {} | {} | {} |\n", M(st.label), Ms(st.dur_ms), st.slow ? "slow" : "");
  }
  out += "\n## Top ops\n\nBy self time (nested ops not counted twice), total beside it; profiler wrappers left out.\n\n"
         "| op | category | count | self | total | share | mean | p99 |\n|---|---|---|---|---|---|---|---|\n";
  for (const ReportOp& o : r.top_ops) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", M(o.name), M(o.category), o.count,
                       Ms(o.self_ms), Ms(o.total_ms), Pct(o.share), Ms(o.mean_us / 1e3), Ms(o.p99_us / 1e3));
  }
  if (!r.attribution.sections.empty()) out += "\n" + render::RenderMarkdown(r.attribution);
  if (!r.host_functions.empty()) {
    out += fmt::format("\n## Host functions in the CPU samples\n\n{} samples with a call stack; self = the sample "
                       "landed in the function, total = the function was on the stack.\n\n| function | module | self | "
                       "total |\n|---|---|---|---|\n", r.host_stacks);
    for (const ReportHostFunction& f : r.host_functions) {
      out += fmt::format("| {} | {} | {} ({}) | {} ({}) |\n", M(f.name), M(f.module), Pct(f.self_share), f.self_samples,
                         Pct(f.total_share), f.total_samples);
    }
  }
  out += "\n## Diagnosis and suggestions\n\n";
  if (r.diagnosis->findings.empty()) out += "No rule fired on this trace.\n";
  for (const Finding& f : r.diagnosis->findings) {
    out += fmt::format("### {}\n\nPriority {}, confidence {}; impact {} = {} of {} ({}).\n\n", M(f.rule->title),
                       PriorityName(f.priority), ConfidenceName(f.confidence), Ms(f.impact.time_ns / 1e6),
                       Pct(f.impact.share), M(f.impact.basis), Ms(f.impact.basis_ns / 1e6));
    for (size_t i = 0; i < f.causes.size(); ++i) {
      out += fmt::format("{}. {}\n", i + 1, M(f.causes[i].text));
      for (const std::string& e : f.causes[i].evidence) out += "   - " + M(e) + "\n";
    }
    if (r.suggestions) {
      for (const SuggestionOutcome& o : r.suggestions->kept) {
        if (o.finding != &f) continue;
        out += fmt::format("- **{}** ({}): expected gain {}–{} of {} ({}); {}\n", M(o.suggestion->title),
                           M(o.suggestion->platform), Pct(o.gain_min), Pct(o.gain_max), M(GainBasis(o)), M(GainOrigin(o)),
                           M(o.suggestion->action));
      }
    }
    out += "\n";
  }
  if (r.suggestions && !r.suggestions->excluded.empty()) {
    out += "Excluded by the target or constraints:\n\n";
    for (const SuggestionOutcome& o : r.suggestions->excluded) {
      out += fmt::format("- {} — {}\n", M(o.suggestion->title), M(o.exclusion_reason));
    }
  }
  if (r.validation) {
    const ValidationResult& v = *r.validation;
    out += fmt::format("\n## Validation: {} → {}\n\n**{}**\n\n| metric | before | after | change | verdict |\n|---|---|---|---|---|\n",
                       M(v.before_label), M(v.after_label), M(ValidationHeadline(v)));
    for (const MetricComparison& m : v.metrics) {
      out += fmt::format("| {} | {} | {} | {} | {} |\n", M(m.metric), M(FormatValue(m.before, m.unit)),
                         M(FormatValue(m.after, m.unit)), Pct(m.change_rel), VerdictText(m.verdict));
    }
  }
  out += fmt::format("\n## Inputs and import diagnostics\n\n- input: {}\n", M(r.source));
  if (!r.before_source.empty()) out += "- before: " + M(r.before_source) + "\n";
  out += fmt::format("- format: {}; {} slices, {} instants, {} counter samples, {} stack samples\n", M(r.source_format),
                     r.slices, r.instants, r.counters, r.samples);
  if (r.diagnostics.empty()) out += "- no malformed records\n";
  for (const auto& [kind, text] : r.diagnostics) out += "- " + M(kind) + ": " + M(text) + "\n";
  return out;
}

}  // namespace aiprof
