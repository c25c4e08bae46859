#include "src/view/timeline/timeline_view.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "src/analysis/attribution/attribution.h"
#include "src/analysis/critical_path/critical_path_analysis.h"
#include "src/analysis/fusion/fusion_analysis.h"
#include "src/analysis/gaps/gaps_analysis.h"
#include "src/analysis/layout/layout_analysis.h"
#include "src/analysis/steps/steps_analysis.h"
#include "src/session/session.h"
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

Status RenderTimelinePage(AnalysisSession& session, const TimelineViewOptions& options, std::string* out) {
  PartTimer timer;
  AnalysisResults& results = session.results();
  TimelineInputs inputs{&results.Get(kAllGaps), nullptr, &results.Get(kAllSteps), &results.Get(kLayout),
                        &results.Get(kFusion)};
  timer.Mark("gaps/steps/layout/fusion");
  if (options.findings) {
    ASSIGN_OR_RETURN(inputs.diagnosis, session.diagnosis());
    timer.Mark("diagnose");
  }
  if (options.critical_path) {
    inputs.critical_path = &results.Get(kCriticalPath);
    timer.Mark("critical path");
  }
  SliceModuleMap modules;
  if (options.color_by_module) {
    modules = SliceModules(session.trace());
    inputs.slice_modules = &modules;
    timer.Mark("modules");
  }
  TimelineModel model = BuildTimelineModel(session.trace(), inputs, options.layout);
  timer.Mark("model (LOD)");
  AppendTimelineHtml(session.trace(), model, options.layout, out);
  timer.Mark("page (JSON+HTML)");
  return OkStatus();
}

namespace {

Status RenderTimelineView(const ViewContext& context, ViewSink* sink) {
  const Trace& trace = context.trace;
  RETURN_IF_ERROR(CheckFiltersMatch(trace, context.options));
  TimelineViewOptions options;
  options.layout.title = context.options.title;
  options.critical_path = context.options.critical_path;
  options.color_by_module = context.options.color_by == "module";
  // Budget of slices in full detail (tuning and tests; default in TimelineOptions).
  if (const char* env = std::getenv("AIPROF_VIEW_MAX_SLICES")) {
    char* end = nullptr;
    unsigned long long v = std::strtoull(env, &end, 10);
    if (end == env || *end != '\0') return ErrStatus(std::string("AIPROF_VIEW_MAX_SLICES: not a number: ") + env);
    options.layout.max_detailed_slices = v;
  }
  // Budget of instants kept one by one (tuning and tests), and AIPROF_VIEW_INSTANTS=0: none drawn.
  if (const char* env = std::getenv("AIPROF_VIEW_MAX_INSTANTS")) {
    char* end = nullptr;
    unsigned long long v = std::strtoull(env, &end, 10);
    if (end == env || *end != '\0') return ErrStatus(std::string("AIPROF_VIEW_MAX_INSTANTS: not a number: ") + env);
    options.layout.max_instants = v;
  }
  if (const char* env = std::getenv("AIPROF_VIEW_INSTANTS")) {
    const std::string v = env;
    if (v != "0" && v != "1") return ErrStatus("AIPROF_VIEW_INSTANTS: 0 or 1, not " + v);
    options.layout.instants = v == "1";
  }
  if (!context.options.thread.empty() || context.options.rank >= 0) {
    options.layout.track_shown.resize(trace.tracks.size());
    for (uint32_t k = 0; k < trace.tracks.size(); ++k) {
      options.layout.track_shown[k] = TrackSelected(trace, k, context.options);
    }
  }
  std::string page;
  RETURN_IF_ERROR(RenderTimelinePage(context.session, options, &page));
  return sink->Append(page);
}

}  // namespace

ViewSpec TimelineViewSpec() {
  ViewSpec spec;
  spec.name = "timeline";
  spec.help = "Timeline of tracks by rank, layer and thread/stream: slices, counters, steps, idle gaps by cause, "
              "flows, diagnose's findings and thread instants such as aiprof trace's page faults (self-contained HTML)";
  spec.formats = {{"html", {".html", ".htm"}}};
  spec.render = RenderTimelineView;
  spec.draws_gaps = true;
  spec.draws_critical_path = true;
  spec.colors_by_module = true;
  return spec;
}

}  // namespace aiprof
