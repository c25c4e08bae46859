// Bindings of the analysis half of the `aiprof` Python package
// (load, tables as numpy columns, summary, analyze, diagnose, validate).
#ifndef AIPROF_PYTHON_ANALYSIS_MODULE_H_
#define AIPROF_PYTHON_ANALYSIS_MODULE_H_

#include <pybind11/pybind11.h>

namespace aiprof::python {

// Adds Trace, load, validate_json, analysis_names and the Error exception to `m`.
void DefineAnalysis(pybind11::module_& m);

}  // namespace aiprof::python

#endif  // AIPROF_PYTHON_ANALYSIS_MODULE_H_
