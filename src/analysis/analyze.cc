#include "src/analysis/analyze.h"

#include <algorithm>
#include <chrono>
#include <mutex>

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
#include "src/analysis/page_faults/page_faults_analysis.h"
#include "src/analysis/pipeline/pipeline_analysis.h"
#include "src/analysis/roofline/kernels_analysis.h"
#include "src/analysis/roofline/roofline_analysis.h"
#include "src/analysis/steps/steps_analysis.h"
#include "src/analysis/window/window_analysis.h"
#include "src/base/parallel.h"
#include "src/base/threads.h"

namespace aiprof {
namespace {

// Every analysis, in the order they run (and their sections appear): one
// line each; the analysis itself is its folder's AnalysisSpec.
constexpr const AnalysisSpec* kAnalyses[] = {
    &kBreakdownAnalysis,     &kLaunchesAnalysis,    &kMemcpyAnalysis,       &kLayoutAnalysis,
    &kFusionAnalysis,        &kLongTailAnalysis,    &kStepsAnalysis,        &kMemoryAnalysis,
    &kCommunicationAnalysis, &kPipelineAnalysis,    &kRooflineAnalysis,     &kKernelsAnalysis,
    &kLlmAnalysis,           &kAttributionAnalysis, &kCriticalPathAnalysis, &kPageFaultsAnalysis,
};

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::span<const AnalysisSpec* const> AllAnalyses() { return kAnalyses; }

const std::vector<std::string_view>& AnalysisNames() {
  static const std::vector<std::string_view> kNames = [] {
    std::vector<std::string_view> names;
    for (const AnalysisSpec* a : kAnalyses) names.push_back(a->name);
    return names;
  }();
  return kNames;
}

bool AnalysisSelected(const AnalyzeOptions& options, std::string_view name) {
  return options.only.empty() ||
         std::find(options.only.begin(), options.only.end(), name) != options.only.end();
}

AnalysisReport RunAnalyses(AnalysisResults& results) {
  using Clock = std::chrono::steady_clock;
  const Trace& trace = results.trace();
  const AnalyzeOptions& options = results.options();
  AnalysisReport rep;
  // The steady-state window every impact is measured over (always computed:
  // impacts of every analysis share it).
  const Clock::time_point window_start = Clock::now();
  const AnalysisWindow& window = results.Get(kWindow);
  PublishAnalysisWindow(trace, window, &rep.metrics);
  PublishConsumers(trace, window, &rep.metrics);
  rep.sections.push_back({"window", MsSince(window_start)});
  // Analyses read the trace and the window only, and publish into their own
  // metric sets, so they run side by side; their results are merged in
  // registry order, as if they had run one after another.
  std::vector<const AnalysisSpec*> selected;
  for (const AnalysisSpec* a : kAnalyses) {
    if (AnalysisSelected(options, a->name) && (a->applies == nullptr || a->applies(trace))) selected.push_back(a);
  }
  struct Outcome {
    MetricSet metrics;
    double ms = 0;
  };
  std::vector<Outcome> outcomes(selected.size());
  ParallelFor(selected.size(), WorkerThreads(), [&](size_t i) {
    const Clock::time_point start = Clock::now();
    selected[i]->publish(results, &outcomes[i].metrics);
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
