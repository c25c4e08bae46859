#include "src/view/timeline/timeline_view.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "src/analysis/analyze.h"
#include "src/analysis/diagnosis/diagnose.h"
#include "src/analysis/fusion/fusion_candidates.h"
#include "src/analysis/layout/layout_conversions.h"
#include "src/analysis/rules/rule_loader.h"
#include "src/analysis/steps/step_stats.h"
#include "src/view/timeline/timeline_html.h"

namespace aiprof {

namespace {

// AIPROF_VIEW_TIMING=1 prints the time of each part to standard error.
class PartTimer {
 public:
  PartTimer() : on_(std::getenv("AIPROF_VIEW_TIMING") != nullptr), last_(std::chrono::steady_clock::now()) {}
  void Mark(const char* what) {
    auto now = std::chrono::steady_clock::now();
    if (on_) std::fprintf(stderr, "aiprof: timeline %-22s %8.1f ms\n", what,
                          std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }

 private:
  bool on_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace

Status RenderTimelinePage(const Trace& trace, const TimelineViewOptions& options, std::string* out) {
  PartTimer timer;
  GapsOptions gap_options;
  gap_options.keep_all_gaps = true;
  GapsResult gaps = ComputeGaps(trace, gap_options);
  StepStats steps = ComputeStepStats(trace);
  LayoutResult layout = ComputeLayoutConversions(trace);
  FusionResult fusion = ComputeFusionCandidates(trace);
  std::vector<Rule> rules;
  Diagnosis diagnosis;
  TimelineInputs inputs{&gaps, nullptr, &steps, &layout, &fusion};
  timer.Mark("gaps/steps/layout/fusion");
  if (options.findings && options.diagnosis) {
    inputs.diagnosis = options.diagnosis;
  } else if (options.findings) {
    ASSIGN_OR_RETURN(rules, LoadBuiltinRules());
    AnalyzeOptions analyze;
    analyze.device = options.device;
    MetricSet metrics = ComputeAllMetrics(trace, analyze);
    diagnosis = Diagnose(trace, metrics, rules);
    inputs.diagnosis = &diagnosis;
    timer.Mark("diagnose");
  }
  TimelineModel model = BuildTimelineModel(trace, inputs, options.layout);
  timer.Mark("model (LOD)");
  AppendTimelineHtml(trace, model, options.layout, out);
  timer.Mark("page (JSON+HTML)");
  return OkStatus();
}

namespace {

Status RenderTimelineView(const ViewContext& context, ViewSink* sink) {
  const Trace& trace = context.trace;
  RETURN_IF_ERROR(CheckFiltersMatch(trace, context.options));
  TimelineViewOptions options;
  options.layout.title = context.options.title;
  // Budget of slices in full detail (tuning and tests; default in TimelineOptions).
  if (const char* env = std::getenv("AIPROF_VIEW_MAX_SLICES")) {
    char* end = nullptr;
    unsigned long long v = std::strtoull(env, &end, 10);
    if (end == env || *end != '\0') return ErrStatus(std::string("AIPROF_VIEW_MAX_SLICES: not a number: ") + env);
    options.layout.max_detailed_slices = v;
  }
  if (!context.options.thread.empty() || context.options.rank >= 0) {
    options.layout.track_shown.resize(trace.tracks.size());
    for (uint32_t k = 0; k < trace.tracks.size(); ++k) {
      options.layout.track_shown[k] = TrackSelected(trace, k, context.options);
    }
  }
  std::string page;
  RETURN_IF_ERROR(RenderTimelinePage(trace, options, &page));
  return sink->Append(page);
}

}  // namespace

ViewSpec TimelineViewSpec() {
  ViewSpec spec;
  spec.name = "timeline";
  spec.help = "Timeline of tracks by rank, layer and thread/stream: slices, counters, steps, idle gaps by cause, "
              "flows and diagnose's findings (self-contained HTML)";
  spec.formats = {{"html", {".html", ".htm"}}};
  spec.render = RenderTimelineView;
  return spec;
}

}  // namespace aiprof
