// `aiprof view IN --timeline`: the page of the analyses the timeline shows
// (idle gaps with every gap kept, step statistics, layout conversions, fusion
// candidates, and the session's diagnosis), read from the session.
#ifndef AIPROF_SRC_VIEW_TIMELINE_TIMELINE_VIEW_H_
#define AIPROF_SRC_VIEW_TIMELINE_TIMELINE_VIEW_H_

#include <string>

#include "src/base/status.h"
#include "src/model/trace.h"
#include "src/view/timeline/timeline_model.h"
#include "src/view/view_registry.h"

namespace aiprof {

class AnalysisSession;

struct TimelineViewOptions {
  TimelineOptions layout;
  bool findings = true;  // show the session's findings as markers
  bool critical_path = false;  // overlay the session's critical path
  bool color_by_module = false;  // colour slices by their module
};

// Appends the self-contained HTML page for the session's trace to `out`.
Status RenderTimelinePage(AnalysisSession& session, const TimelineViewOptions& options, std::string* out);

// The registry entry: `aiprof view IN --timeline -o timeline.html` (--rank, --thread filter tracks).
ViewSpec TimelineViewSpec();

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_TIMELINE_TIMELINE_VIEW_H_
