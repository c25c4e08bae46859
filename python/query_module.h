// Binding of `aiprof query` for Python: Trace.sql() runs SQL over the
// trace's tables (src/query/) and returns its columns.
#ifndef AIPROF_PYTHON_QUERY_MODULE_H_
#define AIPROF_PYTHON_QUERY_MODULE_H_

#include <pybind11/pybind11.h>

#include <string>

namespace aiprof {

struct Trace;

namespace python {

// Adds query_schema() to `m`.
void DefineQuery(pybind11::module_& m);

// Runs `sql` over `trace` under the given limits (0 = none) and returns
// {column name: numpy array}: int64 when every value is an integer, float64
// when every value is a number (NULL as NaN), else an object array of
// str/int/float/None. Raises aiprof.Error naming the query on failure or
// when more than max_rows rows match.
pybind11::dict QueryColumns(const Trace& trace, const std::string& sql, size_t max_rows, double timeout_s,
                            int64_t max_memory_bytes);

}  // namespace python
}  // namespace aiprof

#endif  // AIPROF_PYTHON_QUERY_MODULE_H_
