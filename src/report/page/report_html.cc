// The HTML rendering of ReportData: one self-contained page (inline CSS, a
// small inline script for sorting tables, SVG charts from svg_chart.h), no
// network. Every string from the trace, the rules or the command line goes
// through HtmlEscape.
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "src/analysis/rules/rule.h"
#include "src/render/svg_chart.h"
#include "src/render/escape.h"
#include "src/render/page.h"
#include "src/render/renderers.h"
#include "src/report/page/report_data.h"
#include "src/report/page/report_format.h"
#include "src/report/validation/validation_report.h"

namespace aiprof {
namespace {

std::string E(std::string_view s) { return HtmlEscape(s); }

using report_format::Ms;
using report_format::Pct;

constexpr const char* kStyle = R"CSS(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1000px;color:#222;line-height:1.4}
h1{font-size:22px;margin-bottom:4px}h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:28px}
h3{font-size:15px;margin-bottom:4px}.muted{color:#666;font-size:13px}
.cards{display:flex;flex-wrap:wrap;gap:12px}.card{flex:1 1 210px;border:1px solid #ddd;border-radius:6px;padding:10px 12px;background:#fafafa}
.card .k{font-size:12px;color:#666;text-transform:uppercase;letter-spacing:.04em}.card .v{font-size:20px;font-weight:600;margin:2px 0}
.card .s{font-size:12px;color:#444}
table{border-collapse:collapse;width:100%;font-size:13px;margin:8px 0}th,td{border-bottom:1px solid #eee;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f3f3f3;cursor:pointer;user-select:none}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.finding{border-left:4px solid #1f77b4;padding:4px 12px;margin:12px 0;background:#fcfcff}.finding.high{border-color:#d62728}.finding.medium{border-color:#ff7f0e}
.tag{display:inline-block;font-size:11px;padding:1px 6px;border-radius:8px;background:#eee;margin-right:4px}
code{font-size:12px;background:#f3f3f3;padding:0 3px;border-radius:3px}svg.chart{max-width:100%;height:auto;margin:6px 0}
iframe.view{width:100%;height:520px;border:1px solid #ddd}.svg-view svg{max-width:100%;height:auto}
.verdict-improved{color:#2ca02c;font-weight:600}.verdict-regressed{color:#d62728;font-weight:600}
@media print{body{max-width:none;margin:0}h2{break-after:avoid}svg.chart,.finding,.card,tr{break-inside:avoid}iframe.view{display:none}.noprint{display:none}}
)CSS";

constexpr const char* kScript = R"JS(
document.querySelectorAll('table.sortable').forEach(function(table){
  table.querySelectorAll('th').forEach(function(th, col){
    th.addEventListener('click', function(){
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var asc = th.getAttribute('data-dir') !== 'asc';
      table.querySelectorAll('th').forEach(function(h){ h.removeAttribute('data-dir'); });
      th.setAttribute('data-dir', asc ? 'asc' : 'desc');
      rows.sort(function(a, b){
        var x = a.cells[col].getAttribute('data-v'), y = b.cells[col].getAttribute('data-v');
        var nx = parseFloat(x), ny = parseFloat(y), r;
        if (!isNaN(nx) && !isNaN(ny)) r = nx - ny; else r = String(x).localeCompare(String(y));
        return asc ? r : -r;
      });
      rows.forEach(function(r){ body.appendChild(r); });
    });
  });
});
)JS";

std::string Card(const std::string& key, const std::string& value, const std::string& sub) {
  return fmt::format("<div class=\"card\"><div class=\"k\">{}</div><div class=\"v\">{}</div><div class=\"s\">{}</div></div>",
                     E(key), E(value), sub);
}

std::string Headline(const ReportData& r) {
  std::string out = "<section id=\"headline\"><h2>Headline</h2><div class=\"cards\">";
  const StepStats& s = r.steps_stats;
  if (s.count > 0) {
    out += Card("Step time", fmt::format("{} ± {}", Ms(s.mean_ns / 1e6), Ms(s.stddev_ns / 1e6)),
                E(fmt::format("mean ± sd over {} steps ({}); p50 {}, p99 {}", s.count, s.source, Ms(s.p50_ns / 1e6),
                              Ms(s.p99_ns / 1e6))));
  } else {
    out += Card("Step time", "no steps", "the trace marks no steps: figures are per trace");
  }
  out += Card("Device utilisation", r.device_util >= 0 ? Pct(r.device_util) : "n/a",
              E(r.device_util >= 0 ? r.device_util_basis : "no device or main-thread activity"));
  if (r.top_finding) {
    const Finding& f = *r.top_finding;
    out += Card("Top bottleneck", f.rule->title,
                E(fmt::format("{} confidence; impact {} = {} of {}", ConfidenceName(f.confidence), Ms(f.impact.time_ns / 1e6),
                              Pct(f.impact.share), f.impact.basis)));
  } else {
    out += Card("Top bottleneck", "none found", "no rule fired on this trace");
  }
  if (!r.host_functions.empty()) {
    const ReportHostFunction& f = r.host_functions[0];
    out += Card("Hottest host function", f.name,
                E(fmt::format("{} of {} CPU samples (self), {} on the stack; {}", Pct(f.self_share), r.host_stacks,
                              Pct(f.total_share), f.module)));
  }
  if (r.best_fix) {
    const SuggestionOutcome& o = *r.best_fix;
    out += Card("Best fix", o.suggestion->title,
                E(fmt::format("expected gain {}–{} of {} (×{:.2f}–×{:.2f}; {})", Pct(o.gain_min), Pct(o.gain_max),
                              GainBasis(o), o.speedup_min, o.speedup_max, GainOrigin(o))));
  }
  return out + "</div></section>";
}

std::string Charts(const ReportData& r) {
  const auto& pal = ChartPalette();
  std::string out = "<section id=\"charts\"><h2>Where the time goes</h2>";
  if (!r.breakdown.empty()) {
    std::vector<std::string> cats;
    std::vector<ChartSeries> series = {{r.cpu_only ? "op time" : "compute", pal[0], {}},
                                       {"communication (not overlapped)", pal[1], {}},
                                       {"memory copy", pal[2], {}}};
    for (size_t c = 0; c < kGapCauseCount; ++c) {
      series.push_back({std::string("idle: ") + GapCauseName(static_cast<GapCause>(c)), pal[3 + c], {}});
    }
    for (const ReportBreakdownRow& row : r.breakdown) {
      cats.push_back(row.label);
      series[0].values.push_back(row.compute_ms);
      series[1].values.push_back(row.comm_ms);
      series[2].values.push_back(row.memcpy_ms);
      for (size_t c = 0; c < kGapCauseCount; ++c) series[3 + c].values.push_back(row.idle_by_cause_ms[c]);
    }
    out += "<h3>Time breakdown per device and rank</h3>" +
           StackedBarChart("Each bar: one device's span", cats, series, "ms") +
           "<p class=\"muted\">Compute, copies and exposed communication can overlap each other, so a bar may exceed "
           "the span by the overlap; idle time is split by the cause of each gap.</p>";
  }
  if (!r.steps.empty()) {
    std::vector<std::string> labels;
    std::vector<double> values;
    std::vector<bool> marked;
    for (const ReportStep& s : r.steps) {
      labels.push_back(s.label);
      values.push_back(s.dur_ms);
      marked.push_back(s.slow);
    }
    out += "<h3>Step times</h3>" +
           BarChart("Duration of each step", labels, values, marked,
                    fmt::format("slow: > {:.1f}× median", kSlowStepFactor), r.median_step_ms, "median", "ms");
  }
  uint64_t gaps = 0;
  for (uint64_t c : r.gap_hist_count) gaps += c;
  if (gaps > 0) {
    std::vector<std::string> cats;
    std::vector<ChartSeries> series;
    for (size_t c = 0; c < kGapCauseCount; ++c) series.push_back({GapCauseName(static_cast<GapCause>(c)), pal[3 + c], {}});
    for (size_t b = 0; b < kGapBucketCount; ++b) {
      cats.push_back(fmt::format("{} ({} gaps)", GapBucketLabel(b), r.gap_hist_count[b]));
      for (size_t c = 0; c < kGapCauseCount; ++c) series[c].values.push_back(r.gap_hist_ms[b][c]);
    }
    out += "<h3>Idle gaps by length and cause</h3>" +
           StackedBarChart("Idle time in gaps of each length, by cause", cats, series, "ms");
  }
  {
    std::vector<ScatterPoint> pts;
    for (const RooflineRow& row : r.roofline.rows) {
      if (pts.size() >= kReportRooflinePoints) break;
      if (!row.flops_known || row.flops <= 0 || row.bytes <= 0 || row.time_ns <= 0) continue;
      ScatterPoint p;
      p.x = row.flops / row.bytes;
      p.y = row.flops / (static_cast<double>(row.time_ns) / 1e9);
      p.weight = static_cast<double>(row.time_ns);
      p.label = fmt::format("{}: {} calls, {}, {:.3g} FLOP/byte, {:.3g} FLOP/s", row.name, row.count,
                            Ms(static_cast<double>(row.time_ns) / 1e6), p.x, p.y);
      pts.push_back(std::move(p));
    }
    double peak = 0, bw = 0;
    std::string dev = "no device peaks (" + r.roofline_problem + ")";
    if (r.roofline_device) {
      auto fp32 = r.roofline_device->PeakFlops(Precision::kFp32);
      peak = fp32.value_or(0);
      bw = r.roofline_device->memory_bandwidth_bytes_per_second;
      dev = r.roofline_device->name + " (fp32 peak, DRAM bandwidth)";
    }
    if (!pts.empty()) {
      out += "<h3>Roofline</h3>" +
             RooflineChart("Ops on the roofline", pts, peak, bw, "arithmetic intensity (FLOP/byte)", "achieved FLOP/s") +
             "<p class=\"muted\">Roofs: " + E(dev) + ". Each point is one op (point area ∝ its time); FLOPs and bytes from the profiler or "
             "from shapes (docs/analyses.md).</p>";
    }
  }
  if (!r.comm.empty()) {
    std::vector<std::string> cats;
    std::vector<ChartSeries> series = {{"wait", pal[3], {}}, {"transfer", pal[0], {}}, {"other collective time", pal[6], {}}};
    for (const ReportCommRow& row : r.comm) {
      cats.push_back(row.rank == kNoRank ? std::string("trace") : "rank " + std::to_string(row.rank));
      series[0].values.push_back(row.wait_ms);
      series[1].values.push_back(row.transfer_ms);
      series[2].values.push_back(std::max(0.0, row.comm_ms - row.wait_ms - row.transfer_ms));
    }
    out += "<h3>Communication per rank</h3>" + StackedBarChart("Collective time: wait vs transfer", cats, series, "ms");
    out += "<table><thead><tr><th>rank</th><th>collective time</th><th>wait</th><th>transfer</th><th>exposed (not "
           "overlapped)</th></tr></thead><tbody>";
    for (const ReportCommRow& row : r.comm) {
      out += fmt::format("<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                         row.rank == kNoRank ? std::string("-") : std::to_string(row.rank), Ms(row.comm_ms),
                         Ms(row.wait_ms), Ms(row.transfer_ms), row.exposed_ms >= 0 ? Ms(row.exposed_ms) : "n/a");
    }
    out += "</tbody></table>";
  }
  if (!r.memory.empty()) {
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
    for (size_t k = 0; k < r.memory.size(); ++k) {
      series.push_back({fmt::format("{} (peak {:.1f} MiB)", r.memory[k].label, r.memory[k].peak_bytes / 1048576.0),
                        pal[k % pal.size()], {}});
    }
    std::vector<double> last(r.memory.size(), 0);
    for (const auto& [ts, kv] : pts) {
      last[kv.first] = kv.second / 1048576.0;
      xs.push_back(static_cast<double>(ts - t0) / 1e9);
      for (size_t k = 0; k < series.size(); ++k) series[k].values.push_back(last[k]);
    }
    out += "<h3>Memory over time</h3>" + AreaChart("Allocated memory", xs, series, "MiB");
  }
  return out + "</section>";
}

std::string TopOps(const ReportData& r) {
  std::string out =
      "<section id=\"ops\"><h2>Top ops</h2><p class=\"muted\">By self time (nested ops are not counted twice; "
      "click a column to sort), total beside it; profiler wrappers left out; share is of "
      "the summed time of all ops in the same category.</p><table class=\"sortable\" id=\"top-ops\"><thead><tr>"
      "<th>op</th><th>category</th><th>count</th><th>self</th><th>total</th><th>share</th><th>mean</th><th>p50</th>"
      "<th>p99</th><th>max</th></tr></thead><tbody>";
  for (const ReportOp& o : r.top_ops) {
    out += fmt::format(
        "<tr><td data-v=\"{0}\">{0}</td><td data-v=\"{1}\">{1}</td><td class=\"n\" data-v=\"{2}\">{2}</td>"
        "<td class=\"n\" data-v=\"{15}\">{16}</td>"
        "<td class=\"n\" data-v=\"{3}\">{4}</td><td class=\"n\" data-v=\"{5}\">{6}</td><td class=\"n\" data-v=\"{7}\">{8}</td>"
        "<td class=\"n\" data-v=\"{9}\">{10}</td><td class=\"n\" data-v=\"{11}\">{12}</td><td class=\"n\" data-v=\"{13}\">{14}</td></tr>",
        E(o.name), E(o.category), o.count, o.total_ms, Ms(o.total_ms), o.share, Pct(o.share), o.mean_us,
        Ms(o.mean_us / 1e3), o.p50_us, Ms(o.p50_us / 1e3), o.p99_us, Ms(o.p99_us / 1e3), o.max_us, Ms(o.max_us / 1e3),
        o.self_ms, Ms(o.self_ms));
  }
  out += "</tbody></table></section>";
  // The attribution tree: module table and collapsible tree, through the document renderer.
  if (!r.attribution.sections.empty()) {
    out += "<section id=\"attribution\">" + render::RenderHtmlBody(r.attribution) + "</section>";
  }
  return out;
}

std::string HostFunctions(const ReportData& r) {
  if (r.host_functions.empty()) return "";
  std::string out = fmt::format(
      "<section id=\"host-functions\"><h2>Host functions in the CPU samples</h2><p class=\"muted\">{} samples with a "
      "call stack; self = the sample landed in the function, total = the function was on the stack.</p>"
      "<table class=\"sortable\" id=\"host-functions-table\"><thead><tr><th>function</th><th>module</th><th>self</th>"
      "<th>total</th></tr></thead><tbody>",
      r.host_stacks);
  for (const ReportHostFunction& f : r.host_functions) {
    out += fmt::format("<tr><td data-v=\"{0}\">{0}</td><td data-v=\"{1}\">{1}</td><td class=\"n\" data-v=\"{2}\">{3} ({4})</td>"
                       "<td class=\"n\" data-v=\"{5}\">{6} ({7})</td></tr>",
                       E(f.name), E(f.module), f.self_share, Pct(f.self_share), f.self_samples, f.total_share,
                       Pct(f.total_share), f.total_samples);
  }
  return out + "</tbody></table></section>";
}

std::string Context(const ReportData& r) {
  if (r.context.empty()) return "";
  std::string out = fmt::format("<section id=\"context\"><h2>{}</h2><table><tbody>",
                                E(r.context_title.empty() ? "Context" : r.context_title));
  for (const auto& [k, v] : r.context) out += fmt::format("<tr><th>{}</th><td>{}</td></tr>", E(k), E(v));
  return out + "</tbody></table></section>";
}

std::string SuggestionHtml(const SuggestionOutcome& o) {
  const Suggestion& s = *o.suggestion;
  std::string out = fmt::format(
      "<li class=\"suggestion\"><b>{}</b> <span class=\"tag\">{}</span> expected gain {}–{} of {} (×{:.2f}–×{:.2f}); "
      "risk: precision loss {}, memory +{}, effort {}<br>{}",
      E(s.title), E(s.platform), Pct(o.gain_min), Pct(o.gain_max), E(GainBasis(o)), o.speedup_min,
      o.speedup_max, Pct(s.risk.precision_loss), Pct(s.risk.memory_increase), E(s.risk.effort), E(s.action));
  if (!s.changes.empty()) {
    out += "<br>Changes:";
    for (const SuggestionChange& c : s.changes) {
      out += fmt::format(" <code>{}: {} = {}</code>", E(c.tool), E(c.setting), E(c.value));
    }
  }
  out += "<br>Expected gain: " + E(GainOrigin(o));
  if (o.history) {
    out += fmt::format("<br>Measured before: {} ({}–{}) — {}", Pct(o.history->gain_fraction), Pct(o.history->ci_low),
                       Pct(o.history->ci_high), E(o.history->card));
  }
  return out + "</li>";
}

std::string DiagnosisHtml(const ReportData& r) {
  std::string out = "<section id=\"diagnosis\"><h2>Diagnosis and suggestions</h2>";
  if (r.target.size()) {
    out += fmt::format("<p class=\"muted\">Target: {}; constraints: {}.</p>", E(r.target),
                       r.constraints.empty() ? std::string("none") : E(fmt::format("{}", fmt::join(r.constraints, ", "))));
  }
  if (r.diagnosis->findings.empty()) out += "<p>No rule fired on this trace.</p>";
  for (const Finding& f : r.diagnosis->findings) {
    out += fmt::format(
        "<div class=\"finding {}\"><h3>{}</h3><span class=\"tag\">priority {}</span><span class=\"tag\">confidence {}</span>"
        "<span class=\"tag\">impact {} = {} of {} ({})</span><p>{}</p><p class=\"muted\">{}</p>",
        ConfidenceName(f.confidence), E(f.rule->title), PriorityName(f.priority), ConfidenceName(f.confidence),
        Ms(f.impact.time_ns / 1e6), Pct(f.impact.share), E(f.impact.basis), Ms(f.impact.basis_ns / 1e6),
        E(f.rule->description), E(f.confidence_reason));
    out += "<p>Indicators:";
    for (const ComparisonOutcome& c : f.indicators) {
      out += fmt::format(" <code>{} = {:.4g} {} {:.4g}{}</code>", E(c.metric), c.value, E(c.op), c.threshold,
                         c.holds ? "" : " (false)");
    }
    out += "</p><ol>";
    for (const RankedCause& c : f.causes) {
      out += fmt::format("<li><b>{}</b> <span class=\"muted\">{}</span>", E(c.text), E(c.why));
      if (!c.evidence.empty()) {
        out += "<ul>";
        for (const std::string& e : c.evidence) out += "<li>" + E(e) + "</li>";
        out += "</ul>";
      }
      out += "</li>";
    }
    out += "</ol>";
    if (r.suggestions) {
      std::string items;
      for (const SuggestionOutcome& o : r.suggestions->kept) {
        if (o.finding == &f) items += SuggestionHtml(o);
      }
      if (!items.empty()) out += "<p><b>Suggestions</b></p><ul>" + items + "</ul>";
    }
    out += "</div>";
  }
  if (r.suggestions && !r.suggestions->excluded.empty()) {
    out += "<h3>Excluded by the target or constraints</h3><ul>";
    for (const SuggestionOutcome& o : r.suggestions->excluded) {
      out += fmt::format("<li>{} ({}) — {}</li>", E(o.suggestion->title), E(o.finding->rule->id), E(o.exclusion_reason));
    }
    out += "</ul>";
  }
  if (!r.diagnosis->not_evaluated.empty()) {
    out += "<h3>Not evaluated</h3><ul>";
    for (const NotEvaluated& n : r.diagnosis->not_evaluated) {
      std::string missing;
      for (const auto& [metric, why] : n.missing) missing += (missing.empty() ? "" : "; ") + metric + ": " + why;
      out += fmt::format("<li>{} — {}</li>", E(n.rule->title), E(missing));
    }
    out += "</ul>";
  }
  return out + "</section>";
}

std::string ValidationHtml(const ReportData& r) {
  if (!r.validation) return "";
  const ValidationResult& v = *r.validation;
  std::string out = fmt::format(
      "<section id=\"validation\"><h2>Validation: {} → {}</h2><p><b>{}</b></p><table><thead><tr><th>metric</th><th>before</th>"
      "<th>after</th><th>change</th><th>interval ({:.0f}%)</th><th>test</th><th>p</th><th>n</th><th>verdict</th></tr></thead><tbody>",
      E(v.before_label), E(v.after_label), E(ValidationHeadline(v)), v.options.alpha > 0 ? (1 - v.options.alpha) * 100 : 95);
  for (const MetricComparison& m : v.metrics) {
    std::string ci = m.ci_available ? fmt::format("{} … {}", Pct(m.ci.rel_low), Pct(m.ci.rel_high)) : "-";
    out += fmt::format(
        "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
        "<td>{}</td><td class=\"n\">{}</td><td class=\"n\">{} / {}</td><td class=\"verdict-{}\">{}</td></tr>",
        E(m.metric), E(FormatValue(m.before, m.unit)), E(FormatValue(m.after, m.unit)), Pct(m.change_rel), E(ci),
        E(m.test.empty() ? std::string("-") : m.test), m.test.empty() ? std::string("-") : fmt::format("{:.3g}", m.p_value),
        m.n_before, m.n_after, VerdictId(m.verdict), VerdictText(m.verdict));
  }
  out += "</tbody></table>";
  if (v.op_shift.available) {
    out += "<h3>Per-op before / after</h3><table class=\"sortable\"><thead><tr><th>op</th><th>count before</th><th>count "
           "after</th><th>mean before</th><th>mean after</th><th>ratio</th><th>added per sample</th></tr></thead><tbody>";
    for (size_t i = 0; i < v.op_shift.ops.size() && i < kReportOps; ++i) {
      const OpShift& o = v.op_shift.ops[i];
      out += fmt::format(
          "<tr><td data-v=\"{0}\">{0}</td><td class=\"n\" data-v=\"{1}\">{1}</td><td class=\"n\" data-v=\"{2}\">{2}</td>"
          "<td class=\"n\" data-v=\"{3}\">{4}</td><td class=\"n\" data-v=\"{5}\">{6}</td><td class=\"n\" data-v=\"{7}\">{7:.3f}</td>"
          "<td class=\"n\" data-v=\"{8}\">{9}</td></tr>",
          E(o.name), o.count_before, o.count_after, o.mean_before_ns, Ms(o.mean_before_ns / 1e6), o.mean_after_ns,
          Ms(o.mean_after_ns / 1e6), o.ratio, o.added_per_sample_ns, Ms(o.added_per_sample_ns / 1e6));
    }
    out += "</tbody></table>";
  }
  return out + "</section>";
}

std::string Evidence(const ReportData& r) {
  std::string out = fmt::format(
      "<section id=\"evidence\"><h2>Inputs and import diagnostics</h2><table><tbody>"
      "<tr><th>input</th><td>{}</td></tr>{}<tr><th>format</th><td>{}</td></tr><tr><th>platform</th><td>{}</td></tr>"
      "<tr><th>events</th><td>{} slices, {} instants, {} counter samples, {} stack samples, {} tracks</td></tr>"
      "<tr><th>written by</th><td>aiprof {} at {}</td></tr></tbody></table>",
      E(r.source), r.before_source.empty() ? std::string() : "<tr><th>before</th><td>" + E(r.before_source) + "</td></tr>",
      E(r.source_format), E(r.platform), r.slices, r.instants, r.counters, r.samples, r.tracks, E(r.version),
      E(r.generated_utc));
  if (r.diagnostics.empty()) {
    out += "<p>No malformed records.</p>";
  } else {
    out += "<table id=\"diagnostics\"><thead><tr><th>diagnostic</th><th>count and description</th></tr></thead><tbody>";
    for (const auto& [kind, text] : r.diagnostics) out += fmt::format("<tr><td>{}</td><td>{}</td></tr>", E(kind), E(text));
    out += "</tbody></table>";
  }
  return out + "</section>";
}

}  // namespace

std::string ReportToHtml(const ReportData& r) {
  std::string title = "aiprof report: " + r.source;
  render::PageSpec page;
  page.title = title;
  page.generator = "aiprof report";
  page.styles = {kStyle};
  page.scripts = {kScript};
  // The embedded views run in <iframe srcdoc>, which inherits this page's
  // policy: their scripts must be allowed here too.
  for (const auto& [view_title, html] : r.embedded_views) page.embedded_pages.push_back(html);
  std::string out = render::PageHead(page) +
                    fmt::format("<h1>aiprof report</h1><p class=\"muted\">{} · {} · aiprof {}</p>", E(r.source),
                                E(r.platform), E(r.version));
  out += Context(r);
  out += Headline(r);
  out += Charts(r);
  out += TopOps(r);
  out += HostFunctions(r);
  out += DiagnosisHtml(r);
  for (const auto& [title, html] : r.embedded_views) {
    out += fmt::format("<section class=\"view\"><h2>{}</h2><iframe class=\"view\" sandbox=\"allow-scripts\" title=\"{}\" "
                       "srcdoc=\"{}\"></iframe></section>",
                       E(title), E(title), E(html));
  }
  for (const auto& [title, svg] : r.embedded_svgs) {
    // The view wrote and escaped this SVG itself; drop any XML prolog.
    std::string_view body(svg);
    if (size_t at = body.find("<svg"); at != std::string_view::npos) body = body.substr(at);
    out += fmt::format("<section class=\"view-static\"><h2>{}</h2><div class=\"svg-view\">{}</div></section>", E(title), body);
  }
  for (const auto& [title, why] : r.view_errors) {
    out += fmt::format("<section><h2>{}</h2><p class=\"muted\">Not drawn: {}</p></section>", E(title), E(why));
  }
  out += ValidationHtml(r);
  out += Evidence(r);
  out += render::PageTail(page);
  return out;
}

}  // namespace aiprof
