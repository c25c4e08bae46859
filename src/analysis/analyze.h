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

#include "src/analysis/analysis_spec.h"
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
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/page_faults/page_faults_analysis.h"
#include "src/analysis/pipeline/pipeline_analysis.h"
#include "src/analysis/results.h"
#include "src/analysis/roofline/kernels_analysis.h"
#include "src/analysis/roofline/roofline_analysis.h"
#include "src/analysis/steps/steps_analysis.h"
#include "src/analysis/summary/summary_analysis.h"
#include "src/analysis/window/window_analysis.h"
#include "src/model/trace.h"

namespace aiprof {

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
