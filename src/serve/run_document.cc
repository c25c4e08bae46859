#include "src/serve/run_document.h"

#include <cmath>

#include "src/query/query_format.h"

namespace aiprof {

using render::Column;
using render::Unit;
using render::Value;

namespace {

Value Num(double v) { return std::isfinite(v) ? Value::Number(v) : Value::Null(); }

render::Severity SeverityOf(Priority p) {
  switch (p) {
    case Priority::kHigh: return render::Severity::kHigh;
    case Priority::kMedium: return render::Severity::kMedium;
    case Priority::kLow: return render::Severity::kLow;
  }
  return render::Severity::kInfo;
}

void AddHeadline(const RunRow& run, const ReportData& r, render::Document* doc) {
  render::Section& s = doc->AddSection("headline", "Headline");
  render::KeyValues& kv = s.Add(render::KeyValues{});
  kv.items.push_back({"id", "Run", Value::Int(run.id), Unit::kNone});
  kv.items.push_back({"path", "File (in the logdir)", Value::String(run.path), Unit::kNone});
  kv.items.push_back({"source_format", "Format", Value::String(r.source_format), Unit::kNone});
  kv.items.push_back({"platform", "Platform", Value::String(r.platform), Unit::kNone});
  kv.items.push_back({"slices", "Slices", Value::Int(static_cast<int64_t>(r.slices)), Unit::kCount});
  kv.items.push_back({"steps", "Steps", Value::Int(static_cast<int64_t>(r.steps_stats.count)), Unit::kCount});
  if (r.steps_stats.count > 0) {
    kv.items.push_back({"step_p50_ns", "Median step", Num(r.steps_stats.p50_ns), Unit::kNs});
    kv.items.push_back({"step_p99_ns", "p99 step", Num(r.steps_stats.p99_ns), Unit::kNs});
    kv.items.push_back({"step_cv", "Step variation (cv)", Num(r.steps_stats.cv), Unit::kRatio});
  }
  if (r.device_util >= 0) {
    kv.items.push_back({"device_util", "Device utilisation (" + r.device_util_basis + ")", Num(r.device_util),
                        Unit::kFraction});
  }
  if (r.top_finding && r.top_finding->rule) {
    kv.items.push_back({"top_finding", "Top finding", Value::String(r.top_finding->rule->title), Unit::kNone});
  }
}

void AddBreakdown(const ReportData& r, render::Document* doc) {
  if (r.breakdown.empty()) return;
  render::Section& s = doc->AddSection("breakdown", "Where the time goes (per timeline, its span)");
  render::Table t;
  t.key = "breakdown";
  t.columns = {{"timeline", "Timeline", Unit::kNone}, {"span_ms", "Span", Unit::kMs},
               {"compute_ms", "Compute", Unit::kMs},  {"comm_ms", "Communication", Unit::kMs},
               {"memcpy_ms", "Memory copies", Unit::kMs}};
  for (const ReportBreakdownRow& b : r.breakdown) {
    t.rows.push_back({Value::String(b.label), Num(b.span_ms), Num(b.compute_ms), Num(b.comm_ms), Num(b.memcpy_ms)});
  }
  s.Add(std::move(t));
}

void AddDiagnosis(const ReportData& r, render::Document* doc) {
  render::Section& s = doc->AddSection("diagnosis", "Diagnosis");
  if (!r.diagnosis || r.diagnosis->findings.empty()) {
    s.Add(render::Paragraph{"No rule fired on this run."});
    return;
  }
  for (const Finding& f : r.diagnosis->findings) {
    render::Finding out;
    out.key = f.rule ? f.rule->id : "";
    out.title = f.rule ? f.rule->title : "finding";
    out.severity = SeverityOf(f.priority);
    if (f.impact.quantified) {
      out.impact = f.impact.share;
      out.impact_base = f.impact.basis_text;
    }
    out.detail = f.confidence_reason;
    out.evidence.push_back({"confidence", "Confidence", Value::String(ConfidenceName(f.confidence)), Unit::kNone});
    if (!f.causes.empty()) out.evidence.push_back({"cause", "Likely cause", Value::String(f.causes[0].text), Unit::kNone});
    s.Add(std::move(out));
  }
  if (!r.suggestions || r.suggestions->kept.empty()) return;
  render::Table t;
  t.key = "suggestions";
  t.title = "Suggestions (expected gain: share of the finding's time base)";
  t.columns = {{"suggestion", "Suggestion", Unit::kNone}, {"finding", "For", Unit::kNone},
               {"gain_min", "Gain from", Unit::kFraction}, {"gain_max", "Gain to", Unit::kFraction},
               {"speedup_max", "Speed-up up to", Unit::kRatio}, {"gain_source", "Estimated from", Unit::kNone},
               {"action", "What to do", Unit::kNone}};
  for (const SuggestionOutcome& o : r.suggestions->kept) {
    if (!o.suggestion) continue;
    t.rows.push_back({Value::String(o.suggestion->title),
                      Value::String(o.finding && o.finding->rule ? o.finding->rule->title : ""), Num(o.gain_min),
                      Num(o.gain_max), Num(o.speedup_max), Value::String(o.gain_source),
                      Value::String(o.suggestion->action)});
  }
  s.sections.push_back(render::Section{"suggestions", "Suggestions", {}, {}});
  s.sections.back().Add(std::move(t));
}

void AddTopOps(const ReportData& r, render::Document* doc) {
  if (r.top_ops.empty()) return;
  render::Section& s = doc->AddSection("top_ops", "Top ops by total time");
  render::Table t;
  t.key = "top_ops";
  t.columns = {{"name", "Op", Unit::kNone},        {"category", "Category", Unit::kNone},
               {"count", "Calls", Unit::kCount},    {"total_ms", "Total", Unit::kMs},
               {"p50_us", "p50 (µs)", Unit::kNone}, {"p99_us", "p99 (µs)", Unit::kNone},
               {"share", "Share of its category's op time", Unit::kFraction}};
  const size_t n = std::min(r.top_ops.size(), kServeTopOps);
  for (size_t i = 0; i < n; ++i) {
    const ReportOp& op = r.top_ops[i];
    t.rows.push_back({Value::String(op.name), Value::String(op.category), Value::Int(static_cast<int64_t>(op.count)),
                      Num(op.total_ms), Num(op.p50_us), Num(op.p99_us), Num(op.share)});
  }
  if (r.top_ops.size() > n) t.note = std::to_string(r.top_ops.size() - n) + " more ops in the full report";
  s.Add(std::move(t));
}

void AddSteps(const ReportData& r, render::Document* doc) {
  if (r.steps.size() < 2) return;
  render::Section& s = doc->AddSection("steps", "Steps");
  render::Series series;
  series.key = "step_ms";
  series.title = "Step time";
  series.x_label = "step";
  series.y_label = "time";
  series.y_unit = Unit::kMs;
  for (size_t i = 0; i < r.steps.size(); ++i) series.points.emplace_back(static_cast<double>(i), r.steps[i].dur_ms);
  s.Add(std::move(series));
}

}  // namespace

render::Document RunsToDocument(const std::vector<RunRow>& runs, const std::string& search) {
  render::Document doc;
  doc.key = "runs";
  doc.title = "aiprof serve: runs";
  doc.generator = "aiprof serve";
  render::Section& s = doc.AddSection("runs", search.empty() ? "Runs" : "Runs matching \"" + search + "\"");
  render::Table t;
  t.key = "runs";
  t.columns = {{"id", "Run", Unit::kNone},
               {"name", "Name", Unit::kNone},
               {"path", "File", Unit::kNone},
               {"tag", "Tag", Unit::kNone},
               {"state", "State", Unit::kNone},
               {"size_bytes", "Size", Unit::kBytes},
               {"steps", "Steps", Unit::kCount},
               {"step_p50_ns", "Median step", Unit::kNs},
               {"device_util", "Device utilisation", Unit::kFraction},
               {"top_finding", "Top finding", Unit::kNone},
               {"top_share", "Its impact", Unit::kFraction},
               {"top_basis", "Impact base", Unit::kNone},
               {"error", "Error", Unit::kNone}};
  for (const RunRow& r : runs) {
    const bool ready = r.state == RunState::kReady;
    t.rows.push_back({Value::Int(r.id), Value::String(r.name), Value::String(r.path), Value::String(r.tag),
                      Value::String(RunStateName(r.state)), Value::Int(r.size_bytes),
                      ready ? Value::Int(r.steps) : Value::Null(),
                      ready && r.steps > 0 ? Num(r.step_p50_ns) : Value::Null(),
                      ready && r.device_util >= 0 ? Num(r.device_util) : Value::Null(), Value::String(r.top_finding),
                      ready && !r.top_finding.empty() ? Num(r.top_share) : Value::Null(), Value::String(r.top_basis),
                      Value::String(r.error)});
  }
  s.Add(std::move(t));
  return doc;
}

render::Document RunToDocument(const RunRow& run, const ReportData& report) {
  render::Document doc;
  doc.key = "run";
  doc.title = run.name;
  doc.generator = "aiprof serve";
  AddHeadline(run, report, &doc);
  AddBreakdown(report, &doc);
  AddDiagnosis(report, &doc);
  AddTopOps(report, &doc);
  AddSteps(report, &doc);
  return doc;
}

render::Document QueryToDocument(const RunRow& run, const std::string& sql, const QueryResult& result) {
  render::Document doc;
  doc.key = "query";
  doc.title = "Query on " + run.name;
  doc.generator = "aiprof serve";
  render::Section& s = doc.AddSection("result", "Result");
  s.Add(render::KeyValues{{{"sql", "SQL", Value::String(sql), Unit::kNone},
                           {"rows", "Rows", Value::Int(static_cast<int64_t>(result.rows.size())), Unit::kCount}}});
  render::Table t;
  t.key = "rows";
  for (const std::string& c : result.columns) t.columns.push_back({c, c, Unit::kNone});
  for (const auto& row : result.rows) {
    std::vector<Value> cells;
    for (const QueryValue& v : row) {
      if (std::holds_alternative<std::monostate>(v)) {
        cells.push_back(Value::Null());
      } else if (const auto* i = std::get_if<int64_t>(&v)) {
        cells.push_back(Value::Int(*i));
      } else if (const auto* d = std::get_if<double>(&v)) {
        cells.push_back(Num(*d));
      } else {
        cells.push_back(Value::String(std::get<std::string>(v)));
      }
    }
    t.rows.push_back(std::move(cells));
  }
  if (result.truncated) t.note = "only the first " + std::to_string(result.max_rows) + " rows are shown";
  s.Add(std::move(t));
  return doc;
}

}  // namespace aiprof
