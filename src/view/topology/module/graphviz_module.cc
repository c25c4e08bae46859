// aiprof_graphviz.so: lays DOT out with Graphviz's dot engine (libgvc, in
// process) and renders SVG, loaded by aiprof with dlopen on the first
// topology rendered (graphviz_module.h). The only file that includes
// Graphviz's headers; the only object that links its libraries.
#include "src/view/topology/module/graphviz_module.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <cstring>
#include <exception>
#include <mutex>
#include <string>

namespace {

// Graphviz reports errors through a process-wide callback.
std::string* g_graphviz_errors = nullptr;
int CollectGraphvizError(char* message) {
  if (g_graphviz_errors && message) g_graphviz_errors->append(message);
  return 0;
}

// The reason, or empty with `svg` set.
std::string Layout(const char* dot, std::string* svg) {
  // Graphviz keeps global state (error callback, plugin tables, a text-size
  // cache): one layout at a time, and one context for the whole process,
  // never freed. Graphviz 2.42 reads freed memory in its text-size cache
  // when a second context is created after the first was freed (found by
  // AddressSanitizer), so the context is made once and reused.
  static std::mutex mu;
  static GVC_t* gvc = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  std::string errors;
  g_graphviz_errors = &errors;
  agseterr(AGERR);
  agseterrf(&CollectGraphvizError);
  if (!gvc) gvc = gvContext();
  Agraph_t* g = gvc ? agmemread(dot) : nullptr;
  std::string status;
  if (!gvc) {
    status = "Graphviz: cannot create a context";
  } else if (!g) {
    status = "Graphviz could not read the topology graph: " + errors;
  } else if (gvLayout(gvc, g, "dot") != 0) {
    status = "Graphviz dot layout failed (is the dot layout plugin installed? `dot -c` registers it): " + errors;
  } else {
    char* data = nullptr;
    unsigned int length = 0;
    if (gvRenderData(gvc, g, "svg", &data, &length) != 0 || !data) {
      status = "Graphviz could not render SVG: " + errors;
    } else {
      svg->assign(data, length);
    }
    if (data) gvFreeRenderData(data);
    gvFreeLayout(gvc, g);
  }
  if (g) agclose(g);
  agseterrf(nullptr);
  g_graphviz_errors = nullptr;
  return status;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) const char* aiprof_graphviz_version() { return AIPROF_VERSION; }

__attribute__((visibility("default"))) int aiprof_graphviz_layout_svg_v1(const char* dot, AiprofGraphvizWriteFn write,
                                                                         void* svg_sink, void* error_sink) {
  if (dot == nullptr || write == nullptr) return 0;
  // No exception leaves the module (its caller may be another build's code).
  try {
    std::string svg;
    const std::string error = Layout(dot, &svg);
    if (!error.empty()) {
      write(error_sink, error.data(), error.size());
      return 0;
    }
    write(svg_sink, svg.data(), svg.size());
    return 1;
  } catch (const std::exception& e) {
    write(error_sink, e.what(), std::strlen(e.what()));
    return 0;
  }
}
}
