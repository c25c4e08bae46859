// Writes the timeline view as one self-contained HTML page: inline CSS and
// script, a canvas renderer, and the TimelineModel's data as JSON inside a
// <script type="application/json"> element. Every trace string goes through
// AppendJsonEscaped (which also escapes < > &), so no trace text can close the
// script element or become markup; the page's script only ever puts trace
// text into the DOM as textContent or onto the canvas.
#ifndef AIPROF_SRC_VIEW_TIMELINE_TIMELINE_HTML_H_
#define AIPROF_SRC_VIEW_TIMELINE_TIMELINE_HTML_H_

#include <string>

#include "src/model/trace.h"
#include "src/view/timeline/timeline_model.h"

namespace aiprof {

// The JSON data the page embeds (see the page script for its reading).
void AppendTimelineJson(const Trace& trace, const TimelineModel& model, const TimelineOptions& options,
                        std::string* out);

// The whole page.
void AppendTimelineHtml(const Trace& trace, const TimelineModel& model, const TimelineOptions& options,
                        std::string* out);

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_TIMELINE_TIMELINE_HTML_H_
