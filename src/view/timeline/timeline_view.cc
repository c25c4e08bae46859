#include "src/view/timeline/timeline_view.h"

#include <vector>

#include "src/analysis/analyze.h"
#include "src/analysis/diagnosis/diagnose.h"
#include "src/analysis/fusion/fusion_candidates.h"
#include "src/analysis/layout/layout_conversions.h"
#include "src/analysis/rules/rule_loader.h"
#include "src/analysis/steps/step_stats.h"
#include "src/view/timeline/timeline_html.h"

namespace aiprof {

Status RenderTimelinePage(const Trace& trace, const TimelineViewOptions& options, std::string* out) {
  GapsOptions gap_options;
  gap_options.keep_all_gaps = true;
  GapsResult gaps = ComputeGaps(trace, gap_options);
  StepStats steps = ComputeStepStats(trace);
  LayoutResult layout = ComputeLayoutConversions(trace);
  FusionResult fusion = ComputeFusionCandidates(trace);
  std::vector<Rule> rules;
  Diagnosis diagnosis;
  TimelineInputs inputs{&gaps, nullptr, &steps, &layout, &fusion};
  if (options.findings) {
    ASSIGN_OR_RETURN(rules, LoadBuiltinRules());
    AnalyzeOptions analyze;
    analyze.device = options.device;
    MetricSet metrics = ComputeAllMetrics(trace, analyze);
    diagnosis = Diagnose(trace, metrics, rules);
    inputs.diagnosis = &diagnosis;
  }
  TimelineModel model = BuildTimelineModel(trace, inputs, options.layout);
  AppendTimelineHtml(trace, model, options.layout, out);
  return OkStatus();
}

}  // namespace aiprof
