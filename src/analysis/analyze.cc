#include "src/analysis/analyze.h"

#include <algorithm>
#include <chrono>
#include <mutex>

#include "src/analysis/common/text_format.h"
#include "src/base/parallel.h"
#include "src/base/phase_log.h"
#include "src/base/threads.h"
#include "src/analysis/attribution/compute_finding.h"
#include "src/analysis/communication/communication.h"
#include "src/analysis/fusion/fusion_candidates.h"
#include "src/analysis/gaps/idle_gaps.h"
#include "src/analysis/launches/launch_stats.h"
#include "src/analysis/layout/layout_conversions.h"
#include "src/analysis/long_tail/op_tails.h"
#include "src/analysis/memcpy/memcpy_stats.h"
#include "src/analysis/memory/memory_peaks.h"
#include "src/analysis/pipeline/pipeline_stages.h"
#include "src/analysis/roofline/ops_to_roofline.h"
#include "src/analysis/steps/step_stats.h"
#include "src/analysis/window/analysis_window.h"

namespace aiprof {
namespace {

std::string Ns(double ns) { return FormatDurationNs(ns); }
double Share(int64_t a, int64_t b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0; }

std::vector<std::string> DescribeBreakdown(const Trace& trace, const GapsResult& r) {
  std::vector<std::string> out;
  if (r.cpu_only) out.push_back("CPU-only trace: timeline = main thread's cpu_op time");
  for (const TimelineBreakdown& tl : r.timelines) {
    std::string who = tl.device == kHostDevice ? "main thread" : "device " + std::to_string(tl.device);
    if (tl.rank != kNoRank) who = "rank " + std::to_string(tl.rank) + " " + who;
    out.push_back(who + ": span " + Ns(tl.span_ns) + ", busy " + FormatPercent(Share(tl.busy_ns, tl.span_ns)) +
                  " (compute " + FormatPercent(Share(tl.compute_ns, tl.span_ns)) + ", communication " +
                  FormatPercent(Share(tl.comm_ns, tl.span_ns)) + ", memory copy " +
                  FormatPercent(Share(tl.memcpy_ns, tl.span_ns)) + "), idle " +
                  FormatPercent(Share(tl.idle_ns, tl.span_ns)) + "; communication hidden behind compute " +
                  (tl.comm_ns > 0 ? FormatPercent(Share(tl.comm_overlap_ns, tl.comm_ns)) : std::string("n/a")));
    std::string causes = "  idle by cause:";
    for (size_t c = 0; c < kGapCauseCount; ++c) {
      causes += std::string(" ") + GapCauseName(static_cast<GapCause>(c)) + " " + Ns(tl.idle_by_cause_ns[c]);
    }
    out.push_back(causes);
    std::string hist = "  gaps: " + std::to_string(tl.gap_count) + "; histogram";
    const char* labels[kGapBucketCount] = {"<1us", "1-10us", "10-100us", "0.1-1ms", "1-10ms", ">=10ms"};
    for (size_t b = 0; b < kGapBucketCount; ++b) {
      hist += std::string(" ") + labels[b] + ":" + std::to_string(tl.gap_hist_count[b]) + "/" + Ns(tl.gap_hist_ns[b]);
    }
    out.push_back(hist);
    for (const Gap& g : tl.largest_gaps) out.push_back("  " + DescribeGap(trace, tl, g));
  }
  return out;
}

std::vector<std::string> DescribeLaunches(const Trace& trace, const LaunchStats& st) {
  if (st.kernels == 0) {
    auto unmodelled = trace.metadata.find("accelerator_unmodelled");
    if (unmodelled != trace.metadata.end()) {
      return {"no kernels aiprof recognises: the trace holds device events of an accelerator it has no model for (" +
              unmodelled->second + ")"};
    }
    return {"no device kernels (CPU-only trace)"};
  }
  std::vector<std::string> out = {
      std::to_string(st.kernels) + " kernels, " + std::to_string(st.launches) + " linked to a launch call, " +
          std::to_string(st.launches_in_steps) + " launched inside steps",
      "launch delay p50 " + Ns(st.delay_p50_ns) + ", p90 " + Ns(st.delay_p90_ns) + ", max " +
          Ns(static_cast<double>(st.delay_max_ns)),
      "launch cost (median one-by-one launch call) " + Ns(st.launch_cost_ns) +
          "; kernels launched one by one and shorter than that: " + std::to_string(st.short_kernels),
      std::to_string(st.launch_calls) + " launch calls; delays are per call (its first kernel)"};
  if (st.graph_launches > 0) {
    out.push_back("graphs: " + std::to_string(st.graph_launches) + " graph launches replay " +
                  std::to_string(st.graph_kernels) + " kernels; graph launch call " + Ns(st.graph_launch_cost_ns) +
                  " (median); device gap between replays " +
                  (st.graph_gaps > 0 ? Ns(st.graph_gap_p50_ns) + " (median of " + std::to_string(st.graph_gaps) + ")"
                                     : std::string("n/a (fewer than two consecutive replays)")));
  }
  if (st.device_time_ns > 0) {
    out.push_back("op coverage: " + FormatPercent(Share(st.attributed_time_ns, st.device_time_ns)) +
                  " of device-activity time (" + Ns(static_cast<double>(st.device_time_ns)) +
                  ") is attributed to a host op" +
                  (st.graph_kernels > 0 ? "; graph-replayed kernels are tied to no op (the capture trace is not merged)" : ""));
  }
  for (const RuntimeOutlier& o : st.outliers) {
    out.push_back("outlier: " + std::string(trace.Str(trace.slices.name[o.slice])) + " " +
                  Ns(static_cast<double>(trace.slices.dur_ns[o.slice])) + " vs median " + Ns(o.median_ns) + " at ts " +
                  std::to_string(trace.slices.ts_ns[o.slice]));
  }
  return out;
}

std::vector<std::string> DescribeMemcpy(const MemcpyStats& st) {
  std::vector<std::string> out;
  for (size_t d = 0; d < kCopyDirectionCount; ++d) {
    const CopyTotals& t = st.by_direction[d];
    if (t.count == 0) continue;
    out.push_back(std::string(CopyDirectionName(static_cast<CopyDirection>(d))) + ": " + std::to_string(t.count) +
                  " copies, " + Ns(static_cast<double>(t.time_ns)) + ", " +
                  (t.with_bytes ? FormatBytes(t.bytes) : std::string("bytes unknown")));
  }
  out.push_back(std::to_string(st.total) + " copies; pageable " + std::to_string(st.pageable) + ", synchronous " +
                std::to_string(st.synchronous) + "; share of step time " +
                (st.step_time_ns > 0 ? FormatPercent(Share(st.in_steps_ns, st.step_time_ns)) : std::string("n/a")));
  return out;
}

std::vector<std::string> DescribeLayout(const LayoutResult& r) {
  std::vector<std::string> out = {std::to_string(r.count) + " conversions, " + Ns(static_cast<double>(r.conversion_ns)) +
                                  " = " + FormatPercent(Share(r.conversion_ns, r.denominator_ns)) + " of " +
                                  (r.device ? "kernel" : "top-level CPU op") + " time"};
  for (const ConversionGroup& g : r.groups) {
    out.push_back("  " + g.op + " x" + std::to_string(g.count) + " " + Ns(static_cast<double>(g.total_ns)) +
                  ", triggered by " + (g.trigger.empty() ? "(top level)" : g.trigger));
  }
  return out;
}

std::vector<std::string> DescribeFusion(const Trace& trace, const FusionResult& r) {
  std::vector<std::string> out = {std::string(r.device ? "kernels" : "top-level CPU ops") + ": " +
                                  std::to_string(r.op_count) + " ops, " + Ns(static_cast<double>(r.op_time_ns)) +
                                  "; short ops " + FormatPercent(Share(r.short_op_ns, r.op_time_ns)) +
                                  "; top candidates cover " + FormatPercent(Share(r.covered_ns, r.op_time_ns))};
  for (const FusionCandidate& c : r.top) {
    out.push_back("  " + DescribeSequence(trace, c) + ": x" + std::to_string(c.occurrences) + ", " +
                  Ns(static_cast<double>(c.total_ns)) + ", removes " + std::to_string(c.boundaries_removed) +
                  " launches/dispatches and " + Ns(static_cast<double>(c.gap_ns)) + " of gaps" +
                  (c.has_shapes ? ", ~" + FormatBytes(c.intermediate_bytes) + " traffic" : std::string()));
  }
  return out;
}

std::vector<std::string> DescribeLongTail(const Trace& trace, const LongTailResult& r) {
  std::vector<std::string> out;
  for (size_t i = 0; i < std::min<size_t>(10, r.ops.size()); ++i) {
    const OpTail& op = r.ops[i];
    out.push_back(std::string(trace.Str(op.name)) + ": n=" + std::to_string(op.count) + " p50 " + Ns(op.p50_ns) +
                  " p90 " + Ns(op.p90_ns) + " p99 " + Ns(op.p99_ns) + " max " + Ns(static_cast<double>(op.max_ns)) +
                  "; beyond 3x median: " + std::to_string(op.tail_count) + " (" + FormatPercent(op.tail_share) +
                  " of its time)" + (op.tail_share > kTailDominatedShare ? " tail-dominated" : "") +
                  (op.qualifies ? "" : " [below count/time minimums]"));
  }
  return out;
}

std::vector<std::string> DescribeSteps(const Trace& trace, const StepStats& s) {
  if (s.count == 0) return {"no steps"};
  std::vector<std::string> out = {std::to_string(s.count) + " steps: mean " + Ns(s.mean_ns) + ", stddev " +
                                  Ns(s.stddev_ns) + ", p50 " + Ns(s.p50_ns) + ", p99 " + Ns(s.p99_ns) + ", min " +
                                  Ns(static_cast<double>(s.min_ns)) + ", max " + Ns(static_cast<double>(s.max_ns))};
  for (const SlowStep& slow : s.slowest) {
    std::string line = "  slow: " + std::string(trace.Str(trace.steps.name[slow.step])) + " " +
                       Ns(static_cast<double>(slow.dur_ns));
    for (const StepDiffOp& d : slow.differing_ops) {
      line += "; " + std::string(trace.Str(d.name)) + " " + Ns(static_cast<double>(d.step_total_ns)) + " vs median " +
              Ns(d.median_total_ns);
    }
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> DescribeMemory(const Trace& trace, const MemoryResult& r) {
  if (r.devices.empty()) return {"no [memory] events"};
  std::vector<std::string> out;
  for (const MemoryPeak& p : r.devices) {
    out.push_back("device type " + std::to_string(p.device_type) + " id " + std::to_string(p.device_id) +
                  ": peak allocated " + FormatBytes(p.peak_allocated) + " at ts " +
                  std::to_string(p.peak_allocated_ts_ns) + (p.peak_allocated_op == kNoSlice ? std::string() :
                  " during " + std::string(trace.Str(trace.slices.name[p.peak_allocated_op]))) +
                  ", peak reserved " + FormatBytes(p.peak_reserved) + ", " + std::to_string(p.events) + " events");
  }
  return out;
}

std::vector<std::string> DescribeWindow(const AnalysisWindow& w) {
  std::vector<std::string> out = {"impacts are measured " + w.Describe()};
  if (w.startup_ns > 0) {
    out.push_back("start-up calls: " + Ns(static_cast<double>(w.startup_ns)) + " of the " +
                  Ns(static_cast<double>(w.trace_span_ns)) + " trace span" +
                  (w.startup_dominated ? " (start-up dominated)" : ""));
  }
  return out;
}

void PublishSlowRankImpact(const CommunicationResult& r, const AnalysisWindow& w, MetricSet* m) {
  if (!r.cross.slow_rank || !r.cross.clocks_agree) {
    m->SetUnavailable("slow_rank_excess_ns", "no slow rank measured (see slow_rank_excess_ratio)");
    return;
  }
  const SlowRank& s = *r.cross.slow_rank;
  double steps = 0;
  for (const auto& [rank, n] : w.steps_by_rank) {
    if (rank == s.rank || rank == kNoRank) steps += static_cast<double>(n);
  }
  // The others wait for the late rank in every collective: its excess, per
  // its step (over the whole trace when there are no steps).
  m->Set("slow_rank_excess_ns", steps > 0 ? static_cast<double>(s.excess_ns) / steps : static_cast<double>(s.excess_ns),
         "communication");
}

// One entry per analysis: publish its metrics from the session's result,
// describe it.
using SectionLines = std::vector<std::string>;

SectionLines RunBreakdown(AnalysisResults& in, MetricSet* m) {
  const GapsResult& r = in.gaps();
  PublishGaps(in.trace(), r, m);
  PublishGapImpacts(r, in.window(), m);
  return DescribeBreakdown(in.trace(), r);
}

SectionLines RunLaunches(AnalysisResults& in, MetricSet* m) {
  const LaunchStats& r = in.launches();
  PublishLaunchStats(in.trace(), r, m);
  return DescribeLaunches(in.trace(), r);
}

SectionLines RunMemcpy(AnalysisResults& in, MetricSet* m) {
  const MemcpyStats& r = in.memcpy();
  PublishMemcpyStats(in.trace(), r, m);
  return DescribeMemcpy(r);
}

SectionLines RunLayout(AnalysisResults& in, MetricSet* m) {
  const LayoutResult& r = in.layout();
  PublishLayoutConversions(in.trace(), r, m);
  PublishLayoutImpact(in.trace(), r, in.window(), m);
  return DescribeLayout(r);
}

SectionLines RunFusion(AnalysisResults& in, MetricSet* m) {
  const FusionResult& r = in.fusion();
  PublishFusionCandidates(in.trace(), r, m);
  PublishFusionImpact(r, in.window(), m);
  return DescribeFusion(in.trace(), r);
}

SectionLines RunLongTail(AnalysisResults& in, MetricSet* m) {
  const LongTailResult& r = in.long_tail();
  PublishLongTails(in.trace(), r, m);
  PublishLongTailImpact(r, in.window(), m);
  return DescribeLongTail(in.trace(), r);
}

SectionLines RunSteps(AnalysisResults& in, MetricSet* m) {
  const StepStats& r = in.steps();
  PublishStepStats(in.trace(), r, m);
  PublishStepImpact(r, m);
  return DescribeSteps(in.trace(), r);
}

SectionLines RunMemory(AnalysisResults& in, MetricSet* m) {
  const MemoryResult& r = in.memory();
  PublishMemoryPeaks(in.trace(), r, m);
  return DescribeMemory(in.trace(), r);
}

SectionLines RunCommunication(AnalysisResults& in, MetricSet* m) {
  const CommunicationResult& r = in.communication();
  PublishCommunication(r, m);
  PublishSlowRankImpact(r, in.window(), m);
  return DescribeCommunication(r);
}

SectionLines RunPipeline(AnalysisResults& in, MetricSet* m) {
  const PipelineResult& r = in.pipeline();
  PublishPipelineStages(r, m);
  SectionLines lines;
  if (r.stages.empty()) lines.push_back("no stage spans (stage:<name>, node:<name>, pipeline/<name>)");
  for (const PipelineStage& st : r.stages) {
    lines.push_back(st.name + ": " + FormatPercent(st.latency_share) + " of pipeline time, x" +
                    std::to_string(st.instances) + ", waiting " + FormatPercent(Share(st.waiting_ns, st.total_ns)) +
                    ", mean work " + Ns(st.MeanWorkingNs()));
  }
  return lines;
}

SectionLines RunCriticalPath(AnalysisResults& in, MetricSet* m) {
  const CriticalPathResult& r = in.critical_path();
  PublishCriticalPath(r, m);
  return DescribeCriticalPath(in.trace(), r);
}

SectionLines RunRoofline(AnalysisResults& in, MetricSet* m) {
  const RooflineResult& r = in.roofline();
  PublishRoofline(r, in.roofline_problem(), m);
  return DescribeRoofline(r, in.roofline_problem());
}

SectionLines RunKernels(AnalysisResults& in, MetricSet*) { return DescribeKernelClasses(in.kernel_classes()); }

SectionLines RunLlm(AnalysisResults& in, MetricSet*) { return DescribeLlmPhases(in.llm_phases()); }

SectionLines RunAttribution(AnalysisResults& in, MetricSet* m) {
  const AttributionResult& r = in.attribution();
  PublishAttribution(r, m);
  PublishCompute(in.trace(), r, ComputeComputeTime(r, in.roofline(), in.roofline_problem()), m);
  return DescribeAttribution(in.trace(), r);
}

struct AnalysisEntry {
  std::string_view name;
  SectionLines (*run)(AnalysisResults&, MetricSet*);
};

// Every analysis, in the order they run (and their sections appear).
constexpr AnalysisEntry kAnalyses[] = {
    {"breakdown", RunBreakdown}, {"launches", RunLaunches},   {"memcpy", RunMemcpy},
    {"layout", RunLayout},       {"fusion", RunFusion},       {"long_tail", RunLongTail},
    {"steps", RunSteps},         {"memory", RunMemory},       {"communication", RunCommunication},
    {"pipeline", RunPipeline},   {"roofline", RunRoofline},   {"kernels", RunKernels},
    {"llm", RunLlm},             {"attribution", RunAttribution}, {"critical_path", RunCriticalPath},
};

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

const std::vector<std::string_view>& AnalysisNames() {
  static const std::vector<std::string_view> kNames = [] {
    std::vector<std::string_view> names;
    for (const AnalysisEntry& a : kAnalyses) names.push_back(a.name);
    return names;
  }();
  return kNames;
}

bool AnalysisSelected(const AnalyzeOptions& options, std::string_view name) {
  return options.only.empty() ||
         std::find(options.only.begin(), options.only.end(), name) != options.only.end();
}

// Each result lives in a slot computed once (std::call_once: a second caller
// waits for the first), timed into the phase log.
template <typename T>
struct Slot {
  std::once_flag once;
  std::optional<T> value;
};

struct AnalysisResults::Slots {
  Slot<AnalysisWindow> window;
  Slot<Summary> summary;
  Slot<GapsResult> gaps, all_gaps;
  Slot<LaunchStats> launches;
  Slot<MemcpyStats> memcpy;
  Slot<LayoutResult> layout;
  Slot<FusionResult> fusion;
  Slot<LongTailResult> long_tail;
  Slot<StepStats> steps, all_steps;
  Slot<MemoryResult> memory;
  Slot<std::vector<MemorySeries>> memory_series;
  Slot<CommunicationResult> communication;
  Slot<PipelineResult> pipeline;
  Slot<CriticalPathResult> critical_path;
  struct Roofline {
    std::optional<DevicePeaks> device;
    std::string problem;
    RooflineResult result;
  };
  Slot<Roofline> roofline;
  Slot<KernelClassResult> kernel_classes;
  Slot<LlmPhasesResult> llm_phases;
  Slot<AttributionResult> attribution;
};

namespace {

template <typename T, typename F>
const T& Once(const std::string& prefix, Slot<T>& slot, const char* phase, F&& compute) {
  std::call_once(slot.once, [&] {
    ScopedPhase timed(prefix, phase);
    slot.value.emplace(compute());
  });
  return *slot.value;
}

}  // namespace

AnalysisResults::AnalysisResults(const Trace& trace, AnalyzeOptions options)
    : trace_(trace), options_(std::move(options)), slots_(std::make_unique<Slots>()) {
  trace_.strings.BuildIndex();  // the one lazily built part of a trace
}
AnalysisResults::~AnalysisResults() = default;

const AnalysisWindow& AnalysisResults::window() {
  return Once(options_.phase_prefix, slots_->window, "analysis.window", [&] { return ComputeAnalysisWindow(trace_, options_.warmup_steps); });
}
const Summary& AnalysisResults::summary() {
  return Once(options_.phase_prefix, slots_->summary, "analysis.summary", [&] { return ComputeSummary(trace_); });
}
const GapsResult& AnalysisResults::gaps() {
  const AnalysisWindow& w = window();
  return Once(options_.phase_prefix, slots_->gaps, "analysis.breakdown", [&] {
    GapsOptions o;
    o.window = &w;
    o.keep_all_gaps = options_.keep_all_gaps;
    return ComputeGaps(trace_, o);
  });
}
const GapsResult& AnalysisResults::all_gaps() {
  if (options_.keep_all_gaps) return gaps();
  const AnalysisWindow& w = window();
  return Once(options_.phase_prefix, slots_->all_gaps, "analysis.breakdown_all_gaps", [&] {
    GapsOptions o;
    o.window = &w;
    o.keep_all_gaps = true;
    return ComputeGaps(trace_, o);
  });
}
const LaunchStats& AnalysisResults::launches() {
  return Once(options_.phase_prefix, slots_->launches, "analysis.launches", [&] { return ComputeLaunchStats(trace_); });
}
const MemcpyStats& AnalysisResults::memcpy() {
  return Once(options_.phase_prefix, slots_->memcpy, "analysis.memcpy", [&] { return ComputeMemcpyStats(trace_); });
}
const LayoutResult& AnalysisResults::layout() {
  return Once(options_.phase_prefix, slots_->layout, "analysis.layout", [&] { return ComputeLayoutConversions(trace_); });
}
const FusionResult& AnalysisResults::fusion() {
  const AnalysisWindow& w = window();
  return Once(options_.phase_prefix, slots_->fusion, "analysis.fusion", [&] { return ComputeFusionCandidates(trace_, &w); });
}
const LongTailResult& AnalysisResults::long_tail() {
  const AnalysisWindow& w = window();
  return Once(options_.phase_prefix, slots_->long_tail, "analysis.long_tail", [&] { return ComputeLongTails(trace_, &w); });
}
const StepStats& AnalysisResults::steps() {
  const AnalysisWindow& w = window();
  return Once(options_.phase_prefix, slots_->steps, "analysis.steps", [&] { return ComputeStepStats(trace_, &w); });
}
const StepStats& AnalysisResults::all_steps() {
  return Once(options_.phase_prefix, slots_->all_steps, "analysis.steps_all", [&] { return ComputeStepStats(trace_); });
}
const MemoryResult& AnalysisResults::memory() {
  return Once(options_.phase_prefix, slots_->memory, "analysis.memory", [&] { return ComputeMemoryPeaks(trace_); });
}
const std::vector<MemorySeries>& AnalysisResults::memory_series() {
  return Once(options_.phase_prefix, slots_->memory_series, "analysis.memory_series",
              [&] { return ComputeMemorySeries(trace_, kMemorySeriesPoints); });
}
const KernelClassResult& AnalysisResults::kernel_classes() {
  return Once(options_.phase_prefix, slots_->kernel_classes, "analysis.kernels", [&] { return ComputeKernelClasses(trace_); });
}
const LlmPhasesResult& AnalysisResults::llm_phases() {
  return Once(options_.phase_prefix, slots_->llm_phases, "analysis.llm", [&] { return ComputeLlmPhases(trace_); });
}
const CommunicationResult& AnalysisResults::communication() {
  return Once(options_.phase_prefix, slots_->communication, "analysis.communication", [&] { return ComputeCommunication(trace_); });
}
const PipelineResult& AnalysisResults::pipeline() {
  return Once(options_.phase_prefix, slots_->pipeline, "analysis.pipeline", [&] { return ComputePipelineStages(trace_); });
}
const CriticalPathResult& AnalysisResults::critical_path() {
  const AnalysisWindow& w = window();
  // Collectives are joined across ranks only where communication() trusts
  // the ranks' clocks; one rank needs no communication analysis.
  bool ranks = false;
  for (size_t t = 0; t < trace_.tracks.size() && !ranks; ++t) {
    ranks = trace_.tracks.rank[t] != trace_.tracks.rank[0];
  }
  const CrossRankResult* cross = ranks ? &communication().cross : nullptr;
  return Once(options_.phase_prefix, slots_->critical_path, "analysis.critical_path", [&] {
    CriticalPathOptions o;
    o.window = &w;
    o.cross = cross;
    return ComputeCriticalPath(trace_, o);
  });
}
const RooflineResult& AnalysisResults::roofline() {
  return Once(options_.phase_prefix, slots_->roofline, "analysis.roofline", [&] {
    Slots::Roofline r;
    r.device = ResolveDevice(trace_, options_.device, options_.devices_file, &r.problem);
    r.result = ComputeRoofline(trace_, r.device ? &*r.device : nullptr);
    return r;
  }).result;
}
const std::optional<DevicePeaks>& AnalysisResults::roofline_device() {
  roofline();
  return slots_->roofline.value->device;
}
const std::string& AnalysisResults::roofline_problem() {
  roofline();
  return slots_->roofline.value->problem;
}

const AttributionResult& AnalysisResults::attribution() {
  const AnalysisWindow& w = window();
  return Once(options_.phase_prefix, slots_->attribution, "analysis.attribution", [&] { return ComputeAttribution(trace_, &w); });
}

AnalysisReport RunAnalyses(AnalysisResults& results) {
  using Clock = std::chrono::steady_clock;
  const Trace& trace = results.trace();
  const AnalyzeOptions& options = results.options();
  AnalysisReport rep;
  // The steady-state window every impact is measured over (always computed:
  // impacts of every analysis share it).
  const Clock::time_point window_start = Clock::now();
  const AnalysisWindow& window = results.window();
  PublishAnalysisWindow(trace, window, &rep.metrics);
  PublishConsumers(trace, window, &rep.metrics);
  rep.sections.push_back({"window", DescribeWindow(window), MsSince(window_start)});
  // Analyses read the trace and the window only, and publish into their own
  // metric sets, so they run side by side; their results are merged in
  // registry order, as if they had run one after another.
  std::vector<const AnalysisEntry*> selected;
  for (const AnalysisEntry& a : kAnalyses) {
    if (AnalysisSelected(options, a.name)) selected.push_back(&a);
  }
  struct Outcome {
    MetricSet metrics;
    SectionLines lines;
    double ms = 0;
  };
  std::vector<Outcome> outcomes(selected.size());
  ParallelFor(selected.size(), WorkerThreads(), [&](size_t i) {
    const Clock::time_point start = Clock::now();
    outcomes[i].lines = selected[i]->run(results, &outcomes[i].metrics);
    outcomes[i].ms = MsSince(start);
  });
  for (size_t i = 0; i < selected.size(); ++i) {
    rep.metrics.MergeFrom(std::move(outcomes[i].metrics));
    rep.sections.push_back({std::string(selected[i]->name), std::move(outcomes[i].lines), outcomes[i].ms});
  }
  return rep;
}

AnalysisReport RunAnalyses(const Trace& trace, const AnalyzeOptions& options) {
  AnalysisResults results(trace, options);
  return RunAnalyses(results);
}

MetricSet ComputeAllMetrics(const Trace& trace, const AnalyzeOptions& options) {
  return std::move(RunAnalyses(trace, options).metrics);
}

}  // namespace aiprof
