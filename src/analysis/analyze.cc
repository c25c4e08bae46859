#include "src/analysis/analyze.h"

#include <algorithm>

#include "src/analysis/fusion/fusion_candidates.h"
#include "src/analysis/gaps/idle_gaps.h"
#include "src/analysis/layout/layout_conversions.h"
#include "src/analysis/steps/step_stats.h"

namespace aiprof {

const std::vector<std::string_view>& AnalysisNames() {
  static const std::vector<std::string_view> kNames = {
      "breakdown", "launches", "memcpy", "layout", "fusion", "long_tail", "steps",
      "communication", "memory", "pipeline", "roofline",
  };
  return kNames;
}

bool AnalysisSelected(const AnalyzeOptions& options, std::string_view name) {
  return options.only.empty() ||
         std::find(options.only.begin(), options.only.end(), name) != options.only.end();
}

MetricSet ComputeAllMetrics(const Trace& trace, const AnalyzeOptions& options) {
  MetricSet metrics;
  if (AnalysisSelected(options, "breakdown")) PublishGaps(trace, ComputeGaps(trace), &metrics);
  if (AnalysisSelected(options, "layout")) {
    PublishLayoutConversions(trace, ComputeLayoutConversions(trace), &metrics);
  }
  if (AnalysisSelected(options, "fusion")) PublishFusionCandidates(trace, ComputeFusionCandidates(trace), &metrics);
  if (AnalysisSelected(options, "steps")) PublishStepStats(trace, ComputeStepStats(trace), &metrics);
  return metrics;
}

}  // namespace aiprof
