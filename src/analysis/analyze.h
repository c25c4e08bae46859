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
};

// Names accepted by AnalyzeOptions::only, in the order analyses run.
const std::vector<std::string_view>& AnalysisNames();

// True if `name` is selected by `options` (empty `only` selects everything).
bool AnalysisSelected(const AnalyzeOptions& options, std::string_view name);

// Per-analysis details for `aiprof analyze` (per-device tables, histograms,
// largest gaps, top lists) as plain-text lines; reports escape them.
struct AnalysisSection {
  std::string name;  // one of AnalysisNames()
  std::vector<std::string> lines;
  double elapsed_ms = 0;  // wall time of the analysis (compute, publish, describe)
};

struct AnalysisReport {
  MetricSet metrics;
  std::vector<AnalysisSection> sections;  // in AnalysisNames() order
};

// Runs the selected analyses: metrics, evidence and details.
AnalysisReport RunAnalyses(const Trace& trace, const AnalyzeOptions& options);

// Runs the selected analyses and returns the metrics and evidence they
// publish. Linear (or n log n) in the number of events.
MetricSet ComputeAllMetrics(const Trace& trace, const AnalyzeOptions& options);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_ANALYZE_H_
