#include "src/report/summary_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cinttypes>

#include "src/analysis/common/steps.h"
#include "src/render/escape.h"
#include "src/render/units.h"

namespace aiprof {
namespace {

size_t OpLimit(const Summary& s, const SummaryReportOptions& o) {
  return o.top_n == 0 ? s.ops.size() : std::min(o.top_n, s.ops.size());
}

std::string Truncated(std::string_view s, size_t max_chars) {
  std::string safe = TerminalSafe(s);
  if (safe.size() <= max_chars) return safe;
  size_t cut = max_chars - 3;
  while (cut > 0 && (static_cast<unsigned char>(safe[cut]) & 0xC0) == 0x80) --cut;  // UTF-8 boundary
  return safe.substr(0, cut) + "...";
}

std::string ValuesUsJson(const std::map<std::string, int64_t>& values_ns) {
  std::string out = "{";
  bool first = true;
  for (const auto& [key, ns] : values_ns) {
    out += fmt::format("{}{}: {}", first ? "" : ", ", JsonString(key), NsToUsText(ns));
    first = false;
  }
  return out + "}";
}

// Additive sections for multi-rank and Ascend inputs: ranks, step breakdowns, op types.
void RanksAndBreakdownsToJson(const Trace& trace, const Summary& s, std::string* out) {
  *out += "  \"ranks\": [";
  for (size_t i = 0; i < s.ranks.size(); ++i) {
    const RankStat& r = s.ranks[i];
    *out += fmt::format("{}\n    {{\"rank\": {}, \"tracks\": {}, \"slices\": {}, \"steps\": {}, \"device_busy_us\": {}, "
                        "\"devices\": [{}]}}",
                        i ? "," : "", r.rank, r.tracks, r.slices, r.steps, NsToUsText(r.device_busy_ns),
                        fmt::join(r.devices, ", "));
  }
  *out += s.ranks.empty() ? "],\n" : "\n  ],\n";
  *out += "  \"step_breakdown\": [";
  for (size_t i = 0; i < s.step_breakdowns.size(); ++i) {
    const StepBreakdown& b = s.step_breakdowns[i];
    *out += fmt::format("{}\n    {{\"rank\": {}, \"step\": {}, \"source\": {}, \"method\": {}, \"values_us\": {}}}",
                        i ? "," : "", b.rank, b.step, JsonString(b.source), JsonString(b.method), ValuesUsJson(b.values_ns));
  }
  *out += s.step_breakdowns.empty() ? "],\n" : "\n  ],\n";
  *out += "  \"op_types\": [";
  for (size_t i = 0; i < s.op_types.size(); ++i) {
    const OpTypeStat& t = s.op_types[i];
    *out += fmt::format("{}\n    {{\"rank\": {}, \"type\": {}, \"count\": {}, \"total_us\": {}}}", i ? "," : "", t.rank,
                        JsonString(trace.Str(t.type)), t.count, NsToUsText(t.total_ns));
  }
  *out += s.op_types.empty() ? "],\n" : "\n  ],\n";
}

void RanksAndBreakdownsToText(const Trace& trace, const Summary& s, std::string* out) {
  if (s.ranks.size() > 1 || (s.ranks.size() == 1 && s.ranks[0].rank != kNoRank)) {
    *out += "\nRanks:\n";
    for (const RankStat& r : s.ranks) {
      *out += fmt::format("  rank {:>3}: {} tracks, {} slices, {} steps, device busy {} us\n", r.rank, r.tracks, r.slices,
                          r.steps, NsToUsText(r.device_busy_ns));
    }
  }
  if (!s.step_breakdowns.empty()) *out += "\nStep breakdown (us):\n";
  for (const StepBreakdown& b : s.step_breakdowns) {
    *out += fmt::format("  rank {:>3} step {:>4} {:<24}", b.rank, b.step,
                        Truncated(b.source + (b.method.empty() ? "" : " (" + b.method + ")"), 40));
    for (const auto& [key, ns] : b.values_ns) *out += fmt::format(" {}={}", TerminalSafe(key), NsToUsText(ns));
    *out += "\n";
  }
  if (!s.op_types.empty()) *out += "\nDevice time by op type (joined from kernel_details / op_summary):\n";
  for (const OpTypeStat& t : s.op_types) {
    *out += fmt::format("  rank {:>3} {:>6} x {:>12} us  {}\n", t.rank, t.count, NsToUsText(t.total_ns),
                        Truncated(trace.Str(t.type), 60));
  }
}

// Trace::steps rows keep their name; breakdown steps are "step N".
std::string StepLabel(const Trace& trace, const StepStat& st) {
  std::string_view name = trace.Str(st.name);
  return name.empty() ? "step " + std::to_string(st.number) : std::string(name);
}

}  // namespace

std::string SummaryToText(const Trace& trace, const Summary& s, const SummaryReportOptions& o) {
  std::string out;
  auto it = trace.metadata.find("source_path");
  out += fmt::format("aiprof summary: {}\n", TerminalSafe(it == trace.metadata.end() ? "" : it->second));
  out += fmt::format("{} slices, {} instants, {} counter samples, {} flows, {} tracks\n\n", s.slice_count,
                     s.instant_count, s.counter_count, s.flow_count, s.track_count);
  // Ranked by self time (nested ops are not counted twice), total beside
  // it; the profiler's wrapper spans are structure and left out.
  std::vector<size_t> ranked = TopOpsBySelf(trace, s);
  size_t n = o.top_n == 0 ? ranked.size() : std::min(o.top_n, ranked.size());
  out += fmt::format("Top {} ops by self time (of {}; profiler wrappers left out):\n", n, ranked.size());
  out += fmt::format("{:>8} {:>12} {:>12} {:>10} {:>10} {:>10} {:>10}  {:<16} {}\n", "count", "self_us", "total_us",
                     "mean_us", "p50_us", "p99_us", "max_us", "category", "name");
  for (size_t i = 0; i < n; ++i) {
    const OpStat& op = s.ops[ranked[i]];
    out += fmt::format("{:>8} {:>12} {:>12} {:>10.3f} {:>10.3f} {:>10.3f} {:>10}  {:<16} {}\n", op.count,
                       NsToUsText(op.self_ns), NsToUsText(op.total_ns), op.mean_ns / 1e3, op.p50_ns / 1e3, op.p99_ns / 1e3,
                       NsToUsText(op.max_ns), Truncated(trace.Str(op.category), 16),
                       Truncated(trace.Str(op.name), 90));
  }
  out += "\nDevices:\n";
  auto unmodelled = trace.metadata.find("accelerator_unmodelled");
  if (s.devices.empty() && unmodelled != trace.metadata.end()) {
    out += fmt::format("  (device events of an accelerator aiprof has no model for: {})\n",
                       TerminalSafe(unmodelled->second));
  } else if (s.devices.empty()) {
    out += "  (no device activity in this trace: kernels, copies, sets, collectives)\n";
  }
  for (const DeviceStat& d : s.devices) {
    out += fmt::format("  rank {:>3} device {:>3}: busy {} us of {} us span, utilization {:.1f}%\n",
                       d.rank, d.device, NsToUsText(d.busy_ns), NsToUsText(d.span_ns), d.utilization * 100);
  }
  if (o.op_coverage) {
    out += fmt::format("  op coverage: {:.1f}% of device-activity time is attributed to a host op\n",
                       *o.op_coverage * 100);
  }
  out += fmt::format("\nSteps ({}{}):\n", s.steps.size(), s.step_source.empty() ? "" : ", from " + s.step_source);
  for (const StepStat& st : s.steps) {
    out += fmt::format("  {:<24} rank {:>3} {}, {} us\n", Truncated(StepLabel(trace, st), 24), st.rank,
                       st.start_ns == kUnknownStart ? std::string("start not written")
                                                    : "start " + NsToUsText(st.start_ns) + " us",
                       NsToUsText(st.dur_ns));
  }
  RanksAndBreakdownsToText(trace, s, &out);
  out += "\nEvents by category:\n";
  for (const auto& [cat, count] : s.events_by_category) {
    out += fmt::format("  {:<24} {}\n", cat.empty() ? "(none)" : Truncated(cat, 24), count);
  }
  out += "\nImport diagnostics:";
  if (trace.diagnostics.empty()) out += " none\n";
  else out += "\n";
  for (const auto& [kind, e] : trace.diagnostics.entries()) {
    out += fmt::format("  {:<24} {:>8}  first at {}: {}\n", kind, e.count, TerminalSafe(e.first_where),
                       TerminalSafe(e.description));
  }
  return out;
}

std::string SummaryToJson(const Trace& trace, const Summary& s, const SummaryReportOptions& o) {
  std::string out = "{\n  \"schema\": \"aiprof.summary/1\",\n";
  auto it = trace.metadata.find("source_path");
  out += fmt::format("  \"source\": {},\n", JsonString(it == trace.metadata.end() ? "" : it->second));
  out += fmt::format(
      "  \"totals\": {{\"slices\": {}, \"instants\": {}, \"counter_samples\": {}, \"flows\": {}, \"tracks\": {}, "
      "\"ops\": {}}},\n",
      s.slice_count, s.instant_count, s.counter_count, s.flow_count, s.track_count, s.ops.size());
  size_t n = OpLimit(s, o);
  // Machine-readable output lists every op unless --top limited it, and says so.
  out += fmt::format("  \"ops_listed\": {}, \"ops_limited_by_top\": {},\n", n,
                     n < s.ops.size() ? std::to_string(o.top_n) : std::string("null"));
  out += "  \"ops\": [";
  for (size_t i = 0; i < n; ++i) {
    const OpStat& op = s.ops[i];
    out += fmt::format(
        "{}\n    {{\"name\": {}, \"category\": {}, \"count\": {}, \"total_us\": {}, \"self_us\": {}, "
        "\"profiler_wrapper\": {}, \"mean_us\": {}, \"p50_us\": {}, \"p99_us\": {}, \"max_us\": {}}}",
        i ? "," : "", JsonString(trace.Str(op.name)), JsonString(trace.Str(op.category)), op.count,
        NsToUsText(op.total_ns), NsToUsText(op.self_ns), op.profiler_wrapper ? "true" : "false", op.mean_ns / 1e3, op.p50_ns / 1e3, op.p99_ns / 1e3, NsToUsText(op.max_ns));
  }
  out += n ? "\n  ],\n" : "],\n";
  out += "  \"devices\": [";
  for (size_t i = 0; i < s.devices.size(); ++i) {
    const DeviceStat& d = s.devices[i];
    out += fmt::format("{}\n    {{\"device\": {}, \"rank\": {}, \"busy_us\": {}, \"span_us\": {}, \"utilization\": {}}}",
                       i ? "," : "", d.device, d.rank, NsToUsText(d.busy_ns), NsToUsText(d.span_ns), d.utilization);
  }
  out += s.devices.empty() ? "],\n" : "\n  ],\n";
  if (o.op_coverage) out += fmt::format("  \"op_coverage\": {},\n", *o.op_coverage);
  out += fmt::format("  \"step_source\": {},\n", s.step_source.empty() ? "null" : JsonString(s.step_source));
  out += "  \"steps\": [";
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const StepStat& st = s.steps[i];
    bool known = st.start_ns != kUnknownStart;
    out += fmt::format(
        "{}\n    {{\"name\": {}, \"number\": {}, \"rank\": {}, \"start_us\": {}, \"dur_us\": {}, \"start_ns\": {}}}",
        i ? "," : "", JsonString(StepLabel(trace, st)), st.number, st.rank,
        known ? NsToUsText(st.start_ns) : std::string("null"), NsToUsText(st.dur_ns),
        known ? std::to_string(st.start_ns) : std::string("null"));
  }
  out += s.steps.empty() ? "],\n" : "\n  ],\n";
  RanksAndBreakdownsToJson(trace, s, &out);
  out += "  \"events_by_category\": {";
  bool first = true;
  for (const auto& [cat, count] : s.events_by_category) {
    out += fmt::format("{}\n    {}: {}", first ? "" : ",", JsonString(cat), count);
    first = false;
  }
  out += first ? "},\n" : "\n  },\n";
  out += "  \"diagnostics\": {";
  first = true;
  for (const auto& [kind, e] : trace.diagnostics.entries()) {
    out += fmt::format("{}\n    {}: {{\"count\": {}, \"first_at\": {}, \"description\": {}}}", first ? "" : ",",
                       JsonString(kind), e.count, JsonString(e.first_where), JsonString(e.description));
    first = false;
  }
  out += first ? "}\n}\n" : "\n  }\n}\n";
  return out;
}

std::string SummaryToCsv(const Trace& trace, const Summary& s, const SummaryReportOptions& o) {
  std::string out = "name,category,count,total_us,mean_us,p50_us,p99_us,max_us\n";
  size_t n = OpLimit(s, o);
  for (size_t i = 0; i < n; ++i) {
    const OpStat& op = s.ops[i];
    out += fmt::format("{},{},{},{},{},{},{},{}\n", CsvField(trace.Str(op.name)), CsvField(trace.Str(op.category)),
                       op.count, NsToUsText(op.total_ns), op.mean_ns / 1e3, op.p50_ns / 1e3, op.p99_ns / 1e3,
                       NsToUsText(op.max_ns));
  }
  return out;
}

void AddResultFigures(AnalysisResults& results, SummaryReportOptions* o) {
  const LaunchStats& launches = results.launches();
  if (launches.device_time_ns > 0) {
    o->op_coverage = static_cast<double>(launches.attributed_time_ns) / static_cast<double>(launches.device_time_ns);
  }
}

}  // namespace aiprof
