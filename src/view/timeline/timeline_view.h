// `aiprof view IN --timeline`: runs the analyses the timeline shows (idle
// gaps with every gap kept, step statistics, layout conversions, fusion
// candidates, and `diagnose` with the built-in rules) and renders the page.
#ifndef AIPROF_SRC_VIEW_TIMELINE_TIMELINE_VIEW_H_
#define AIPROF_SRC_VIEW_TIMELINE_TIMELINE_VIEW_H_

#include <string>

#include "src/analysis/diagnosis/diagnose.h"
#include "src/base/status.h"
#include "src/model/trace.h"
#include "src/view/timeline/timeline_model.h"
#include "src/view/view_registry.h"

namespace aiprof {

struct TimelineViewOptions {
  TimelineOptions layout;
  bool findings = true;  // run diagnose and show its findings as markers
  std::string device;    // roofline peaks for diagnose (as `diagnose --device`)
  // A diagnosis the caller already has (aiprof report): shown instead of
  // running diagnose again. Must outlive the call.
  const Diagnosis* diagnosis = nullptr;
};

// Appends the self-contained HTML page for `trace` to `out`.
Status RenderTimelinePage(const Trace& trace, const TimelineViewOptions& options, std::string* out);

// The registry entry: `aiprof view IN --timeline -o timeline.html` (--rank, --thread filter tracks).
ViewSpec TimelineViewSpec();

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_TIMELINE_TIMELINE_VIEW_H_
