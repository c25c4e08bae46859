// The interface of aiprof_graphviz.so (graphviz_module.cc), the module that
// lays topology graphs out with Graphviz's dot engine. aiprof loads it with
// dlopen on the first topology rendered (LayoutSvg, topology_render.cc), so
// that neither the program nor the Python extension links Graphviz's
// libraries (libgvc, libcgraph, libcdt, libpathplan, libltdl, libexpat...).
// A C interface: the SVG and the error come back through a writer callback,
// so no memory or C++ object crosses the boundary.
#ifndef AIPROF_SRC_VIEW_TOPOLOGY_MODULE_GRAPHVIZ_MODULE_H_
#define AIPROF_SRC_VIEW_TOPOLOGY_MODULE_GRAPHVIZ_MODULE_H_

#include <cstddef>

extern "C" {

// Appends `size` bytes at `data` to the output `sink` stands for.
using AiprofGraphvizWriteFn = void (*)(void* sink, const char* data, size_t size);

// Lays out `dot` (DOT text, NUL-terminated) with the dot engine and renders
// SVG. Returns 1 and writes the SVG to `svg_sink`, or returns 0 and writes
// the reason to `error_sink`. Thread-safe (one layout at a time inside).
#define AIPROF_GRAPHVIZ_LAYOUT_SYMBOL "aiprof_graphviz_layout_svg_v1"
using AiprofGraphvizLayoutFn = int (*)(const char* dot, AiprofGraphvizWriteFn write, void* svg_sink, void* error_sink);

// The version of aiprof the module was built with; loading refuses another.
#define AIPROF_GRAPHVIZ_VERSION_SYMBOL "aiprof_graphviz_version"
}

#endif  // AIPROF_SRC_VIEW_TOPOLOGY_MODULE_GRAPHVIZ_MODULE_H_
