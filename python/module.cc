// The compiled half of the `aiprof` Python package (python/aiprof/ wraps it).
#include <pybind11/pybind11.h>

#include "python/analysis_module.h"
#ifdef AIPROF_PYTHON_WITH_SDK
#include "python/sdk_module.h"
#endif

PYBIND11_MODULE(_aiprof, m) {
  m.doc() = "aiprof: tracing SDK and trace analysis (use the aiprof package, not this module)";
  aiprof::python::DefineAnalysis(m);
#ifdef AIPROF_PYTHON_WITH_SDK
  aiprof::python::DefineSdk(m);
  m.attr("has_sdk") = true;
#else
  m.attr("has_sdk") = false;
#endif
}
