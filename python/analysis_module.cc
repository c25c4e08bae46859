// The analysis half of the `aiprof` Python package: load a trace with the
// importers the CLI uses, and hand its tables to Python as whole numpy
// columns (no Python object per row), its summary, metrics, diagnosis and
// validation as the JSON the CLI writes (one writer, so the figures are the
// same by construction). The GIL is released while importing and analysing.
#include "python/analysis_module.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "python/query_module.h"
#include "src/analysis/analyze.h"
#include "src/analysis/attribution/attribution.h"
#include "src/analysis/attribution/attribution_analysis.h"
#include "src/analysis/diagnosis/diagnose.h"
#include "src/analysis/diagnosis/suggest.h"
#include "src/analysis/rules/rule_loader.h"
#include "src/analysis/summary/summary.h"
#include "src/analysis/summary/summary_analysis.h"
#include "src/analysis/validation/compare.h"
#include "src/analysis/validation/trace_samples.h"
#include "src/analysis/whatif/whatif.h"
#include "src/importers/common/importer_registry.h"
#include "src/render/renderers.h"
#include "src/report/analysis/analyze_report.h"
#include "src/report/diagnosis/diagnosis_report.h"
#include "src/report/summary/summary_report.h"
#include "src/report/validation/validation_report.h"
#include "src/session/session.h"
#include "src/session/validate_runs.h"

namespace aiprof {

namespace python {
namespace {

namespace py = pybind11;

// Raised for every Status error (bad input names the file and the place).
class AiprofError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void ThrowIfError(const Status& s) {
  if (!s.ok()) throw AiprofError(s.message());
}

template <typename T>
T ValueOrThrow(StatusOr<T> s) {
  ThrowIfError(s.status());
  return std::move(s).value();
}

// A loaded trace; the summary is computed once, on first use.
// A loaded trace and its analysis session (src/session/): results asked for
// with the default options are computed once and kept; calls with other
// options (analyses, device, rules, target) get a session of their own over
// the same trace.
class PyTrace {
 public:
  PyTrace(std::unique_ptr<Trace> trace, std::string path)
      : trace_(std::move(trace)), path_(std::move(path)), session_(trace_, Options()) {}
  const Trace& trace() const { return *trace_; }
  const std::string& path() const { return path_; }
  AnalysisSession& session() { return session_; }
  // A session of its own over the same trace, for options other than Options().
  std::unique_ptr<AnalysisSession> SessionWith(const SessionOptions& o) const {
    return std::make_unique<AnalysisSession>(trace_, o);
  }
  // Session options for this trace (the Python package attaches no history).
  SessionOptions Options() const {
    SessionOptions o;
    o.input = path_;
    o.attach_history = false;
    return o;
  }
  // Call without the GIL (it may compute).
  const Summary& summary() { return session_.results().Get(kSummary); }

 private:
  std::shared_ptr<const Trace> trace_;
  std::string path_;
  AnalysisSession session_;
};

// Tables are filled into numpy arrays made beforehand (with the GIL); the
// fill itself touches no Python object, so from this many rows on it runs
// with the GIL released and the caller's other threads keep running (a
// 4.5 M-slice table took 1.2 s with the GIL held).
inline constexpr size_t kFillWithoutGilRows = size_t{1} << 16;

template <typename F>
void FillMaybeWithoutGil(size_t rows, F fill) {
  if (rows < kFillWithoutGilRows) {
    fill();
    return;
  }
  py::gil_scoped_release release;
  fill();
}

// Copies a column block by block into one new numpy array of Out, a type of
// the same size whose bytes mean the same value: the column's own type, the
// uint32 row index of a row id (TrackId, SliceId, CallsiteId), the uint8 raw
// code of an enum (EventKind, Layer, TrackKind).
template <typename Out, typename T>
py::array_t<Out> BlockCopy(const ChunkedVector<T>& c) {
  static_assert(sizeof(Out) == sizeof(T) && std::is_trivially_copyable_v<T>);
  py::array_t<Out> out(static_cast<py::ssize_t>(c.size()));
  Out* dst = out.mutable_data();
  FillMaybeWithoutGil(c.size(), [&] {
    for (size_t b = 0; b < c.block_count(); ++b) {
      std::memcpy(static_cast<void*>(dst), c.block(b), c.block_items(b) * sizeof(T));
      dst += c.block_items(b);
    }
  });
  return out;
}

template <typename T>
py::array_t<T> ColumnArray(const ChunkedVector<T>& c) {
  return BlockCopy<T>(c);
}

template <typename Table>
py::array_t<uint32_t> RowIdArray(const ChunkedVector<RowId<Table>>& c) {
  return BlockCopy<uint32_t>(c);
}

// A numpy array of n values, value i being get(i).
// get(i) must not touch Python objects: the fill may run without the GIL.
template <typename T, typename Get>
py::array_t<T> ArrayOf(size_t n, Get get) {
  py::array_t<T> out(static_cast<py::ssize_t>(n));
  T* dst = out.mutable_data();
  FillMaybeWithoutGil(n, [&] {
    for (size_t i = 0; i < n; ++i) dst[i] = get(i);
  });
  return out;
}

// Member `field` of every row, as T.
template <typename T, typename Row, typename F>
py::array_t<T> FieldArray(const std::vector<Row>& rows, F Row::*field) {
  return ArrayOf<T>(rows.size(), [&](size_t i) { return static_cast<T>(rows[i].*field); });
}

// Runs f() (which may compute session results) with the GIL released.
template <typename F>
decltype(auto) WithoutGil(F f) {
  py::gil_scoped_release release;
  return f();
}

// A trace's text as a Python str, invalid UTF-8 replaced (U+FFFD): names
// come from files and need not be UTF-8, where pybind11's own conversion
// raises UnicodeDecodeError.
py::str TextOf(std::string_view s) {
  PyObject* text = PyUnicode_DecodeUTF8(s.data(), static_cast<py::ssize_t>(s.size()), "replace");
  if (text == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

// Numbers a string column densely: codes into a list holding each distinct
// string once, the shape of pandas.Categorical.from_codes(codes, categories).
class StringCoder {
 public:
  explicit StringCoder(const Trace& trace) : trace_(trace), code_of_id_(trace.strings.size(), -1) {}
  int32_t Code(StringId id) {
    int32_t& code = code_of_id_[id.raw];
    if (code < 0) {
      std::string_view s = trace_.Str(id);
      auto [it, added] = code_of_text_.emplace(s, static_cast<int32_t>(texts_.size()));
      if (added) texts_.push_back(s);
      code = it->second;
    }
    return code;
  }
  // ("categorical", codes, categories): the Python side builds the column.
  py::tuple Finish(py::array_t<int32_t> codes) {
    py::list categories;
    for (std::string_view s : texts_) categories.append(TextOf(s));
    return py::make_tuple("categorical", std::move(codes), std::move(categories));
  }

 private:
  const Trace& trace_;
  std::vector<int32_t> code_of_id_;
  std::unordered_map<std::string_view, int32_t> code_of_text_;
  std::vector<std::string_view> texts_;
};

template <typename Get>
py::tuple StringColumn(const Trace& trace, size_t n, Get get) {
  StringCoder coder(trace);
  return coder.Finish(ArrayOf<int32_t>(n, [&](size_t i) { return coder.Code(get(i)); }));
}

py::tuple StringColumn(const Trace& trace, const ChunkedVector<StringId>& c) {
  return StringColumn(trace, c.size(), [&](size_t i) { return c[i]; });
}

// The name of each row's track (a counter's, a sample's thread).
py::tuple TrackNameColumn(const Trace& t, const ChunkedVector<TrackId>& track) {
  return StringColumn(t, track.size(), [&](size_t i) {
    const uint32_t k = track[i];
    return k < t.tracks.size() ? t.tracks.name[k] : StringId{};
  });
}

// The names of every value 0..kCount-1 of enum E (uint8_t codes).
template <typename E>
py::list EnumNames() {
  py::list names;
  for (int v = 0; v < EnumInfo<E>::kCount; ++v) names.append(EnumInfo<E>::Name(static_cast<E>(v)));
  return names;
}

// An enum column as ("categorical", codes, names of every enum value).
template <typename E>
py::tuple EnumColumn(const ChunkedVector<E>& c) {
  return py::make_tuple("categorical", BlockCopy<uint8_t>(c), EnumNames<E>());
}

// A per-row value taken from the row's track (rank, device, pid, tid).
template <typename T>
py::array_t<T> GatherByTrack(const ChunkedVector<TrackId>& track, const ChunkedVector<T>& by_track, T missing) {
  return ArrayOf<T>(track.size(), [&](size_t i) {
    const uint32_t t = track[i];
    return t < by_track.size() ? by_track[t] : missing;
  });
}

// Every column of model table `table` that src/model/tables.h marks kPython,
// in declaration order: numbers as numpy arrays, strings and enums as
// categoricals.
template <typename Table>
py::dict ExportTable(const Trace& trace, const Table& table) {
  py::dict d;
  Table::ColumnsWithInfo(table, [&](const ColumnInfo& info, const auto& column) {
    using T = std::remove_cvref_t<decltype(column[0])>;
    if (info.exported != ColumnExport::kPython) return;
    if constexpr (std::is_same_v<T, StringId>) {
      d[info.name] = StringColumn(trace, column);
    } else if constexpr (std::is_enum_v<T>) {
      d[info.name] = EnumColumn(column);
    } else if constexpr (kIsRowId<T>) {
      d[info.name] = RowIdArray(column);
    } else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, char>) {
      d[info.name] = ColumnArray(column);
    } else {
      static_assert(std::is_same_v<T, char>, "add a mapping for this column type");
    }
  });
  return d;
}

py::dict SliceColumns(PyTrace& self) {
  const Trace& t = self.trace();
  const SliceTable& s = t.slices;
  py::dict d = ExportTable(t, s);
  d["rank"] = GatherByTrack(s.track, t.tracks.rank, kNoRank);
  d["device"] = GatherByTrack(s.track, t.tracks.device, kHostDevice);
  d["pid"] = GatherByTrack(s.track, t.tracks.pid, int64_t{-1});
  d["tid"] = GatherByTrack(s.track, t.tracks.tid, int64_t{-1});
  return d;
}

py::dict TrackColumns(PyTrace& self) { return ExportTable(self.trace(), self.trace().tracks); }

py::dict StepColumns(PyTrace& self) { return ExportTable(self.trace(), self.trace().steps); }

py::dict CounterColumns(PyTrace& self) {
  const Trace& t = self.trace();
  const CounterTable& c = t.counters;
  py::dict d = ExportTable(t, c);
  d["name"] = TrackNameColumn(t, c.track);
  d["rank"] = GatherByTrack(c.track, t.tracks.rank, kNoRank);
  d["device"] = GatherByTrack(c.track, t.tracks.device, kHostDevice);
  return d;
}

py::dict FlowColumns(PyTrace& self) { return ExportTable(self.trace(), self.trace().flows); }

// The summary's op table in nanoseconds, the rows of `aiprof summary`'s
// ops table (TopOpsBySelf: largest self time first, the profiler's wrapper
// spans such as ProfilerStep#N left out).
py::dict OpColumns(PyTrace& self) {
  const Summary& s = WithoutGil([&]() -> const Summary& { return self.summary(); });
  const std::vector<size_t> rows = TopOpsBySelf(self.trace(), s);
  const size_t n = rows.size();
  auto op = [&](size_t i) -> const OpStat& { return s.ops[rows[i]]; };
  py::dict d;
  d["name"] = StringColumn(self.trace(), n, [&](size_t i) { return op(i).name; });
  d["category"] = StringColumn(self.trace(), n, [&](size_t i) { return op(i).category; });
  d["count"] = ArrayOf<int64_t>(n, [&](size_t i) { return static_cast<int64_t>(op(i).count); });
  d["self_ns"] = ArrayOf<int64_t>(n, [&](size_t i) { return op(i).self_ns; });
  d["total_ns"] = ArrayOf<int64_t>(n, [&](size_t i) { return op(i).total_ns; });
  d["mean_ns"] = ArrayOf<double>(n, [&](size_t i) { return op(i).mean_ns; });
  d["p50_ns"] = ArrayOf<double>(n, [&](size_t i) { return op(i).p50_ns; });
  d["p99_ns"] = ArrayOf<double>(n, [&](size_t i) { return op(i).p99_ns; });
  d["max_ns"] = ArrayOf<int64_t>(n, [&](size_t i) { return op(i).max_ns; });
  return d;
}

// Host stack samples, one row per sample: ts_ns, weight_ns, track, pid,
// tid, thread (the track's name), leaf (function of the leaf frame), module
// (its binary or file), leaf_kind, python (a Python frame on the stack) and
// callstack: the frames root first joined by ";" (the folded form of flame
// graphs) as a categorical holding each distinct stack once.
py::dict SampleColumns(PyTrace& self) {
  const Trace& t = self.trace();
  const StackSampleTable& s = t.samples;
  const CallsiteTable& c = t.callsites;
  const size_t n = s.size();
  // Per call site: a Python frame on its path (parents precede children).
  std::vector<uint8_t> python(c.size(), 0);
  for (size_t i = 0; i < c.size(); ++i) {
    const uint32_t up = c.parent[i];
    python[i] = c.kind[i] == FrameKind::kPython || (up != kNoCallsite && up < i && python[up]);
  }
  auto valid = [&](uint32_t cs) { return cs != kNoCallsite && cs < c.size(); };
  py::array_t<bool> has_python(static_cast<py::ssize_t>(n));
  std::vector<int32_t> stack_code(c.size(), -1);
  py::array_t<int32_t> stacks(static_cast<py::ssize_t>(n));
  py::list stack_texts;
  int32_t empty_code = -1;
  std::vector<std::string_view> frames;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t cs = s.callsite[i];
    has_python.mutable_data()[i] = valid(cs) && python[cs];
    if (!valid(cs)) {  // no stack: the empty string, its own category
      if (empty_code < 0) {
        empty_code = static_cast<int32_t>(py::len(stack_texts));
        stack_texts.append(py::str(""));
      }
      stacks.mutable_data()[i] = empty_code;
      continue;
    }
    int32_t& code = stack_code[cs];
    if (code < 0) {
      frames.clear();
      for (uint32_t x = cs; valid(x); x = c.parent[x]) frames.push_back(t.Str(c.frame[x]));
      std::string text;
      for (size_t k = frames.size(); k-- > 0;) {
        text += frames[k];
        if (k > 0) text += ';';
      }
      code = static_cast<int32_t>(py::len(stack_texts));
      stack_texts.append(TextOf(text));
    }
    stacks.mutable_data()[i] = code;
  }
  auto leaf_string = [&](const ChunkedVector<StringId>& column) {
    return StringColumn(t, n, [&](size_t i) { return valid(s.callsite[i]) ? column[s.callsite[i]] : StringId{}; });
  };
  py::array_t<uint8_t> leaf_kind = ArrayOf<uint8_t>(n, [&](size_t i) {
    const uint32_t cs = s.callsite[i];
    return static_cast<uint8_t>(valid(cs) ? c.kind[cs] : FrameKind::kUnknown);
  });
  py::dict d;
  d["ts_ns"] = ColumnArray(s.ts_ns);
  d["weight_ns"] = ColumnArray(s.weight_ns);
  d["track"] = RowIdArray(s.track);
  d["pid"] = GatherByTrack(s.track, t.tracks.pid, int64_t{-1});
  d["tid"] = GatherByTrack(s.track, t.tracks.tid, int64_t{-1});
  d["thread"] = TrackNameColumn(t, s.track);
  d["leaf"] = leaf_string(c.frame);
  d["module"] = leaf_string(c.module);
  d["leaf_kind"] = py::make_tuple("categorical", leaf_kind, EnumNames<FrameKind>());
  d["python"] = has_python;
  d["callstack"] = py::make_tuple("categorical", stacks, stack_texts);
  return d;
}

// The attribution tree's module and op nodes (src/analysis/attribution), one
// row per node, per steady step: path, name, kind, time class, op class,
// depth, parent (row index, -1 for top-level nodes), instances, host total
// and self, device time.
py::dict ModuleColumns(PyTrace& self) {
  const AttributionResult* r = WithoutGil([&] { return &self.session().results().Get(kAttribution); });
  const AttributionNodes& nodes = r->nodes;
  // Row k is node k + 1 (every node but the root); a parent precedes its
  // children, so a node's depth is its parent's plus one.
  const size_t n = nodes.size() > 0 ? nodes.size() - 1 : 0;
  py::array_t<int64_t> parent(n), depth(n);
  for (size_t k = 0; k < n; ++k) {
    const uint32_t up = nodes.parent[k + 1];
    const bool top = up == 0 || up == kNoNode;
    parent.mutable_data()[k] = top ? -1 : static_cast<int64_t>(up) - 1;
    depth.mutable_data()[k] = top ? 0 : depth.data()[up - 1] + 1;
  }
  auto per_step = [&](const auto& column) {
    return ArrayOf<double>(n, [&](size_t k) { return r->PerStep(static_cast<int64_t>(column[k + 1])); });
  };
  // Categoricals as every other table's strings: a list here was a Python
  // list under as_frame=False (not the documented numpy array) and an
  // object column in pandas.
  auto texts = [&](auto text_of) {
    py::array_t<int32_t> codes(static_cast<py::ssize_t>(n));
    std::unordered_map<std::string, int32_t> code_of;
    py::list categories;
    for (size_t k = 0; k < n; ++k) {
      std::string text(text_of(static_cast<uint32_t>(k + 1)));
      auto [it, added] = code_of.emplace(text, static_cast<int32_t>(code_of.size()));
      if (added) categories.append(TextOf(text));
      codes.mutable_data()[k] = it->second;
    }
    return py::make_tuple("categorical", std::move(codes), std::move(categories));
  };
  py::dict d;
  d["path"] = texts([&](uint32_t x) { return NodePath(self.trace(), *r, x); });
  d["name"] = texts([&](uint32_t x) { return NodeLabel(self.trace(), *r, x); });
  d["kind"] = texts([&](uint32_t x) { return AttributionKindName(nodes.kind[x]); });
  d["time_class"] = texts([&](uint32_t x) { return TimeClassName(nodes.time_class[x]); });
  d["op_class"] = texts([&](uint32_t x) { return OpClassName(nodes.op_class[x]); });
  d["depth"] = depth;
  d["parent"] = parent;
  d["count_per_step"] = per_step(nodes.count);
  d["total_ns"] = per_step(nodes.total_ns);
  d["self_ns"] = per_step(nodes.self_ns);
  d["device_ns"] = per_step(nodes.device_total_ns);
  d["share"] = ArrayOf<double>(n, [&](size_t k) {
    return r->wall_ns > 0 ? static_cast<double>(nodes.total_ns[k + 1]) / static_cast<double>(r->wall_ns) : 0;
  });
  return d;
}

py::dict DeviceColumns(PyTrace& self) {
  const Summary& s = WithoutGil([&]() -> const Summary& { return self.summary(); });
  py::dict d;
  d["rank"] = FieldArray<int32_t>(s.devices, &DeviceStat::rank);
  d["device"] = FieldArray<int32_t>(s.devices, &DeviceStat::device);
  d["busy_ns"] = FieldArray<int64_t>(s.devices, &DeviceStat::busy_ns);
  d["span_ns"] = FieldArray<int64_t>(s.devices, &DeviceStat::span_ns);
  d["utilization"] = FieldArray<double>(s.devices, &DeviceStat::utilization);
  return d;
}

py::bytes SummaryJson(PyTrace& self) {
  std::string json;
  {
    py::gil_scoped_release release;
    SummaryReportOptions options;
    options.top_n = 0;  // every op, like `aiprof summary --format json --top 0`
    AddResultFigures(self.session().results(), &options);
    json = SummaryToJson(self.trace(), self.summary(), options);
  }
  return py::bytes(json);
}

py::bytes AnalyzeJson(PyTrace& self, const std::vector<std::string>& only, const std::string& device) {
  AnalyzeOptions options;
  options.only = only;
  options.device = device;
  for (const std::string& name : only) {
    bool known = false;
    for (std::string_view n : AnalysisNames()) known |= n == name;
    if (!known) throw py::value_error("unknown analysis '" + name + "'");
  }
  std::string json;
  {
    py::gil_scoped_release release;
    if (only.empty() && device.empty()) {
      json = render::RenderJson(AnalyzeToDocument(self.session().analyses(), self.session().results()));
    } else {
      SessionOptions o = self.Options();
      o.analyze = options;
      std::unique_ptr<AnalysisSession> session = self.SessionWith(o);
      json = render::RenderJson(AnalyzeToDocument(session->analyses(), session->results()));
    }
  }
  return py::bytes(json);
}

// Diagnosis plus the suggestions that fit `target` and `constraints`, as
// `aiprof suggest --format json` writes them (without knowledge-card history).
py::bytes DiagnoseJson(PyTrace& self, const std::string& target, const std::string& constraints,
                       const std::vector<std::string>& rule_paths, bool builtin_rules, const std::string& device) {
  if (target != "latency" && target != "throughput" && target != "memory") {
    throw py::value_error("target must be 'latency', 'throughput' or 'memory', not '" + target + "'");
  }
  std::string json;
  {
    py::gil_scoped_release release;
    if (!builtin_rules && rule_paths.empty()) throw AiprofError("no rules to apply (builtin_rules=False without rules)");
    SessionOptions o = self.Options();
    o.rule_paths = rule_paths;
    o.no_builtin_rules = !builtin_rules;
    o.suggest.target = target;
    o.suggest.constraints = ValueOrThrow(ParseConstraints(constraints));
    o.analyze.device = device;
    // The trace's own session when every option is the default one.
    const bool defaults = rule_paths.empty() && builtin_rules && device.empty() && target == "latency" &&
                          o.suggest.constraints.empty();
    std::unique_ptr<AnalysisSession> own;
    if (!defaults) own = self.SessionWith(o);
    AnalysisSession& session = defaults ? self.session() : *own;
    const Diagnosis* diagnosis = ValueOrThrow(session.diagnosis());
    const SuggestResult* suggestions = ValueOrThrow(session.suggestions());
    DiagnosisReport report{self.path(), &session.metrics(), diagnosis, suggestions, &session.options().suggest};
    json = TreeToJson(DiagnosisTree(report));
  }
  return py::bytes(json);
}

struct RunInput {
  PyTrace* trace = nullptr;  // a loaded trace, or
  std::string path;          // a trace or benchmark result file
};

RunInput ToRunInput(const py::object& o) {
  RunInput in;
  if (py::isinstance<PyTrace>(o)) {
    in.trace = o.cast<PyTrace*>();
  } else {
    in.path = py::bytes(py::module_::import("os").attr("fsencode")(o));  // any file name, as open()
  }
  return in;
}

// One side: a trace or path, or a list/tuple of them (one per run).
std::vector<RunInput> ToRunInputs(const py::object& o) {
  std::vector<RunInput> out;
  if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) {
    for (const py::handle& h : o) out.push_back(ToRunInput(py::reinterpret_borrow<py::object>(h)));
    if (out.empty()) throw py::value_error("validate: an empty list of runs");
  } else {
    out.push_back(ToRunInput(o));
  }
  return out;
}

// `message` (an error of the code the CLI shares) with the CLI's flags named
// as this package's keyword arguments: "(--unit)" -> "(unit=)",
// "--unit NAME" -> "unit=\"NAME\"", "--fix-id ID" (the id given) ->
// "fix_id='ID'". Flags the call has no argument for stay as they are.
std::string NameArguments(std::string message, const std::vector<std::string>& arguments, const std::string& fix_id) {
  if (!fix_id.empty()) {
    const std::string cli = "--fix-id " + fix_id;
    if (size_t at = message.find(cli); at != std::string::npos)
      message.replace(at, cli.size(), "fix_id='" + fix_id + "'");
  }
  for (const std::string& arg : arguments) {
    std::string flag = "--" + arg;
    std::replace(flag.begin(), flag.end(), '_', '-');
    for (size_t at = message.find(flag); at != std::string::npos; at = message.find(flag, at)) {
      const size_t end = at + flag.size();
      const char next = end < message.size() ? message[end] : ' ';
      const char before = at > 0 ? message[at - 1] : ' ';
      // A longer flag, or inside a word or path ("/tmp/a--unit/x.json").
      if (std::isalnum(static_cast<unsigned char>(next)) || next == '-' || next == '_' || next == '/' ||
          (before != ' ' && before != '(')) {
        at = end;
        continue;
      }
      std::string with = arg + "=";
      size_t cut = end;
      if (message.compare(end, 5, " NAME") == 0) {  // "--unit NAME": a placeholder for the value
        with += "\"NAME\"";
        cut = end + 5;
      }
      message.replace(at, cut - at, with);
      at += with.size();
    }
  }
  return message;
}

py::bytes ValidateJsonOf(const py::object& before, const py::object& after, const std::vector<std::string>& metrics,
                         const std::string& test, double alpha, double min_effect, const std::string& unit,
                         double batch_size, const std::string& bench, const std::string& sample_unit, int resamples,
                         uint64_t seed, const std::string& fix_id, int warmup_steps, const std::string& scenario,
                         const std::string& statistic) {
  ValidationOptions options;
  if (!metrics.empty()) options.metrics = metrics;
  ThrowIfError(CheckMetricNames(options.metrics));
  options.test = ValueOrThrow(ParseTestKind(test));
  // The ranges of the CLI's --alpha, --min-effect, --resamples and
  // --batch-size (src/cli/flags.cc): NaN, infinity or a negative batch size
  // were taken silently (no batch size, every figure None, every change
  // 'no_change'), and resamples had no ceiling (2**31 - 1 ran for an hour).
  if (!(alpha >= 1e-9 && alpha <= 0.5)) throw py::value_error("alpha must be in [1e-9, 0.5]");
  if (!(min_effect >= 0 && std::isfinite(min_effect)))
    throw py::value_error("min_effect must be a finite non-negative fraction");
  if (resamples < 100 || resamples > 1000000) throw py::value_error("resamples must be 100 to 1000000");
  if (!(batch_size >= 0 && std::isfinite(batch_size)))
    throw py::value_error("batch_size must be a positive number of items per sample (0: none)");
  if (warmup_steps < -1) throw py::value_error("warmup_steps must be -1 (detect) or a count of steps (0 keeps all)");
  // As --scenario and --statistic (ScenarioFixFlags): a statistic needs a
  // scenario, a scenario excludes fix_id; the scenario is parsed before the work.
  if (!statistic.empty() && scenario.empty()) throw py::value_error("statistic needs scenario");
  if (!scenario.empty() && !fix_id.empty()) throw py::value_error("give fix_id or scenario, not both");
  const bool judge_on_mean = scenario.empty() ? false : ValueOrThrow(JudgeOnMean(scenario, statistic));
  options.alpha = alpha;
  options.min_effect = min_effect;
  options.bootstrap_resamples = resamples;
  options.seed = seed;
  std::vector<RunInput> b = ToRunInputs(before), a = ToRunInputs(after);
  // As `aiprof validate` (ValidateRuns): a loaded Trace is read through its
  // own session, a path is loaded there.
  ValidateRunsOptions vo;
  vo.validation = options;
  vo.inputs.unit = unit;
  vo.inputs.batch_size = batch_size;
  vo.inputs.bench = bench;
  vo.inputs.sample_unit = sample_unit;
  vo.inputs.warmup_steps = warmup_steps;
  vo.session.attach_history = false;  // as every session of the package
  vo.prediction.fix_id = fix_id;
  vo.prediction.fix_id_argument = "fix_id=";
  // The package reads no knowledge database (attach_history false): a
  // scenario's prediction is the replay's, uncorrected by past cases.
  vo.prediction.scenario = scenario;
  vo.prediction.mean = judge_on_mean;
  vo.before_side = "before";
  vo.after_side = "after";
  vo.fix_id_argument = "fix_id";
  vo.scenario_argument = "scenario";
  auto runs = [](const std::vector<RunInput>& side) {
    std::vector<ValidateRun> out;
    for (const RunInput& in : side) {
      out.push_back(in.trace ? ValidateRun::Loaded(in.trace->path(), &in.trace->session())
                             : ValidateRun::File(in.path));
    }
    return out;
  };
  std::vector<ValidateRun> before_runs = runs(b), after_runs = runs(a);
  StatusOr<ValidationResult> result = [&] {
    py::gil_scoped_release release;
    return ValidateRuns(before_runs, after_runs, vo);
  }();
  std::string json = ValidationToJson(ValueOrThrow(std::move(result)));
  return py::bytes(json);
}

// aiprof.validate; its errors name this package's arguments, not the CLI's flags.
py::bytes ValidateJson(const py::object& before, const py::object& after, const std::vector<std::string>& metrics,
                       const std::string& test, double alpha, double min_effect, const std::string& unit,
                       double batch_size, const std::string& bench, const std::string& sample_unit, int resamples,
                       uint64_t seed, const std::string& fix_id, int warmup_steps, const std::string& scenario,
                       const std::string& statistic) {
  try {
    return ValidateJsonOf(before, after, metrics, test, alpha, min_effect, unit, batch_size, bench, sample_unit,
                          resamples, seed, fix_id, warmup_steps, scenario, statistic);
  } catch (const AiprofError& e) {
    throw AiprofError(NameArguments(e.what(),
                                    {"unit", "bench", "sample_unit", "batch_size", "metrics", "fix_id", "test", "alpha",
                                     "min_effect", "resamples", "seed", "warmup_steps", "scenario", "statistic"},
                                    fix_id));
  }
}

std::unique_ptr<PyTrace> Load(const py::object& path_like) {
  // The file name's bytes: a str cannot hold a name that is not UTF-8
  // (os.fsdecode makes surrogates of it, which no UTF-8 conversion takes).
  std::string path = py::bytes(py::module_::import("os").attr("fsencode")(path_like));
  StatusOr<std::unique_ptr<Trace>> trace = [&] {
    py::gil_scoped_release release;
    return ImportTrace(path);
  }();
  return std::make_unique<PyTrace>(ValueOrThrow(std::move(trace)), path);
}

// Several SDK files of one run, as the CLI's inputs (ImportTraces); the
// trace's path is theirs joined by spaces, as the CLI's `source`.
std::unique_ptr<PyTrace> LoadFiles(const std::vector<std::string>& paths) {
  std::string label;
  for (const std::string& p : paths) label += (label.empty() ? "" : " ") + p;
  StatusOr<std::unique_ptr<Trace>> trace = [&] {
    py::gil_scoped_release release;
    return ImportTraces(paths);
  }();
  return std::make_unique<PyTrace>(ValueOrThrow(std::move(trace)), label);
}

}  // namespace

void DefineAnalysis(py::module_& m) {
  // Messages name files, whose names need not be UTF-8: their bytes are
  // shown as \xNN (pybind11's own translation raised UnicodeDecodeError).
  static py::exception<AiprofError> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const AiprofError& e) {
      const std::string_view what = e.what();
      PyObject* message = PyUnicode_DecodeUTF8(what.data(), static_cast<py::ssize_t>(what.size()), "backslashreplace");
      if (message == nullptr) return;
      PyErr_SetObject(error.ptr(), message);
      Py_DECREF(message);
    }
  });
  py::class_<PyTrace>(m, "Trace")
      .def_property_readonly("path", [](PyTrace& t) { return py::bytes(t.path()); })  // os.fsdecode()d
      .def_property_readonly("slice_count", [](PyTrace& t) { return t.trace().slices.size(); })
      // Texts of the trace (and its file name): invalid UTF-8 replaced, as in
      // the tables, where a plain conversion raised UnicodeDecodeError.
      .def_property_readonly("metadata",
                             [](PyTrace& t) {
                               py::dict d;
                               for (const auto& [key, value] : t.trace().metadata) d[TextOf(key)] = TextOf(value);
                               return d;
                             })
      .def("summary_json", &SummaryJson)
      .def("slice_columns", &SliceColumns)
      .def("track_columns", &TrackColumns)
      .def("step_columns", &StepColumns)
      .def("counter_columns", &CounterColumns)
      .def("flow_columns", &FlowColumns)
      .def("op_columns", &OpColumns)
      .def("device_columns", &DeviceColumns)
      .def("module_columns", &ModuleColumns)
      .def("sample_columns", &SampleColumns)
      .def("analyze_json", &AnalyzeJson, py::arg("only"), py::arg("device"))
      .def("sql_columns",
           [](PyTrace& t, const std::string& sql, size_t max_rows, double timeout_s, int64_t max_memory) {
             return QueryColumns(t.trace(), sql, max_rows, timeout_s, max_memory);
           })
      .def("diagnose_json", &DiagnoseJson, py::arg("target"), py::arg("constraints"), py::arg("rules"),
           py::arg("builtin_rules"), py::arg("device"));
  DefineQuery(m);
  m.def("load", &Load, py::arg("path"));
  m.def("load_files", &LoadFiles, py::arg("paths"));
  m.def("validate_json", &ValidateJson, py::arg("before"), py::arg("after"), py::arg("metrics"), py::arg("test"),
        py::arg("alpha"), py::arg("min_effect"), py::arg("unit"), py::arg("batch_size"), py::arg("bench"),
        py::arg("sample_unit"), py::arg("resamples"), py::arg("seed"), py::arg("fix_id"), py::arg("warmup_steps"),
        py::arg("scenario"), py::arg("statistic"));
  m.def("analysis_names", [] {
    std::vector<std::string> names;
    for (std::string_view n : AnalysisNames()) names.emplace_back(n);
    return names;
  });
}

}  // namespace python
}  // namespace aiprof
