// The report as one document (document.h): headline cards, charts with their
// figures, the top ops, the attribution tree, host functions, the diagnosis
// and validation (their own documents' sections, so `report` says what
// `suggest` and `validate` say), the embedded views and the inputs. The
// shared renderers write it: ReportToHtml and ReportToMarkdown are the page
// shell and RenderMarkdown around ReportToDocument, with no wording of their
// own. Every string from the trace, the rules or the command line is plain
// text in the document, escaped by the renderers; the charts and the
// embedded views escape their own (svg_chart.h, the views).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/window/analysis_window.h"
#include "src/render/escape.h"
#include "src/render/renderers.h"
#include "src/render/svg_chart.h"
#include "src/report/diagnosis/diagnosis_report.h"
#include "src/report/page/report_data.h"
#include "src/report/validation/validation_report.h"

namespace aiprof {
namespace {

using render::Column;
using render::KeyValue;
using render::Unit;
using render::Value;

Value MsValue(double ms) { return std::isfinite(ms) ? Value::Number(ms) : Value::Null(); }
std::string MsText(double ms) { return render::FormatQuantity(ms, Unit::kMs); }
std::string PctText(double f) { return render::FormatQuantity(f, Unit::kFraction); }

void AddContext(const ReportData& r, render::Document* doc) {
  if (r.context.empty()) return;
  render::Table t{"context", "", {{"what", "What"}, {"value", "Value"}}, {}, ""};
  for (const auto& [k, v] : r.context) t.rows.push_back({Value::String(k), Value::String(v)});
  doc->AddSection("context", r.context_title.empty() ? "Context" : r.context_title).Add(std::move(t));
}

void AddHeadline(const ReportData& r, render::Document* doc) {
  render::KeyValues cards;
  cards.cards = true;
  // With a before run the question is whether the change paid: its verdict
  // (and the prediction made for it) leads; the cards after it are the after
  // run's.
  if (r.validation) cards.items.push_back(ValidationCard(*r.validation));
  // The steady steps, as analyze and the impacts count them (the step
  // chart shows every step).
  const StepStats& s = r.steady_stats;
  if (s.count > 0) {
    std::string warmup = (r.warmup_steps == 0 ? std::string()
                                              : fmt::format("; {} warm-up step{} left out", r.warmup_steps,
                                                            r.warmup_steps == 1 ? "" : "s")) +
                         TruncatedText(r.truncated_steps);
    // Where the device runs behind the host the step time is the device's
    // period (src/analysis/common/steps.h), over the steady steps that have
    // one; the host's figure is said beside it.
    std::string over =
        s.base == StepTimeBase::kDevicePeriod
            ? fmt::format(
                  "device period{} (end of one step's device work to the next's) of {} steady-state step{} "
                  "({}{}); the device runs behind the host, whose steps take {} (host span)",
                  s.count == 1 ? "" : "s", s.host_count, s.host_count == 1 ? "" : "s", s.source, warmup,
                  MsText(s.host_mean_ns / 1e6))
            : fmt::format("steady-state step{} ({}{})", s.count == 1 ? "" : "s", s.source, warmup);
    cards.items.push_back({"step_time", "Step time",
                           Value::String(fmt::format("{} ± {}", MsText(s.mean_ns / 1e6), MsText(s.stddev_ns / 1e6))),
                           Unit::kNone,
                           fmt::format("mean ± population sd over {} {}; p50 {}, p99 {}", s.count, over, MsText(s.p50_ns / 1e6),
                                       MsText(s.p99_ns / 1e6))});
  } else {
    cards.items.push_back({"step_time", "Step time", Value::String("no steps"), Unit::kNone,
                           "the trace marks no steps: figures are per trace"});
  }
  cards.items.push_back({"device_utilisation", "Device utilisation",
                         r.device_util >= 0 ? Value::Number(r.device_util) : Value::Null(), Unit::kFraction,
                         r.device_util >= 0 ? r.device_util_basis : "no device or main-thread activity"});
  if (r.top_finding) {
    const Finding& f = *r.top_finding;
    // Its share is of the step the Step time card states (the same mean):
    // the card leaves the base's description and the replay's step
    // definition to that card and to the diagnosis below.
    const Impact& im = f.impact;
    const bool base_stated =
        s.count > 0 && im.basis == "per step" && std::fabs(im.basis_ns - s.mean_ns) <= 0.005 * std::max(s.mean_ns, 1.0);
    cards.items.push_back({"top_bottleneck", "Top bottleneck", Value::String(f.rule->title), Unit::kNone,
                           fmt::format("{} confidence; impact {}", ConfidenceName(f.confidence),
                                       ImpactTextOnStatedBase(f, base_stated ? im.basis_text : "", true))});
  } else {
    cards.items.push_back({"top_bottleneck", "Top bottleneck", Value::String("none found"), Unit::kNone,
                           "no rule fired on this trace"});
  }
  if (!r.host_functions.empty()) {
    const ReportHostFunction& f = r.host_functions[0];
    cards.items.push_back({"hottest_host_function", "Hottest host function", Value::String(f.name), Unit::kNone,
                           fmt::format("{} of {} CPU samples (self), {} on the stack; {}", PctText(f.self_share),
                                       r.host_stacks, PctText(f.total_share), f.module)});
  }
  if (r.best_fix) {
    const SuggestionOutcome& o = *r.best_fix;
    std::string detail = "expected gain " + BriefGainText(o);
    if (o.finding != r.top_finding && o.finding && o.finding->rule) {
      detail += fmt::format("; for \"{}\", the best measured gain per effort of all findings", o.finding->rule->title);
    }
    if (r.best_measured_fix && r.best_measured_fix != r.best_fix) {
      const SuggestionOutcome& m = *r.best_measured_fix;
      detail += fmt::format("; measured on this trace, the best is \"{}\", {}", m.suggestion->title, BriefGainText(m));
    }
    cards.items.push_back({"best_fix", "Best fix", Value::String(o.suggestion->title), Unit::kNone, std::move(detail)});
  }
  // A caveat on what the trace shows (op coverage) beside the finding
  // about the program that leads, with its cheapest fix.
  if (r.caveat) {
    std::string detail = "a caveat on what the trace shows, not a bottleneck; the diagnosis says what it qualifies";
    if (r.caveat_fix) detail += "; cheapest fix: " + r.caveat_fix->suggestion->title;
    cards.items.push_back({"caveat", "Caveat", Value::String(r.caveat->rule->title), Unit::kNone, std::move(detail)});
  }
  doc->AddSection("headline", "Headline").Add(std::move(cards));
}

// ------------------------------------------------------------ charts

void AddBreakdown(const ReportData& r, render::Section* charts) {
  if (r.breakdown.empty()) return;
  const auto& pal = ChartPalette();
  render::Table data{"breakdown", "",
                     {{"timeline", "Timeline"}, {"span", "Span", Unit::kMs},
                      {"compute", r.cpu_only ? "Op time" : "Compute", Unit::kMs},
                      {"communication", "Communication (not overlapped)", Unit::kMs},
                      {"memcpy", "Memory copy", Unit::kMs}},
                     {}, ""};
  std::vector<std::string> cats;
  std::vector<ChartSeries> series = {{r.cpu_only ? "op time" : "compute", pal[0], {}},
                                     {"communication (not overlapped)", pal[1], {}},
                                     {"memory copy", pal[2], {}}};
  for (size_t c = 0; c < kGapCauseCount; ++c) {
    std::string cause = GapCauseName(static_cast<GapCause>(c));
    data.columns.push_back({"idle_" + cause, "Idle: " + cause, Unit::kMs});
    series.push_back({"idle: " + cause, IdleCauseColor(c), {}});
  }
  // aiprof's own work in a span (a capture's torch-hook exports): a column
  // and a bar of its own, only on traces that hold some.
  const bool own = std::any_of(r.breakdown.begin(), r.breakdown.end(),
                               [](const ReportBreakdownRow& row) { return row.aiprof_own_ms > 0; });
  if (own) {
    data.columns.push_back({"aiprof_own", "aiprof's own work", Unit::kMs});
    series.push_back({"aiprof's own work", pal[7], {}});
  }
  for (const ReportBreakdownRow& row : r.breakdown) {
    cats.push_back(row.label);
    series[0].values.push_back(row.compute_ms);
    series[1].values.push_back(row.comm_ms);
    series[2].values.push_back(row.memcpy_ms);
    std::vector<Value>& cells = data.rows.emplace_back(
        std::vector<Value>{Value::String(row.label), MsValue(row.span_ms), MsValue(row.compute_ms),
                           MsValue(row.comm_ms), MsValue(row.memcpy_ms)});
    for (size_t c = 0; c < kGapCauseCount; ++c) {
      series[3 + c].values.push_back(row.idle_by_cause_ms[c]);
      cells.push_back(MsValue(row.idle_by_cause_ms[c]));
    }
    if (own) {
      series[3 + kGapCauseCount].values.push_back(row.aiprof_own_ms);
      cells.push_back(MsValue(row.aiprof_own_ms));
    }
  }
  render::Section& sec = charts->AddSection("breakdown", "Time breakdown per device and rank");
  sec.Add(render::Chart{"breakdown", StackedBarChart("Each bar: one device's span", cats, series, "ms"), std::move(data)});
  sec.Add(
      render::Paragraph{std::string("Compute, copies and exposed communication can overlap each other, so a bar may "
                                    "exceed the span by the overlap; idle time is split by the cause of each gap.") +
                        (own ? " aiprof's own work in the program (the capture exporting its torch chunks) is "
                               "neither busy nor idle: it is left out of the gaps."
                             : "")});
}

void AddStepCharts(const ReportData& r, render::Section* charts) {
  if (r.steps.empty()) return;
  std::vector<std::string> labels;
  std::vector<double> values;
  std::vector<bool> marked;
  // The headline's base: on the device's period the host span is a column
  // beside it (a rank's first step has no period: its Time is empty).
  const bool by_period = r.steady_stats.base == StepTimeBase::kDevicePeriod;
  render::Table data{
      "steps",
      "",
      {{"step", "Step"}, {"time", by_period ? "Time (device period)" : "Time", Unit::kMs}, {"slow", "Slow"}},
      {},
      ""};
  if (by_period) data.columns.push_back({"host_span", "Host span", Unit::kMs});
  // At most kReportStepBars bars: past that, each bar is a run of
  // consecutive steps drawn by its longest (a page of a million steps was
  // hundreds of megabytes); the table holds the same bars.
  const size_t n = r.steps.size();
  const size_t per = (n + kReportStepBars - 1) / kReportStepBars;
  for (size_t lo = 0; lo < n; lo += per) {
    const size_t hi = std::min(n, lo + per);
    size_t longest = lo;
    bool slow = false;
    for (size_t i = lo; i < hi; ++i) {
      if (r.steps[i].dur_ms > r.steps[longest].dur_ms || !std::isfinite(r.steps[longest].dur_ms)) longest = i;
      slow |= r.steps[i].slow;
    }
    std::string label = per == 1 ? r.steps[lo].label : r.steps[lo].label + " to " + r.steps[hi - 1].label;
    labels.push_back(label);
    values.push_back(r.steps[longest].dur_ms);
    marked.push_back(slow);
    data.rows.push_back({Value::String(std::move(label)), MsValue(r.steps[longest].dur_ms), Value::Bool(slow)});
    if (by_period) data.rows.back().push_back(MsValue(r.steps[longest].host_ms));
  }
  render::Section& sec = charts->AddSection("steps", "Step times");
  if (per > 1) {
    sec.Add(
        render::Paragraph{fmt::format("{} steps, drawn as {} bars of {} consecutive steps, each by its longest "
                                      "step; a bar is slow when one of its steps is.",
                                      n, labels.size(), per)});
  }
  // Every step, warm-up included (the headline's p50 is over the steady
  // steps only): the text says which, so the two medians are not compared as one.
  const size_t left_out = r.warmup_steps + r.truncated_steps;
  const std::string which =
      r.truncated_steps == 0 ? fmt::format("warm-up step{}", r.warmup_steps == 1 ? "" : "s")
      : r.warmup_steps == 0
          ? fmt::format("truncated last step{}", r.truncated_steps == 1 ? "" : "s")
          : fmt::format("warm-up and {} truncated last step{}", r.truncated_steps, r.truncated_steps == 1 ? "" : "s");
  std::string base =
      left_out == 0 ? (r.steps.size() == 1 ? std::string("the one step") : fmt::format("all {} steps", r.steps.size()))
                    : fmt::format("all {} steps, the {} {} included (the headline leaves {} out)", r.steps.size(),
                                  r.truncated_steps > 0 && r.warmup_steps > 0 ? r.warmup_steps : left_out, which,
                                  left_out == 1 ? "it" : "them");
  if (by_period) {
    base = "the device periods of " + base + " (a rank's first step has none)";
    sec.Add(render::Paragraph{fmt::format(
        "Each step's time is its device period, the end of the previous step's device work to the end of its own, as "
        "in the headline: the device runs behind the host, whose steps take {} on average (host span, beside).",
        MsText(r.steady_stats.host_mean_ns / 1e6))});
  }
  sec.Add(render::Paragraph{fmt::format("Median {} over {}; slow = more than {:.1f}× that median.",
                                        MsText(r.median_step_ms), base, kSlowStepFactor)});
  sec.Add(
      render::Chart{"steps",
                    BarChart(per == 1 ? std::string(by_period ? "Device period of each step" : "Duration of each step")
                                      : fmt::format("Longest step of each run of {} steps", per),
                             labels, values, marked, fmt::format("slow: > {:.1f}× median", kSlowStepFactor),
                             r.median_step_ms, "median", "ms"),
                    std::move(data)});
}

void AddGaps(const ReportData& r, render::Section* charts) {
  uint64_t gaps = 0;
  for (uint64_t c : r.gap_hist_count) gaps += c;
  if (gaps == 0) return;
  render::Table data{"idle_gaps", "", {{"length", "Gap length"}, {"gaps", "Gaps", Unit::kCount}},
                     {}, ""};
  std::vector<std::string> cats;
  std::vector<ChartSeries> series;
  for (size_t c = 0; c < kGapCauseCount; ++c) {
    std::string cause = GapCauseName(static_cast<GapCause>(c));
    series.push_back({cause, IdleCauseColor(c), {}});
    data.columns.push_back({cause, cause, Unit::kMs});
  }
  for (size_t b = 0; b < kGapBucketCount; ++b) {
    cats.push_back(fmt::format("{} ({} gaps)", GapBucketLabel(b), r.gap_hist_count[b]));
    std::vector<Value>& cells = data.rows.emplace_back(
        std::vector<Value>{Value::String(GapBucketLabel(b)), Value::Int(static_cast<int64_t>(r.gap_hist_count[b]))});
    for (size_t c = 0; c < kGapCauseCount; ++c) {
      series[c].values.push_back(r.gap_hist_ms[b][c]);
      cells.push_back(MsValue(r.gap_hist_ms[b][c]));
    }
  }
  charts->AddSection("idle_gaps", "Idle gaps by length and cause")
      .Add(render::Chart{"idle_gaps", StackedBarChart("Idle time in gaps of each length, by cause", cats, series, "ms"),
                         std::move(data)});
}

void AddRoofline(const ReportData& r, render::Section* charts) {
  std::vector<ScatterPoint> pts;
  render::Table data{"roofline", "",
                     {{"op", "Op"}, {"calls", "Calls", Unit::kCount}, {"time", "Time", Unit::kNs},
                      {"intensity", "FLOP/byte"}, {"achieved", "Achieved", Unit::kFlopsPerSecond}},
                     {}, ""};
  for (const RooflineRow& row : r.roofline.rows) {
    if (pts.size() >= kReportRooflinePoints) break;
    if (!row.flops_known || row.flops <= 0 || row.bytes <= 0 || row.time_ns <= 0) continue;
    ScatterPoint p;
    p.x = row.flops / row.bytes;
    p.y = row.flops / (static_cast<double>(row.time_ns) / 1e9);
    p.weight = static_cast<double>(row.time_ns);
    p.label = fmt::format("{}: {} calls, {}, {:.3g} FLOP/byte, {:.3g} FLOP/s", row.name, row.count,
                          MsText(static_cast<double>(row.time_ns) / 1e6), p.x, p.y);
    data.rows.push_back({Value::String(row.name), Value::Int(static_cast<int64_t>(row.count)),
                         Value::Int(row.time_ns), Value::Number(p.x), Value::Number(p.y)});
    pts.push_back(std::move(p));
  }
  if (pts.empty()) return;
  double peak = 0, bw = 0;
  std::string dev = "no device peaks (" + r.roofline_problem + ")";
  if (r.roofline_device) {
    peak = r.roofline_device->PeakFlops(Precision::kFp32).value_or(0);
    bw = r.roofline_device->memory_bandwidth_bytes_per_second;
    dev = r.roofline_device->name + " (fp32 peak, DRAM bandwidth)";
  }
  render::Section& sec = charts->AddSection("roofline", "Roofline");
  sec.Add(render::Chart{"roofline",
                        RooflineChart("Ops on the roofline", pts, peak, bw, "arithmetic intensity (FLOP/byte)",
                                      "achieved FLOP/s"),
                        std::move(data)});
  sec.Add(render::Paragraph{"Roofs: " + dev +
                            ". Each point is one op (point area ∝ its time); FLOPs and bytes from the profiler or "
                            "from shapes (docs/analyses.md)."});
}

void AddCommunication(const ReportData& r, render::Section* charts) {
  if (r.comm.empty()) return;
  const auto& pal = ChartPalette();
  std::vector<std::string> cats;
  std::vector<ChartSeries> series = {{"wait", pal[3], {}}, {"transfer", pal[0], {}}, {"other collective time", pal[6], {}}};
  render::Table table{"communication", "",
                      {{"rank", "Rank"}, {"collective", "Collective time", Unit::kMs}, {"wait", "Wait", Unit::kMs},
                       {"transfer", "Transfer", Unit::kMs}, {"exposed", "Exposed (not overlapped)", Unit::kMs}},
                      {}, ""};
  // A wait for a rank not in the inputs (a crashed or hung peer's
  // survivors), only where some rank has one.
  const bool stalled =
      std::any_of(r.comm.begin(), r.comm.end(), [](const ReportCommRow& row) { return row.stalled_ms > 0; });
  if (stalled) {
    series.insert(series.begin() + 2, ChartSeries{"wait for a missing rank (stalled)", pal[1], {}});
    table.columns.push_back({"stalled", "Wait for a missing rank (stalled)", Unit::kMs});
  }
  if (r.comm_clocks_aligned) table.columns.push_back({"clock_shift", "Clock moved by", Unit::kMs});
  bool unknown = false;
  for (const ReportCommRow& row : r.comm) {
    std::string who = row.rank == kNoRank ? std::string("trace") : "rank " + std::to_string(row.rank);
    cats.push_back(who);
    const double wait = std::max(0.0, row.wait_ms), transfer = std::max(0.0, row.transfer_ms);
    unknown |= row.wait_ms < 0;
    series[0].values.push_back(wait);
    series[1].values.push_back(transfer);
    if (stalled) series[2].values.push_back(row.stalled_ms);
    series.back().values.push_back(std::max(0.0, row.comm_ms - wait - transfer - row.stalled_ms));
    table.rows.push_back({Value::String(who), MsValue(row.comm_ms),
                          row.wait_ms >= 0 ? MsValue(row.wait_ms) : Value::Null(),
                          row.transfer_ms >= 0 ? MsValue(row.transfer_ms) : Value::Null(),
                          row.exposed_ms >= 0 ? MsValue(row.exposed_ms) : Value::Null()});
    if (stalled) table.rows.back().push_back(MsValue(row.stalled_ms));
    if (r.comm_clocks_aligned) table.rows.back().push_back(MsValue(row.clock_shift_ms));
  }
  if (r.comm_clocks_aligned) {
    table.note =
        "Wait and transfer on clocks aligned by the collectives' ends: the traces' own clocks disagreed, so "
        "each rank's times were moved by its clock shift (assuming a collective ends at the same moment on "
        "every rank; docs/analyses.md, \"communication\").";
  } else if (unknown) {
    table.note = r.comm_matched
                     ? "Wait and transfer unknown (—): the ranks' ends of the same collectives disagree even once "
                       "aligned by them, so arrivals cannot be compared (aiprof analyze --only communication says by "
                       "how much)."
                     : "Wait and transfer unknown (—): they compare the ranks' arrivals at the same collectives, and "
                       "no collective is matched across 2 or more ranks here (give aiprof every rank's trace).";
  }
  render::Section& sec = charts->AddSection("communication", "Communication per rank");
  sec.Add(render::RawHtml{StackedBarChart("Collective time: wait vs transfer", cats, series, "ms"), ""});
  sec.Add(std::move(table));
}

void AddMemory(const ReportData& r, render::Section* charts) {
  if (r.memory.empty()) return;
  const auto& pal = ChartPalette();
  int64_t t0 = INT64_MAX;
  for (const MemorySeries& m : r.memory) t0 = std::min(t0, m.ts_ns.front());
  // One x axis for all series: their points merged in time order.
  std::vector<std::pair<int64_t, std::pair<size_t, double>>> pts;
  for (size_t k = 0; k < r.memory.size(); ++k) {
    for (size_t i = 0; i < r.memory[k].ts_ns.size(); ++i) pts.push_back({r.memory[k].ts_ns[i], {k, r.memory[k].bytes[i]}});
  }
  std::sort(pts.begin(), pts.end());
  std::vector<double> xs;
  std::vector<ChartSeries> series;
  render::Table data{"memory", "Peak allocated memory per series",
                     {{"series", "Series"}, {"peak", "Peak", Unit::kBytes}, {"points", "Points", Unit::kCount}}, {}, ""};
  for (size_t k = 0; k < r.memory.size(); ++k) {
    series.push_back({fmt::format("{} (peak {:.1f} MiB)", r.memory[k].label, r.memory[k].peak_bytes / 1048576.0),
                      pal[k % pal.size()], {}});
    data.rows.push_back({Value::String(r.memory[k].label), Value::Number(r.memory[k].peak_bytes),
                         Value::Int(static_cast<int64_t>(r.memory[k].ts_ns.size()))});
  }
  std::vector<double> last(r.memory.size(), 0);
  for (const auto& [ts, kv] : pts) {
    last[kv.first] = kv.second / 1048576.0;
    xs.push_back(static_cast<double>(ts - t0) / 1e9);
    for (size_t k = 0; k < series.size(); ++k) series[k].values.push_back(last[k]);
  }
  charts->AddSection("memory", "Memory over time")
      .Add(render::Chart{"memory", AreaChart("Allocated memory", xs, series, "MiB"), std::move(data)});
}

// ------------------------------------------------------------ tables

void AddTopOps(const ReportData& r, render::Document* doc) {
  render::Section& sec = doc->AddSection("ops", "Top ops");
  sec.Add(
      render::Paragraph{"By self time (nested ops are not counted twice), total beside it; profiler wrappers left "
                        "out; share is the op's self time, of the summed self time of the ops in the same category, "
                        "profiler wrappers left out of that sum too."});
  render::Table t{"top_ops", "",
                  {{"op", "Op"}, {"category", "Category"}, {"count", "Count", Unit::kCount}, {"self", "Self", Unit::kMs},
                   {"total", "Total", Unit::kMs}, {"share", "Share", Unit::kFraction}, {"mean", "Mean", Unit::kMs},
                   {"p50", "p50", Unit::kMs}, {"p99", "p99", Unit::kMs}, {"max", "Max", Unit::kMs}},
                  {}, ""};
  t.sortable = true;
  for (const ReportOp& o : r.top_ops) {
    t.rows.push_back({Value::String(o.name), Value::String(o.category), Value::Int(static_cast<int64_t>(o.count)),
                      MsValue(o.self_ms), MsValue(o.total_ms), Value::Number(o.share), MsValue(o.mean_us / 1e3),
                      MsValue(o.p50_us / 1e3), MsValue(o.p99_us / 1e3), MsValue(o.max_us / 1e3)});
  }
  sec.Add(std::move(t));
}

// Another result's document as one section of the report (a document of one
// titled section becomes that section).
void Adopt(render::Document part, std::string key, std::string title, render::Document* doc) {
  if (part.sections.size() == 1 && !part.sections[0].title.empty()) {
    part.sections[0].key = std::move(key);
    doc->sections.push_back(std::move(part.sections[0]));
    return;
  }
  render::Section& sec = doc->AddSection(std::move(key), std::move(title));
  for (render::Section& s : part.sections) sec.sections.push_back(std::move(s));
}

void AddHostFunctions(const ReportData& r, render::Document* doc) {
  if (r.host_functions.empty()) return;
  render::Section& sec = doc->AddSection("host_functions", "Host functions in the CPU samples");
  sec.Add(render::Paragraph{fmt::format("{} samples with a call stack; self = the sample landed in the function, "
                                        "total = the function was on the stack.",
                                        r.host_stacks)});
  render::Table t{"host_functions", "",
                  {{"function", "Function"}, {"module", "Module"}, {"self", "Self", Unit::kFraction},
                   {"self_samples", "Self samples", Unit::kCount}, {"total", "Total", Unit::kFraction},
                   {"total_samples", "Total samples", Unit::kCount}},
                  {}, ""};
  t.sortable = true;
  for (const ReportHostFunction& f : r.host_functions) {
    t.rows.push_back({Value::String(f.name), Value::String(f.module), Value::Number(f.self_share),
                      Value::Int(static_cast<int64_t>(f.self_samples)), Value::Number(f.total_share),
                      Value::Int(static_cast<int64_t>(f.total_samples))});
  }
  sec.Add(std::move(t));
}

void AddDiagnosis(const ReportData& r, render::Document* doc) {
  static const MetricSet kNoMetrics;
  static const Diagnosis kNoDiagnosis;
  DiagnosisReport d;
  d.source = r.source;
  d.metrics = r.metrics ? r.metrics : &kNoMetrics;
  d.diagnosis = r.diagnosis ? r.diagnosis : &kNoDiagnosis;
  d.suggestions = r.suggestions;
  d.options = r.suggestions ? r.suggest_options : nullptr;
  Adopt(DiagnosisToDocument(d), "diagnosis", "Diagnosis and suggestions", doc);
}

void AddViews(const ReportData& r, render::Document* doc) {
  size_t n = 0;
  for (const auto& [title, html] : r.embedded_views) {
    std::string e = HtmlEscape(title);
    doc->AddSection("view_" + std::to_string(n++), title)
        .Add(render::RawHtml{"<iframe class=\"view\" sandbox=\"allow-scripts\" title=\"" + e + "\" srcdoc=\"" +
                                 HtmlEscape(html) + "\"></iframe>",
                             ""});
  }
  for (const auto& [title, svg] : r.embedded_svgs) {
    // The view wrote and escaped this SVG itself; drop any XML prolog.
    std::string_view body(svg);
    if (size_t at = body.find("<svg"); at != std::string_view::npos) body = body.substr(at);
    doc->AddSection("view_" + std::to_string(n++), title)
        .Add(render::RawHtml{"<div class=\"svg-view\">" + std::string(body) + "</div>", ""});
  }
  for (const auto& [title, why] : r.view_errors) {
    doc->AddSection("view_" + std::to_string(n++), title).Add(render::Paragraph{"Not drawn: " + why});
  }
}

void AddEvidence(const ReportData& r, render::Document* doc) {
  render::Section& sec = doc->AddSection("evidence", "Inputs and import diagnostics");
  render::KeyValues kv{{{"input", "Input", Value::String(r.source)}}};
  if (!r.before_source.empty()) kv.items.push_back({"before", "Before", Value::String(r.before_source)});
  kv.items.push_back({"format", "Format", Value::String(r.source_format)});
  kv.items.push_back({"platform", "Platform", Value::String(r.platform)});
  kv.items.push_back({"slices", "Slices", Value::Int(static_cast<int64_t>(r.slices)), Unit::kCount});
  kv.items.push_back({"instants", "Instants", Value::Int(static_cast<int64_t>(r.instants)), Unit::kCount});
  kv.items.push_back({"counters", "Counter samples", Value::Int(static_cast<int64_t>(r.counters)), Unit::kCount});
  kv.items.push_back({"samples", "Stack samples", Value::Int(static_cast<int64_t>(r.samples)), Unit::kCount});
  kv.items.push_back({"tracks", "Tracks", Value::Int(static_cast<int64_t>(r.tracks)), Unit::kCount});
  kv.items.push_back({"written_by", "Written by", Value::String("aiprof " + r.version + " at " + r.generated_utc)});
  sec.Add(std::move(kv));
  if (r.diagnostics.empty()) {
    sec.Add(render::Paragraph{"No malformed records."});
    return;
  }
  render::Table t{"diagnostics", "", {{"diagnostic", "Diagnostic"}, {"what", "Count and description"}}, {}, ""};
  for (const auto& [kind, text] : r.diagnostics) t.rows.push_back({Value::String(kind), Value::String(text)});
  sec.Add(std::move(t));
}

}  // namespace

render::Document ReportToDocument(const ReportData& r) {
  render::Document doc;
  doc.key = "report";
  doc.title = "aiprof report: " + r.source;
  doc.generator = "aiprof report";
  doc.AddSection("about", "").Add(render::Paragraph{r.platform + " · aiprof " + r.version + " · " + r.generated_utc});
  AddContext(r, &doc);
  AddHeadline(r, &doc);
  render::Section& charts = doc.AddSection("charts", "Where the time goes");
  AddBreakdown(r, &charts);
  AddStepCharts(r, &charts);
  AddGaps(r, &charts);
  AddRoofline(r, &charts);
  AddCommunication(r, &charts);
  AddMemory(r, &charts);
  AddTopOps(r, &doc);
  if (!r.attribution.sections.empty()) Adopt(r.attribution, "attribution", r.attribution.title, &doc);
  AddHostFunctions(r, &doc);
  if (!r.page_faults.blocks.empty()) doc.sections.push_back(r.page_faults);
  if (!r.llm.blocks.empty()) doc.sections.push_back(r.llm);
  AddDiagnosis(r, &doc);
  AddViews(r, &doc);
  if (r.validation) {
    Adopt(ValidationToDocument(*r.validation), "validation",
          "Validation: " + r.validation->before_label + " → " + r.validation->after_label, &doc);
  }
  AddEvidence(r, &doc);
  // JSON: the sections, as every document gives them, and the results a
  // program reads without parsing prose (the predict trial's D14): the
  // diagnosis with each suggestion's expected gain, scenario and simulation
  // (aiprof.diagnosis/1, as `diagnose --format json`) and the validation
  // with its prediction check and intervals (aiprof.validation/1, as
  // `validate -o x.json`).
  Tree machine = render::DocumentToTree(doc);
  if (r.diagnosis != nullptr && r.metrics != nullptr) {
    machine.Set("diagnosis",
                DiagnosisTree(DiagnosisReport{r.source, r.metrics, r.diagnosis, r.suggestions, r.suggest_options}));
  }
  std::string json = TreeToJson(machine);
  if (r.validation != nullptr) {
    json.erase(json.find_last_of('}'));
    json += ",\n  \"validation\": " + ValidationToJson(*r.validation) + "}\n";
  }
  doc.machine_json = std::move(json);
  return doc;
}

std::string ReportToHtml(const ReportData& r) {
  render::HtmlPageOptions options;
  // The embedded views run in <iframe srcdoc>, which inherits this page's
  // policy: their scripts must be allowed here too.
  for (const auto& [title, html] : r.embedded_views) options.embedded_pages.push_back(html);
  return render::RenderHtmlPage(ReportToDocument(r), options);
}

std::string ReportToMarkdown(const ReportData& r) { return render::RenderMarkdown(ReportToDocument(r)); }

}  // namespace aiprof
