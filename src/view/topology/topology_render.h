// Renders a Topology: as Graphviz DOT text, laid out by Graphviz's `dot`
// engine (libgvc, in process) into SVG, and as a self-contained HTML page
// (the SVG inline, the graph's details as JSON, a little script for hover
// details and click-to-highlight).
//
// Graphviz is reached through the module aiprof_graphviz.so
// (module/graphviz_module.h), loaded on the first layout, and only this view
// uses it. Linked in, its libraries (libgvc, libcgraph, libcdt, libpathplan,
// libltdl, libexpat: six of aiprof's 26) cost every start of aiprof ~61 page
// faults and 2.2 ms of wall time (`aiprof --version` linked with and without
// them, 300 alternating runs each, median of the paired differences, on a
// loaded 2-vCPU VM; 2026-12-06). An empty program with and without them:
// 3.5-6.9 against 14-16 ms (perf stat -r 60, 2026-12-05).
//
// Trace text reaches DOT only through DotText (UTF-8 made valid, quotes,
// backslashes and '&' escaped, control characters dropped), so it can never
// end a string or become a Graphviz escape (\N, \G, entities); Graphviz
// escapes it again for SVG. Node and edge ids ("n3", "e7") never carry trace
// text. In the page, the JSON sits in a <script type="application/json">
// with every '<' written as \u003c, and the script puts text into the page
// with textContent only.
#ifndef AIPROF_SRC_VIEW_TOPOLOGY_TOPOLOGY_RENDER_H_
#define AIPROF_SRC_VIEW_TOPOLOGY_TOPOLOGY_RENDER_H_

#include <string>
#include <string_view>

#include "src/base/status.h"
#include "src/view/topology/topology_graph.h"

namespace aiprof {

// Trace text as the body of a DOT double-quoted string. Visible for testing.
std::string DotText(std::string_view s);

// The graph in Graphviz's DOT language (clusters for ranks, processes and
// devices; node size by time; highlighted items in red).
std::string TopologyToDot(const Topology& topology, std::string_view title);

// Lays `dot` out with Graphviz's dot engine and renders SVG. Loads the
// Graphviz module on the first call (src/base/module_loader.h: beside the
// object holding this code, then ../lib/aiprof/ from it, or
// $AIPROF_GRAPHVIZ_MODULE); the error names each path tried when it cannot.
StatusOr<std::string> LayoutSvg(const std::string& dot);

// The HTML page around `svg` (the output of LayoutSvg for this topology).
std::string TopologyToHtml(const Topology& topology, std::string_view svg, std::string_view title);

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_TOPOLOGY_TOPOLOGY_RENDER_H_
