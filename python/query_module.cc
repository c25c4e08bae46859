#include "python/query_module.h"

#include <pybind11/numpy.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <variant>

#include "src/model/trace.h"
#include "src/query/query_engine.h"

namespace aiprof {
namespace python {
namespace {

namespace py = pybind11;

[[noreturn]] void Raise(const std::string& message) {
  py::object error = py::module_::import("aiprof._aiprof").attr("Error");
  PyErr_SetString(error.ptr(), message.c_str());
  throw py::error_already_set();
}

// Column `c` of `result` as the narrowest numpy array that holds it.
py::object ColumnArray(const QueryResult& result, size_t c) {
  bool all_int = true, all_number = true;
  for (const auto& row : result.rows) {
    const QueryValue& v = row[c];
    all_int &= std::holds_alternative<int64_t>(v);
    all_number &= !std::holds_alternative<std::string>(v);
  }
  const auto n = static_cast<py::ssize_t>(result.rows.size());
  if (all_int) {
    py::array_t<int64_t> out(n);
    auto* data = out.mutable_data();
    for (py::ssize_t i = 0; i < n; ++i) data[i] = std::get<int64_t>(result.rows[i][c]);
    return out;
  }
  if (all_number) {
    py::array_t<double> out(n);
    auto* data = out.mutable_data();
    for (py::ssize_t i = 0; i < n; ++i) {
      const QueryValue& v = result.rows[i][c];
      data[i] = std::holds_alternative<int64_t>(v)  ? static_cast<double>(std::get<int64_t>(v))
                : std::holds_alternative<double>(v) ? std::get<double>(v)
                                                    : std::numeric_limits<double>::quiet_NaN();
    }
    return out;
  }
  py::list values(n);
  for (py::ssize_t i = 0; i < n; ++i) {
    const QueryValue& v = result.rows[i][c];
    if (const auto* s = std::get_if<std::string>(&v)) {
      values[i] = py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(s->data(), s->size(), "replace"));
    } else if (const auto* x = std::get_if<int64_t>(&v)) {
      values[i] = py::int_(*x);
    } else if (const auto* d = std::get_if<double>(&v)) {
      values[i] = py::float_(*d);
    } else {
      values[i] = py::none();
    }
  }
  return py::module_::import("numpy").attr("array")(values, py::arg("dtype") = "object");
}

// Runs the query on a worker thread while the caller's thread waits without
// the GIL and, every 100 ms, takes it to run Python's signal handlers: a
// Ctrl-C (KeyboardInterrupt, a notebook's "interrupt kernel") cancels the
// query through its cancel flag and is raised here. Run on the caller's
// thread, a query with timeout=0 could not be interrupted at all.
StatusOr<QueryResult> ExecuteInterruptibly(const Trace& trace, const std::string& sql, QueryLimits limits) {
  std::atomic<bool> cancel{false};
  limits.cancel = &cancel;
  StatusOr<QueryResult> result = ErrStatus("not run");
  std::mutex mu;
  std::condition_variable finished;
  bool done = false;
  std::thread worker([&] {
    StatusOr<QueryResult> r = ErrStatus("not run");
    try {
      auto engine = QueryEngine::Open(trace);
      r = engine.ok() ? (*engine)->Execute(sql, limits, "(Trace.sql)") : StatusOr<QueryResult>(engine.status());
    } catch (const std::exception& e) {
      r = ErrStatus(std::string("query (Trace.sql): ") + e.what());
    }
    std::lock_guard<std::mutex> lock(mu);
    result = std::move(r);
    done = true;
    finished.notify_one();
  });
  bool interrupted = false;
  for (;;) {
    {
      py::gil_scoped_release release;
      std::unique_lock<std::mutex> lock(mu);
      if (finished.wait_for(lock, std::chrono::milliseconds(100), [&] { return done; })) break;
    }
    // Handlers run on the main thread only; elsewhere this returns 0.
    if (!interrupted && PyErr_CheckSignals() != 0) {
      interrupted = true;  // the error stays set; wait for the worker to stop
      cancel.store(true, std::memory_order_relaxed);
    }
  }
  worker.join();
  if (interrupted) throw py::error_already_set();
  return result;
}

}  // namespace

py::dict QueryColumns(const Trace& trace, const std::string& sql, size_t max_rows, double timeout_s,
                      int64_t max_memory_bytes) {
  // 0 is no limit; so is infinity (a limit past int64 nanoseconds stopped
  // the query at once: "after the time limit (inf s)"). NaN or a negative
  // limit is an error rather than no limit.
  if (!(timeout_s >= 0)) throw py::value_error("timeout must be a number of seconds >= 0 (0 = none)");
  if (max_memory_bytes < 0) throw py::value_error("max_memory must be a number of bytes >= 0 (0 = none)");
  if (timeout_s > 1e9) timeout_s = 0;  // over 30 years
  QueryLimits limits;
  limits.max_rows = max_rows;
  limits.timeout_s = timeout_s;
  limits.max_memory_bytes = max_memory_bytes;
  StatusOr<QueryResult> result = ExecuteInterruptibly(trace, sql, limits);
  if (!result.ok()) Raise(result.status().message());
  if (result->truncated) {
    Raise("query (Trace.sql): more than max_rows=" + std::to_string(max_rows) +
          " rows matched; add a LIMIT or raise max_rows (0 = no limit)");
  }
  py::dict out;
  for (size_t c = 0; c < result->columns.size(); ++c) {
    std::string name = result->columns[c];
    // Duplicate names (SELECT a.id, b.id) get a suffix so no column is lost.
    for (int k = 2; out.contains(py::str(name)); ++k) name = result->columns[c] + "_" + std::to_string(k);
    out[py::str(name)] = ColumnArray(*result, c);
  }
  return out;
}

void DefineQuery(py::module_& m) {
  m.def("query_schema", [] {
    Trace empty;
    auto engine = QueryEngine::Open(empty);
    if (!engine.ok()) Raise(engine.status().message());
    return (*engine)->Schema();
  });
}

}  // namespace python
}  // namespace aiprof
