// Bindings of the SDK half of the `aiprof` Python package (the C runtime of
// include/aiprof/aiprof.h: spans, steps, nodes, requests, counters, flush).
#ifndef AIPROF_PYTHON_SDK_MODULE_H_
#define AIPROF_PYTHON_SDK_MODULE_H_

#include <pybind11/pybind11.h>

namespace aiprof::python {

// Adds Span, Request and the recording functions to `m`.
void DefineSdk(pybind11::module_& m);

}  // namespace aiprof::python

#endif  // AIPROF_PYTHON_SDK_MODULE_H_
