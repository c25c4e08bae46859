#include "src/analysis/analyze.h"

#include <algorithm>
#include <chrono>
#include <mutex>

#include "src/base/parallel.h"
#include "src/base/phase_log.h"
#include "src/base/threads.h"
#include "src/analysis/attribution/compute_finding.h"
#include "src/analysis/casts/cast_roundtrips.h"
#include "src/analysis/communication/communication.h"
#include "src/analysis/fusion/fusion_candidates.h"
#include "src/analysis/gaps/idle_gaps.h"
#include "src/analysis/host_functions/host_regions.h"
#include "src/analysis/launches/launch_stats.h"
#include "src/analysis/layout/layout_conversions.h"
#include "src/analysis/long_tail/op_tails.h"
#include "src/analysis/memcpy/memcpy_stats.h"
#include "src/analysis/memory/memory_peaks.h"
#include "src/analysis/pipeline/pipeline_stages.h"
#include "src/analysis/roofline/ops_to_roofline.h"
#include "src/analysis/steps/step_stats.h"
#include "src/analysis/summary/request_tokens.h"
#include "src/analysis/window/analysis_window.h"

namespace aiprof {
namespace {

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
  // The others wait for the late rank in every collective: its excess over
  // the collectives of its steady steps (cross_rank.h, SlowRankExcessWithin:
  // not the warm-up's too), per such step; over the whole trace when there
  // are no steps.
  const double excess =
      steps > 0 ? static_cast<double>(SlowRankExcessWithin(r.cross, w.DeviceIntervalsOfRank(s.rank))) / steps
                : static_cast<double>(s.excess_ns);
  m->Set("slow_rank_excess_ns", excess, "communication");
}

// The failed collectives' waits (cross_rank.h), over the steady-state
// window, per step (ranks' steps all counted) or per trace.
void PublishFailedWaitImpact(const CommunicationResult& r, const AnalysisWindow& w, MetricSet* m) {
  if (r.cross.matched == 0) return;  // absent, as comm_failed_count
  int64_t waited = 0;
  for (const auto& wait : r.cross.failed_waits) waited += IntersectionLength({wait}, w.intervals);
  m->Set("comm_failed_wait_ns",
         w.steps > 0 ? static_cast<double>(waited) / static_cast<double>(w.steps) : static_cast<double>(waited),
         "communication");
}

// One entry per analysis: publish its metrics from the session's result.
// What `analyze` shows of each result is its section's document function
// (src/report/analysis/analysis_sections.cc), not the analysis's concern.
void RunBreakdown(AnalysisResults& in, MetricSet* m) {
  const GapsResult& r = in.gaps();
  PublishGaps(in.trace(), r, m);
  PublishGapImpacts(r, in.window(), m);
}

void RunLaunches(AnalysisResults& in, MetricSet* m) { PublishLaunchStats(in.trace(), in.launches(), m); }

void RunMemcpy(AnalysisResults& in, MetricSet* m) { PublishMemcpyStats(in.trace(), in.memcpy(), m); }

void RunLayout(AnalysisResults& in, MetricSet* m) {
  const LayoutResult& r = in.layout();
  PublishLayoutConversions(in.trace(), r, m);
  PublishLayoutImpact(in.trace(), r, in.window(), m);
  PublishCastRoundtrips(in.trace(), ComputeCastRoundtrips(in.trace()), in.window(), m);  // dtype round trips
}

void RunFusion(AnalysisResults& in, MetricSet* m) {
  const FusionResult& r = in.fusion();
  PublishFusionCandidates(in.trace(), r, m);
  PublishFusionImpact(r, in.window(), m);
}

void RunLongTail(AnalysisResults& in, MetricSet* m) {
  const LongTailResult& r = in.long_tail();
  PublishLongTails(in.trace(), r, m);
  PublishLongTailImpact(r, in.window(), m);
}

void RunSteps(AnalysisResults& in, MetricSet* m) {
  const StepStats& r = in.steps();
  PublishStepStats(in.trace(), r, m);
  PublishStepImpact(r, m);
}

void RunMemory(AnalysisResults& in, MetricSet* m) { PublishMemoryPeaks(in.trace(), in.memory(), m); }

void RunCommunication(AnalysisResults& in, MetricSet* m) {
  const CommunicationResult& r = in.communication();
  PublishCommunication(r, m);
  PublishSlowRankImpact(r, in.window(), m);
  PublishFailedWaitImpact(r, in.window(), m);
}

void RunPipeline(AnalysisResults& in, MetricSet* m) { PublishPipelineStages(in.pipeline(), m); }

void RunCriticalPath(AnalysisResults& in, MetricSet* m) { PublishCriticalPath(in.critical_path(), m); }

void RunRoofline(AnalysisResults& in, MetricSet* m) { PublishRoofline(in.roofline(), in.roofline_problem(), m); }

// Kernel classes and LLM phases publish no metrics: computed here so the
// analysis runs (and is timed) with the others.
void RunKernels(AnalysisResults& in, MetricSet*) { in.kernel_classes(); }

void RunLlm(AnalysisResults& in, MetricSet* m) {
  in.llm_phases();
  PublishRequestTokens(ComputeRequestTokens(in.trace()), m);  // SDK token calls: TTFT, TPOT, ITL
}

void RunAttribution(AnalysisResults& in, MetricSet* m) {
  const AttributionResult& r = in.attribution();
  PublishAttribution(r, m);
  PublishHostRegions(in.trace(), ComputeHostRegions(in.trace(), r), in.window(), m);
  PublishCompute(in.trace(), r, ComputeComputeTime(r, in.roofline(), in.roofline_problem(), &in.window()), m);
}

void RunPageFaults(AnalysisResults& in, MetricSet* m) { PublishPageFaults(in.page_faults(), m); }

struct AnalysisEntry {
  std::string_view name;
  void (*run)(AnalysisResults&, MetricSet*);
  // Null: every trace; else the analysis (and its section) runs only on
  // traces for which it returns true.
  bool (*applies)(const Trace&) = nullptr;
};

// Every analysis, in the order they run (and their sections appear).
constexpr AnalysisEntry kAnalyses[] = {
    {"breakdown", RunBreakdown}, {"launches", RunLaunches},   {"memcpy", RunMemcpy},
    {"layout", RunLayout},       {"fusion", RunFusion},       {"long_tail", RunLongTail},
    {"steps", RunSteps},         {"memory", RunMemory},       {"communication", RunCommunication},
    {"pipeline", RunPipeline},   {"roofline", RunRoofline},   {"kernels", RunKernels},
    {"llm", RunLlm},             {"attribution", RunAttribution}, {"critical_path", RunCriticalPath},
    {"page_faults", RunPageFaults, HasPageFaultData},
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
  Slot<AttributionResult> attribution_by_shape;
  Slot<PageFaultsResult> page_faults;
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
  const AnalysisWindow& w = window();  // its capture windows, found once
  return Once(options_.phase_prefix, slots_->launches, "analysis.launches",
              [&] { return ComputeLaunchStats(trace_, &w.capture_windows); });
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
  return Once(options_.phase_prefix, slots_->communication, "analysis.communication",
              [&] { return ComputeCommunication(trace_, &window()); });
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
const AttributionResult& AnalysisResults::attribution_by_shape() {
  const AnalysisWindow& w = window();
  return Once(options_.phase_prefix, slots_->attribution_by_shape, "analysis.attribution_by_shape",
              [&] { return ComputeAttribution(trace_, &w, AttributionOptions{.op_shapes = true}); });
}

const PageFaultsResult& AnalysisResults::page_faults() {
  const AnalysisWindow& w = window();
  return Once(options_.phase_prefix, slots_->page_faults, "analysis.page_faults", [&] { return ComputePageFaults(trace_, w); });
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
  rep.sections.push_back({"window", MsSince(window_start)});
  // Analyses read the trace and the window only, and publish into their own
  // metric sets, so they run side by side; their results are merged in
  // registry order, as if they had run one after another.
  std::vector<const AnalysisEntry*> selected;
  for (const AnalysisEntry& a : kAnalyses) {
    if (AnalysisSelected(options, a.name) && (a.applies == nullptr || a.applies(trace))) selected.push_back(&a);
  }
  struct Outcome {
    MetricSet metrics;
    double ms = 0;
  };
  std::vector<Outcome> outcomes(selected.size());
  ParallelFor(selected.size(), WorkerThreads(), [&](size_t i) {
    const Clock::time_point start = Clock::now();
    selected[i]->run(results, &outcomes[i].metrics);
    outcomes[i].ms = MsSince(start);
  });
  for (size_t i = 0; i < selected.size(); ++i) {
    rep.metrics.MergeFrom(std::move(outcomes[i].metrics));
    rep.sections.push_back({std::string(selected[i]->name), outcomes[i].ms});
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
