#include "src/report/diagnosis/draft_rule.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/render/escape.h"

namespace aiprof {
namespace {

// Time metrics that are impacts (what a rule's `impact` may name); the
// window's own figures are not.
bool IsImpactMetric(const std::string& name, const MetricInfo& info) {
  return info.unit == MetricUnit::kNanoseconds && name != "impact_base_ns" && name != "trace_span_ns" &&
         name != "startup_ns" && name.find("step_time_") != 0 && name != "launch_delay_p50_ns";
}

std::string ValueText(const MetricInfo& info, double v) {
  switch (info.unit) {
    case MetricUnit::kRatio: return fmt::format("{:.2f}%", v * 100);
    case MetricUnit::kNanoseconds: return fmt::format("{:.3f} ms", v / 1e6);
    case MetricUnit::kBytes: return fmt::format("{:.1f} MB", v / 1e6);
    default: return fmt::format("{:.4g}", v);
  }
}

}  // namespace

std::string DraftRuleYaml(const std::string& source, const Diagnosis& d, const MetricSet& metrics) {
  // The impact: the largest time impact no fired rule already uses.
  std::string impact;
  double impact_ns = -1;
  for (const auto& [name, v] : metrics.values()) {
    const MetricInfo* info = FindMetricInfo(name);
    if (!info || !IsImpactMetric(name, *info)) continue;
    bool used = std::any_of(d.findings.begin(), d.findings.end(),
                            [&, name = name](const Finding& f) { return f.rule->impact_metric == name; });
    if (!used && v.value > impact_ns) {
      impact = name;
      impact_ns = v.value;
    }
  }
  if (impact.empty()) {
    impact = "idle_other_ns";
    impact_ns = 0;
  }
  std::string out;
  out += "# Drafted by aiprof diagnose --draft-rule from " + JsonString(source) + ".\n";
  out += "# A template: rename it, refine the thresholds and texts, then load it with\n";
  out += "#   aiprof diagnose TRACE --rules THIS_FILE   (docs/rules.md describes every field).\n";
  out += "# Impacts are wall-clock time " + JsonString(d.impact_basis_text) + ".\n";
  out += "# Measured on this trace (metric = value; docs/metrics.md says what each is):\n";
  for (const auto& [name, v] : metrics.values()) {
    const MetricInfo* info = FindMetricInfo(name);
    if (!info) continue;
    out += fmt::format("#   {} = {}{}\n", name, ValueText(*info, v.value), v.measured ? "" : " (estimated)");
  }
  for (const Finding& f : d.findings) {
    if (f.consumers.empty()) continue;
    out += "# Largest consumers of the time no finding explains:\n";
    for (const TimeConsumer& c : f.consumers) {
      out += fmt::format("#   {} {}: {:.3f} ms\n", c.kind, JsonString(c.name), c.ns / 1e6);
    }
  }
  const MetricInfo* info = FindMetricInfo(impact);
  // Fires on this trace: the threshold is 80% of the measured value.
  // Metric names and numbers only: safe inside plain double quotes.
  std::string threshold = fmt::format("{:.3f}ms", std::max(0.0, impact_ns) * 0.8 / 1e6);
  out += "rules:\n";
  out += "  - id: draft_" + impact.substr(0, impact.size() - 3) + "\n";
  out += "    bottleneck: custom\n";
  out += "    title: " + JsonString("Describe the bottleneck (drafted from " + impact + ")") + "\n";
  out += "    description: " + JsonString(info ? std::string(info->description) : impact) + "\n";
  out += "    when: \"" + impact + " >= " + threshold + "\"\n";
  out += "    confidence:\n";
  out += fmt::format("      medium: \"{} >= {:.3f}ms\"\n", impact, std::max(0.0, impact_ns) / 1e6);
  out += "    impact: " + impact + "\n";
  out += "    root_causes:\n";
  out += "      - id: describe_cause\n";
  out += "        text: " + JsonString("Describe the cause; measured " + impact + " = " +
                                     fmt::format("{:.3f} ms", std::max(0.0, impact_ns) / 1e6)) + "\n";
  out += "    suggestions:\n";
  out += "      - id: describe_fix\n";
  out += "        title: \"Describe the fix\"\n";
  out += "        platform: generic\n";
  out += "        action: \"Say concretely what to change.\"\n";
  out += "        efficacy: [0.1, 0.5]\n";
  out += "        targets: [latency, throughput]\n";
  out += "        risk: {precision_loss: 0%, memory_increase: 0%, effort: medium}\n";
  return out;
}

}  // namespace aiprof
