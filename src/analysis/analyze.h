// `aiprof analyze`: runs every analysis over a trace and publishes their
// figures into one MetricSet (src/analysis/metrics/metric_set.h), which the
// diagnosis rules read. Each analysis lives in its own directory under
// src/analysis/ and can also be run alone; this file only wires them.
//
// A metric the trace cannot support is recorded as unavailable with the
// reason (MetricSet::SetUnavailable), never as zero.
#ifndef AIPROF_SRC_ANALYSIS_ANALYZE_H_
#define AIPROF_SRC_ANALYSIS_ANALYZE_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/analysis/attribution/attribution.h"
#include "src/analysis/communication/communication.h"
#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/fusion/fusion_candidates.h"
#include "src/analysis/gaps/idle_gaps.h"
#include "src/analysis/launches/launch_stats.h"
#include "src/analysis/layout/layout_conversions.h"
#include "src/analysis/llm/llm_phases.h"
#include "src/analysis/long_tail/op_tails.h"
#include "src/analysis/memcpy/memcpy_stats.h"
#include "src/analysis/memory/memory_peaks.h"
#include "src/analysis/memory/memory_series.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/page_faults/page_faults.h"
#include "src/analysis/pipeline/pipeline_stages.h"
#include "src/analysis/roofline/kernel_class.h"
#include "src/analysis/roofline/ops_to_roofline.h"
#include "src/analysis/steps/step_stats.h"
#include "src/analysis/summary/summary.h"
#include "src/analysis/window/analysis_window.h"
#include "src/model/trace.h"

namespace aiprof {

struct AnalyzeOptions {
  // Analyses to run, by name (AnalysisNames()); empty runs all of them.
  std::vector<std::string> only;
  // Roofline: device whose peaks to use (a name in the devices file, e.g.
  // "A100-SXM4-80GB", "cpu-local"); empty = from trace metadata if it names a
  // known device, otherwise roofline utilization metrics are unavailable.
  std::string device;
  // Roofline: devices file; empty = AIPROF_DEVICES env var, then data/devices.yaml.
  std::string devices_file;
  // Leading warm-up steps left out of impacts; -1 detects them
  // (src/analysis/window/analysis_window.h).
  int warmup_steps = -1;
  // Prefixed to the --timing phases of this trace's analyses, rules and
  // diagnosis ("before." for the before run of report --before), so each
  // run's phases read once.
  std::string phase_prefix;
  // Gaps: also keep every gap (GapsOptions::keep_all_gaps), for a front end
  // that draws them (the timeline view, the report that embeds it).
  bool keep_all_gaps = false;
};

// Names accepted by AnalyzeOptions::only, in the order analyses run.
const std::vector<std::string_view>& AnalysisNames();

// True if `name` is selected by `options` (empty `only` selects everything).
bool AnalysisSelected(const AnalyzeOptions& options, std::string_view name);

// An analysis that ran, in order: its section of `aiprof analyze` is a
// document built from its result (src/report/analysis/analysis_sections.h).
struct AnalysisSection {
  std::string name;       // one of AnalysisNames(), or "window"
  double elapsed_ms = 0;  // wall time of the analysis (compute, publish)
};

struct AnalysisReport {
  MetricSet metrics;
  std::vector<AnalysisSection> sections;  // in AnalysisNames() order
};

// The structured result of every analysis over one trace, each computed at
// most once, on first request, and kept: `analyze`, the diagnosis, the
// report, its embedded views and the Python package all read the same
// objects (src/session/ owns one per trace). Safe to call from several
// threads: a result is computed by the first caller, the others wait.
// Each computation is logged once as "analysis.<name>" in the phase log
// (--timing).
class AnalysisResults {
 public:
  AnalysisResults(const Trace& trace, AnalyzeOptions options);
  ~AnalysisResults();
  AnalysisResults(const AnalysisResults&) = delete;
  AnalysisResults& operator=(const AnalysisResults&) = delete;

  const Trace& trace() const { return trace_; }
  const AnalyzeOptions& options() const { return options_; }

  // The steady-state window every impact is measured over.
  const AnalysisWindow& window();
  const Summary& summary();
  // Breakdown and idle gaps, with the window's figures (and every gap when
  // AnalyzeOptions::keep_all_gaps).
  const GapsResult& gaps();
  // The same with every gap kept: gaps() itself when keep_all_gaps was set
  // (front ends that draw gaps set it, so the gaps are computed once).
  const GapsResult& all_gaps();
  const LaunchStats& launches();
  const MemcpyStats& memcpy();
  const LayoutResult& layout();
  const FusionResult& fusion();        // with the window's savings
  const LongTailResult& long_tail();   // steady-state instances
  const StepStats& steps();            // warm-up steps of the window left out
  const StepStats& all_steps();        // every step (charts, the timeline)
  const MemoryResult& memory();
  const std::vector<MemorySeries>& memory_series();  // kReportMemoryPoints points
  const CommunicationResult& communication();
  const PipelineResult& pipeline();
  // The dependency graph and each step's critical path (collectives joined
  // across ranks when communication() finds their clocks agree).
  const CriticalPathResult& critical_path();
  // The roofline with the device of AnalyzeOptions (or the trace's); the
  // device and why none could be used.
  const RooflineResult& roofline();
  const std::optional<DevicePeaks>& roofline_device();
  const std::string& roofline_problem();
  // Device time by kernel class (Triton/Inductor classes included) and by
  // torch.compile region.
  const KernelClassResult& kernel_classes();
  // LLM prefill/decode phases.
  const LlmPhasesResult& llm_phases();
  // The attribution tree over the window's steady steps.
  const AttributionResult& attribution();
  // The same tree plus its ops broken down by input shape
  // (AttributionOptions::op_shapes): what `diff` pairs repeated ops by.
  const AttributionResult& attribution_by_shape();
  // Minor page faults recorded by aiprof trace, per steady step.
  const PageFaultsResult& page_faults();

  // Points of the memory series (the report's chart).
  static constexpr size_t kMemorySeriesPoints = 400;

 private:
  struct Slots;
  const Trace& trace_;
  AnalyzeOptions options_;
  std::unique_ptr<Slots> slots_;
};

// Runs the selected analyses over `results` (computing what is not yet
// there): metrics, evidence and details.
AnalysisReport RunAnalyses(AnalysisResults& results);

// Runs the selected analyses: metrics, evidence and details.
AnalysisReport RunAnalyses(const Trace& trace, const AnalyzeOptions& options);

// Runs the selected analyses and returns the metrics and evidence they
// publish. Linear (or n log n) in the number of events.
MetricSet ComputeAllMetrics(const Trace& trace, const AnalyzeOptions& options);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_ANALYZE_H_
