#include "src/report/analysis/analysis_sections.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "src/analysis/attribution/attribution_analysis.h"
#include "src/analysis/communication/communication_analysis.h"
#include "src/analysis/critical_path/critical_path_analysis.h"
#include "src/analysis/fusion/fusion_analysis.h"
#include "src/analysis/gaps/gaps_analysis.h"
#include "src/analysis/launches/launches_analysis.h"
#include "src/analysis/layout/layout_analysis.h"
#include "src/analysis/llm/llm_analysis.h"
#include "src/analysis/long_tail/long_tail_analysis.h"
#include "src/analysis/memcpy/memcpy_analysis.h"
#include "src/analysis/memory/memory_analysis.h"
#include "src/analysis/page_faults/page_faults_analysis.h"
#include "src/analysis/pipeline/pipeline_analysis.h"
#include "src/analysis/roofline/kernels_analysis.h"
#include "src/analysis/roofline/roofline_analysis.h"
#include "src/analysis/steps/steps_analysis.h"
#include "src/analysis/window/window_analysis.h"
#include "src/report/attribution/attribution_report.h"

namespace aiprof {
namespace {

using render::List;
using render::Paragraph;
using render::Section;
using render::Table;
using render::Unit;
using render::Value;

template <typename T>
Value Int(T v) {
  return Value::Int(static_cast<int64_t>(v));
}
Value Ns(double ns) { return Value::Number(ns); }
Value Share(int64_t a, int64_t b) {
  return b > 0 ? Value::Number(static_cast<double>(a) / static_cast<double>(b)) : Value::Null();
}
Value StrValue(std::string_view s) { return Value::String(std::string(s)); }

// ---------------------------------------------------------------- per analysis

void WindowSection(AnalysisResults& in, Section* s) {
  const AnalysisWindow& w = in.Get(kWindow);
  render::KeyValues& kv =
      s->Add(render::KeyValues{{{"impacts_measured", "Impacts are measured", StrValue(w.Describe())}}});
  if (w.startup_ns > 0) {
    kv.items.push_back({"startup_ns", "Start-up calls", Int(w.startup_ns), Unit::kNs});
    kv.items.push_back({"trace_span_ns", "Trace span", Int(w.trace_span_ns), Unit::kNs});
    kv.items.push_back({"startup_dominated", "Start-up dominated", Value::Bool(w.startup_dominated)});
  }
}

std::string TimelineName(const TimelineBreakdown& tl) {
  std::string who = tl.device == kHostDevice ? "main thread" : "device " + std::to_string(tl.device);
  return tl.rank != kNoRank ? "rank " + std::to_string(tl.rank) + " " + who : who;
}

void BreakdownSection(AnalysisResults& in, Section* s) {
  const GapsResult& r = in.Get(kGaps);
  if (r.cpu_only) s->Add(Paragraph{"CPU-only trace: timeline = main thread's cpu_op time"});
  Table shares{"timelines", "Time by activity (shares of the span)",
               {{"timeline", "Timeline"}, {"span_ns", "Span", Unit::kNs}, {"busy", "Busy", Unit::kFraction},
                {"compute", "Compute", Unit::kFraction}, {"communication", "Communication", Unit::kFraction},
                {"memcpy", "Memory copy", Unit::kFraction}, {"idle", "Idle", Unit::kFraction},
                {"comm_hidden", "Communication hidden", Unit::kFraction}},
               {}, "Communication hidden: share of communication time overlapped by compute"};
  // aiprof's own work in a span (a capture's torch-hook exports) is not the
  // program's: the shares are of the span less it, in a column of its own
  // on traces that hold some.
  const bool own = std::any_of(r.timelines.begin(), r.timelines.end(),
                               [](const TimelineBreakdown& tl) { return tl.aiprof_overhead_ns > 0; });
  if (own) {
    shares.title = "Time by activity (shares of the span less aiprof's own work)";
    shares.columns.push_back({"aiprof_own_ns", "aiprof's own work", Unit::kNs});
    shares.note += "; aiprof's own work: the capture exporting its torch chunks inside the span, neither busy nor idle";
  }
  Table causes{"idle_by_cause", "Idle time by cause", {{"timeline", "Timeline"}}, {}, ""};
  for (size_t c = 0; c < kGapCauseCount; ++c) {
    std::string name = GapCauseName(static_cast<GapCause>(c));
    causes.columns.push_back({name + "_ns", name, Unit::kNs});
  }
  static constexpr const char* kBuckets[kGapBucketCount] = {"<1us", "1-10us", "10-100us", "0.1-1ms", "1-10ms", ">=10ms"};
  Table hist{"gap_histogram", "Gaps by length",
             {{"timeline", "Timeline"}, {"bucket", "Length"}, {"gaps", "Gaps", Unit::kCount}, {"time_ns", "Time", Unit::kNs}},
             {}, ""};
  List largest{"largest_gaps", "Largest gaps", {}};
  for (const TimelineBreakdown& tl : r.timelines) {
    const std::string who = TimelineName(tl);
    const int64_t base = tl.span_ns - tl.aiprof_overhead_ns;
    shares.rows.push_back({StrValue(who), Int(tl.span_ns), Share(tl.busy_ns, base), Share(tl.compute_ns, base),
                           Share(tl.comm_ns, base), Share(tl.memcpy_ns, base), Share(tl.idle_ns, base),
                           Share(tl.comm_overlap_ns, tl.comm_ns)});
    if (own) shares.rows.back().push_back(Int(tl.aiprof_overhead_ns));
    std::vector<Value>& row = causes.rows.emplace_back();
    row.push_back(StrValue(who));
    for (size_t c = 0; c < kGapCauseCount; ++c) row.push_back(Int(tl.idle_by_cause_ns[c]));
    for (size_t b = 0; b < kGapBucketCount; ++b) {
      hist.rows.push_back({StrValue(who), StrValue(kBuckets[b]), Int(tl.gap_hist_count[b]), Int(tl.gap_hist_ns[b])});
    }
    for (const Gap& g : tl.largest_gaps) largest.items.push_back({DescribeGap(in.trace(), tl, g), "", {}});
  }
  // Start-up idle is said where there is some: it is no steady-state cause.
  if (std::any_of(r.timelines.begin(), r.timelines.end(), [](const TimelineBreakdown& tl) {
        return tl.idle_by_cause_ns[static_cast<size_t>(GapCause::kStartup)] > 0;
      })) {
    causes.note =
        "startup: idle at least half covered by the host's start-up work (a start-up call such as a first launch "
        "loading its code object, a stream capture window): one-off, not the steady state's launch overhead";
  }
  s->Add(std::move(shares));
  s->Add(std::move(causes));
  s->Add(std::move(hist));
  if (!largest.items.empty()) s->Add(std::move(largest));
}

void LaunchesSection(AnalysisResults& in, Section* s) {
  const Trace& trace = in.trace();
  const LaunchStats& st = in.Get(kLaunches);
  if (st.kernels == 0) {
    auto unmodelled = trace.metadata.find("accelerator_unmodelled");
    s->Add(Paragraph{unmodelled != trace.metadata.end()
                         ? "No kernels aiprof recognises: the trace holds device events of an accelerator it has no "
                           "model for (" + unmodelled->second + ")"
                         : "No device kernels (CPU-only trace)"});
    return;
  }
  render::KeyValues& kv = s->Add(render::KeyValues{
      {{"kernels", "Kernels", Int(st.kernels), Unit::kCount},
       {"linked", "Linked to a launch call", Int(st.launches), Unit::kCount},
       {"launched_in_steps", "Kernels launched inside steps (their launch call starts in one)",
        Int(st.kernels_in_steps), Unit::kCount},
       {"launch_calls", "Launch calls (delays are per call: its first kernel)", Int(st.launch_calls), Unit::kCount},
       {"launch_calls_in_steps", "Launch calls inside steps (a graph launch once)", Int(st.launch_calls_in_steps),
        Unit::kCount},
       // Launch latency: over the calls whose work started under
       // kMinLaunchHoldNs after they returned; the later ones are holds.
       {"delay_p50_ns", "Launch delay p50 (calls not held)",
        st.held_calls < st.launch_calls ? Ns(st.delay_p50_ns) : Value::Null(), Unit::kNs},
       {"delay_p90_ns", "Launch delay p90 (calls not held)",
        st.held_calls < st.launch_calls ? Ns(st.delay_p90_ns) : Value::Null(), Unit::kNs},
       {"delay_max_ns", "Launch delay max (calls not held)",
        st.held_calls < st.launch_calls ? Int(st.delay_max_ns) : Value::Null(), Unit::kNs},
       {"held_calls",
        "Held launch calls (work started " +
            render::FormatQuantity(static_cast<double>(kMinLaunchHoldNs), Unit::kNs) +
            " or more after the call: a hold, not latency)",
        Int(st.held_calls), Unit::kCount},
       {"held_p50_ns", "Hold p50 (held calls)", st.held_calls > 0 ? Ns(st.held_p50_ns) : Value::Null(), Unit::kNs},
       {"held_max_ns", "Hold max (held calls)", st.held_calls > 0 ? Int(st.held_max_ns) : Value::Null(), Unit::kNs},
       {"launch_cost_ns", "Launch cost (median one-by-one launch call)", Ns(st.launch_cost_ns), Unit::kNs},
       {"short_kernels", "Kernels launched one by one and shorter than that", Int(st.short_kernels), Unit::kCount}}});
  if (st.graph_launches > 0) {
    kv.items.push_back({"graph_launches", "Graph launches", Int(st.graph_launches), Unit::kCount});
    kv.items.push_back({"graph_kernels", "Kernels they replay", Int(st.graph_kernels), Unit::kCount});
    kv.items.push_back({"graph_launch_cost_ns", "Graph launch call (median)", Ns(st.graph_launch_cost_ns), Unit::kNs});
    kv.items.push_back({"graph_gap_p50_ns", "Device gap between replays (median)",
                        st.graph_gaps > 0 ? Ns(st.graph_gap_p50_ns) : Value::Null(), Unit::kNs});
  }
  if (st.device_time_ns > 0) {
    // Without host ops there is nothing to attribute to: no figure (the
    // metric is unavailable), where it printed 0.0% on Nsight exports.
    kv.items.push_back({"op_coverage",
                        st.host_ops ? "Op coverage (device-activity time attributed to a host op)"
                                    : "Op coverage (no host ops in the trace to attribute device time to)",
                        st.host_ops ? Share(st.attributed_time_ns, st.device_time_ns) : Value::Null(),
                        Unit::kFraction});
    if (st.graph_kernels > st.graph_kernels_captured) {
      s->Add(Paragraph{st.graph_kernels_captured == 0
                           ? "Graph-replayed kernels are tied to no op (the capture trace is not merged)."
                           : std::to_string(st.graph_kernels - st.graph_kernels_captured) + " of " +
                                 std::to_string(st.graph_kernels) +
                                 " graph-replayed kernels are tied to no op (no capture window pairs with them)."});
    } else if (st.graph_kernels > 0) {
      s->Add(Paragraph{"Graph-replayed kernels are attributed to the ops that captured them (capture trace merged)."});
    }
  }
  if (st.outliers.empty()) return;
  Table t{"outliers", "Runtime-call outliers", {{"dur_ns", "Duration", Unit::kNs}, {"median_ns", "Median", Unit::kNs},
                                               {"ts_ns", "At ts (ns)"}, {"name", "Call"}}, {}, ""};
  for (const RuntimeOutlier& o : st.outliers) {
    t.rows.push_back({Int(trace.slices.dur_ns[o.slice]), Ns(o.median_ns), Int(trace.slices.ts_ns[o.slice]),
                      StrValue(trace.Str(trace.slices.name[o.slice]))});
  }
  s->Add(std::move(t));
}

void MemcpySection(AnalysisResults& in, Section* s) {
  const MemcpyStats& st = in.Get(kMemcpy);
  Table t{"directions", "", {{"direction", "Direction"}, {"copies", "Copies", Unit::kCount},
                             {"time_ns", "Time", Unit::kNs}, {"bytes", "Bytes", Unit::kBytes}}, {}, ""};
  for (size_t d = 0; d < kCopyDirectionCount; ++d) {
    const CopyTotals& c = st.by_direction[d];
    if (c.count == 0) continue;
    t.rows.push_back({StrValue(CopyDirectionName(static_cast<CopyDirection>(d))), Int(c.count), Int(c.time_ns),
                      c.with_bytes ? Value::Number(c.bytes) : Value::Null()});
  }
  if (!t.rows.empty()) s->Add(std::move(t));
  s->Add(render::KeyValues{{{"copies", "Copies", Int(st.total), Unit::kCount},
                            {"pageable", "Pageable", Int(st.pageable), Unit::kCount},
                            {"synchronous", "Synchronous", Int(st.synchronous), Unit::kCount},
                            {"step_share", "Share of step time", Share(st.in_steps_ns, st.step_time_ns), Unit::kFraction}}});
}

void LayoutSection(AnalysisResults& in, Section* s) {
  const LayoutResult& r = in.Get(kLayout);
  s->Add(render::KeyValues{
      {{"conversions", "Conversions", Int(r.count), Unit::kCount},
       {"conversion_ns", "Time", Int(r.conversion_ns), Unit::kNs},
       {"share", r.device ? "Share of kernel time" : "Share of top-level CPU op time",
        Share(r.conversion_ns, r.denominator_ns), Unit::kFraction}}});
  if (r.groups.empty()) return;
  Table t{"groups", "", {{"count", "Count", Unit::kCount}, {"total_ns", "Total", Unit::kNs},
                         {"trigger", "Triggered by"}, {"op", "Op"}}, {}, ""};
  for (const ConversionGroup& g : r.groups) {
    t.rows.push_back(
        {Int(g.count), Int(g.total_ns), StrValue(g.trigger.empty() ? "(top level)" : g.trigger), StrValue(g.op)});
  }
  s->Add(std::move(t));
}

void FusionSection(AnalysisResults& in, Section* s) {
  const FusionResult& r = in.Get(kFusion);
  s->Add(render::KeyValues{
      {{"scope", "Ops", StrValue(r.device ? "kernels" : "top-level CPU ops")},
       {"ops", "Count", Int(r.op_count), Unit::kCount},
       {"op_time_ns", "Time", Int(r.op_time_ns), Unit::kNs},
       {"short_ops", "Short ops (share of the time)", Share(r.short_op_ns, r.op_time_ns), Unit::kFraction},
       {"covered", "Top candidates cover", Share(r.covered_ns, r.op_time_ns), Unit::kFraction}}});
  if (r.top.empty()) return;
  Table t{"candidates", "Top fusion candidates",
          {{"occurrences", "Occurrences", Unit::kCount}, {"total_ns", "Total", Unit::kNs},
           {"boundaries_removed", "Launches/dispatches removed", Unit::kCount}, {"gap_ns", "Gaps removed", Unit::kNs},
           {"traffic_bytes", "Intermediate traffic (~)", Unit::kBytes}, {"sequence", "Sequence"}},
          {}, ""};
  for (const FusionCandidate& c : r.top) {
    t.rows.push_back({Int(c.occurrences), Int(c.total_ns), Int(c.boundaries_removed), Int(c.gap_ns),
                      c.has_shapes ? Value::Number(c.intermediate_bytes) : Value::Null(),
                      StrValue(DescribeSequence(in.trace(), c))});
  }
  s->Add(std::move(t));
}

void LongTailSection(AnalysisResults& in, Section* s) {
  const LongTailResult& r = in.Get(kLongTail);
  if (r.ops.empty()) return;
  Table t{"ops", "", {{"count", "n", Unit::kCount}, {"p50_ns", "p50", Unit::kNs}, {"p90_ns", "p90", Unit::kNs},
                      {"p99_ns", "p99", Unit::kNs}, {"max_ns", "Max", Unit::kNs},
                      {"tail_count", "Beyond 3x median", Unit::kCount}, {"tail_share", "Tail share of its time", Unit::kFraction},
                      {"tail_dominated", "Tail-dominated"}, {"qualifies", "Past count/time minimums"}, {"op", "Op"},
                      {"shape", "Shape"}},
          {}, ""};
  const size_t n = std::min<size_t>(10, r.ops.size());
  for (size_t i = 0; i < n; ++i) {
    const OpTail& op = r.ops[i];
    t.rows.push_back({Int(op.count), Ns(op.p50_ns), Ns(op.p90_ns), Ns(op.p99_ns), Int(op.max_ns), Int(op.tail_count),
                      Value::Number(op.tail_share), Value::Bool(op.tail_share > kTailDominatedShare),
                      Value::Bool(op.qualifies), StrValue(in.trace().Str(op.name)),
                      StrValue(OpTailShape(in.trace(), r, op))});
  }
  if (r.ops.size() > n) t.note = std::to_string(r.ops.size() - n) + " more ops not shown";
  // The population the figures are over (a count here can be below
  // summary's: instances outside the window are left out).
  const AnalysisWindow& w = in.Get(kWindow);
  const std::string what = r.device ? "device activities" : "CPU ops";
  t.title = r.on_device_periods ? "Instances of " + what + " that start inside the " + std::to_string(w.periods) +
                                      " device periods of the steady steps (the device runs behind the host); " +
                                      std::to_string(r.outside_window) +
                                      " start outside them (warm-up, or the queue the trace starts with)"
            : w.steps > 0 ? "Instances of " + what + " that start inside the " + std::to_string(w.steps) +
                                " steady steps' spans; " + std::to_string(r.outside_window) +
                                " start outside them (warm-up, between steps, or device work running past its step)"
                          : "Instances of " + what + " in the steady-state time of the trace; " +
                                std::to_string(r.outside_window) + " start outside it";
  s->Add(std::move(t));
}

void StepsSection(AnalysisResults& in, Section* s) {
  const Trace& trace = in.trace();
  const StepStats& st = in.Get(kSteps);
  if (st.count == 0) {
    s->Add(Paragraph{"No steps."});
    return;
  }
  s->Add(render::KeyValues{{{"count", "Steps", Int(st.count), Unit::kCount}, {"mean_ns", "Mean", Ns(st.mean_ns), Unit::kNs},
                            {"stddev_ns", "Stddev", Ns(st.stddev_ns), Unit::kNs}, {"p50_ns", "p50", Ns(st.p50_ns), Unit::kNs},
                            {"p99_ns", "p99", Ns(st.p99_ns), Unit::kNs}, {"min_ns", "Min", Int(st.min_ns), Unit::kNs},
                            {"max_ns", "Max", Int(st.max_ns), Unit::kNs}}});
  if (st.fast_mode) {
    s->Add(render::KeyValues{{{"typical_ns", "Typical", Ns(st.typical_ns), Unit::kNs,
                               "most steps are slow: the fastest quarter's median, under half the median, is the "
                               "step the slow ones are measured from (step_time_excess_ns = mean - typical)"}}});
  }
  // Timeline steps: which reading the figures above are (StepTimeBase), and
  // both readings' means (src/analysis/common/steps.h).
  if (st.host_count > 0) {
    const bool by_period = st.base == StepTimeBase::kDevicePeriod;
    s->Add(render::KeyValues{
        {{"base", "Base", StrValue(StepTimeBaseName(st.base)), Unit::kNone,
          by_period ? "the device runs behind the host: the steps above are device periods (end of the previous "
                      "step's device work to the end of its own; a rank's first step has none)"
                    : "each step's recorded host span"},
         {"host_steps", "Host spans", Int(static_cast<int64_t>(st.host_count)), Unit::kCount},
         {"host_mean_ns", "Host span mean", Ns(st.host_mean_ns), Unit::kNs},
         {"periods", "Device periods", Int(static_cast<int64_t>(st.period_count)), Unit::kCount},
         {"period_mean_ns", "Device period mean", st.period_count > 0 ? Ns(st.period_mean_ns) : Value(), Unit::kNs}}});
  }
  if (st.slowest.empty()) return;
  Table t{"slowest",
          "Slowest steps and the ops that differ from the median step",
          {{"step", "Step"},
           {"step_ns", st.base == StepTimeBase::kDevicePeriod ? "Step time (device period)" : "Step time", Unit::kNs},
           {"op_ns", "Op time in the step", Unit::kNs},
           {"median_ns", "Median step's", Unit::kNs},
           {"op", "Op"}},
          {},
          ""};
  // Several ranks' steps (a multi-rank input): the same step number on
  // every rank, so each row names its rank.
  bool ranks = false;
  for (size_t i = 1; i < trace.steps.size() && !ranks; ++i) ranks = trace.steps.rank[i] != trace.steps.rank[0];
  if (ranks) t.columns.insert(t.columns.begin(), {"rank", "Rank"});
  for (const SlowStep& slow : st.slowest) {
    Value name = StrValue(trace.Str(trace.steps.name[slow.step]));
    auto add = [&](std::vector<Value> row) {
      if (ranks) {
        const int32_t rank = trace.steps.rank[slow.step];
        row.insert(row.begin(), rank == kNoRank ? Value::Null() : Value::Int(rank));
      }
      t.rows.push_back(std::move(row));
    };
    if (slow.differing_ops.empty()) add({name, Int(slow.dur_ns), Value(), Value(), Value()});
    for (const StepDiffOp& d : slow.differing_ops) {
      add({name, Int(slow.dur_ns), Int(d.step_total_ns), Ns(d.median_total_ns), StrValue(trace.Str(d.name))});
    }
  }
  s->Add(std::move(t));
}

void MemorySection(AnalysisResults& in, Section* s) {
  const Trace& trace = in.trace();
  const MemoryResult& r = in.Get(kMemory);
  if (r.devices.empty()) {
    // [memory] events with Bytes only: say so, not that there are none.
    std::string why = r.bytes_only_events > 0 ? NoMemoryPeakReason(r) : std::string("no [memory] events");
    why[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(why[0])));
    s->Add(Paragraph{why + "."});
    return;
  }
  Table t{"devices", "", {{"device_type", "Device type"}, {"device_id", "Id"}, {"peak_allocated", "Peak allocated", Unit::kBytes},
                          {"peak_ts_ns", "At ts (ns)"}, {"peak_reserved", "Peak reserved", Unit::kBytes},
                          {"events", "Events", Unit::kCount}, {"during", "During"}},
          {}, ""};
  for (const MemoryPeak& p : r.devices) {
    t.rows.push_back(
        {Int(p.device_type), Int(p.device_id), Value::Number(p.peak_allocated), Int(p.peak_allocated_ts_ns),
         Value::Number(p.peak_reserved), Int(p.events),
         p.peak_allocated_op == kNoSlice ? Value() : StrValue(trace.Str(trace.slices.name[p.peak_allocated_op]))});
  }
  s->Add(std::move(t));
}

void PipelineSection(AnalysisResults& in, Section* s) {
  const PipelineResult& r = in.Get(kPipeline);
  if (r.stages.empty()) {
    s->Add(Paragraph{"No stage spans (stage:<name>, node:<name>, pipeline/<name>)."});
    return;
  }
  Table t{"stages", "", {{"stage", "Stage"}, {"latency_share", "Share of pipeline time", Unit::kFraction},
                         {"instances", "Instances", Unit::kCount}, {"waiting", "Waiting", Unit::kFraction},
                         {"mean_work_ns", "Mean work", Unit::kNs}},
          {}, ""};
  for (const PipelineStage& st : r.stages) {
    t.rows.push_back({StrValue(st.name), Value::Number(st.latency_share), Int(st.instances),
                      Share(st.waiting_ns, st.total_ns), Ns(st.MeanWorkingNs())});
  }
  s->Add(std::move(t));
}

void KernelsSection(AnalysisResults& in, Section* s) {
  const KernelClassResult& r = in.Get(kKernelClasses);
  if (r.device_time_ns <= 0) return;
  Table classes{"classes", "Device time by kernel class",
                {{"class", "Class"}, {"time_ns", "Time", Unit::kNs}, {"share", "Share of device time", Unit::kFraction},
                 {"kernels", "Kernels", Unit::kCount}},
                {}, ""};
  for (const KernelClassTotal& t : r.classes) {
    classes.rows.push_back(
        {StrValue(KernelClassName(t.kernel_class)), Int(t.time_ns), Share(t.time_ns, r.device_time_ns), Int(t.count)});
  }
  s->Add(std::move(classes));
  constexpr size_t kRegionsShown = 5;
  Table regions{"compiled_regions", "Compiled regions (torch.compile), by kernel time",
                {{"instances", "Instances", Unit::kCount}, {"kernels", "Kernels", Unit::kCount},
                 {"triton_kernels", "Triton kernels", Unit::kCount}, {"kernel_time_ns", "Kernel time", Unit::kNs},
                 {"region", "Region"}},
                {}, ""};
  for (size_t i = 0; i < r.regions.size() && i < kRegionsShown; ++i) {
    const CompiledRegionTotal& g = r.regions[i];
    if (g.kernels == 0) break;  // by kernel time: the rest launched none either
    regions.rows.push_back(
        {Int(g.instances), Int(g.kernels), Int(g.triton_kernels), Int(g.kernel_time_ns), StrValue(g.name)});
  }
  if (!regions.rows.empty()) s->Add(std::move(regions));
  if (r.compiled_region_entries > 0 || r.dynamo_cache_lookups > 0) {
    s->Add(render::KeyValues{{{"compiled_region_entries", "torch.compile region entries", Int(r.compiled_region_entries),
                               Unit::kCount},
                              {"dynamo_cache_lookups", "Dynamo cache lookups", Int(r.dynamo_cache_lookups), Unit::kCount}}});
  }
}

void LlmSection(AnalysisResults& in, Section* s) {
  const LlmPhasesResult& r = in.Get(kLlmPhases);
  if (r.source.empty()) {
    s->Add(Paragraph{"No prefill/decode annotations (SGLang step[...], vLLM execute_...) and no attention kernel that "
                     "names its phase."});
    return;
  }
  s->Add(render::KeyValues{{{"source", "Phases from", StrValue(r.source)}}});
  // A CPU run has no device work: its steps' top-level torch ops stand in
  // for it (the shares are of their time), and host time is the wall time.
  bool cpu = true;
  for (const LlmPhaseTotals& ph : r.phases) cpu &= ph.steps == 0 || ph.device_ns == 0;
  for (const LlmPhaseTotals& ph : r.phases) cpu &= ph.steps == 0 || ph.host_op_ns > 0;
  Table t{"phases",
          "",
          {{"phase", "Phase"},
           {"steps", "Steps", Unit::kCount},
           {"wall_ns", "Wall", Unit::kNs},
           cpu ? render::Column{"host_op_ns", "Ops", Unit::kNs} : render::Column{"device_ns", "Device", Unit::kNs}},
          {},
          cpu ? "CPU run (no device work): ops are the steps' top-level torch ops, work shares are of their time; "
                "host: the step's wall time; wall per token: the phase's wall time over its tokens (its inverse "
                "throughput), wall per step: a decode step's time is each running request's time per token"
              : "Work shares are of the phase's device time; host and held: the step's wall time without busy "
                "device time, split as the critical path splits it: held while the device held work already "
                "launched (idle_other: a faster host would not shorten it), host the rest (host work, launch and "
                "sync calls); wall per token: the phase's wall time over its tokens (its inverse throughput), wall "
                "per step: a decode step's time is each running request's time per token"};
  // A CPU run has no collectives among its ops: no communication column
  // (always 0.0%; the table ran past the page's width).
  auto shown = [&](size_t w) { return !cpu || static_cast<LlmWork>(w) != LlmWork::kCommunication; };
  for (size_t w = 0; w < kLlmWorkCount; ++w) {
    std::string work = LlmWorkName(static_cast<LlmWork>(w));
    if (shown(w)) t.columns.push_back({work, work, Unit::kFraction});
  }
  t.columns.push_back({"host_ns", "Host", Unit::kNs});
  if (!cpu) t.columns.push_back({"device_held_ns", "Device held", Unit::kNs});
  t.columns.push_back({"tokens", "Tokens", Unit::kCount});
  t.columns.push_back({"wall_per_token_ns", "Wall per token", Unit::kNs});
  t.columns.push_back({"wall_per_step_ns", "Wall per step", Unit::kNs});
  t.columns.push_back({"requests", "Requests in steps", Unit::kCount});
  for (size_t p = 0; p < kLlmPhaseCount; ++p) {
    const LlmPhaseTotals& ph = r.phases[p];
    if (ph.steps == 0) continue;
    std::vector<Value>& row = t.rows.emplace_back();
    row = {StrValue(LlmPhaseName(static_cast<LlmPhase>(p))), Int(ph.steps), Int(ph.wall_ns),
           Int(cpu ? ph.host_op_ns : ph.device_ns)};
    for (size_t w = 0; w < kLlmWorkCount; ++w) {
      if (!shown(w)) continue;
      row.push_back(cpu ? Share(ph.host_op_work_ns[w], ph.host_op_ns) : Share(ph.work_ns[w], ph.device_ns));
    }
    const bool tokens = ph.steps_with_tokens == ph.steps && ph.tokens > 0;
    row.push_back(Int(ph.host_ns));
    if (!cpu) row.push_back(Int(ph.device_held_ns));
    row.push_back(tokens ? Int(ph.tokens) : Value());
    row.push_back(tokens ? Value::Number(static_cast<double>(ph.wall_ns) / static_cast<double>(ph.tokens)) : Value());
    // A decode step's time is each running request's time per token; per
    // token above is the phase's inverse throughput.
    row.push_back(Value::Number(static_cast<double>(ph.wall_ns) / static_cast<double>(ph.steps)));
    row.push_back(ph.requests > 0 ? Int(ph.requests) : Value());
  }
  if (!t.rows.empty()) s->Add(std::move(t));
  Table attention{"attention_families", "Attention kernels by the phase their family serves",
                  {{"phase", "Phase"}, {"kernels", "Kernels", Unit::kCount}, {"time_ns", "Time", Unit::kNs}}, {}, ""};
  for (size_t p = 0; p < 2; ++p) {
    if (r.attention_family_kernels[p] == 0) continue;
    attention.rows.push_back({StrValue(LlmPhaseName(static_cast<LlmPhase>(p))), Int(r.attention_family_kernels[p]),
                              Int(r.attention_family_ns[p])});
  }
  if (!attention.rows.empty()) s->Add(std::move(attention));
}

// The attribution tree's own document (the one `aiprof report` embeds).
void AttributionSection(AnalysisResults& in, Section* s) {
  render::Document doc = AttributionToDocument(in.trace(), in.Get(kAttribution));
  for (render::Section& sub : doc.sections) s->sections.push_back(std::move(sub));
}

// Counts, where FLOPs and bytes came from, the device, the ten longest rows.
void RooflineSection(AnalysisResults& in, Section* s) {
  const RooflineResult& r = in.Get(kRoofline).result;
  render::KeyValues& kv = s->Add(render::KeyValues{
      {{"host_ops", "Host tensor ops with a FLOP model", Int(r.ops - r.device_ops), Unit::kCount},
       {"ops_without_shapes", "Without usable shapes", Int(r.ops_without_shapes), Unit::kCount}}});
  if (r.device_time) {
    kv.items.push_back({"ops_without_time", "That launched no kernel", Int(r.ops_without_time), Unit::kCount});
    kv.items.push_back({"ops_on_device_tasks", "Counted as their device tasks", Int(r.ops_on_device_tasks), Unit::kCount});
  }
  kv.items.push_back({"time_source", "Host time from", StrValue(r.device_time ? "device kernels" : "host ops")});
  if (r.device) {
    kv.items.push_back({"device", "Device", StrValue(r.device->name)});
    kv.items.push_back({"memory_bandwidth", "Memory bandwidth", Value::Number(r.device->memory_bandwidth_bytes_per_second),
                        Unit::kBytesPerSecond});
  } else {
    kv.items.push_back({"device", "Device peaks", StrValue("none: " + in.Get(kRoofline).problem)});
  }
  s->Add(Paragraph{"Host FLOPs and bytes are estimates from shapes."});
  for (std::string& line : DescribeDeviceTasks(r)) s->Add(Paragraph{std::move(line)});
  if (r.rows.empty()) return;
  Table t{"rows", "Longest ops", {{"precision", "Precision"}, {"count", "Count", Unit::kCount}, {"time_ns", "Time", Unit::kNs},
                                  {"intensity", "FLOP/byte"}, {"flops_per_second", "Achieved", Unit::kFlopsPerSecond},
                                  {"bytes_per_second", "Bandwidth", Unit::kBytesPerSecond}, {"bytes_from", "Bytes from"},
                                  {"bound", "Bound"}, {"of_attainable", "Of attainable", Unit::kFraction}, {"op", "Op"}},
          {}, ""};
  const DevicePeaks* d = r.device ? &*r.device : nullptr;
  auto opt = [](const std::optional<double>& v) { return v ? Value::Number(*v) : Value(); };
  const size_t n = std::min<size_t>(10, r.rows.size());
  for (size_t i = 0; i < n; ++i) {
    const RooflineRow& row = r.rows[i];
    RooflinePoint p = EvaluateRow(row, d);
    t.rows.push_back({StrValue(PrecisionName(row.precision)), Int(row.count), Int(row.time_ns),
                      opt(p.arithmetic_intensity_flops_per_byte), opt(p.achieved_flops_per_second),
                      opt(p.achieved_bytes_per_second), StrValue(BytesSourceName(row.bytes_source)),
                      StrValue(BoundName(p.bound)), opt(p.ai_utilization), StrValue(row.name)});
  }
  if (r.rows.size() > n) t.note = std::to_string(r.rows.size() - n) + " more ops not shown";
  s->Add(std::move(t));
}

Value Rank(int32_t rank) { return rank == kNoRank ? Value::Null() : Value::Int(rank); }
// The profiler's own figures are -1 when its file is absent.
Value Known(int64_t ns) { return ns >= 0 ? Value::Int(ns) : Value(); }

void CollectiveTypes(const CollectiveStats& st, Section* s) {
  if (st.by_type.empty()) return;
  Table t{"types",
          "Time per collective type",
          {{"rank", "Rank"},
           {"type", "Type"},
           {"count", "Count", Unit::kCount},
           {"total_ns", "Total", Unit::kNs},
           {"share", "Share of the rank's collective time", Unit::kFraction},
           {"max_ns", "Longest", Unit::kNs},
           {"sized", "Sized", Unit::kCount},
           {"bytes", "Bytes", Unit::kBytes},
           {"algbw", "Algorithm bandwidth", Unit::kBytesPerSecond},
           {"busbw", "Bus bandwidth", Unit::kBytesPerSecond},
           {"group_size", "Group"}},
          {},
          ""};
  // Each row is one rank's: its share is of that rank's collective time.
  std::map<int32_t, int64_t> rank_total_ns;
  for (const CollectiveTypeStats& c : st.by_type) rank_total_ns[c.rank] += c.total_ns;
  for (const CollectiveTypeStats& c : st.by_type) {
    const bool sized = c.sized > 0, group = sized && c.group_size > 0;
    t.rows.push_back(
        {Rank(c.rank), StrValue(CollectiveTypeName(c.type)), Int(c.count), Int(c.total_ns),
         Share(c.total_ns, rank_total_ns[c.rank]), Int(c.max_ns), Int(c.sized),
         sized ? Value::Number(c.bytes) : Value(), sized ? Value::Number(c.AlgBandwidthBytesPerSecond()) : Value(),
         group ? Value::Number(c.BusBandwidthBytesPerSecond()) : Value(), group ? Int(c.group_size) : Value()});
  }
  s->Add(std::move(t));
}

void CollectiveSteps(const CollectiveStats& st, Section* s) {
  if (st.steps.empty()) return;
  Table t{"steps", "Communication per step (first " + std::to_string(kStepLinesPerRank) + " steps of each rank)",
          {{"rank", "Rank"}, {"step", "Step"}, {"step_ns", "Step", Unit::kNs}, {"comm_ns", "Communication", Unit::kNs},
           {"exposed_ns", "Exposed", Unit::kNs}, {"exposed_share", "Exposed share of the step", Unit::kFraction},
           {"profiler_comm_ns", "step_trace_time.csv Communication", Unit::kNs},
           {"profiler_exposed_ns", "step_trace_time.csv Not Overlapped", Unit::kNs}},
          {}, ""};
  // Where the device runs behind the host, a step with a device period is
  // measured over it (as comm_exposed_ns), a rank's first step over its
  // host span; a column says which.
  bool periods = false;
  for (const StepCommunication& c : st.steps) periods |= c.on_device_period;
  if (periods) t.columns.insert(t.columns.begin() + 3, render::Column{"over", "Measured over"});
  std::map<int32_t, size_t> shown;
  size_t hidden = 0;
  for (const StepCommunication& c : st.steps) {
    if (++shown[c.rank] > kStepLinesPerRank) {
      ++hidden;
      continue;
    }
    std::vector<Value> row{Rank(c.rank),
                           Int(c.number),
                           Int(c.step_ns),
                           Known(c.comm_ns),
                           Known(c.exposed_ns),
                           c.comm_ns >= 0 ? Share(c.exposed_ns, c.step_ns) : Value(),
                           Known(c.profiler_comm_ns),
                           Known(c.profiler_exposed_ns)};
    if (periods) row.insert(row.begin() + 3, StrValue(c.on_device_period ? "device period" : "host span"));
    t.rows.push_back(std::move(row));
  }
  if (hidden > 0) t.note = std::to_string(hidden) + " more steps not shown";
  if (periods) {
    if (!t.note.empty()) t.note += "; ";
    t.note +=
        "the device runs behind the host: a step is measured over its device period (the previous step's "
        "device work end to its own), a rank's first step, which has none, over its host span";
  }
  s->Add(std::move(t));
}

std::string SignedNs(int64_t ns) {
  return (ns < 0 ? "−" : "+") + render::FormatQuantity(static_cast<double>(ns < 0 ? -ns : ns), Unit::kNs);
}

// The clocks' alignment by collective ends when the traces' own clocks
// disagreed (clock_alignment.h): the spreads and each rank's shift ...
void ClockAlignmentItems(const CrossRankResult& c, render::KeyValues* kv) {
  if (c.aligned_from_collectives) {
    kv->items.push_back({"raw_end_spread_p50_ns", "End times on the traces' own clocks (median spread)",
                         Int(c.raw_end_spread_p50_ns), Unit::kNs});
    std::string offsets = "aligned by collective ends:";
    for (const RankCommunication& r : c.ranks) {
      if (r.matched > 0 || r.incomplete > 0)
        offsets += " rank " + std::to_string(r.rank) + " " + SignedNs(-r.clock_offset_ns) + ",";
    }
    offsets.pop_back();
    kv->items.push_back({"clock_alignment", "Clocks", StrValue(offsets)});
  } else if (!c.clocks_agree && c.aligned_end_spread_p50_ns >= 0) {
    kv->items.push_back({"aligned_end_spread_p50_ns", "End times on clocks aligned by collective ends (median spread)",
                         Int(c.aligned_end_spread_p50_ns), Unit::kNs});
  }
}

// ... and what it assumes, or why the clocks are not trusted.
void ClockAlignmentText(const CrossRankResult& c, Section* s) {
  if (c.aligned_from_collectives) {
    s->Add(Paragraph{
        "Clocks aligned by the collectives' ends: on the traces' own clocks the ranks' ends of the same collective "
        "were a median " +
        render::FormatQuantity(static_cast<double>(c.raw_end_spread_p50_ns), Unit::kNs) + " apart (" +
        render::FormatQuantity(c.raw_end_spread_share, Unit::kFraction) +
        " of the median collective's duration), so each rank's times were moved by the amount above (the median, over "
        "its "
        "completed collectives, of its end minus the median rank's end) and wait, lateness, transfer and the "
        "slowest rank are on the aligned clocks. This assumes a collective ends at the same moment on every rank: "
        "where ranks leave it at different times (a broadcast's root, gloo's CPU all-reduce, point-to-point "
        "transfers) that difference is taken for a clock offset and moves the wait and lateness with it."});
    return;
  }
  if (c.clocks_agree) return;
  std::string text =
      "Caution: that spread is " + render::FormatQuantity(c.end_spread_share, Unit::kFraction) +
      " of the median collective's duration, so the ranks' clocks (or the pairing of collectives) disagree";
  if (c.aligned_end_spread_p50_ns >= 0) {
    text += ", and aligning the clocks by the collectives' ends left " +
            render::FormatQuantity(static_cast<double>(c.aligned_end_spread_p50_ns), Unit::kNs) + " (" +
            render::FormatQuantity(c.aligned_end_spread_share, Unit::kFraction) +
            "): the collectives do not end together on every rank, or are not paired one to one";
  }
  s->Add(Paragraph{text + ". Wait and lateness are not trusted."});
}

void CrossRanks(const CrossRankResult& c, Section* s) {
  size_t with_matches = 0;
  for (const RankCommunication& r : c.ranks) with_matches += r.matched > 0;
  if (with_matches >= 2) {
    render::KeyValues kv{
        {{"ranks_matched", "Ranks with matched collectives", Int(with_matches), Unit::kCount},
         {"matched", "Collectives matched", Int(c.matched), Unit::kCount},
         {"unmatched", "Slices unmatched", Int(c.unmatched), Unit::kCount},
         {"incomplete", "Incomplete (not completed on every rank)", Int(c.incomplete), Unit::kCount},
         {"end_spread_p50_ns", "End times agree within (median spread)", Int(c.end_spread_p50_ns), Unit::kNs},
         {"clocks_agree", "Clocks agree", Value::Bool(c.clocks_agree)}}};
    ClockAlignmentItems(c, &kv);
    s->Add(std::move(kv));
    ClockAlignmentText(c, s);
    if (c.keys_by_position > 0) {
      s->Add(Paragraph{"Paired by position over the whole trace, not within steps, for " +
                       std::to_string(c.keys_by_position) +
                       " collective kind(s): a rank holding them numbers no step (ProfilerStep#N)."});
    }
    for (const RankCommunication& r : c.ranks) {
      if (r.step_shift == 0) continue;
      const std::string n = std::to_string(r.step_shift < 0 ? -r.step_shift : r.step_shift);
      s->Add(Paragraph{"Step numbers: rank " + std::to_string(r.rank) + "'s ProfilerStep numbers are " + n +
                       (r.step_shift > 0 ? " behind" : " ahead of") + " the other ranks' (its profiler started " + n +
                       (r.step_shift > 0 ? " step(s) later" : " step(s) earlier") +
                       "): its collectives of step N are paired with the others' of step N" +
                       (r.step_shift > 0 ? " + " : " − ") + n + ", the same iteration (their ends agree so)."});
    }
    if (c.incomplete > 0) {
      s->Add(Paragraph{std::to_string(c.incomplete) +
                       " matched collective(s) did not complete on every rank: a rank ended before the last one "
                       "arrived (a peer failed in it); their time is in no rank's wait, lateness or transfer."});
    }
  }
  Table t{"ranks", "Per rank (wait for later ranks, lateness, transfer once all are in)",
          {{"rank", "Rank"}, {"matched", "Matched", Unit::kCount}, {"wait_ns", "Waits", Unit::kNs},
           {"lateness_ns", "Late", Unit::kNs}, {"transfer_ns", "Transfer", Unit::kNs},
           {"profiler_elapse_ns", "communication.json elapse", Unit::kNs}, {"profiler_wait_ns", "wait", Unit::kNs},
           {"profiler_transit_ns", "transit", Unit::kNs}, {"profiler_sync_ns", "synchronization", Unit::kNs},
           {"profiler_idle_ns", "idle", Unit::kNs}},
          {}, ""};
  // Aligned clocks: each rank's shift (−clock_offset_ns), exact, beside its figures.
  if (c.aligned_from_collectives) {
    t.columns.insert(t.columns.begin() + 2, render::Column{"clock_shift_ns", "Clock moved by", Unit::kNs});
  }
  for (const RankCommunication& r : c.ranks) {
    if (r.matched == 0 && r.profiler_elapse_ns < 0) continue;
    const bool m = r.matched > 0;
    std::vector<Value> row{Rank(r.rank),           Int(r.matched),
                           m ? Int(r.wait_ns) : Value(), m ? Int(r.lateness_ns) : Value(),
                           m ? Int(r.transfer_ns) : Value(), Known(r.profiler_elapse_ns),
                           Known(r.profiler_wait_ns),    Known(r.profiler_transit_ns),
                           Known(r.profiler_sync_ns),    Known(r.profiler_idle_ns)};
    if (c.aligned_from_collectives) row.insert(row.begin() + 2, Int(-r.clock_offset_ns));
    t.rows.push_back(std::move(row));
  }
  if (!t.rows.empty()) s->Add(std::move(t));
  if (!c.slow_rank && c.slow_rank_tied > 1 && c.clocks_agree) {
    s->Add(Paragraph{std::to_string(c.slow_rank_tied) +
                     " ranks share the largest lateness exactly: no single rank is slowest."});
  }
  if (c.slow_rank && c.clocks_agree) {
    const SlowRank& sr = *c.slow_rank;
    render::KeyValues& kv =
        s->Add(render::KeyValues{{{"slowest_rank", "Slowest to arrive", Rank(sr.rank)},
                                  {"excess_ns", "Later than the median of the others", Int(sr.excess_ns), Unit::kNs},
                                  {"excess_ratio", "Of its device span",
                                   sr.excess_ratio ? Value::Number(*sr.excess_ratio) : Value(), Unit::kFraction}}});
    if (sr.test.test == OutlierTest::kNone) {
      kv.items.push_back({"outlier_test", "Outlier test", StrValue("none: 2 ranks are too few")});
    } else {
      kv.items.push_back(
          {"outlier_test", "Outlier test", StrValue(sr.test.test == OutlierTest::kDixonQ ? "Dixon's Q" : "z")});
      kv.items.push_back({"statistic", "Statistic", Value::Number(sr.test.statistic)});
      kv.items.push_back({"critical", "Critical value", Value::Number(sr.test.critical)});
      kv.items.push_back({"outlier", "An outlier", Value::Bool(sr.test.outlier)});
    }
  }
}

void Links(const CrossRankResult& c, Section* s) {
  if (c.links.empty()) return;
  size_t judged = 0, slow = 0;
  for (const LinkBandwidth& l : c.links) {
    judged += l.judged;
    slow += l.slow;
  }
  s->Add(render::KeyValues{{{"links", "(rank, link) pairs", Int(c.links.size()), Unit::kCount},
                            {"judged", "Judged", Int(judged), Unit::kCount},
                            {"slow", "Slow (below 80% of their transport's median)", Int(slow), Unit::kCount}}});
  Table t{"links", "Links (slowest first; every slow one, and three more)",
          {{"rank", "Rank"}, {"link", "Link"}, {"transport", "Transport"},
           {"bandwidth", "Bandwidth", Unit::kBytesPerSecond}, {"median", "Transport median", Unit::kBytesPerSecond},
           {"slow", "Slow"}},
          {}, ""};
  size_t listed = 0;
  for (const LinkBandwidth& l : c.links) {
    if (!l.judged || (listed >= 3 && !l.slow)) continue;
    ++listed;
    t.rows.push_back({Rank(l.rank), StrValue(l.link), StrValue(l.transport),
                      Value::Number(l.bandwidth_bytes_per_second), Value::Number(l.transport_median_bytes_per_second),
                      Value::Bool(l.slow)});
  }
  if (!t.rows.empty()) s->Add(std::move(t));
}

std::string RankList(const std::vector<int32_t>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
}

// Collectives that did not complete normally: a wait for a rank not in the
// inputs (stalled), or ranks that arrived after the others had left.
void FailedCollectives(const Trace& trace, const CrossRankResult& c, Section* s) {
  if (c.failed.empty()) return;
  Table t{"failed_collectives",
          "Collectives that did not complete (a peer crashed, hung or came too late)",
          {{"step", "Step"},
           {"collective", "Collective"},
           {"ranks", "Ranks in it"},
           {"waited_ns", "Waited", Unit::kNs},
           {"what", "What"}},
          {},
          ""};
  for (const FailedCollective& f : c.failed) {
    const std::string group = trace.Str(f.group).empty() ? "" : " (" + std::string(trace.Str(f.group)) + ")";
    const std::string what =
        f.stalled ? "every rank present waited in it until it ended, for a rank not in the inputs (it never arrived: "
                    "crashed or hung); a wait, not transfer"
                  : RankList(f.late_ranks) + " arrived after another rank had left it (gave up after a wait)";
    t.rows.push_back({f.step >= 0 ? Int(f.step) : Value(), StrValue(std::string(CollectiveTypeName(f.type)) + group),
                      StrValue(RankList(f.ranks)), Int(f.waited_ns), StrValue(what)});
  }
  if (c.failed_count > c.failed.size()) {
    t.note = "the first " + std::to_string(c.failed.size()) + " of " + std::to_string(c.failed_count) + " listed; ";
  }
  if (c.stalled > 0) {
    t.note += std::to_string(c.stalled) +
              " stalled collective(s) (the last every rank entered, each rank in it at least " +
              render::FormatQuantity(kStalledFactor, Unit::kNone) + "x its usual collective and " +
              render::FormatQuantity(static_cast<double>(kStalledMinNs), Unit::kNs) +
              "): their time is in the ranks' waits for a missing rank below, not in wait, lateness or transfer";
  }
  s->Add(std::move(t));
  render::Table w{"stalled_waits",
                  "Waits for a rank not in the inputs",
                  {{"rank", "Rank"}, {"stalled_ns", "Waited", Unit::kNs}},
                  {},
                  ""};
  for (const RankCommunication& r : c.ranks) {
    if (r.stalled_ns > 0) w.rows.push_back({Rank(r.rank), Int(r.stalled_ns)});
  }
  if (!w.rows.empty()) s->Add(std::move(w));
}

void CommunicationSection(AnalysisResults& in, Section* s) {
  const CommunicationResult& r = in.Get(kCommunication);
  if (r.collective_slices == 0 && r.cross.ranks.empty() && r.cross.links.empty() && r.stats.steps.empty()) {
    s->Add(Paragraph{"No collectives in the trace (no NCCL/RCCL/HCCL kernels or tasks)."});
    return;
  }
  CollectiveTypes(r.stats, s);
  CollectiveSteps(r.stats, s);
  CrossRanks(r.cross, s);
  FailedCollectives(in.trace(), r.cross, s);
  Links(r.cross, s);
}

// Critical path: steps described one by one; slices named as the largest
// on-path consumers.
constexpr size_t kPathStepsShown = 8;
constexpr size_t kPathTopSlices = kPathTopSlicesKept;

// Path time by class as columns (one per class), appended to `t` and `row`.
void ClassColumns(Table* t) {
  for (size_t c = 0; c < kPathClassCount; ++c) {
    std::string name = PathClassName(static_cast<PathClass>(c));
    t->columns.push_back({name + "_ns", name, Unit::kNs});
  }
}

// The analysis' largest on-path consumers (CriticalPathResult::window_top_slices), per step.
Table TopPathSlices(const Trace& trace, const CriticalPathResult& r, double per) {
  Table t{"top_slices", "Largest on-path consumers (own time, per steady step)",
          {{"class", "Class"}, {"per_step_ns", "On the path per step", Unit::kNs}, {"name", "Slice"}}, {}, ""};
  for (size_t k = 0; k < std::min(kPathTopSlices, r.window_top_slices.size()); ++k) {
    const PathSliceTotal& e = r.window_top_slices[k];
    t.rows.push_back(
        {StrValue(PathClassName(e.cls)), Ns(static_cast<double>(e.on_path_ns) / per), StrValue(trace.Str(e.name))});
  }
  return t;
}

Table PathSteps(const Trace& trace, const CriticalPathResult& r) {
  Table t{"steps", "Per step (path time by class)",
          {{"rank", "Rank"}, {"step", "Step"}, {"steady", "Steady"}, {"path_ns", "Path", Unit::kNs},
           {"host_span_ns", "Host span", Unit::kNs}},
          {}, ""};
  ClassColumns(&t);
  for (const char* c : {"waited_rank", "late_ns", "at", "after", "truncated"}) {
    static const std::map<std::string, std::pair<std::string, Unit>> kLabels = {
        {"waited_rank", {"Waited for rank", Unit::kNone}}, {"late_ns", {"Late by", Unit::kNs}},
        {"at", {"At", Unit::kNone}}, {"after", {"After", Unit::kNone}}, {"truncated", {"Walk truncated", Unit::kNone}}};
    const auto& [label, unit] = kLabels.at(c);
    t.columns.push_back({c, label, unit});
  }
  const SliceTable& sl = trace.slices;
  for (size_t k = 0; k < std::min(kPathStepsShown, r.steps.size()); ++k) {
    const StepPath& p = r.steps[k];
    std::vector<Value>& row = t.rows.emplace_back();
    row = {Rank(p.rank), p.number >= 0 ? Int(p.number) : StrValue("trace"), Value::Bool(p.steady), Int(p.length_ns()),
           Int(p.step_dur_ns)};
    for (size_t c = 0; c < kPathClassCount; ++c) row.push_back(Int(p.by_class_ns[c]));
    const bool waited = p.waited_rank != kNoRank;
    row.push_back(waited ? Value::Int(p.waited_rank) : Value());
    row.push_back(waited ? Int(p.waited_late_ns) : Value());
    row.push_back(waited && p.waited_collective != kNoSlice ? StrValue(trace.Str(sl.name[p.waited_collective]))
                                                            : Value());
    row.push_back(waited && p.waited_cause != kNoSlice ? StrValue(trace.Str(sl.name[p.waited_cause])) : Value());
    row.push_back(Value::Bool(p.truncated));
  }
  if (r.steps.size() > kPathStepsShown) t.note = std::to_string(r.steps.size() - kPathStepsShown) + " more steps";
  return t;
}

void CriticalPathSection(AnalysisResults& in, Section* s) {
  const CriticalPathResult& r = in.Get(kCriticalPath);
  if (r.steps.empty()) {
    s->Add(Paragraph{"No steps or activity to walk."});
    return;
  }
  const DependencyGraph& g = r.graph;
  render::KeyValues& edges = s->Add(render::KeyValues{});
  for (size_t k = 1; k < kDepKindCount; ++k) {
    std::string kind = DepKindName(static_cast<DepKind>(k));
    edges.items.push_back({kind + "_edges", "Dependency edges: " + kind, Int(g.edges[k]), Unit::kCount});
  }
  edges.items.push_back({"cross_rank", "Collectives joined across ranks", Value::Bool(g.cross_rank)});
  const double per = std::max<double>(1.0, static_cast<double>(r.window_steps));
  s->Add(render::KeyValues{{{"steady_steps", "Steady steps", Int(r.window_steps), Unit::kCount},
                            {"path_ns", "Critical path per steady step (step start to the end of the last work it launched)",
                             Ns(static_cast<double>(r.window_path_ns) / per), Unit::kNs}}});
  Table comp{"composition", "Composition per steady step",
             {{"class", "Class"}, {"per_step_ns", "Per step", Unit::kNs}, {"share", "Share of the path", Unit::kFraction}},
             {}, ""};
  for (size_t c = 0; c < kPathClassCount; ++c) {
    if (r.window_by_class_ns[c] == 0) continue;
    comp.rows.push_back({StrValue(PathClassName(static_cast<PathClass>(c))),
                         Ns(static_cast<double>(r.window_by_class_ns[c]) / per),
                         Share(r.window_by_class_ns[c], r.window_path_ns)});
  }
  s->Add(std::move(comp));
  // Stream waits the trace does not resolve: the idle they leave is on the
  // path as idle_other, and what the stream waited for may show as hidden.
  if (g.wait_calls_unresolved > 0) {
    const std::string min_idle = render::FormatQuantity(static_cast<double>(kMinStreamIdleGapNs), Unit::kNs);
    s->Add(render::KeyValues{
        {{"wait_calls",
          "Stream wait calls (runtime or driver calls whose name contains " + std::string(kStreamWaitCallMark) +
              ": cuda, hip, cu, aclrt)",
          Int(g.wait_calls), Unit::kCount},
         {"wait_calls_unresolved", "Stream wait calls no record resolves (which stream waited for what)",
          Int(g.wait_calls_unresolved), Unit::kCount},
         {"waits_bound_by_timing", "Stream waits bound to a collective by timing (stream_wait edges)",
          Int(g.waits_bound_by_timing), Unit::kCount},
         {"device_idle_unexplained_ns",
          "Stream idle on the path no recorded dependency explains, per steady step (idle of at least " + min_idle +
              " from the later of the stream's previous work's end and the launch call's end)",
          Ns(static_cast<double>(r.window_device_idle_unexplained_ns) / per), Unit::kNs}}});
    s->Add(Paragraph{
        "The trace records " + std::to_string(g.wait_calls_unresolved) +
        " stream wait calls without the event record or CUPTI record that says which stream waited for which "
        "work. A wait is bound to a collective only when a stream, handed its next work before, idled at least " +
        min_idle + " until a collective on another stream of its device ended (within " +
        render::FormatQuantity(static_cast<double>(kCollectiveWaitMatchNs), Unit::kNs) +
        " of the work's start) and an unresolved wait call came between the two launches. The path's remaining "
        "stream idle (above) may be other such waits: work it waited for is not on the path and can show as "
        "hidden below."});
  } else if (r.window_device_idle_unexplained_ns > 0) {
    // No stream waits to blame: the device sat idle with work it had been
    // handed (a graph replay's copy 7.83 ms after its launch returned).
    s->Add(render::KeyValues{
        {{"device_idle_unexplained_ns",
          "Stream idle on the path no recorded dependency explains, per steady step (idle of at least " +
              render::FormatQuantity(static_cast<double>(kMinStreamIdleGapNs), Unit::kNs) +
              " after the stream's previous work, or of at least " +
              render::FormatQuantity(static_cast<double>(kMinLaunchHoldNs), Unit::kNs) +
              " after the launch call returned)",
          Ns(static_cast<double>(r.window_device_idle_unexplained_ns) / per), Unit::kNs}}});
    s->Add(
        Paragraph{"The device held work it had already been handed, and nothing the trace records says why (a stream "
                  "wait, a lock, another process on the device): this idle is part of idle_other above, not "
                  "idle_host_bound, since the host had launched the work; a faster host would not shorten it."});
  }
  Table on{"on_path",
           "Device work on the path, per steady step. Device time, on the path (own), hidden: the step's own work "
           "(launched in the step; unlinked work by its start). Own + earlier + other on the path = the "
           "composition's class",
           {{"work", "Work"},
            {"device_ns", "Device time per step (its own work)", Unit::kNs},
            {"on_path_ns", "On the path (its own work)", Unit::kNs},
            {"on_path_share", "On-path share", Unit::kFraction},
            {"hidden_ns", "Hidden", Unit::kNs},
            {"earlier_ns", "Earlier steps' work on the path", Unit::kNs},
            {"other_ns", "Other work on the path (later or no step, other ranks)", Unit::kNs}},
           {},
           ""};
  int64_t earlier = 0, later = 0, other_rank = 0;
  for (auto [what, c] : {std::pair{"compute", PathClass::kCompute}, std::pair{"copies", PathClass::kCopy},
                         std::pair{"collectives", PathClass::kCollective}}) {
    const size_t k = static_cast<size_t>(c);
    const int64_t on_ns = r.window_own_on_path_ns[k];
    const int64_t total = r.window_device_total_ns[k];
    const int64_t before = r.window_earlier_on_path_ns[k];
    const int64_t other = r.window_later_on_path_ns[k] + r.window_other_rank_on_path_ns[k];
    earlier += before;
    later += r.window_later_on_path_ns[k];
    other_rank += r.window_other_rank_on_path_ns[k];
    if (total <= 0 && before <= 0 && other <= 0) continue;
    on.rows.push_back({StrValue(what), Ns(static_cast<double>(total) / per), Ns(static_cast<double>(on_ns) / per),
                       total > 0 ? Share(on_ns, total) : Value(),
                       Ns(static_cast<double>(std::max<int64_t>(0, total - on_ns)) / per),
                       Ns(static_cast<double>(before) / per), Ns(static_cast<double>(other) / per)});
  }
  // Device work on the path that is not the step's own, said with its
  // figures (per steady step).
  std::vector<std::string> parts;
  if (earlier > 0) {
    parts.push_back(render::FormatQuantity(static_cast<double>(earlier) / per, Unit::kNs) +
                    " launched on its rank before the step began (earlier steps' backlog: the device runs behind "
                    "the host)");
  }
  if (later > 0) {
    parts.push_back(render::FormatQuantity(static_cast<double>(later) / per, Unit::kNs) +
                    " launched on its rank after the step began by no step of its own (after its host span, or "
                    "by no launch call)");
  }
  if (other_rank > 0) {
    parts.push_back(render::FormatQuantity(static_cast<double>(other_rank) / per, Unit::kNs) +
                    " of other ranks (the path crossed to the rank that arrived last at a collective)");
  }
  if (!parts.empty()) {
    on.note = "Besides its own work, each steady step's path runs through device work";
    for (size_t k = 0; k < parts.size(); ++k) {
      on.note += (k == 0 ? " " : k + 1 == parts.size() ? " and " : ", ") + parts[k];
    }
    on.note += ", per step. It is in the composition above, not in the step's own figures.";
  }
  if (!on.rows.empty()) s->Add(std::move(on));
  s->Add(TopPathSlices(in.trace(), r, per));
  s->Add(PathSteps(in.trace(), r));
}

void PageFaultsSection(AnalysisResults& in, Section* s) {
  const PageFaultsResult& r = in.Get(kPageFaults);
  if (!r.has_data) {
    s->Add(Paragraph{r.recording == "off"       ? "Page faults were not recorded (aiprof trace --no-page-faults)."
                     : r.recording == "blocked" ? "Page faults were not recorded: perf_event_open was refused."
                                                : "No page-fault records."});
    return;
  }
  const double per_steps = r.steady_steps > 0 ? static_cast<double>(r.steady_steps) : 1.0;
  render::KeyValues kv{
      {{"faults_per_base", "Minor page faults " + r.base, Value::Number(r.faults_per_base), Unit::kCount},
       {"fault_ns_per_base", "Estimated fault time " + r.base, r.cost_known ? Ns(r.fault_ns_per_base) : Value::Null(),
        Unit::kNs},
       {"share", "Share of the step", r.cost_known && r.base_ns > 0 ? Value::Number(r.share) : Value::Null(),
        Unit::kFraction},
       {"cost_ns", "Cost of one fault", r.cost_known ? Ns(r.cost_ns) : Value::Null(), Unit::kNs},
       {"cost_method", "Cost measured", StrValue(r.cost_method)},
       {"steady_steps", "Steady steps", Int(r.steady_steps), Unit::kCount},
       {"window_faults", "Faults in the window", Int(r.window_faults), Unit::kCount},
       {"total_faults", "Faults in the trace", Int(r.total_faults), Unit::kCount},
       {"period", "Faults per record", Int(r.period), Unit::kCount},
       {"lost_records", "Records lost", Int(r.lost_records), Unit::kCount},
       {"malloc", "Allocator", r.malloc.empty() ? Value::Null() : StrValue(r.malloc)},
       {"malloc_settings", "Allocator settings", r.malloc.empty() ? Value::Null() : StrValue(r.malloc_settings)}}};
  s->Add(std::move(kv));
  if (!r.cost_known) s->Add(Paragraph{"Fault time not estimated: " + r.cost_method + "."});
  if (!r.malloc_note.empty()) s->Add(Paragraph{"Allocator: " + r.malloc_note + "."});
  Table steps{"steps", "Faults per step (the steps' processes)",
              {{"step", "Step", Unit::kCount}, {"start_ns", "Start", Unit::kNs}, {"dur_ns", "Duration", Unit::kNs},
               {"faults", "Faults", Unit::kCount}, {"fault_ns", "Estimated fault time", Unit::kNs},
               {"share", "Share of the step", Unit::kFraction}, {"steady", "Steady"}},
              {}, "Warm-up steps (not steady) are left out of the figures above."};
  for (const PageFaultStep& st : r.steps) {
    const double ns = static_cast<double>(st.faults) * r.cost_ns;
    steps.rows.push_back({Int(st.number), Int(st.start_ns), Int(st.dur_ns), Int(st.faults),
                          r.cost_known ? Ns(ns) : Value::Null(),
                          r.cost_known && st.dur_ns > 0 ? Value::Number(ns / static_cast<double>(st.dur_ns)) : Value::Null(),
                          Value::Bool(st.steady)});
  }
  if (!steps.rows.empty()) s->Add(std::move(steps));
  Table ops{"ops", "Ops that took the faults (outermost and innermost named slice on the faulting thread)",
            {{"faults_per_base", "Faults " + r.base, Unit::kCount}, {"fault_ns_per_base", "Estimated time " + r.base, Unit::kNs},
             {"share_of_faults", "Share of the faults", Unit::kFraction}, {"outer", "Outermost op"}, {"inner", "Innermost op"}},
            {}, ""};
  for (const PageFaultOp& op : r.ops) {
    const double per = static_cast<double>(op.faults) / per_steps;
    ops.rows.push_back(
        {Value::Number(per), r.cost_known ? Ns(per * r.cost_ns) : Value::Null(),
         r.window_faults > 0 ? Value::Number(static_cast<double>(op.faults) / static_cast<double>(r.window_faults))
                             : Value::Null(),
         StrValue(op.outer.empty() ? "(no op)" : op.outer), StrValue(op.inner.empty() ? "(no op)" : op.inner)});
  }
  if (r.ops_total > r.ops.size()) ops.note = std::to_string(r.ops_total - r.ops.size()) + " more op pairs not shown";
  if (!ops.rows.empty()) s->Add(std::move(ops));
}

struct SectionEntry {
  std::string_view name;
  void (*add)(AnalysisResults&, Section*);
};

// One line per analysis (AnalysisNames(), and the window).
constexpr SectionEntry kSections[] = {
    {"window", WindowSection},          {"breakdown", BreakdownSection},
    {"launches", LaunchesSection},      {"memcpy", MemcpySection},
    {"layout", LayoutSection},          {"fusion", FusionSection},
    {"long_tail", LongTailSection},     {"steps", StepsSection},
    {"memory", MemorySection},          {"communication", CommunicationSection},
    {"pipeline", PipelineSection},      {"roofline", RooflineSection},
    {"kernels", KernelsSection},        {"llm", LlmSection},
    {"attribution", AttributionSection}, {"critical_path", CriticalPathSection},
    {"page_faults", PageFaultsSection},
};

}  // namespace

bool AddAnalysisSection(std::string_view name, AnalysisResults& results, Section* section) {
  for (const SectionEntry& e : kSections) {
    if (e.name != name) continue;
    e.add(results, section);
    return true;
  }
  return false;
}

}  // namespace aiprof
