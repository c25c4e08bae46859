#include "src/serve/run_document.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>

#include "src/analysis/validation/baseline_store.h"
#include "src/query/query_format.h"
#include "src/render/escape.h"
#include "src/render/renderers.h"
#include "src/render/units.h"

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
  std::vector<double> ms;
  ms.reserve(r.steps.size());
  for (const ReportStep& step : r.steps) ms.push_back(step.dur_ms);
  series.points = MinMaxDownsample(ms, kServeMaxChartPoints);
  if (series.points.size() < ms.size()) {
    const size_t buckets = kServeMaxChartPoints / 2;
    s.Add(render::Paragraph{std::to_string(ms.size()) + " steps, drawn as " + std::to_string(buckets) +
                            " buckets of about " + std::to_string((ms.size() + buckets - 1) / buckets) +
                            " consecutive steps, each by its shortest and its longest step."});
  }
  s.Add(std::move(series));
}

// Every table of the section and its subsections: at most
// kServeMaxTableRows rows, the note saying how many more.
void CapTables(render::Section* s) {
  for (render::Block& b : s->blocks) {
    auto* t = std::get_if<render::Table>(&b);
    if (!t || t->rows.size() <= kServeMaxTableRows) continue;
    const size_t more = t->rows.size() - kServeMaxTableRows;
    t->rows.resize(kServeMaxTableRows);
    t->note = std::to_string(more) + " more rows not shown (at most " + std::to_string(kServeMaxTableRows) +
              " on this page)" + (t->note.empty() ? "" : "; " + t->note);
  }
  for (render::Section& sub : s->sections) CapTables(&sub);
}

}  // namespace

std::string ServiceOf(const RunRow& run) {
  if (!run.service.empty()) return run.service;
  const size_t slash = run.path.find('/');
  if (slash == std::string::npos) return "";
  const std::string top = run.path.substr(0, slash);
  return top == "uploads" ? "" : top;
}

std::string DateOf(const RunRow& run) {
  const std::time_t t = static_cast<std::time_t>(run.mtime_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::optional<RunGrouping> ParseRunGrouping(std::string_view text) {
  if (text == "none") return RunGrouping::kNone;
  if (text == "service") return RunGrouping::kService;
  if (text == "tag") return RunGrouping::kTag;
  if (text == "date") return RunGrouping::kDate;
  return std::nullopt;
}

std::vector<RunGroup> GroupRuns(const std::vector<RunRow>& runs, RunGrouping grouping) {
  auto key_of = [&](const RunRow& r) {
    switch (grouping) {
      case RunGrouping::kService: return ServiceOf(r);
      case RunGrouping::kTag: return r.tag;
      case RunGrouping::kDate: return DateOf(r);
      case RunGrouping::kNone: break;
    }
    return std::string();
  };
  std::map<std::string, std::vector<const RunRow*>> by_key;
  for (const RunRow& r : runs) by_key[key_of(r)].push_back(&r);
  std::vector<RunGroup> out;
  for (auto& [key, list] : by_key) out.push_back({key, std::move(list)});
  if (grouping == RunGrouping::kDate) {
    std::reverse(out.begin(), out.end());
  } else if (!out.empty() && out.front().key.empty()) {
    std::rotate(out.begin(), out.begin() + 1, out.end());  // "" (none given) last
  }
  return out;
}

std::string DeviceUtilText(const RunRow& r) {
  if (r.state != RunState::kReady || r.device_util < 0) return "";
  return render::FormatQuantity(r.device_util, Unit::kFraction) + " of " +
         (r.device_util_basis.empty() ? std::string("a base not recorded (converted by an earlier aiprof serve)")
                                      : r.device_util_basis);
}

render::Document RunsToDocument(const std::vector<RunRow>& runs, const std::string& search, RunGrouping grouping) {
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
               {"service", "Service", Unit::kNone},
               {"date", "Date (file, UTC)", Unit::kNone},
               {"state", "State", Unit::kNone},
               {"size_bytes", "Size", Unit::kBytes},
               {"steps", "Steps", Unit::kCount},
               {"step_p50_ns", "Median step", Unit::kNs},
               {"device_util", "Device utilisation", Unit::kFraction},
               {"device_util_basis", "Its base", Unit::kNone},
               {"top_finding", "Top finding", Unit::kNone},
               {"top_share", "Its impact", Unit::kFraction},
               {"top_basis", "Impact base", Unit::kNone},
               {"error", "Error", Unit::kNone},
               {"convert_ms", "Conversion", Unit::kMs}};
  for (const RunRow& r : runs) {
    const bool ready = r.state == RunState::kReady;
    t.rows.push_back({Value::Int(r.id), Value::String(r.name), Value::String(r.path), Value::String(r.tag),
                      Value::String(ServiceOf(r)), Value::String(DateOf(r)), Value::String(RunStateName(r.state)),
                      Value::Int(r.size_bytes), ready ? Value::Int(r.steps) : Value::Null(),
                      ready && r.steps > 0 ? Num(r.step_p50_ns) : Value::Null(),
                      ready && r.device_util >= 0 ? Num(r.device_util) : Value::Null(),
                      Value::String(ready && r.device_util >= 0 ? r.device_util_basis : ""),
                      Value::String(r.top_finding), ready && !r.top_finding.empty() ? Num(r.top_share) : Value::Null(),
                      Value::String(r.top_basis), Value::String(r.error), ready ? Num(r.convert_ms) : Value::Null()});
  }
  s.Add(std::move(t));
  if (grouping == RunGrouping::kNone) return doc;
  const char* what = grouping == RunGrouping::kService ? "service" : grouping == RunGrouping::kTag ? "tag" : "date";
  render::Section& g = doc.AddSection("groups", std::string("Runs by ") + what);
  render::Table gt;
  gt.key = "groups";
  gt.columns = {{"group", what, Unit::kNone},     {"runs", "Runs", Unit::kCount},
                {"ready", "Ready", Unit::kCount}, {"failed", "Failed", Unit::kCount},
                {"newest", "Newest date", Unit::kNone}};
  for (const RunGroup& group : GroupRuns(runs, grouping)) {
    int64_t ready = 0, failed = 0;
    std::string newest;
    for (const RunRow* r : group.runs) {
      ready += r->state == RunState::kReady;
      failed += r->state == RunState::kFailed;
      newest = std::max(newest, DateOf(*r));
    }
    gt.rows.push_back({Value::String(group.key), Value::Int(static_cast<int64_t>(group.runs.size())), Value::Int(ready),
                       Value::Int(failed), Value::String(newest)});
  }
  g.Add(std::move(gt));
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
  for (render::Section& s : doc.sections) CapTables(&s);
  return doc;
}

std::vector<std::pair<double, double>> MinMaxDownsample(const std::vector<double>& values, size_t max_points) {
  std::vector<std::pair<double, double>> out;
  const size_t n = values.size();
  if (n <= max_points || max_points < 2) {
    for (size_t i = 0; i < n; ++i) out.emplace_back(static_cast<double>(i), values[i]);
    return out;
  }
  const size_t buckets = max_points / 2;
  out.reserve(2 * buckets);
  for (size_t b = 0; b < buckets; ++b) {
    const size_t lo = b * n / buckets, hi = (b + 1) * n / buckets;
    size_t lo_at = lo, hi_at = lo;
    for (size_t i = lo; i < hi; ++i) {
      if (values[i] < values[lo_at]) lo_at = i;
      if (values[i] > values[hi_at]) hi_at = i;
    }
    const size_t first = std::min(lo_at, hi_at), second = std::max(lo_at, hi_at);
    out.emplace_back(static_cast<double>(first), values[first]);
    if (second != first) out.emplace_back(static_cast<double>(second), values[second]);
  }
  return out;
}

render::Document CardsToDocument(const std::vector<KnowledgeCard>& cards) {
  render::Document doc;
  doc.key = "cards";
  doc.title = "Knowledge cards";
  doc.generator = "aiprof serve";
  render::Section& s = doc.AddSection("cards", "Knowledge cards: measured gains of past fixes");
  if (cards.empty()) {
    s.Add(render::Paragraph{"No knowledge card yet: aiprof card --before A --after B --fix TEXT --bottleneck TYPE "
                            "stores one."});
    return doc;
  }
  render::Table t;
  t.key = "cards";
  t.title = "Measured change: the metric's statistic after / before - 1 (negative is faster for latency), with its "
            "bootstrap interval";
  t.columns = {{"id", "Card", Unit::kNone},          {"date", "Date (UTC)", Unit::kNone},
               {"scene", "Scene", Unit::kNone},       {"bottleneck", "Bottleneck", Unit::kNone},
               {"fix", "Fix", Unit::kNone},           {"metric", "Metric", Unit::kNone},
               {"change_rel", "Measured change", Unit::kChange},
               {"ci_low_rel", "Interval from", Unit::kChange},
               {"ci_high_rel", "Interval to", Unit::kChange},
               {"confidence", "Confidence", Unit::kFraction},
               {"verdict", "Verdict", Unit::kNone},   {"samples", "Samples (before, after)", Unit::kNone},
               {"predicted_ns", "Predicted step (steady mean)", Unit::kNs},
               {"measured_ns", "Measured step after (steady mean)", Unit::kNs},
               {"prediction_source", "Predicted by", Unit::kNone}};
  for (const KnowledgeCard& c : cards) {
    const std::time_t when = static_cast<std::time_t>(c.created_unix_ms / 1000);
    std::tm tm{};
    gmtime_r(&when, &tm);
    char date[16];
    std::strftime(date, sizeof date, "%Y-%m-%d", &tm);
    t.rows.push_back({Value::Int(c.id), Value::String(date), Value::String(c.scene), Value::String(c.bottleneck),
                      Value::String(c.fix), Value::String(c.metric + " (" + c.statistic + ")"), Num(c.change_rel),
                      Num(c.ci_low_rel), Num(c.ci_high_rel), Num(c.confidence), Value::String(c.verdict),
                      Value::String(std::to_string(c.n_before) + ", " + std::to_string(c.n_after)),
                      c.prediction ? Num(c.prediction->predicted_ns) : Value::Null(),
                      c.prediction ? Num(c.prediction->measured_ns) : Value::Null(),
                      Value::String(c.prediction ? c.prediction->source : "")});
  }
  s.Add(std::move(t));
  return doc;
}

render::Document QueryToDocument(const std::string& sql, const QueryResult& result) {
  render::Document doc;
  doc.key = "query";
  // No title: the page's own heading names the run ("Query NAME").
  doc.generator = "aiprof serve";
  render::Section& s = doc.AddSection("result", "Result");
  s.Add(render::KeyValues{{{"sql", "SQL", Value::String(sql), Unit::kNone},
                           {"rows", "Rows",
                            result.truncated ? Value::String(std::to_string(result.rows.size()) + " (the first " +
                                                             std::to_string(result.max_rows) + "; the query has more)")
                                             : Value::Int(static_cast<int64_t>(result.rows.size())),
                            Unit::kCount}}});
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

namespace {
constexpr std::string_view kStoredRunPageMagic = "aiprof-serve-run-page 4\n";  // 3: names cut for people; 4: chart and tables capped
}  // namespace

StoredRunPage StoreRunPage(const RunRow& run, const ReportData& report, std::string cards) {
  render::Document doc = RunToDocument(run, report);
  doc.title.clear();
  StoredRunPage page;
  page.cards = std::move(cards);
  page.json = render::RenderJson(doc);
  page.html_body = render::RenderHtmlBody(doc);
  page.report_html = ReportToHtml(report);
  return page;
}

std::string StoredRunPage::JsonWithTitle(const std::string& name) const {
  // The document's own "title" is the first key named so (after "document").
  const size_t key = json.find("\"title\"");
  const size_t value = key == std::string::npos ? key : json.find("\"\"", key + 7);
  if (value == std::string::npos) return json;
  return json.substr(0, value) + JsonString(name) + json.substr(value + 2);
}

std::string StoredRunPage::HtmlWithTitle(const std::string& name) const {
  return "<h1>" + HtmlEscape(name) + "</h1>\n" + html_body;  // as the HTML renderer writes a document's title
}

std::string SerializeStoredRunPage(const StoredRunPage& page) {
  std::string out(kStoredRunPageMagic);
  for (const std::string* part : {&page.cards, &page.json, &page.html_body, &page.report_html}) {
    out += std::to_string(part->size()) + "\n" + *part;
  }
  return out;
}

std::optional<StoredRunPage> ParseStoredRunPage(std::string_view text) {
  if (!text.starts_with(kStoredRunPageMagic)) return std::nullopt;
  text.remove_prefix(kStoredRunPageMagic.size());
  StoredRunPage page;
  for (std::string* part : {&page.cards, &page.json, &page.html_body, &page.report_html}) {
    const size_t eol = text.find('\n');
    if (eol == std::string_view::npos || eol == 0 || eol > 19) return std::nullopt;
    size_t n = 0;
    for (char c : text.substr(0, eol)) {
      if (c < '0' || c > '9') return std::nullopt;
      n = n * 10 + static_cast<size_t>(c - '0');
    }
    text.remove_prefix(eol + 1);
    if (n > text.size()) return std::nullopt;
    part->assign(text.substr(0, n));
    text.remove_prefix(n);
  }
  if (!text.empty()) return std::nullopt;
  return page;
}

std::string CardsFingerprint(const std::string& baselines_db) {
  struct stat st{};
  if (baselines_db.empty() || ::stat(baselines_db.c_str(), &st) != 0) return "";
  StatusOr<std::unique_ptr<BaselineStore>> store = BaselineStore::Open(baselines_db);
  if (!store.ok()) return "unreadable";
  StatusOr<std::vector<KnowledgeCard>> cards = (*store)->RecentCards(1);
  if (!cards.ok()) return "unreadable";
  if (cards->empty()) return "";
  return std::to_string(cards->front().id) + " " + std::to_string(cards->front().created_unix_ms);
}

}  // namespace aiprof
