// The views of `aiprof view`: each renders the model (and the analyses it
// runs itself) into one self-contained file: HTML, SVG or a data format other
// tools open. A view is one folder under src/view/ plus one line in
// all_views.cc; the CLI builds its flags (--flame, --timeline, ...) and its
// --format choices from this list.
#ifndef AIPROF_SRC_VIEW_VIEW_REGISTRY_H_
#define AIPROF_SRC_VIEW_VIEW_REGISTRY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"
#include "src/view/view_sink.h"

namespace aiprof {

struct Trace;
class AnalysisSession;

// What the command line asked for, beyond the input.
struct ViewOptions {
  std::string format;      // one of the view's formats (never empty when Render is called)
  std::string thread;      // --thread: keep tracks whose thread name or tid equals this ("" = all)
  int32_t rank = -1;       // --rank: keep tracks of this rank (-1 = all)
  std::string title;       // shown in the page's title: the input path as given
  std::string baseline_title;  // the --diff input as given ("" without --diff)
  bool critical_path = false;  // --critical-path: overlay each step's critical path (views that draw it)
  std::string color_by;        // --color-by: "" (the view's own colours) or "module" (the slice's nn.Module)
};

// Everything a view reads. `baseline` is set only with --diff (and only for
// views whose spec says supports_diff).
// Views read analysis results through the session (never compute their own),
// so a report and the views it embeds share one computation.
struct ViewContext {
  AnalysisSession& session;
  const Trace& trace;  // session.trace()
  const Trace* baseline = nullptr;
  ViewOptions options;
};

// One output format of a view: its --format name and the file-name endings
// that select it when --format is not given (the longest ending wins, so
// ".speedscope.json" beats ".json").
struct ViewFormat {
  const char* name;                     // "html"
  std::vector<const char*> extensions;  // {".html", ".htm"}
};

struct ViewSpec {
  const char* name;  // "flame"; the CLI flag is "--" + name
  const char* help;  // one line for --help
  std::vector<ViewFormat> formats;  // the first is the default
  bool supports_diff = false;       // accepts --diff BASELINE
  bool draws_gaps = false;          // reads every idle gap (the session keeps them all)
  bool draws_critical_path = false; // accepts --critical-path
  bool colors_by_module = false;    // accepts --color-by module
  // Writes the view to `sink`. Errors name what was wrong (e.g. an unknown
  // --thread); bad trace content is escaped, never trusted.
  Status (*render)(const ViewContext& context, ViewSink* sink) = nullptr;
};

// Every view, in the order `aiprof view --help` lists them (all_views.cc).
const std::vector<ViewSpec>& AllViews();
// The view named `name`, or nullptr.
const ViewSpec* FindView(std::string_view name);
// The format of `spec` selected by `path`'s ending, or "" when none matches.
std::string FormatForPath(const ViewSpec& spec, std::string_view path);
// True if `spec` has a format named `format`.
bool HasFormat(const ViewSpec& spec, std::string_view format);

// Track filters shared by the views: true if track `track` passes --thread
// and --rank (a thread matches by its name, its tid, or "pid/tid").
bool TrackSelected(const Trace& trace, uint32_t track, const ViewOptions& options);
// Error when --thread or --rank select no track of `trace` (names the values
// that exist, so a typo is easy to fix).
Status CheckFiltersMatch(const Trace& trace, const ViewOptions& options);

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_VIEW_REGISTRY_H_
