// The SDK half of the `aiprof` Python package: thin bindings of the C API
// (include/aiprof/aiprof.h), so Python spans share the runtime, clock,
// buffers and output file of C/C++ code in the same process.
//
// The runtime records names by address. A Python str may die and its memory
// be reused, so every name goes through aiprof_intern() once (a copy kept
// until exit); the bindings cache str -> interned pointer so the runtime's
// lock is taken once per distinct name, not per event.
#include <aiprof/aiprof.h>
#include <pybind11/pybind11.h>

#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace aiprof::python {
namespace {

namespace py = pybind11;

// str -> the runtime's interned copy. Calls hold the GIL, but the mutex keeps
// the cache correct without relying on it (free-threaded builds).
class NameCache {
 public:
  const char* Intern(const py::str& name) {
    Py_ssize_t size = 0;
    const char* utf8 = PyUnicode_AsUTF8AndSize(name.ptr(), &size);
    if (utf8 == nullptr) throw py::error_already_set();
    std::string_view view(utf8, static_cast<size_t>(size));
    if (view.find('\0') != std::string_view::npos) throw py::value_error("aiprof names cannot contain NUL characters");
    std::lock_guard<std::mutex> lock(mu_);
    auto it = names_.find(view);
    if (it != names_.end()) return it->second;
    const char* interned = aiprof_intern(utf8);
    // The key views the interned copy, which lives until the process exits.
    names_.emplace(std::string_view(interned, view.size()), interned);
    return interned;
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string_view, const char*> names_;
};

NameCache& Names() {
  static NameCache* cache = new NameCache;  // never destroyed: used until exit
  return *cache;
}

// `with aiprof.span("decode"):` and `@aiprof.span("decode")`. The name is
// interned when the object is made, so a decorator pays for it once.
class Span {
 public:
  Span(const py::str& name, bool node) : name_(Names().Intern(name)), node_(node) {}
  void Begin() const { node_ ? aiprof_node_begin(name_) : aiprof_span_begin(name_); }
  void End() const { node_ ? aiprof_node_end() : aiprof_span_end(); }
  const char* name() const { return name_; }

 private:
  const char* name_;
  bool node_;
};

// A request: begun when made, ended once by end() or by leaving a `with`
// block, from any thread.
class Request {
 public:
  explicit Request(const py::str& name) : id_(aiprof_request_begin(Names().Intern(name))) {}
  void End() {
    uint64_t id = id_;
    id_ = 0;
    aiprof_request_end(id);  // 0 (disabled, or already ended) is ignored
  }
  uint64_t id() const { return id_; }

 private:
  uint64_t id_;
};

void DefineSdk(py::module_& m) {
  py::class_<Span>(m, "Span")
      .def(py::init<const py::str&, bool>(), py::arg("name"), py::arg("node") = false)
      .def_property_readonly("name", [](const Span& s) { return std::string(s.name()); })
      .def("__enter__", [](const Span& s) -> const Span& { s.Begin(); return s; },
           py::return_value_policy::reference_internal)
      .def("__exit__", [](const Span& s, py::args) { s.End(); return false; })
      .def("begin", &Span::Begin)
      .def("end", &Span::End);
  py::class_<Request>(m, "Request")
      .def(py::init<const py::str&>(), py::arg("name"))
      .def_property_readonly("id", &Request::id)
      .def("end", &Request::End)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](Request& r, py::args) { r.End(); return false; });
  m.def("span_begin", [](const py::str& name) { aiprof_span_begin(Names().Intern(name)); });
  m.def("span_end", [] { aiprof_span_end(); });
  m.def("iteration_start", [] { aiprof_iteration_start(); });
  m.def("iteration_end", [] { aiprof_iteration_end(); });
  m.def("node_begin", [](const py::str& name) { aiprof_node_begin(Names().Intern(name)); });
  m.def("node_end", [] { aiprof_node_end(); });
  m.def("counter", [](const py::str& name, double value) { aiprof_counter(Names().Intern(name), value); },
        py::arg("name"), py::arg("value"));
  m.def("mark", [](const py::str& name) { aiprof_mark(Names().Intern(name)); });
  m.def("thread_name", [](const std::string& name) { aiprof_thread_name(name.c_str()); });
  m.def("flush", [] {
    py::gil_scoped_release release;  // writes a file
    aiprof_flush();
  });
  m.def("flush_to", [](const std::string& path) {
    int rc;
    {
      py::gil_scoped_release release;
      rc = aiprof_flush_to(path.c_str());
    }
    if (rc != 0) {
      PyErr_SetFromErrnoWithFilename(PyExc_OSError, path.c_str());
      throw py::error_already_set();
    }
  });
  m.def("enabled", [] { return aiprof_enabled() != 0; });
  m.def("set_enabled", [](bool on) { aiprof_set_enabled(on ? 1 : 0); }, py::arg("on"));
  m.def("clock_ns", [] { return aiprof_clock_ns(); });
  m.def("output_path", [] { return std::string(aiprof_output_path()); });
}

}  // namespace
}  // namespace aiprof::python

PYBIND11_MODULE(_sdk, m) {
  m.doc() = "aiprof tracing SDK (use the aiprof package, not this module)";
  aiprof::python::DefineSdk(m);
}
