// The SDK half of the `aiprof` Python package: bindings of the C API
// (include/aiprof/aiprof.h), so Python spans share the runtime, clock,
// buffers and output file of C/C++ code in the same process.
//
// Written against CPython's C API directly (not pybind11) because these
// calls are the hot path: a `with span:` block is two METH_NOARGS/FASTCALL
// calls into this file, with no argument conversion layer.
//
// The runtime records names by address. A Python str may die and its memory
// be reused, so every name goes through aiprof_intern() once (a copy kept
// until exit); NameCache maps str -> interned pointer so the runtime's lock
// is taken once per distinct name, not per event.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <aiprof/aiprof.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <string>
#include <mutex>
#include <string_view>
#include <unordered_map>

namespace aiprof::python {
namespace {

// The UTF-8 text of a name (a str). A str with lone surrogates, which is
// what os.fsdecode makes of a non-UTF-8 file name, cannot be UTF-8: its
// surrogates are written as escapes (Python's "backslashreplace": the six
// characters backslash, u, d, c, f, f for U+DCFF) rather than raised into
// the caller's loop (a profiler call never fails on a name it can record).
struct Utf8Name {
  std::string_view view;
  PyObject* escaped = nullptr;  // owns view's bytes when the str had surrogates

  Utf8Name() = default;
  Utf8Name(const Utf8Name&) = delete;
  Utf8Name& operator=(const Utf8Name&) = delete;
  ~Utf8Name() { Py_XDECREF(escaped); }

  // False with a Python error set (not a str, or a NUL in it).
  bool Set(PyObject* name) {
    if (!PyUnicode_Check(name)) {
      PyErr_Format(PyExc_TypeError, "aiprof names are str, not %.100s", Py_TYPE(name)->tp_name);
      return false;
    }
    Py_ssize_t size = 0;
    const char* utf8 = PyUnicode_AsUTF8AndSize(name, &size);
    if (utf8 == nullptr) {
      if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return false;
      PyErr_Clear();
      escaped = PyUnicode_AsEncodedString(name, "utf-8", "backslashreplace");
      if (escaped == nullptr) return false;
      utf8 = PyBytes_AS_STRING(escaped);
      size = PyBytes_GET_SIZE(escaped);
    }
    view = std::string_view(utf8, static_cast<size_t>(size));
    if (view.find('\0') != std::string_view::npos) {
      PyErr_SetString(PyExc_ValueError, "aiprof names cannot contain NUL characters");
      return false;
    }
    return true;
  }
};

// Calls hold the GIL, but the mutex keeps the cache correct without relying
// on it (free-threaded builds). Never destroyed: used until exit.
class NameCache {
 public:
  // The interned copy of `name`, or nullptr with a Python error set.
  const char* Intern(PyObject* name) {
    Utf8Name text;
    if (!text.Set(name)) return nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = names_.find(text.view);
    if (it != names_.end()) return it->second;
    const char* interned = aiprof_intern(text.view.data());
    // The key views the interned copy, which lives until the process exits.
    names_.emplace(std::string_view(interned, text.view.size()), interned);
    return interned;
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string_view, const char*> names_;
};

NameCache& Names() {
  static NameCache* cache = new NameCache;
  return *cache;
}

// --- Span: `with span:` / begin() / end(); node=True makes a pipeline node. ---

struct SpanObject {
  PyObject_HEAD
  const char* name;
  int node;
};

int SpanInit(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"name", "node", nullptr};
  PyObject* name = nullptr;
  int node = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|p", const_cast<char**>(keywords), &name, &node)) return -1;
  const char* interned = Names().Intern(name);
  if (interned == nullptr) return -1;
  auto* s = reinterpret_cast<SpanObject*>(self);
  s->name = interned;
  s->node = node;
  return 0;
}

// False (with a Python error) for a Span whose __init__ never ran.
bool HasName(SpanObject* s) {
  if (s->name != nullptr) return true;
  PyErr_SetString(PyExc_RuntimeError, "aiprof Span used before __init__");
  return false;
}

// Begins the span (or node); false with a Python error when it has no name.
bool BeginSpan(PyObject* self) {
  auto* s = reinterpret_cast<SpanObject*>(self);
  if (!HasName(s)) return false;
  if (s->node) {
    aiprof_node_begin(s->name);
  } else {
    aiprof_span_begin(s->name);
  }
  return true;
}

void EndSpan(PyObject* self) {
  if (reinterpret_cast<SpanObject*>(self)->node) {
    aiprof_node_end();
  } else {
    aiprof_span_end();
  }
}

PyObject* SpanBegin(PyObject* self, PyObject*) {
  if (!BeginSpan(self)) return nullptr;
  Py_RETURN_NONE;
}

PyObject* SpanEnd(PyObject* self, PyObject*) {
  EndSpan(self);
  Py_RETURN_NONE;
}

PyObject* SpanEnter(PyObject* self, PyObject*) { return BeginSpan(self) ? Py_NewRef(self) : nullptr; }

PyObject* SpanExit(PyObject* self, PyObject* const*, Py_ssize_t) {
  EndSpan(self);
  Py_RETURN_FALSE;  // exceptions propagate
}

PyObject* SpanName(PyObject* self, void*) {
  auto* s = reinterpret_cast<SpanObject*>(self);
  return HasName(s) ? PyUnicode_FromString(s->name) : nullptr;
}

// A METH_FASTCALL or METH_KEYWORDS function as the PyCFunction the method
// tables hold (CPython casts it back by the flags).
template <typename F>
PyCFunction AsMethod(F* f) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

PyMethodDef kSpanMethods[] = {
    {"__enter__", SpanEnter, METH_NOARGS, "Begins the span."},
    {"__exit__", AsMethod(SpanExit), METH_FASTCALL, "Ends the span (exceptions propagate)."},
    {"begin", SpanBegin, METH_NOARGS, "begin($self, /)\n--\n\nBegins the span on the calling thread."},
    {"end", SpanEnd, METH_NOARGS, "end($self, /)\n--\n\nEnds the calling thread's innermost span (or node)."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef kSpanGetSet[] = {{"name", SpanName, nullptr, "The span's name.", nullptr},
                             {nullptr, nullptr, nullptr, nullptr, nullptr}};

const char kSpanDoc[] = "Span(name, node=False)\n--\n\nA span usable as `with` block; begin()/end() by hand.";
PyType_Slot kSpanSlots[] = {{Py_tp_new, reinterpret_cast<void*>(PyType_GenericNew)},
                            {Py_tp_init, reinterpret_cast<void*>(SpanInit)},
                            {Py_tp_methods, kSpanMethods},
                            {Py_tp_getset, kSpanGetSet},
                            {Py_tp_doc, const_cast<char*>(kSpanDoc)},
                            {0, nullptr}};
PyType_Spec kSpanSpec = {"aiprof._sdk.Span", sizeof(SpanObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
                         kSpanSlots};

// --- Request: begun when made; end() once, from any thread. ---

struct RequestObject {
  PyObject_HEAD
  uint64_t id;  // 0 once ended (or when the SDK is disabled)
};

int RequestInit(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"name", nullptr};
  PyObject* name = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O", const_cast<char**>(keywords), &name)) return -1;
  const char* interned = Names().Intern(name);
  if (interned == nullptr) return -1;
  auto* r = reinterpret_cast<RequestObject*>(self);
  if (r->id != 0) aiprof_request_end(r->id);  // __init__ called again
  r->id = aiprof_request_begin(interned);
  return 0;
}

void EndRequest(RequestObject* r, bool error) {
  uint64_t id = r->id;
  r->id = 0;
  if (error) {
    aiprof_request_end_error(id);  // 0 is ignored
  } else {
    aiprof_request_end(id);
  }
}

PyObject* RequestEnd(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"error", nullptr};
  int error = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|p", const_cast<char**>(keywords), &error)) return nullptr;
  EndRequest(reinterpret_cast<RequestObject*>(self), error != 0);
  Py_RETURN_NONE;
}

// LLM serving: prefill(prompt_tokens), token(), tokens(n) (aiprof_request_prefill/_token/_tokens).
bool CountArg(PyObject* const* args, Py_ssize_t nargs, const char* what, uint32_t* out) {
  if (nargs != 1) {
    PyErr_Format(PyExc_TypeError, "%s takes one int", what);
    return false;
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(args[0], &overflow);
  if (v == -1 && PyErr_Occurred()) return false;  // not an int
  if (overflow != 0 || v < 0 || v > static_cast<long long>(UINT32_MAX)) {
    PyErr_Format(PyExc_OverflowError, "%s: %R tokens is not a count from 0 to 2**32 - 1", what, args[0]);
    return false;
  }
  *out = static_cast<uint32_t>(v);
  return true;
}

PyObject* RequestPrefill(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  uint32_t n = 0;
  if (!CountArg(args, nargs, "prefill(prompt_tokens)", &n)) return nullptr;
  aiprof_request_prefill(reinterpret_cast<RequestObject*>(self)->id, n);
  Py_RETURN_NONE;
}

PyObject* RequestToken(PyObject* self, PyObject*) {
  aiprof_request_token(reinterpret_cast<RequestObject*>(self)->id);
  Py_RETURN_NONE;
}

PyObject* RequestTokens(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  uint32_t n = 0;
  if (!CountArg(args, nargs, "tokens(n)", &n)) return nullptr;
  aiprof_request_tokens(reinterpret_cast<RequestObject*>(self)->id, n);
  Py_RETURN_NONE;
}

PyObject* RequestEnter(PyObject* self, PyObject*) { return Py_NewRef(self); }

// A request left by an exception ends as an error (aiprof monitor's error_count).
PyObject* RequestExit(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  EndRequest(reinterpret_cast<RequestObject*>(self), nargs > 0 && args[0] != Py_None);
  Py_RETURN_FALSE;
}

PyObject* RequestId(PyObject* self, void*) {
  return PyLong_FromUnsignedLongLong(reinterpret_cast<RequestObject*>(self)->id);
}

PyMethodDef kRequestMethods[] = {
    {"end", AsMethod(RequestEnd), METH_VARARGS | METH_KEYWORDS,
     "end($self, /, error=False)\n--\n\nEnds the request (from any thread), as failed with error=True; later calls are "
     "ignored."},
    {"prefill", AsMethod(RequestPrefill), METH_FASTCALL,
     "prefill($self, prompt_tokens, /)\n--\n\nThe request's prefill starts now over that many input tokens."},
    {"token", RequestToken, METH_NOARGS,
     "token($self, /)\n--\n\nOne output token is ready now (the first ends the TTFT)."},
    {"tokens", AsMethod(RequestTokens), METH_FASTCALL, "tokens($self, n, /)\n--\n\n`n` output tokens are ready now."},
    {"__enter__", RequestEnter, METH_NOARGS, "Returns the request (already begun)."},
    {"__exit__", AsMethod(RequestExit), METH_FASTCALL,
     "Ends the request; as failed when an exception leaves the block."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef kRequestGetSet[] = {{"id", RequestId, nullptr, "The runtime's id (0 once ended or when disabled).", nullptr},
                                {nullptr, nullptr, nullptr, nullptr, nullptr}};

const char kRequestDoc[] = "Request(name)\n--\n\nA request begun now; end() it from any thread, or use `with`.";
PyType_Slot kRequestSlots[] = {{Py_tp_new, reinterpret_cast<void*>(PyType_GenericNew)},
                               {Py_tp_init, reinterpret_cast<void*>(RequestInit)},
                               {Py_tp_methods, kRequestMethods},
                               {Py_tp_getset, kRequestGetSet},
                               {Py_tp_doc, const_cast<char*>(kRequestDoc)},
                               {0, nullptr}};
PyType_Spec kRequestSpec = {"aiprof._sdk.Request", sizeof(RequestObject), 0,
                            Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, kRequestSlots};

// --- Step: `with step:` is iteration_start() ... iteration_end(). ---

PyObject* StepEnter(PyObject* self, PyObject*) {
  aiprof_iteration_start();
  return Py_NewRef(self);
}

PyObject* StepExit(PyObject*, PyObject* const*, Py_ssize_t) {
  aiprof_iteration_end();
  Py_RETURN_FALSE;
}

PyMethodDef kStepMethods[] = {
    {"__enter__", StepEnter, METH_NOARGS, "Starts a step on the calling thread."},
    {"__exit__", AsMethod(StepExit), METH_FASTCALL,
     "Ends the calling thread's step."},
    {nullptr, nullptr, 0, nullptr}};

const char kStepDoc[] = "Step()\n--\n\n`with Step():` is one step (iteration_start() ... iteration_end()).";
PyType_Slot kStepSlots[] = {{Py_tp_new, reinterpret_cast<void*>(PyType_GenericNew)},
                            {Py_tp_methods, kStepMethods},
                            {Py_tp_doc, const_cast<char*>(kStepDoc)},
                            {0, nullptr}};
PyType_Spec kStepSpec = {"aiprof._sdk.Step", sizeof(PyObject), 0, Py_TPFLAGS_DEFAULT, kStepSlots};

// --- Module functions. ---

// Module functions over one C call: f(name) (METH_O, the name interned) and
// f() (METH_NOARGS). kCall is a lambda around the call, so the header's
// inline enabled check stays in front of it (a function's address would
// skip it).
template <auto kCall>
PyObject* NameFn(PyObject*, PyObject* name) {
  const char* n = Names().Intern(name);
  if (n == nullptr) return nullptr;
  kCall(n);
  Py_RETURN_NONE;
}

template <auto kCall>
PyObject* NoArgsFn(PyObject*, PyObject*) {
  kCall();
  Py_RETURN_NONE;
}

PyObject* CounterFn(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "counter(name, value) takes 2 arguments");
    return nullptr;
  }
  const char* n = Names().Intern(args[0]);
  if (n == nullptr) return nullptr;
  double value = PyFloat_AsDouble(args[1]);
  if (value == -1.0 && PyErr_Occurred()) return nullptr;
  aiprof_counter(n, value);
  Py_RETURN_NONE;
}

PyObject* ThreadNameFn(PyObject*, PyObject* name) {
  Utf8Name text;
  if (!text.Set(name)) return nullptr;
  aiprof_thread_name(text.view.data());  // copied by the runtime
  Py_RETURN_NONE;
}

PyObject* FlushFn(PyObject*, PyObject*) {
  Py_BEGIN_ALLOW_THREADS  // writes a file
  aiprof_flush();
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

PyObject* FlushToFn(PyObject*, PyObject* arg) {
  PyObject* bytes = nullptr;
  if (!PyUnicode_FSConverter(arg, &bytes)) return nullptr;
  int rc, err;
  Py_BEGIN_ALLOW_THREADS
  rc = aiprof_flush_to(PyBytes_AS_STRING(bytes));
  err = errno;
  Py_END_ALLOW_THREADS
  if (rc != 0) {
    errno = err;
    PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, arg);
    Py_DECREF(bytes);
    return nullptr;
  }
  Py_DECREF(bytes);
  Py_RETURN_NONE;
}

PyObject* EnabledFn(PyObject*, PyObject*) { return PyBool_FromLong(aiprof_enabled()); }
PyObject* SetEnabledFn(PyObject*, PyObject* on) {
  int v = PyObject_IsTrue(on);
  if (v < 0) return nullptr;
  aiprof_set_enabled(v);
  Py_RETURN_NONE;
}
PyObject* ClockNsFn(PyObject*, PyObject*) { return PyLong_FromLongLong(aiprof_clock_ns()); }
PyObject* OutputPathFn(PyObject*, PyObject*) { return PyUnicode_DecodeFSDefault(aiprof_output_path()); }

// --- Framework layer on demand (aiprof monitor's deep trace) ---
//
// The runtime's live thread calls FrameworkHandler; Python code may run only
// with the GIL, and the torch profiler records the thread that starts it, so
// the request is handed to the main thread with Py_AddPendingCall (run at its
// next bytecode boundary) and this thread waits for the answer.

struct FrameworkRequest {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t generation = 0, done_generation = 0;
  int start = 0;
  std::string dir;
  int status = 0;
};
FrameworkRequest g_framework;
PyObject* g_framework_callable = nullptr;  // fn(start: bool, dir: str) -> int (0 or an errno value)
// How long the main thread gets to pick the request up (it may be blocked in C).
constexpr auto kFrameworkWait = std::chrono::seconds(20);

int RunFrameworkRequest(void*) {
  int start;
  std::string dir;
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(g_framework.mu);
    start = g_framework.start;
    dir = g_framework.dir;
    generation = g_framework.generation;
  }
  int status = ENOTSUP;
  if (g_framework_callable != nullptr) {
    PyObject* r = PyObject_CallFunction(g_framework_callable, "Os", start ? Py_True : Py_False, dir.c_str());
    if (r == nullptr) {
      PyErr_WriteUnraisable(g_framework_callable);
      status = EIO;
    } else {
      status = PyLong_Check(r) ? static_cast<int>(PyLong_AsLong(r)) : 0;
      Py_DECREF(r);
    }
  }
  std::lock_guard<std::mutex> lock(g_framework.mu);
  if (generation == g_framework.generation) {
    g_framework.status = status;
    g_framework.done_generation = generation;
    g_framework.cv.notify_all();
  }
  return 0;
}

bool IsFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

int FrameworkHandler(int start, const char* dir) {
  std::unique_lock<std::mutex> lock(g_framework.mu);
  const uint64_t generation = ++g_framework.generation;
  g_framework.start = start;
  g_framework.dir = dir ? dir : "";
  lock.unlock();
  if (Py_AddPendingCall(&RunFrameworkRequest, nullptr) != 0) return EAGAIN;
  // CPython (3.11) marks a pending call for the main thread's eval loop only
  // when the thread adding it is the main thread; from this one, a main
  // thread running pure Python without ever releasing the GIL noticed it
  // only at its next GIL hand-over, so a busy loop never answered (the
  // deep trace had no framework layer). Taking the GIL once asks the main
  // thread to hand it over; when it takes it back it sees the call.
  if (Py_IsInitialized() && !IsFinalizing()) {
    PyGILState_STATE gil = PyGILState_Ensure();
    PyGILState_Release(gil);
  }
  lock.lock();
  if (!g_framework.cv.wait_for(lock, kFrameworkWait, [&] { return g_framework.done_generation == generation; })) {
    return ETIMEDOUT;
  }
  return g_framework.status;
}

PyObject* SetFrameworkHandlerFn(PyObject*, PyObject* callable) {
  if (callable != Py_None && !PyCallable_Check(callable)) {
    PyErr_SetString(PyExc_TypeError, "set_framework_handler(fn): fn must be callable or None");
    return nullptr;
  }
  Py_XSETREF(g_framework_callable, callable == Py_None ? nullptr : Py_NewRef(callable));
  aiprof_set_framework_handler(callable == Py_None ? nullptr : &FrameworkHandler);
  Py_RETURN_NONE;
}

PyMethodDef kFunctions[] = {
    {"set_framework_handler", SetFrameworkHandlerFn, METH_O,
     "set_framework_handler($module, fn, /)\n--\n\nfn(start, dir) -> 0 | errno starts / stops the framework profiler "
     "when aiprof "
     "monitor asks (run on the main thread); None unregisters."},
    {"span_begin", NameFn<[](const char* n) { aiprof_span_begin(n); }>, METH_O,
     "span_begin($module, name, /)\n--\n\nOpens a span on the calling thread."},
    {"span_end", NoArgsFn<[] { aiprof_span_end(); }>, METH_NOARGS,
     "span_end($module, /)\n--\n\nCloses the calling thread's innermost span."},
    {"node_begin", NameFn<[](const char* n) { aiprof_node_begin(n); }>, METH_O,
     "node_begin($module, name, /)\n--\n\nOpens a pipeline node (\"node:<name>\")."},
    {"node_end", NoArgsFn<[] { aiprof_node_end(); }>, METH_NOARGS,
     "node_end($module, /)\n--\n\nCloses the calling thread's innermost node."},
    {"iteration_start", NoArgsFn<[] { aiprof_iteration_start(); }>, METH_NOARGS,
     "iteration_start($module, /)\n--\n\nStarts a step on the calling thread."},
    {"iteration_end", NoArgsFn<[] { aiprof_iteration_end(); }>, METH_NOARGS,
     "iteration_end($module, /)\n--\n\nEnds the calling thread's open step."},
    {"mark", NameFn<[](const char* n) { aiprof_mark(n); }>, METH_O,
     "mark($module, name, /)\n--\n\nAn instant event on the calling thread."},
    {"counter", AsMethod(CounterFn), METH_FASTCALL,
     "counter($module, name, value, /)\n--\n\nA sample of counter `name` (a number) now."},
    {"thread_name", ThreadNameFn, METH_O, "thread_name($module, name, /)\n--\n\nNames the calling thread's track."},
    {"flush", FlushFn, METH_NOARGS, "flush($module, /)\n--\n\nWrites the file now (atomically); recording goes on."},
    {"flush_to", FlushToFn, METH_O, "flush_to($module, path, /)\n--\n\nWrites the file to `path`; OSError on failure."},
    {"enabled", EnabledFn, METH_NOARGS, "enabled($module, /)\n--\n\nTrue while recording."},
    {"set_enabled", SetEnabledFn, METH_O,
     "set_enabled($module, on, /)\n--\n\nPauses or resumes recording in every thread."},
    {"clock_ns", ClockNsFn, METH_NOARGS,
     "clock_ns($module, /)\n--\n\nThe SDK's clock (CLOCK_MONOTONIC ns, as in the file)."},
    {"output_path", OutputPathFn, METH_NOARGS, "output_path($module, /)\n--\n\nThe file the next flush() writes."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "_sdk",
                       "aiprof tracing SDK (use the aiprof package, not this module)", -1, kFunctions,
                       nullptr, nullptr, nullptr, nullptr};

}  // namespace
}  // namespace aiprof::python

PyMODINIT_FUNC PyInit__sdk() {
  using namespace aiprof::python;
  PyObject* m = PyModule_Create(&kModule);
  if (m == nullptr) return nullptr;
  PyObject* span = PyType_FromSpec(&kSpanSpec);
  PyObject* request = span ? PyType_FromSpec(&kRequestSpec) : nullptr;
  PyObject* step = request ? PyType_FromSpec(&kStepSpec) : nullptr;
  bool ok = step != nullptr && PyModule_AddObjectRef(m, "Span", span) == 0 &&
            PyModule_AddObjectRef(m, "Request", request) == 0 && PyModule_AddObjectRef(m, "Step", step) == 0;
  Py_XDECREF(span);
  Py_XDECREF(request);
  Py_XDECREF(step);
  if (!ok) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
