#include "src/report/summary/summary_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cinttypes>

#include "src/analysis/common/steps.h"
#include "src/analysis/launches/launches_analysis.h"
#include "src/render/escape.h"
#include "src/render/units.h"

namespace aiprof {
namespace {

using render::Unit;
using render::Value;

}  // namespace

std::vector<size_t> ListedOps(const Trace& trace, const Summary& s, size_t top_n, bool with_wrappers) {
  std::vector<size_t> listed = TopOpsBySelf(trace, s);
  if (top_n != 0) {
    listed.resize(std::min(top_n, listed.size()));
  } else if (with_wrappers) {
    for (size_t i = 0; i < s.ops.size(); ++i) {  // s.ops: largest total first
      if (s.ops[i].profiler_wrapper || s.ops[i].device_record) listed.push_back(i);
    }
  }
  return listed;
}

namespace {

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

// A whole count as a document value.
template <typename T>
Value IntValue(T v) {
  return Value::Int(static_cast<int64_t>(v));
}

Value RankValue(int32_t rank) { return rank == kNoRank ? Value::Null() : Value::Int(rank); }

// Ranked by self time (nested ops are not counted twice), total beside it;
// the profiler's wrapper spans are structure and left out.
void AddOps(const Trace& trace, const Summary& s, const SummaryReportOptions& o, render::Document* doc) {
  const std::vector<size_t> ranked = ListedOps(trace, s, 0, false);
  if (ranked.empty() && !s.host_samples.empty()) {  // a --pid or non-Python capture: samples only
    doc->AddSection("ops", "Ops").Add(render::Paragraph{
        "No ops in this trace (no slices); what the threads ran is under Host samples."});
    return;
  }
  size_t n = o.top_n == 0 ? ranked.size() : std::min(o.top_n, ranked.size());
  render::Table t{"ops", "", {{"count", "Count", Unit::kCount}, {"self_ns", "Self", Unit::kNs},
                              {"total_ns", "Total", Unit::kNs}, {"mean_ns", "Mean", Unit::kNs},
                              {"p50_ns", "p50", Unit::kNs}, {"p99_ns", "p99", Unit::kNs}, {"max_ns", "Max", Unit::kNs},
                              {"category", "Category"}, {"name", "Name"}}, {}, ""};
  for (size_t i = 0; i < n; ++i) {
    const OpStat& op = s.ops[ranked[i]];
    t.rows.push_back({IntValue(op.count), Value::Int(op.self_ns), Value::Int(op.total_ns), Value::Number(op.mean_ns),
                      Value::Number(op.p50_ns), Value::Number(op.p99_ns), Value::Int(op.max_ns),
                      Value::String(std::string(trace.Str(op.category))),
                      Value::String(std::string(trace.Str(op.name)))});
  }
  const size_t records =
      static_cast<size_t>(std::count_if(s.ops.begin(), s.ops.end(), [](const OpStat& op) { return op.device_record; }));
  const std::string apart =
      records == 0
          ? "profiler wrappers left out"
          : fmt::format("profiler wrappers and {} device record{} (bands, HCCL tasks, device-side waits) left out",
                        records, records == 1 ? "" : "s");
  doc->AddSection("ops", fmt::format("Top {} ops by self time (of {}; {})", n, ranked.size(), apart)).Add(std::move(t));
}

void AddDevices(const Trace& trace, const Summary& s, const SummaryReportOptions& o, render::Section* sec) {
  auto unmodelled = trace.metadata.find("accelerator_unmodelled");
  if (s.devices.empty() && unmodelled != trace.metadata.end()) {
    sec->Add(render::Paragraph{"Device events of an accelerator aiprof has no model for: " + unmodelled->second});
  } else if (s.devices.empty()) {
    sec->Add(render::Paragraph{"No device activity in this trace (kernels, copies, sets, collectives)."});
  } else {
    render::Table t{"devices",
                    "",
                    {{"rank", "Rank"},
                     {"device", "Device"},
                     {"busy_ns", "Busy", Unit::kNs},
                     {"span_ns", "Span", Unit::kNs},
                     {"utilization", "Utilization (busy / span)", Unit::kFraction}},
                    {},
                    ""};
    for (const DeviceStat& d : s.devices) {
      t.rows.push_back({RankValue(d.rank), Value::Int(d.device), Value::Int(d.busy_ns), Value::Int(d.span_ns),
                        Value::Number(d.utilization)});
    }
    sec->Add(std::move(t));
  }
  if (o.op_coverage) {
    sec->Add(render::KeyValues{{{"op_coverage", "Op coverage (device-activity time attributed to a host op)",
                                 Value::Number(*o.op_coverage), Unit::kFraction}}});
  }
}

// Trace::steps rows keep their name; breakdown steps are "step N".
std::string StepLabel(const Trace& trace, const StepStat& st) {
  std::string_view name = trace.Str(st.name);
  return name.empty() ? "step " + std::to_string(st.number) : std::string(name);
}

// ", from timeline", ", from periodic pattern of 12 ops on thread 77 (python3)", "".
std::string StepSourceText(const Summary& s) {
  if (s.step_source.empty()) return "";
  if (!s.step_hook_source.empty()) return ", from " + s.step_hook_source;
  if (s.step_source != kPeriodicPatternSource) return ", from " + s.step_source;
  const StepPattern& p = s.step_pattern;
  // Track names often say the tid already ("thread 77 (python3)").
  std::string thread = p.thread_name.find(p.thread) != std::string::npos ? p.thread_name
                       : p.thread_name.empty()                           ? "thread " + p.thread
                                                                         : "thread " + p.thread + " (" + p.thread_name + ")";
  std::string text = fmt::format(", from periodic pattern of {}{} op{} on {}, {:.0f}% of its busy time",
                                 p.exact ? "" : "about ", p.period_ops, p.period_ops == 1 ? "" : "s", thread,
                                 100 * p.coverage);
  if (p.parts > 1) text += fmt::format("; {} parts' steps from patterns", p.parts);
  return text;
}

// Start times are absolute trace timestamps: shown as exact microseconds.
void AddSteps(const Trace& trace, const Summary& s, render::Section* sec) {
  render::Table t{"steps", "", {{"name", "Step"}, {"rank", "Rank"}, {"start_us", "Start (µs)"},
                                {"dur_ns", "Duration", Unit::kNs}}, {}, ""};
  std::vector<std::string> truncated;
  std::vector<std::string> cut_why;  // CutLastStep's reasons
  for (const StepStat& st : s.steps) {
    t.rows.push_back({Value::String(StepLabel(trace, st)), RankValue(st.rank),
                      st.start_ns == kUnknownStart ? Value::Null() : Value::String(NsToUsText(st.start_ns)),
                      Value::Int(st.dur_ns)});
    if (st.truncated) {
      truncated.push_back(StepLabel(trace, st) + (st.rank == kNoRank ? "" : " (rank " + std::to_string(st.rank) + ")"));
      if (!st.truncated_why.empty()) cut_why.push_back(truncated.back() + ": " + st.truncated_why);
    }
  }
  if (!t.rows.empty()) sec->Add(std::move(t));
  if (truncated.empty()) return;
  std::string names;
  for (size_t i = 0; i < truncated.size(); ++i) names += (i ? ", " : "") + truncated[i];
  sec->Add(render::Paragraph{fmt::format(
      "{} truncated last step{} ({}): cut short where the recording stopped (shorter than the steps before it, "
      "and holding no device work or no op where they do, or lacking ops every earlier step holds); analyze, "
      "diagnose and report leave {} out of the steady state, as they do warm-up steps.",
      truncated.size(), truncated.size() == 1 ? "" : "s", names, truncated.size() == 1 ? "it" : "them")});
  for (const std::string& why : cut_why) sec->Add(render::Paragraph{why});
}

// LLM serving (SDK requests with tokens): TTFT, TPOT, inter-token latency,
// queue time and request latency in ns; tokens/s per request as a rate.
void AddRequestTokens(const Summary& s, render::Document* doc) {
  const RequestTokenStats& r = s.requests;
  if (r.empty()) return;
  render::Table t{"request_tokens", "", {{"figure", "Figure"}, {"count", "Requests", Unit::kCount}, {"mean", "Mean"},
                                         {"p50", "p50"}, {"p90", "p90"}, {"p99", "p99"}, {"max", "Max"}},
                  {}, ""};
  auto row = [&](const char* name, const Distribution& d, Unit unit) {
    if (d.count == 0) return;
    t.rows.push_back({Value::String(name), IntValue(d.count), Value::Number(d.mean).In(unit),
                      Value::Number(d.p50).In(unit), Value::Number(d.p90).In(unit), Value::Number(d.p99).In(unit),
                      Value::Number(d.max).In(unit)});
  };
  row("time to first token", r.ttft_ns, Unit::kNs);
  row("time per output token", r.tpot_ns, Unit::kNs);
  row("inter-token latency", r.itl_ns, Unit::kNs);
  row("queue time", r.queue_ns, Unit::kNs);
  row("request latency", r.e2e_ns, Unit::kNs);
  row("output tokens/s per request", r.tokens_per_s, Unit::kPerSecond);
  doc->AddSection("request_tokens", fmt::format("Requests with tokens ({}; {} output, {} prompt tokens)", r.requests.size(),
                                                r.output_tokens, r.prompt_tokens))
      .Add(std::move(t));
}

// Multi-rank and Ascend inputs: ranks, step breakdowns, op types.
void AddRanksAndBreakdowns(const Trace& trace, const Summary& s, render::Document* doc) {
  if (s.ranks.size() > 1 || (s.ranks.size() == 1 && s.ranks[0].rank != kNoRank)) {
    render::Table t{"ranks", "", {{"rank", "Rank"}, {"tracks", "Tracks", Unit::kCount}, {"slices", "Slices", Unit::kCount},
                                  {"steps", "Steps", Unit::kCount}, {"device_busy_ns", "Device busy", Unit::kNs}},
                    {}, ""};
    for (const RankStat& r : s.ranks) {
      t.rows.push_back(
          {RankValue(r.rank), IntValue(r.tracks), IntValue(r.slices), IntValue(r.steps), Value::Int(r.device_busy_ns)});
    }
    doc->AddSection("ranks", "Ranks").Add(std::move(t));
  }
  if (!s.step_breakdowns.empty()) {
    // One row per step, one column per component (in order of first use).
    render::Table t{"step_breakdown", "", {{"rank", "Rank"}, {"step", "Step"}, {"source", "Source"}}, {}, ""};
    std::vector<std::string> keys;
    for (const StepBreakdown& b : s.step_breakdowns) {
      for (const auto& entry : b.values_ns) {
        if (std::find(keys.begin(), keys.end(), entry.first) == keys.end()) keys.push_back(entry.first);
      }
    }
    for (const std::string& key : keys) t.columns.push_back({key, key, Unit::kNs});
    for (const StepBreakdown& b : s.step_breakdowns) {
      std::vector<Value>& row = t.rows.emplace_back();
      row = {RankValue(b.rank), IntValue(b.step),
             Value::String(b.source + (b.method.empty() ? "" : " (" + b.method + ")"))};
      for (const std::string& key : keys) {
        auto v = b.values_ns.find(key);
        row.push_back(v == b.values_ns.end() ? Value::Null() : Value::Int(v->second));
      }
    }
    const bool from_timeline = std::any_of(s.step_breakdowns.begin(), s.step_breakdowns.end(),
                                           [](const StepBreakdown& b) { return !b.method.empty(); });
    if (from_timeline) {
      // Said where it shows: a step's Stage can exceed its own span
      // (ns_resolution: 182.9 ms of Computing in a 95.7 ms step).
      t.note =
          "From the timeline (device_activity), a step holds the device work it launched (its launching call's step, "
          "else the step its start falls in), whole: its Stage can run past the next step's start when the device "
          "runs behind, and Preparing is the device's wait from the step's start (or its previous step's last device "
          "work, when later) to its first device work. overlap_analysis rows sum "
          "torch_npu's bands from the step's start to the next step's start (the last step's to the end of the "
          "trace).";
    }
    doc->AddSection("step_breakdown", "Step breakdown").Add(std::move(t));
  }
  if (!s.op_types.empty()) {
    render::Table t{"op_types", "", {{"rank", "Rank"}, {"count", "Count", Unit::kCount}, {"total_ns", "Total", Unit::kNs},
                                     {"type", "Type"}}, {}, ""};
    for (const OpTypeStat& o : s.op_types) {
      t.rows.push_back({RankValue(o.rank), IntValue(o.count), Value::Int(o.total_ns),
                        Value::String(std::string(trace.Str(o.type)))});
    }
    doc->AddSection("op_types", "Device time by op type (joined from kernel_details / op_summary)").Add(std::move(t));
  }
}

// Host samples: totals, functions by self and by total samples, threads.
// `limit` caps each function table (0: every function).
std::string ModuleBase(std::string_view module) {
  const size_t slash = module.rfind('/');
  return std::string(slash == std::string_view::npos ? module : module.substr(slash + 1));
}

double ShareOf(uint64_t part, uint64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

std::string ThreadLabel(const Trace& trace, TrackId track) {
  if (track >= trace.tracks.size()) return "?";
  std::string_view name = trace.Str(trace.tracks.name[track]);
  std::string_view process = trace.Str(trace.tracks.process_name[track]);
  const std::string ids = fmt::format("pid {}, tid {}", trace.tracks.pid[track], trace.tracks.tid[track]);
  if (process.empty() && name.empty()) return ids;
  return fmt::format("{}{}{} ({})", process, process.empty() || name.empty() ? "" : " / ", name, ids);
}

render::Table FunctionTable(const Trace& trace, const HostSampleStats& h, const std::vector<size_t>& order,
                            size_t limit, const char* key) {
  render::Table t{key, "", {{"self_samples", "Self", Unit::kCount}, {"self_share", "Self %", Unit::kFraction},
                            {"total_samples", "Total", Unit::kCount}, {"total_share", "Total %", Unit::kFraction},
                            {"kind", "Kind"}, {"function", "Function"}, {"module", "Module"}},
                  {}, ""};
  const size_t n = limit == 0 ? order.size() : std::min(limit, order.size());
  for (size_t i = 0; i < n; ++i) {
    const SampledFunction& f = h.functions[order[i]];
    t.rows.push_back({IntValue(f.self_samples), Value::Number(ShareOf(f.self_samples, h.with_stack)),
                      IntValue(f.total_samples), Value::Number(ShareOf(f.total_samples, h.with_stack)),
                      Value::String(FrameKindName(f.kind)), Value::String(std::string(trace.Str(f.frame))),
                      Value::String(ModuleBase(trace.Str(f.module)))});
  }
  return t;
}

void AddHostSamples(const Trace& trace, const Summary& s, const SummaryReportOptions& o, render::Document* doc) {
  const HostSampleStats& h = s.host_samples;
  if (h.empty()) return;
  render::Section& sec = doc->AddSection(
      "host_samples", fmt::format("Host samples ({}, {} threads)", h.samples, h.threads.size()));
  render::KeyValues kv{{{"samples", "Samples", IntValue(h.samples), Unit::kCount},
                        {"sampled_ns", "Sampled time", Value::Int(h.weight_ns), Unit::kNs},
                        {"with_stack", "With a stack", IntValue(h.with_stack), Unit::kCount},
                        {"with_python_share", "With a Python frame (of those with a stack)",
                         Value::Number(ShareOf(h.with_python, h.with_stack)), Unit::kFraction}}};
  if (h.truncated) {
    kv.items.push_back(
        {"truncated", "Native stacks cut before the entry (capture)", IntValue(*h.truncated), Unit::kCount});
  }
  sec.Add(std::move(kv));
  const size_t limit = o.top_n;
  std::vector<size_t> by_self(h.functions.size());
  for (size_t i = 0; i < by_self.size(); ++i) by_self[i] = i;
  const size_t shown = limit == 0 ? h.functions.size() : std::min(limit, h.functions.size());
  sec.AddSection("functions_by_self", fmt::format("Top {} functions by self samples (of {})", shown, h.functions.size()))
      .Add(FunctionTable(trace, h, by_self, limit, "functions_by_self"));
  sec.AddSection("functions_by_total", fmt::format("Top {} functions by total samples (on the stack)", shown))
      .Add(FunctionTable(trace, h, FunctionsByTotal(h), limit, "functions_by_total"));
  render::Table threads{"threads", "", {{"samples", "Samples", Unit::kCount}, {"share", "Share", Unit::kFraction},
                                        {"sampled_ns", "Sampled time", Unit::kNs},
                                        {"python_share", "Python %", Unit::kFraction}, {"thread", "Thread"},
                                        {"top_function", "Top function (self)"},
                                        {"top_function_samples", "Its samples", Unit::kCount}},
                        {}, ""};
  for (const SampledThread& th : h.threads) {
    const bool top = th.top_function >= 0;
    threads.rows.push_back(
        {IntValue(th.samples), Value::Number(ShareOf(th.samples, h.samples)), Value::Int(th.weight_ns),
         Value::Number(ShareOf(th.with_python, th.samples)), Value::String(ThreadLabel(trace, th.track)),
         top ? Value::String(std::string(trace.Str(h.functions[static_cast<size_t>(th.top_function)].frame)))
             : Value::Null(),
         IntValue(th.top_function_samples)});
  }
  sec.AddSection("threads", "Per thread").Add(std::move(threads));
}

void HostSamplesToJson(const Trace& trace, const Summary& s, const SummaryReportOptions& o, std::string* out) {
  const HostSampleStats& h = s.host_samples;
  if (h.empty()) return;
  *out += fmt::format(
      "  \"host_samples\": {{\"samples\": {}, \"sampled_us\": {}, \"with_stack\": {}, \"with_python\": {}, "
      "\"truncated\": {}, \"functions\": {},\n",
      h.samples, NsToUsText(h.weight_ns), h.with_stack, h.with_python,
      h.truncated ? std::to_string(*h.truncated) : std::string("null"), h.functions.size());
  auto functions = [&](const char* key, const std::vector<size_t>& order) {
    const size_t n = o.top_n == 0 ? order.size() : std::min(o.top_n, order.size());
    *out += fmt::format("    \"{}\": [", key);
    for (size_t i = 0; i < n; ++i) {
      const SampledFunction& f = h.functions[order[i]];
      *out += fmt::format("{}\n      {{\"function\": {}, \"module\": {}, \"kind\": {}, \"self_samples\": {}, "
                          "\"total_samples\": {}, \"self_us\": {}, \"total_us\": {}}}",
                          i ? "," : "", JsonString(trace.Str(f.frame)), JsonString(trace.Str(f.module)),
                          JsonString(FrameKindName(f.kind)), f.self_samples, f.total_samples, NsToUsText(f.self_ns),
                          NsToUsText(f.total_ns));
    }
    *out += n ? "\n    ],\n" : "],\n";
  };
  std::vector<size_t> by_self(h.functions.size());
  for (size_t i = 0; i < by_self.size(); ++i) by_self[i] = i;
  functions("top_self", by_self);
  functions("top_total", FunctionsByTotal(h));
  *out += "    \"threads\": [";
  for (size_t i = 0; i < h.threads.size(); ++i) {
    const SampledThread& th = h.threads[i];
    const bool top = th.top_function >= 0;
    const bool known = th.track < trace.tracks.size();
    *out += fmt::format(
        "{}\n      {{\"track\": {}, \"pid\": {}, \"tid\": {}, \"name\": {}, \"process_name\": {}, \"samples\": {}, "
        "\"sampled_us\": {}, \"with_python\": {}, \"top_function\": {}, \"top_function_samples\": {}}}",
        i ? "," : "", static_cast<uint32_t>(th.track), known ? trace.tracks.pid[th.track] : -1,
        known ? trace.tracks.tid[th.track] : -1, JsonString(known ? trace.Str(trace.tracks.name[th.track]) : ""),
        JsonString(known ? trace.Str(trace.tracks.process_name[th.track]) : ""), th.samples, NsToUsText(th.weight_ns),
        th.with_python,
        top ? JsonString(trace.Str(h.functions[static_cast<size_t>(th.top_function)].frame)) : std::string("null"),
        th.top_function_samples);
  }
  *out += h.threads.empty() ? "]\n  },\n" : "\n    ]\n  },\n";
}

}  // namespace

render::Document SummaryToDocument(const Trace& trace, const Summary& s, const SummaryReportOptions& o) {
  render::Document doc;
  doc.key = "summary";
  auto it = trace.metadata.find("source_path");
  doc.title = "aiprof summary: " + (it == trace.metadata.end() ? std::string() : it->second);
  doc.generator = "aiprof summary";
  doc.machine_json = SummaryToJson(trace, s, o);
  doc.AddSection("totals", "")
      .Add(render::KeyValues{{{"slices", "Slices", IntValue(s.slice_count), Unit::kCount},
                              {"instants", "Instants", IntValue(s.instant_count), Unit::kCount},
                              {"counter_samples", "Counter samples", IntValue(s.counter_count), Unit::kCount},
                              {"flows", "Flows", IntValue(s.flow_count), Unit::kCount},
                              {"tracks", "Tracks", IntValue(s.track_count), Unit::kCount}}});
  if (!s.host_samples.empty()) {
    std::get<render::KeyValues>(doc.sections.back().blocks.back())
        .items.push_back({"stack_samples", "Stack samples", IntValue(s.host_samples.samples), Unit::kCount});
  }
  AddOps(trace, s, o, &doc);
  AddDevices(trace, s, o, &doc.AddSection("devices", "Devices"));
  AddSteps(trace, s, &doc.AddSection("steps", fmt::format("Steps ({}{})", s.steps.size(), StepSourceText(s))));
  AddRequestTokens(s, &doc);
  AddHostSamples(trace, s, o, &doc);
  AddRanksAndBreakdowns(trace, s, &doc);
  render::Table categories{"events_by_category", "", {{"category", "Category"}, {"events", "Events", Unit::kCount}}, {}, ""};
  for (const auto& [cat, count] : s.events_by_category) {
    categories.rows.push_back({Value::String(cat.empty() ? "(none)" : cat), IntValue(count)});
  }
  doc.AddSection("events_by_category", "Events by category").Add(std::move(categories));
  render::Section& diagnostics = doc.AddSection("diagnostics", "Import diagnostics");
  if (trace.diagnostics.empty()) {
    diagnostics.Add(render::Paragraph{"none"});
  } else {
    render::Table t{"diagnostics", "", {{"kind", "Kind"}, {"count", "Count", Unit::kCount}, {"first_at", "First at"},
                                        {"description", "Description"}}, {}, ""};
    for (const auto& [kind, e] : trace.diagnostics.entries()) {
      t.rows.push_back(
          {Value::String(kind), IntValue(e.count), Value::String(e.first_where), Value::String(e.description)});
    }
    diagnostics.Add(std::move(t));
  }
  return doc;
}

std::string SummaryToJson(const Trace& trace, const Summary& s, const SummaryReportOptions& o) {
  std::string out = "{\n  \"schema\": \"aiprof.summary/1\",\n";
  auto it = trace.metadata.find("source_path");
  out += fmt::format("  \"source\": {},\n", JsonString(it == trace.metadata.end() ? "" : it->second));
  out += fmt::format(
      "  \"totals\": {{\"slices\": {}, \"instants\": {}, \"counter_samples\": {}, \"flows\": {}, \"tracks\": {}, "
      "\"ops\": {}}},\n",
      s.slice_count, s.instant_count, s.counter_count, s.flow_count, s.track_count, s.ops.size());
  // Machine-readable output lists every op unless --top limited it, and
  // says so; the order, and the ops --top N keeps, are the text table's.
  const std::vector<size_t> listed = ListedOps(trace, s, o.top_n, true);
  const size_t n = listed.size();
  out += fmt::format("  \"ops_listed\": {}, \"ops_limited_by_top\": {},\n", n,
                     n < s.ops.size() ? std::to_string(o.top_n) : std::string("null"));
  out += "  \"ops\": [";
  for (size_t i = 0; i < n; ++i) {
    const OpStat& op = s.ops[listed[i]];
    out += fmt::format(
        "{}\n    {{\"name\": {}, \"category\": {}, \"count\": {}, \"total_us\": {}, \"self_us\": {}, "
        "\"profiler_wrapper\": {}, \"device_record\": {}, \"mean_us\": {}, \"p50_us\": {}, \"p99_us\": {}, "
        "\"max_us\": {}}}",
        i ? "," : "", JsonString(trace.Str(op.name)), JsonString(trace.Str(op.category)), op.count,
        NsToUsText(op.total_ns), NsToUsText(op.self_ns), op.profiler_wrapper ? "true" : "false",
        op.device_record ? "true" : "false", op.mean_ns / 1e3, op.p50_ns / 1e3, op.p99_ns / 1e3, NsToUsText(op.max_ns));
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
  if (s.step_source == kPeriodicPatternSource) {
    const StepPattern& p = s.step_pattern;
    out += fmt::format("  \"step_pattern\": {{\"period_ops\": {}, \"thread\": {}, \"thread_name\": {}, \"coverage\": {}, "
                       "\"exact\": {}, \"parts\": {}}},\n",
                       p.period_ops, JsonString(p.thread), JsonString(p.thread_name), p.coverage, p.exact, p.parts);
  }
  out += "  \"steps\": [";
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const StepStat& st = s.steps[i];
    bool known = st.start_ns != kUnknownStart;
    out += fmt::format(
        "{}\n    {{\"name\": {}, \"number\": {}, \"rank\": {}, \"start_us\": {}, \"dur_us\": {}, \"start_ns\": {}{}}}",
        i ? "," : "", JsonString(StepLabel(trace, st)), st.number, st.rank,
        known ? NsToUsText(st.start_ns) : std::string("null"), NsToUsText(st.dur_ns),
        known ? std::to_string(st.start_ns) : std::string("null"), st.truncated ? ", \"truncated\": true" : "");
  }
  out += s.steps.empty() ? "],\n" : "\n  ],\n";
  RanksAndBreakdownsToJson(trace, s, &out);
  HostSamplesToJson(trace, s, o, &out);
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
  // The JSON's op fields, in its order and with its rows.
  std::string out =
      "name,category,count,total_us,self_us,profiler_wrapper,device_record,mean_us,p50_us,p99_us,max_us\n";
  for (size_t i : ListedOps(trace, s, o.top_n, true)) {
    const OpStat& op = s.ops[i];
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", CsvField(trace.Str(op.name)),
                       CsvField(trace.Str(op.category)), op.count, NsToUsText(op.total_ns), NsToUsText(op.self_ns),
                       op.profiler_wrapper ? "true" : "false", op.device_record ? "true" : "false", op.mean_ns / 1e3,
                       op.p50_ns / 1e3, op.p99_ns / 1e3, NsToUsText(op.max_ns));
  }
  return out;
}

void AddResultFigures(AnalysisResults& results, SummaryReportOptions* o) {
  const LaunchStats& launches = results.Get(kLaunches);
  if (launches.device_time_ns > 0) {
    o->op_coverage = static_cast<double>(launches.attributed_time_ns) / static_cast<double>(launches.device_time_ns);
  }
}

}  // namespace aiprof
