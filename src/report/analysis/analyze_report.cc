#include "src/report/analysis/analyze_report.h"

#include "src/report/analysis/analysis_sections.h"
#include "src/report/metric_unit.h"

namespace aiprof {
namespace {

using render::Unit;
using render::Value;


Tree MachineForm(const MetricSet& m, const render::Document& doc) {
  Tree out = Tree::Map();
  Tree& metrics = out.Set("metrics", Tree::Map());
  for (const auto& [name, v] : m.values()) {
    const MetricInfo* info = FindMetricInfo(name);
    Tree& e = metrics.Set(name, Tree::Map());
    e.Set("value", Tree::Number(v.value));
    e.Set("unit", Tree::String(info ? MetricUnitName(info->unit) : ""));
    e.Set("source", Tree::String(v.source));
    e.Set("measured", Tree::Bool(v.measured));
  }
  Tree& unavailable = out.Set("unavailable", Tree::Map());
  for (const auto& [name, why] : m.unavailable()) unavailable.Set(name, Tree::String(why));
  Tree& evidence = out.Set("evidence", Tree::Map());
  for (const auto& [topic, lines] : m.evidence()) {
    if (lines.empty()) continue;
    Tree& list = evidence.Set(topic, Tree::List());
    for (const std::string& line : lines) list.Push(Tree::String(line));
  }
  // The analyses' sections in their generic form (the metric sections after
  // them are the fields above).
  render::Document sections;
  for (const render::Section& s : doc.sections) {
    if (s.key != "metrics" && s.key != "unavailable" && s.key != "evidence") sections.sections.push_back(s);
  }
  Tree tree = render::DocumentToTree(sections);
  for (const auto& [key, value] : tree.entries()) {
    if (key == "sections") out.Set("sections", value);
  }
  return out;
}

void AddMetricTable(const MetricSet& m, render::Document* doc) {
  // "What it is" names each figure's base (a share of the span, of busy
  // time, of the step; "per base": per impact_base_ns): ratios side by side
  // have different bases. The value is formatted in its unit
  // (MetricDisplayUnit); the unit's name is the machine form's ("154.94 ms
  // ns" said it twice).
  render::Table t{"metrics",
                  "",
                  {{"metric", "Metric"},
                   {"value", "Value"},
                   {"source", "Source"},
                   {"measured", "Measured"},
                   {"meaning", "What it is (its base)"}},
                  {},
                  ""};
  for (const auto& [name, v] : m.values()) {
    const MetricInfo* info = FindMetricInfo(name);
    t.rows.push_back({Value::String(name), Value::Number(v.value).In(MetricDisplayUnit(info)), Value::String(v.source),
                      Value::Bool(v.measured), Value::String(info ? std::string(info->description) : "")});
  }
  doc->AddSection("metrics", "Metrics").Add(std::move(t));
  if (!m.unavailable().empty()) {
    render::Table u{"unavailable", "", {{"metric", "Metric"}, {"reason", "Why unavailable"}}, {}, ""};
    for (const auto& [name, why] : m.unavailable()) u.rows.push_back({Value::String(name), Value::String(why)});
    doc->AddSection("unavailable", "Unavailable metrics").Add(std::move(u));
  }
  // Every topic the analyses published (a fixed list had drifted and dropped
  // eight of them).
  render::Section* evidence = nullptr;
  for (const auto& [topic, lines] : m.evidence()) {
    if (lines.empty()) continue;
    if (!evidence) evidence = &doc->AddSection("evidence", "Evidence");
    render::List& list = evidence->Add(render::List{topic, topic, {}});
    for (const std::string& line : lines) list.items.push_back({line, "", {}});
  }
}

}  // namespace

render::Document AnalyzeToDocument(const AnalysisReport& report, AnalysisResults& results) {
  render::Document doc;
  doc.key = "analyze";
  auto source = results.trace().metadata.find("source_path");
  doc.title = "aiprof analyze: " + (source == results.trace().metadata.end() ? std::string() : source->second);
  doc.generator = "aiprof analyze";
  for (const AnalysisSection& s : report.sections) {
    AddAnalysisSection(s.name, results, &doc.AddSection(s.name, s.name));
  }
  AddMetricTable(report.metrics, &doc);
  doc.machine = MachineForm(report.metrics, doc);
  return doc;
}

}  // namespace aiprof
