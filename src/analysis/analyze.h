// `aiprof analyze`: runs every analysis over a trace and publishes their
// figures into one MetricSet (src/analysis/metrics/metric_set.h), which the
// diagnosis rules read. Each analysis lives in its own directory under
// src/analysis/ and can also be run alone; this file only wires them.
//
// A metric the trace cannot support is recorded as unavailable with the
// reason (MetricSet::SetUnavailable), never as zero.
#ifndef AIPROF_SRC_ANALYSIS_ANALYZE_H_
#define AIPROF_SRC_ANALYSIS_ANALYZE_H_

#include <string>
#include <string_view>
#include <vector>

#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/results.h"
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
