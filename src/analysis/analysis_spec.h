// AnalysisSpec: one analysis of `aiprof analyze`, defined in its folder
// (e.g. src/analysis/launches/launches_analysis.cc) and listed once in
// kAnalyses (src/analysis/analyze.cc), whose order is the order of
// AnalysisNames() and of the sections.
#ifndef AIPROF_SRC_ANALYSIS_ANALYSIS_SPEC_H_
#define AIPROF_SRC_ANALYSIS_ANALYSIS_SPEC_H_

#include <span>
#include <string_view>

#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/results.h"

namespace aiprof {

struct AnalysisSpec {
  // Its name in --only and its section's key.
  std::string_view name;
  // Publishes its metrics (and evidence) from the session's results (its
  // ResultSpecs, computed on first request). An analysis that publishes
  // nothing still Gets its results here, so they run (and are timed) with
  // the others.
  void (*publish)(AnalysisResults&, MetricSet*);
  // Null: every trace; else the analysis (and its section) runs only on
  // traces for which it returns true.
  bool (*applies)(const Trace&) = nullptr;
  // Every metric `publish` may set or mark unavailable: its part of
  // MetricCatalogue() (src/analysis/metrics/metric_catalogue.cc), which
  // MetricSet::Set checks; docs/metrics.md documents each.
  std::span<const MetricInfo> metrics;
};

// Every analysis, in the order they run (kAnalyses).
std::span<const AnalysisSpec* const> AllAnalyses();

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_ANALYSIS_SPEC_H_
