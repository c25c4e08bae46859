// The compiled analysis half of the `aiprof` Python package (python/aiprof/
// wraps it; the SDK half is the separate _sdk module, sdk_module.cc).
#include <pybind11/pybind11.h>

#include "python/analysis_module.h"

PYBIND11_MODULE(_aiprof, m) {
  m.doc() = "aiprof trace analysis (use the aiprof package, not this module)";
  aiprof::python::DefineAnalysis(m);
}
