#include "src/report/validation/validation_report.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <vector>

#include "src/analysis/validation/prediction.h"
#include "src/render/escape.h"
#include "src/render/renderers.h"

namespace aiprof {
namespace {

std::string NumText(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.10g", v);
  return buf;
}

std::string Pct(double rel) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%+.2f%%", 100 * rel);
  return buf;
}

std::string PValue(double p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), p < 1e-4 ? "%.2e" : "%.4f", p);
  return buf;
}

std::string Date(int64_t unix_ms) {
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

const MetricComparison* Deciding(const ValidationResult& r) {
  for (const MetricComparison& m : r.metrics) {
    if (m.verdict == r.overall) return &m;
  }
  return r.metrics.empty() ? nullptr : &r.metrics[0];
}

std::string CiText(const MetricComparison& m) {
  if (!m.ci_available) return "-";
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%.0f%% CI %s .. %s", 100 * m.confidence, Pct(m.ci.rel_low).c_str(), Pct(m.ci.rel_high).c_str());
  return buf;
}

void AppendMetricJson(const MetricComparison& m, std::string* o) {
  *o += "    {\"metric\": " + JsonString(m.metric) + ", \"unit\": " + JsonString(m.unit) +
        ", \"higher_is_better\": " + (m.higher_is_better ? "true" : "false") +
        ", \"statistic\": " + JsonString(m.statistic_name) + ", \"n_before\": " + std::to_string(m.n_before) +
        ", \"n_after\": " + std::to_string(m.n_after) + ", \"before\": " + NumText(m.before) +
        ", \"after\": " + NumText(m.after) + ", \"change_rel\": " + NumText(m.change_rel) +
        ",\n     \"test\": " + (m.test.empty() ? "null" : JsonString(m.test)) +
        ", \"test_statistic\": " + (m.test.empty() || m.test == "bootstrap" ? "null" : NumText(m.test_statistic)) +
        ", \"p_value\": " + (m.test.empty() ? "null" : NumText(m.p_value)) +
        ", \"df\": " + (m.test == "welch" ? NumText(m.df) : "null") + ", \"hedges_g\": " + NumText(m.hedges_g) +
        ", \"cliffs_delta\": " + NumText(m.cliffs_delta) + ",\n     \"ci\": ";
  if (m.ci_available) {
    *o += "{\"confidence\": " + NumText(m.confidence) + ", \"diff\": " + NumText(m.ci.estimate) +
          ", \"diff_low\": " + NumText(m.ci.low) + ", \"diff_high\": " + NumText(m.ci.high) +
          ", \"rel_low\": " + NumText(m.ci.rel_low) + ", \"rel_high\": " + NumText(m.ci.rel_high) + "}";
  } else {
    *o += "null";
  }
  *o += ",\n     \"verdict\": " + JsonString(VerdictId(m.verdict)) + ", \"reason\": " + JsonString(m.reason) + "}";
}

void AppendOpShiftJson(const OpShiftAnalysis& s, std::string* o) {
  if (!s.available) {
    *o += "null";
    return;
  }
  *o += "{\"compared\": " + std::to_string(s.compared) + ", \"slowed\": " + std::to_string(s.slowed) +
        ", \"faster\": " + std::to_string(s.faster) + ", \"slowed_time_share\": " + NumText(s.slowed_time_share) +
        ", \"median_ratio\": " + NumText(s.median_ratio) + ", \"same_op_mix\": " + (s.same_op_mix ? "true" : "false") +
        ", \"broad\": " + (s.broad ? "true" : "false") + ",\n   \"ops\": [";
  for (size_t i = 0; i < s.ops.size(); ++i) {
    const OpShift& op = s.ops[i];
    *o += std::string(i ? "," : "") + "\n    {\"name\": " + JsonString(op.name) +
          ", \"count_before\": " + std::to_string(op.count_before) +
          ", \"count_after\": " + std::to_string(op.count_after) +
          ", \"mean_before_ns\": " + NumText(op.mean_before_ns) + ", \"mean_after_ns\": " + NumText(op.mean_after_ns) +
          ", \"ratio\": " + NumText(op.ratio) + ", \"added_per_sample_ns\": " + NumText(op.added_per_sample_ns) + "}";
  }
  *o += "]}";
}

std::string OptionsLine(const ValidationResult& r) {
  char buf[200];
  std::snprintf(buf, sizeof(buf), "test %s, alpha %g, min-effect %g%%, %d bootstrap resamples, seed %llu",
                TestKindName(r.options.test), r.options.alpha, 100 * r.options.min_effect, r.options.bootstrap_resamples,
                static_cast<unsigned long long>(r.options.seed));
  return buf;
}

std::string OpSummary(const OpShiftAnalysis& s) {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "%zu ops compared (at least %zu calls on both sides): %zu at least %.0f%% slower (%.0f%% of their before "
                "time), %zu faster; median ratio x%.2f; op mix %s.",
                s.compared, kOpMinCount, s.slowed, 100 * (kOpSlowedRatio - 1), 100 * s.slowed_time_share, s.faster,
                s.median_ratio, s.same_op_mix ? "unchanged" : "changed");
  return buf;
}

}  // namespace

std::string FormatValue(double v, const std::string& unit) {
  char buf[64];
  if (unit == "ns") {
    double a = std::fabs(v);
    if (a >= 1e9) std::snprintf(buf, sizeof(buf), "%.4g s", v / 1e9);
    else if (a >= 1e6) std::snprintf(buf, sizeof(buf), "%.4g ms", v / 1e6);
    else if (a >= 1e3) std::snprintf(buf, sizeof(buf), "%.4g us", v / 1e3);
    else std::snprintf(buf, sizeof(buf), "%.4g ns", v);
    return buf;
  }
  if (unit == "fraction") {
    std::snprintf(buf, sizeof(buf), "%.2f%%", 100 * v);
    return buf;
  }
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  std::string s = buf;
  if (unit != "value" && !unit.empty()) s += " " + unit;
  return s;
}

namespace {

// The verdict in words, shared by the one-line headline and the report's
// card: the deciding metric and its change, the statistical evidence, the
// diagnosis of a broad slowdown.
struct VerdictWords {
  std::string verdict;    // "improved"
  std::string change;     // "latency -28.37%" ("" without a decision)
  std::string evidence;   // "mannwhitney p = 0.0043; 95% CI ...; n = 6 / 5" ("" without a decision)
  std::string statistic;  // "median"
  const MetricComparison* deciding = nullptr;
  bool environmental = false;
};

VerdictWords DescribeVerdict(const ValidationResult& r) {
  VerdictWords w;
  w.verdict = VerdictText(r.overall);
  w.deciding = Deciding(r);
  w.environmental = r.diagnosis == "environmental";
  const MetricComparison* m = w.deciding;
  if (m == nullptr || r.overall == Verdict::kInsufficientData) return w;
  w.change = m->metric + " " + Pct(m->change_rel);
  w.statistic = m->statistic_name;
  std::vector<std::string> parts;
  if (!m->test.empty()) parts.push_back(m->test + " p = " + PValue(m->p_value));
  if (m->ci_available) parts.push_back(CiText(*m));
  parts.push_back("n = " + std::to_string(m->n_before) + " / " + std::to_string(m->n_after));
  for (const std::string& p : parts) w.evidence += (w.evidence.empty() ? "" : "; ") + p;
  return w;
}

constexpr char kEnvironmental[] = "broad slowdown across ops: likely environmental";

// What a time metric's samples are, named beside its figures: a trace's
// step samples are its recorded step spans (host), not the prediction
// check's step wall time (to the step's last device work), which
// DescribePredictionCheck names; ResNet50 num_workers=0: 176.3 ms median
// span against 189.08 ms median wall time.
std::string SampleBase(const ValidationResult& r, const MetricComparison& m) {
  if (m.unit != "ns") return "";
  if (r.unit == "step") return " of the recorded step spans (ProfilerStep#N or the step annotation, on the host)";
  return r.unit.empty() ? std::string() : " per " + r.unit;
}

}  // namespace

std::string ValidationHeadline(const ValidationResult& r) {
  const VerdictWords w = DescribeVerdict(r);
  std::string verdict = w.verdict;
  for (char& c : verdict) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string o = "aiprof: " + verdict;
  if (!w.change.empty()) o += ": " + w.change + " (" + w.statistic + "; " + w.evidence + ")";
  if (w.environmental) o += std::string("; ") + kEnvironmental;
  o += "; before " + TerminalSafe(r.before_label) + ", after " + TerminalSafe(r.after_label);
  return o;
}

render::KeyValue ValidationCard(const ValidationResult& r) {
  const VerdictWords w = DescribeVerdict(r);
  std::string value = w.verdict;
  if (!value.empty()) value[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(value[0])));
  std::string detail;
  const MetricComparison* m = w.deciding;
  if (!w.change.empty()) {
    value += ": " + w.change;
    detail = w.statistic + SampleBase(r, *m) + " " + FormatValue(m->before, m->unit) + " → " +
             FormatValue(m->after, m->unit) + "; " + w.evidence;
  } else if (m) {
    detail = m->reason;
  }
  if (w.environmental) detail += std::string(detail.empty() ? "" : "; ") + kEnvironmental;
  detail += std::string(detail.empty() ? "" : "; ") + "before " + r.before_label + ", after " + r.after_label;
  // The card holds the verdict and the figures; the intervals and the
  // history are read in the validation section (ValidationDocument).
  if (r.prediction)
    detail += "; " + BriefPredictionCheck(*r.prediction) + " (its intervals: under Predicted vs measured)";
  return {"change", "Change", render::Value::String(std::move(value)), render::Unit::kNone, std::move(detail)};
}

std::string ValidationToJson(const ValidationResult& r) {
  std::string o = "{\n  \"schema\": \"aiprof.validation/1\",\n";
  o += "  \"before\": {\"label\": " + JsonString(r.before_label) + ", \"kind\": " + JsonString(r.before_kind) + "},\n";
  o += "  \"after\": {\"label\": " + JsonString(r.after_label) + ", \"kind\": " + JsonString(r.after_kind) + "},\n";
  o += "  \"unit\": " + JsonString(r.unit) + ",\n";
  o += "  \"notes\": [";
  for (size_t i = 0; i < r.sample_notes.size(); ++i) o += (i ? ", " : "") + JsonString(r.sample_notes[i]);
  o += "],\n";
  o += "  \"options\": {\"test\": " + JsonString(TestKindName(r.options.test)) +
       ", \"alpha\": " + NumText(r.options.alpha) + ", \"min_effect\": " + NumText(r.options.min_effect) +
       ", \"bootstrap_resamples\": " + std::to_string(r.options.bootstrap_resamples) +
       ", \"seed\": " + std::to_string(r.options.seed) + "},\n";
  o += "  \"overall\": " + JsonString(VerdictId(r.overall)) + ",\n";
  o += "  \"regression\": " + std::string(r.overall == Verdict::kRegressed ? "true" : "false") + ",\n";
  o += "  \"headline\": " + JsonString(ValidationHeadline(r)) + ",\n";
  o += "  \"metrics\": [\n";
  for (size_t i = 0; i < r.metrics.size(); ++i) {
    AppendMetricJson(r.metrics[i], &o);
    o += i + 1 < r.metrics.size() ? ",\n" : "\n";
  }
  o += "  ],\n  \"op_shift\": ";
  AppendOpShiftJson(r.op_shift, &o);
  o += ",\n  \"diagnosis\": ";
  o += r.diagnosis.empty() ? "null" : "{\"kind\": " + JsonString(r.diagnosis) + ", \"text\": " + JsonString(r.diagnosis_text) + "}";
  if (r.prediction) {
    const PredictionCheck& c = *r.prediction;
    o += ",\n  \"prediction\": {\"fix\": " + (c.fix_id.empty() ? std::string("null") : JsonString(c.fix_id)) +
         ", \"matched_by\": " + JsonString(c.matched_by) + ", \"source\": " + JsonString(c.source) +
         ", \"scenario\": " + JsonString(c.scenario) + ", \"time_base\": " + JsonString(c.time_base) +
         ", \"before_ms\": " + NumText(c.before_ns / 1e6) + ", \"predicted_ms\": " + NumText(c.predicted_ns / 1e6) +
         ", \"predicted_interval_ms\": [" + NumText(c.predicted_lo_ns / 1e6) + ", " + NumText(c.predicted_hi_ns / 1e6) +
         "], \"measured_ms\": " + NumText(c.measured_ns / 1e6) + ", \"measured_interval_ms\": [" +
         NumText(c.measured_lo_ns / 1e6) + ", " + NumText(c.measured_hi_ns / 1e6) +
         "], \"error\": " + NumText(c.error) + ", \"within\": " + (c.within ? "true" : "false") +
         ", \"agrees\": " + (c.agrees ? "true" : "false") + ", \"hit\": " + (c.hit ? "true" : "false") +
         ", \"accuracy_bar\": " + NumText(kPredictionAccuracyBar) +
         ", \"predicted_interval_level\": " + NumText(c.predicted_interval_level) +
         ", \"predicted_interval_kind\": " + JsonString(c.predicted_interval_kind) +
         ", \"too_wide\": " + (c.too_wide ? "true" : "false") +
         ", \"measured_interval_level\": " + NumText(c.measured_interval_level) +
         ", \"measured_interval_kind\": " + JsonString(c.measured_interval_kind) +
         ", \"history_cases\": " + std::to_string(c.history_cases) +
         ", \"history_from\": " + JsonString(c.history_from) +
         ", \"uncorrected_ms\": " + NumText(c.uncorrected_ns / 1e6) + ", \"uncorrected_interval_ms\": [" +
         NumText(c.uncorrected_lo_ns / 1e6) + ", " + NumText(c.uncorrected_hi_ns / 1e6) + "]" +
         ", \"before_runs\": " + std::to_string(c.before_runs) + ", \"after_runs\": " + std::to_string(c.after_runs) +
         "}";
  }
  o += "\n}\n";
  return o;
}

namespace {

using render::Table;
using render::Unit;
using render::Value;

// A metric's unit as a document unit (other units, e.g. "samples/s", are
// named in the table's unit column).
Unit MetricUnit(const std::string& unit) {
  if (unit == "ns") return Unit::kNs;
  if (unit == "fraction") return Unit::kFraction;
  return Unit::kNone;
}

// A figure in the metric's unit, or null when nothing was measured.
Value Figure(bool measured, double v, const std::string& unit) {
  return measured ? Value::Number(v).In(MetricUnit(unit)) : Value::Null();
}

void AddMetrics(const ValidationResult& r, render::Section* s) {
  Table& t = s->Add(Table{"metrics",
                          "",
                          {{"metric", "metric", Unit::kNone},
                           {"statistic", "statistic", Unit::kNone},
                           {"before", "before", Unit::kNone},
                           {"after", "after", Unit::kNone},
                           {"unit", "unit", Unit::kNone},
                           {"change_rel", "change", Unit::kChange},
                           {"interval", "interval of change", Unit::kNone},
                           {"test", "test", Unit::kNone},
                           {"p_value", "p", Unit::kNone},
                           {"hedges_g", "Hedges g", Unit::kNone},
                           {"n_before", "n before", Unit::kCount},
                           {"n_after", "n after", Unit::kCount},
                           {"verdict", "verdict", Unit::kNone},
                           {"reason", "why", Unit::kNone, true}},
                          {},
                          ""});
  for (const MetricComparison& m : r.metrics) {
    bool measured = m.n_before > 0 || m.n_after > 0;
    bool tested = !m.test.empty();
    Value p = Value::Null();
    if (tested) {
      // A bootstrap p of 0 means no resample crossed zero: below 1 / resamples, not zero.
      p = m.test == "bootstrap" && m.p_value == 0 ? Value::String("< " + PValue(1.0 / r.options.bootstrap_resamples))
                                                  : Value::String(PValue(m.p_value));
    }
    bool location = tested && m.statistic_name != m.metric;  // effect sizes are for mean/median comparisons
    t.rows.push_back({Value::String(m.metric), measured ? Value::String(m.statistic_name) : Value::Null(),
                      Figure(measured, m.before, m.unit), Figure(measured, m.after, m.unit),
                      // Units the renderers format (ns, fraction) need no column entry.
                      Value::String(m.unit == "value" || MetricUnit(m.unit) != Unit::kNone ? "" : m.unit),
                      measured ? Value::Number(m.change_rel) : Value::Null(),
                      m.ci_available ? Value::String(CiText(m)) : Value::Null(),
                      tested ? Value::String(m.test) : Value::Null(), p,
                      location ? Value::Number(std::round(m.hedges_g * 100) / 100) : Value::Null(),
                      Value::Int(static_cast<int64_t>(m.n_before)), Value::Int(static_cast<int64_t>(m.n_after)),
                      Value::String(VerdictText(m.verdict)), Value::String(m.reason)});
  }
}

void AddOpShift(const OpShiftAnalysis& shift, render::Section* s) {
  s->Add(render::Paragraph{OpSummary(shift) + " Largest ops by before time:"});
  Table& t = s->Add(Table{"ops", "",
                          {{"name", "op", Unit::kNone}, {"count_before", "calls before", Unit::kCount},
                           {"count_after", "calls after", Unit::kCount}, {"mean_before_ns", "mean before", Unit::kNs},
                           {"mean_after_ns", "mean after", Unit::kNs}, {"ratio", "ratio", Unit::kRatio},
                           {"change", "", Unit::kNone}},
                          {}, ""});
  for (size_t i = 0; i < shift.ops.size() && i < kReportOps; ++i) {
    const OpShift& op = shift.ops[i];
    const char* change = op.ratio >= kOpSlowedRatio                        ? "slower"
                         : op.ratio > 0 && op.ratio <= 1 / kOpSlowedRatio ? "faster"
                                                                           : "same";
    t.rows.push_back({Value::String(op.name), Value::Int(static_cast<int64_t>(op.count_before)),
                      Value::Int(static_cast<int64_t>(op.count_after)), Value::Number(op.mean_before_ns),
                      Value::Number(op.mean_after_ns), Value::Number(op.ratio), Value::String(change)});
  }
  if (shift.ops.size() > kReportOps) {
    t.note = std::to_string(shift.ops.size() - kReportOps) + " more ops in the JSON output.";
  }
}

}  // namespace

render::Document ValidationToDocument(const ValidationResult& r) {
  render::Document doc;
  doc.key = "validation";
  doc.title = std::string("aiprof validate: ") + VerdictText(r.overall);
  doc.generator = "aiprof validate";
  doc.machine_json = ValidationToJson(r);
  render::Section& inputs = doc.AddSection("inputs", "");
  render::KeyValues& kv = inputs.Add(render::KeyValues{});
  kv.items = {{"before", "Before", Value::String(r.before_label + " (" + r.before_kind + ")")},
              {"after", "After", Value::String(r.after_label + " (" + r.after_kind + ")")},
              {"sample", "Sample", Value::String("one " + r.unit)}};
  kv.items.push_back({"method", "Method", Value::String(OptionsLine(r))});
  AddMetrics(r, &doc.AddSection("metrics", "Metrics"));
  // What was done to the samples, below the verdicts it qualifies (with
  // several runs a side it is a few lines per run).
  if (!r.sample_notes.empty()) {
    render::KeyValues notes;
    for (const std::string& note : r.sample_notes) notes.items.push_back({"note", "Note", Value::String(note)});
    doc.AddSection("samples", "Samples").Add(std::move(notes));
  }
  if (!r.diagnosis.empty()) {
    doc.AddSection("diagnosis", "Diagnosis: " + r.diagnosis).Add(render::Paragraph{r.diagnosis_text});
  }
  if (r.prediction) {
    const PredictionCheck& c = *r.prediction;
    render::Section& sec = doc.AddSection("prediction", "Predicted vs measured");
    sec.Add(render::Paragraph{DescribePredictionCheck(c)});
    char verdict[160];
    std::snprintf(verdict, sizeof verdict, "%s: %+.1f%% against the measured after run (the accuracy bar is %.0f%%)",
                  c.hit ? "hit" : "missed", 100 * c.error, 100 * kPredictionAccuracyBar);
    std::string interval = FormatValue(c.predicted_lo_ns, "ns") + " .. " + FormatValue(c.predicted_hi_ns, "ns") + " (" +
                           DescribeIntervalLabel(c.predicted_interval_level, c.predicted_interval_kind) + ")";
    if (c.too_wide) {
      char wide[120];
      std::snprintf(wide, sizeof wide, "; too wide to tell: it reaches beyond +-%.0f%% of the prediction",
                    100 * kTooWideInterval);
      interval += wide;
    }
    sec.Add(render::KeyValues{
        {{"verdict", "Prediction verdict", Value::String(verdict)},
         {"fix", "Fix", Value::String(c.fix_id.empty() ? c.fix_title : c.fix_id + ": " + c.fix_title)},
         {"matched_by", "Matched by", Value::String(c.matched_by)},
         {"source", "Predicted by",
          Value::String(c.scenario.empty() ? c.source : c.source + " of '" + c.scenario + "'")},
         {"time_base", "Time base", Value::String(c.time_base)},
         {"before", "Before (measured)", Value::Number(c.before_ns), render::Unit::kNs},
         {"predicted", "Predicted", Value::Number(c.predicted_ns), render::Unit::kNs},
         {"measured", "After (measured)", Value::Number(c.measured_ns), render::Unit::kNs},
         {"error", "Prediction error", Value::Number(c.error), render::Unit::kChange},
         {"predicted_interval", "Predicted interval", Value::String(interval)},
         {"measured_interval", "Measured interval",
          Value::String(FormatValue(c.measured_lo_ns, "ns") + " .. " + FormatValue(c.measured_hi_ns, "ns") + " (" +
                        DescribeIntervalLabel(c.measured_interval_level, c.measured_interval_kind) + ")")},
         {"runs", "Runs (before, after)",
          Value::String(std::to_string(c.before_runs) + ", " + std::to_string(c.after_runs))}}});
  }
  if (r.op_shift.available) AddOpShift(r.op_shift, &doc.AddSection("op_shift", "Per-op before/after"));
  doc.AddSection("notes", "").Add(render::Paragraph{"Verdict rules, tests and calibration: docs/validation.md."});
  return doc;
}

std::string ValidationToMarkdown(const ValidationResult& r) { return render::RenderMarkdown(ValidationToDocument(r)); }

std::string ValidationToText(const ValidationResult& r) { return render::RenderText(ValidationToDocument(r)); }

std::string ValidationToHtml(const ValidationResult& r) { return render::RenderHtmlPage(ValidationToDocument(r)); }

render::Document HistoryToDocument(const std::vector<ValidationRecord>& records) {
  render::Document doc;
  doc.key = "history";
  doc.title = "aiprof validation history";
  doc.generator = "aiprof history";
  doc.machine_json = HistoryToJson(records);
  render::Section& s = doc.AddSection("validations", "");
  if (records.empty()) {
    s.Add(render::Paragraph{"no validations stored"});
    return doc;
  }
  Table& t = s.Add(Table{"validations", "",
                         {{"id", "#", Unit::kNone}, {"created", "created", Unit::kNone},
                          {"overall", "verdict", Unit::kNone}, {"alert", "alert", Unit::kNone},
                          {"headline", "headline", Unit::kNone}},
                         {}, ""});
  for (const ValidationRecord& r : records) {
    t.rows.push_back({Value::Int(r.id), Value::String(Date(r.created_unix_ms)), Value::String(r.overall),
                      Value::Bool(r.alert), Value::String(r.headline)});
  }
  return doc;
}

std::string HistoryToText(const std::vector<ValidationRecord>& records) {
  return render::RenderText(HistoryToDocument(records));
}

std::string HistoryToJson(const std::vector<ValidationRecord>& records) {
  std::string o = "[";
  for (size_t i = 0; i < records.size(); ++i) {
    const ValidationRecord& r = records[i];
    o += std::string(i ? "," : "") + "\n  {\"id\": " + std::to_string(r.id) + ", \"service\": " + JsonString(r.service) +
         ", \"baseline_id\": " + (r.baseline_id ? std::to_string(r.baseline_id) : "null") + ", \"created\": " +
         JsonString(Date(r.created_unix_ms)) + ", \"before\": " + JsonString(r.before_label) + ", \"after\": " +
         JsonString(r.after_label) + ", \"overall\": " + JsonString(r.overall) + ", \"alert\": " + (r.alert ? "true" : "false") +
         ", \"headline\": " + JsonString(r.headline) + "}";
  }
  return o + (records.empty() ? "]\n" : "\n]\n");
}

render::Document CardToDocument(const KnowledgeCard& c) {
  char gain[400];
  std::snprintf(gain, sizeof(gain),
                "%s %s (%s of the samples %s -> %s; %.0f%% CI %s .. %s; %s p = %s; n = %zu before, %zu after)",
                c.metric.c_str(), Pct(c.change_rel).c_str(), c.statistic.c_str(), FormatValue(c.before, c.unit).c_str(),
                FormatValue(c.after, c.unit).c_str(), 100 * c.confidence, Pct(c.ci_low_rel).c_str(),
                Pct(c.ci_high_rel).c_str(), c.test.c_str(), PValue(c.p_value).c_str(), c.n_before, c.n_after);
  render::Document doc;
  doc.key = "card";
  doc.title = "Knowledge card" + (c.id ? " #" + std::to_string(c.id) : std::string());
  doc.generator = "aiprof card";
  std::string evidence = "before " + c.before_label + ", after " + c.after_label +
                         (c.created_unix_ms ? ", measured " + Date(c.created_unix_ms) : std::string());
  doc.AddSection("card", "").Add(render::KeyValues{{{"scene", "Scene", Value::String(c.scene)},
                                                    {"bottleneck", "Core bottleneck", Value::String(c.bottleneck)},
                                                    {"fix", "Effective fix", Value::String(c.fix)},
                                                    {"gain", "Measured gain", Value::String(gain)},
                                                    {"verdict", "Verdict", Value::String(c.verdict)},
                                                    {"evidence", "Evidence", Value::String(evidence)}}});
  if (c.prediction) {
    const CardPrediction& p = *c.prediction;
    // What is stored: the replay (or prior) before any history correction,
    // so that each card's error is the predictor's own.
    doc.AddSection("prediction", "Predicted before the fix (as stored: before any history correction)")
        .Add(render::KeyValues{
            {{"fix_id", "Suggestion", p.fix_id.empty() ? Value::Null() : Value::String(p.fix_id)},
             {"source", "Predicted by",
              Value::String(p.scenario.empty() ? p.source : p.source + " of '" + p.scenario + "'")},
             {"statistic", "Statistic", Value::String("the steady steps' " + p.statistic)},
             // Another base than the measured gain's samples above (a
             // trace's recorded step spans): the two are not compared.
             {"time_base", "Time base",
              Value::String("step wall time, the steady steps' " + p.statistic +
                            ": step start to the end of its last device work (its end on the host without device "
                            "work), or the step period where the device runs behind the host; not the samples of "
                            "the measured gain above (a trace's recorded step spans)")},
             // Null in a card stored before the before figure was kept.
             {"before", "Before step wall time", p.before_ns > 0 ? Value::Number(p.before_ns) : Value::Null(),
              render::Unit::kNs},
             {"predicted", "Predicted step wall time (uncorrected)", Value::Number(p.predicted_ns), render::Unit::kNs},
             {"measured", "Measured step wall time", Value::Number(p.measured_ns), render::Unit::kNs},
             {"predicted_change", "Predicted change, a share of the before figure",
              p.before_ns > 0 ? Value::Number(p.predicted_ns / p.before_ns - 1) : Value::Null(), render::Unit::kChange},
             {"measured_change", "Measured change, a share of the before figure",
              p.before_ns > 0 ? Value::Number(p.measured_ns / p.before_ns - 1) : Value::Null(), render::Unit::kChange},
             {"error", "Error of the uncorrected prediction",
              Value::Number(p.measured_ns > 0 ? p.predicted_ns / p.measured_ns - 1 : 0), render::Unit::kChange}}});
  }
  return doc;
}

std::string CardToMarkdown(const KnowledgeCard& c) { return render::RenderMarkdown(CardToDocument(c)); }

}  // namespace aiprof
