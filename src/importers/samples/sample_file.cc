#include "src/importers/samples/sample_file.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>

#include "src/base/ascii.h"
#include "src/importers/common/byte_source.h"
#include "src/importers/common/importer_registry.h"
#include "src/model/native_file.h"

namespace aiprof {
namespace {

using simdjson::dom::element;

constexpr std::string_view kQualityNames[] = {"accuracy", "precision", "recall", "f1", "top1", "top5"};

bool IsQualityName(std::string_view k) {
  return std::find(std::begin(kQualityNames), std::end(kQualityNames), k) != std::end(kQualityNames);
}

bool ParseDouble(std::string_view s, double* out) {
  s = TrimAsciiSpace(s);
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size() && std::isfinite(*out);
}

// Unit suffix of a column or key name ("latency_ms" -> "ms"), or "".
std::string_view UnitSuffix(std::string_view name) {
  for (std::string_view u : {"_ns", "_us", "_ms", "_s"}) {
    if (name.size() > u.size() && name.substr(name.size() - u.size()) == u) return name.substr(name.size() - u.size() + 1);
  }
  return "";
}

bool IsLatencyName(std::string_view name) {
  std::string_view base = name.substr(0, name.size() - (UnitSuffix(name).empty() ? 0 : UnitSuffix(name).size() + 1));
  for (std::string_view k : {"latency", "latencies", "time", "times", "duration", "durations", "samples", "elapsed", "value", "values"}) {
    if (base == k) return true;
  }
  return false;
}

std::string LineError(const std::string& path, size_t line, const std::string& what) {
  return path + ":" + std::to_string(line) + ": " + what;
}

// ---- text and CSV ----

std::vector<std::string_view> SplitCsv(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == ',') {
      std::string_view f = TrimAsciiSpace(line.substr(start, i - start));
      if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
      out.push_back(f);
      start = i + 1;
    }
  }
  return out;
}

StatusOr<SampleFile> ParseText(const std::string& path, std::string_view content, const SampleFileOptions& options) {
  SampleFile out;
  out.format = "text";
  std::vector<std::string> header;
  int latency_col = -1, throughput_col = -1;
  std::map<int, std::string> quality_cols;
  double scale = NanosecondsPerUnit(options.default_unit);
  size_t line_no = 0;
  for (size_t pos = 0; pos <= content.size();) {
    size_t end = content.find('\n', pos);
    if (end == std::string_view::npos) end = content.size();
    std::string_view line = TrimAsciiSpace(content.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string_view> fields = SplitCsv(line);
    double first = 0;
    if (header.empty() && out.latency_ns.empty() && !ParseDouble(fields[0], &first)) {
      out.format = "csv";
      for (size_t i = 0; i < fields.size(); ++i) {
        std::string name(fields[i]);
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
        header.push_back(name);
        if (latency_col < 0 && (IsLatencyName(name) || fields.size() == 1)) latency_col = static_cast<int>(i);
        if (name == "throughput" || name == "items_per_second") throughput_col = static_cast<int>(i);
        if (IsQualityName(name)) quality_cols[static_cast<int>(i)] = name;
      }
      if (latency_col < 0) {
        return ErrStatus(LineError(path, line_no, "no latency column in the header (expected one of latency, time, duration, "
                                                  "samples, value, optionally with _ns/_us/_ms/_s)"));
      }
      std::string_view suffix = UnitSuffix(header[latency_col]);
      if (!suffix.empty()) scale = NanosecondsPerUnit(suffix);
      continue;
    }
    size_t want = header.empty() ? 1 : header.size();
    if (fields.size() != want) {
      return ErrStatus(LineError(path, line_no, "expected " + std::to_string(want) + " field(s), found " + std::to_string(fields.size())));
    }
    auto number = [&](int col, double* v) -> Status {
      if (!ParseDouble(fields[col], v)) {
        return ErrStatus(LineError(path, line_no, "field " + std::to_string(col + 1) + " '" + std::string(fields[col].substr(0, 40)) +
                                                      "' is not a number"));
      }
      return OkStatus();
    };
    double v = 0;
    RETURN_IF_ERROR(number(header.empty() ? 0 : latency_col, &v));
    if (v < 0) return ErrStatus(LineError(path, line_no, "negative latency"));
    // 1e300 s is finite but not in ns (input trial, 'in': it became inf).
    if (!std::isfinite(v * scale)) return ErrStatus(LineError(path, line_no, "latency too large to hold in ns"));
    out.latency_ns.push_back(v * scale);
    if (throughput_col >= 0) {
      RETURN_IF_ERROR(number(throughput_col, &v));
      out.items_per_second.push_back(v);
    }
    for (const auto& [col, name] : quality_cols) {
      RETURN_IF_ERROR(number(col, &v));
      out.quality[name].push_back(v);
    }
  }
  if (out.latency_ns.empty()) return ErrStatus(path + ": no samples in the file");
  return out;
}

// ---- JSON ----

// Line and column of byte `offset` in `content`.
std::string Position(std::string_view content, size_t offset) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < offset && i < content.size(); ++i) {
    if (content[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

// Where the first JSON error lies: walks the document with On-Demand, which
// stops at the offending byte (DOM parsing reports no position).
std::string LocateJsonError(const simdjson::padded_string& json) {
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (parser.iterate(json).get(doc)) return "1:1";
  std::function<simdjson::error_code(simdjson::ondemand::value)> walk = [&](simdjson::ondemand::value v) -> simdjson::error_code {
    simdjson::ondemand::json_type t;
    if (auto e = v.type().get(t)) return e;
    if (t == simdjson::ondemand::json_type::array) {
      simdjson::ondemand::array arr;
      if (auto e = v.get_array().get(arr)) return e;
      for (auto item : arr) {
        simdjson::ondemand::value x;
        if (auto e = item.get(x)) return e;
        if (auto e = walk(x)) return e;
      }
      return simdjson::SUCCESS;
    }
    if (t == simdjson::ondemand::json_type::object) {
      simdjson::ondemand::object obj;
      if (auto e = v.get_object().get(obj)) return e;
      for (auto field : obj) {
        simdjson::ondemand::value x;
        if (auto e = field.value().get(x)) return e;
        if (auto e = walk(x)) return e;
      }
      return simdjson::SUCCESS;
    }
    if (t == simdjson::ondemand::json_type::string) return v.get_string().error();
    if (t == simdjson::ondemand::json_type::number) return v.get_double().error();
    if (t == simdjson::ondemand::json_type::boolean) return v.get_bool().error();
    return v.is_null().error();
  };
  simdjson::ondemand::value root;
  simdjson::error_code err = doc.get_value().get(root);
  if (!err) err = walk(root);
  const char* where = nullptr;
  if (err && !doc.current_location().get(where) && where) {
    return Position(std::string_view(json.data(), json.size()), static_cast<size_t>(where - json.data()));
  }
  return "?";
}

class JsonReader {
 public:
  JsonReader(const std::string& path) : path_(path) {}

  Status Error(const std::string& at, const std::string& what) const { return ErrStatus(path_ + ": " + at + ": " + what); }

  StatusOr<double> Number(element e, const std::string& at) const {
    double d = 0;
    if (e.is_int64()) return static_cast<double>(int64_t(e));
    if (e.is_uint64()) return static_cast<double>(uint64_t(e));
    if (e.get_double().get(d) || !std::isfinite(d)) return Error(at, "expected a number");
    return d;
  }

  StatusOr<std::vector<double>> Numbers(element e, const std::string& at, double scale) const {
    simdjson::dom::array arr;
    if (e.get_array().get(arr)) return Error(at, "expected an array of numbers");
    std::vector<double> out;
    size_t i = 0;
    for (element x : arr) {
      std::string here = at + "[" + std::to_string(i++) + "]";
      ASSIGN_OR_RETURN(double v, Number(x, here));
      if (v < 0) return Error(here, "negative latency");
      if (!std::isfinite(v * scale)) return Error(here, "latency too large to hold in ns");
      out.push_back(v * scale);
    }
    return out;
  }

 private:
  std::string path_;
};

StatusOr<SampleFile> ParseHyperfine(const JsonReader& r, element root, const SampleFileOptions& options) {
  SampleFile out;
  out.format = "hyperfine";
  simdjson::dom::array results = root["results"].get_array().value_unsafe();
  std::vector<std::string> names;
  size_t i = 0, chosen = SIZE_MAX;
  for (element res : results) {
    std::string_view command;
    if (res["command"].get_string().get(command)) return r.Error("results[" + std::to_string(i) + "]", "no \"command\" string");
    names.emplace_back(command);
    if (options.benchmark.empty() ? results.size() == 1 : command == options.benchmark) chosen = i;
    ++i;
  }
  if (chosen == SIZE_MAX) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "'" : ", '") + n + "'";
    return r.Error("results", options.benchmark.empty() ? "holds " + std::to_string(names.size()) + " commands (" + list + "); choose one with --bench"
                                                        : "no command '" + options.benchmark + "' (has " + list + ")");
  }
  std::string at = "results[" + std::to_string(chosen) + "]";
  element res = results.at(chosen).value_unsafe();
  element times;
  if (res["times"].get(times)) return r.Error(at, "no per-run \"times\" (export with hyperfine --export-json from hyperfine 1.6 or later)");
  ASSIGN_OR_RETURN(out.latency_ns, r.Numbers(times, at + ".times", 1e9));  // hyperfine writes seconds
  out.benchmark = names[chosen];
  return out;
}

StatusOr<SampleFile> ParseGoogleBenchmark(const JsonReader& r, element root, const SampleFileOptions& options) {
  SampleFile out;
  out.format = "google-benchmark";
  std::map<std::string, std::vector<size_t>> runs;  // run_name -> iteration entries
  std::vector<std::string> order;
  simdjson::dom::array benchmarks = root["benchmarks"].get_array().value_unsafe();
  size_t i = 0, aggregates = 0;
  for (element b : benchmarks) {
    std::string at = "benchmarks[" + std::to_string(i) + "]";
    std::string_view name, run_name, run_type = "iteration";
    if (b["name"].get_string().get(name)) return r.Error(at, "no \"name\" string");
    if (b["run_name"].get_string().get(run_name)) run_name = name;
    if (b["run_type"].get_string().get(run_type)) run_type = "iteration";
    if (run_type == "aggregate") {
      ++aggregates;
    } else {
      if (!runs.count(std::string(run_name))) order.emplace_back(run_name);
      runs[std::string(run_name)].push_back(i);
    }
    ++i;
  }
  if (runs.empty()) {
    return r.Error("benchmarks", aggregates ? "only aggregates (mean, median, stddev); rerun without --benchmark_report_aggregates_only"
                                            : "no benchmark runs");
  }
  std::string chosen = options.benchmark;
  if (chosen.empty()) {
    if (runs.size() != 1) {
      std::string list;
      for (const std::string& n : order) list += (list.empty() ? "'" : ", '") + n + "'";
      return r.Error("benchmarks", "holds " + std::to_string(runs.size()) + " benchmarks (" + list + "); choose one with --bench");
    }
    chosen = order[0];
  } else if (!runs.count(chosen)) {
    return r.Error("benchmarks", "no benchmark '" + chosen + "'");
  }
  out.benchmark = chosen;
  for (size_t idx : runs[chosen]) {
    std::string at = "benchmarks[" + std::to_string(idx) + "]";
    element b = benchmarks.at(idx).value_unsafe();
    bool failed = false;
    if (!b["error_occurred"].get_bool().get(failed) && failed) return r.Error(at, "the benchmark reported an error");
    std::string_view unit = "ns";
    if (b["time_unit"].get_string().get(unit)) unit = "ns";
    double scale = NanosecondsPerUnit(unit);
    if (scale == 0) return r.Error(at + ".time_unit", "unknown unit '" + std::string(unit) + "'");
    element t;
    if (b["real_time"].get(t)) return r.Error(at, "no \"real_time\"");
    ASSIGN_OR_RETURN(double v, r.Number(t, at + ".real_time"));
    // A negative real_time was taken as a sample (input trial, 'in').
    if (v < 0) return r.Error(at + ".real_time", "negative latency");
    if (!std::isfinite(v * scale)) return r.Error(at + ".real_time", "latency too large to hold in ns");
    out.latency_ns.push_back(v * scale);
    element ips;
    if (!b["items_per_second"].get(ips)) {
      ASSIGN_OR_RETURN(double x, r.Number(ips, at + ".items_per_second"));
      out.items_per_second.push_back(x);
    }
    for (std::string_view q : kQualityNames) {
      element qv;
      if (b[q].get(qv)) continue;
      ASSIGN_OR_RETURN(double x, r.Number(qv, at + "." + std::string(q)));
      out.quality[std::string(q)].push_back(x);
    }
  }
  if (!out.items_per_second.empty() && out.items_per_second.size() != out.latency_ns.size()) {
    return r.Error("benchmarks", "items_per_second is on some repetitions of '" + chosen + "' but not all");
  }
  return out;
}

// {"unit": "ms", "latencies": [...], "accuracy": 0.91, "quality": {...}}
StatusOr<SampleFile> ParseJsonObject(const JsonReader& r, element root, const SampleFileOptions& options) {
  SampleFile out;
  out.format = "json";
  std::string_view unit = options.default_unit;
  if (root["unit"].get_string().get(unit)) unit = options.default_unit;
  simdjson::dom::object obj = root.get_object().value_unsafe();
  for (auto [key, value] : obj) {
    std::string k(key);
    if (IsLatencyName(k) && value.is_array()) {
      if (!out.latency_ns.empty()) return r.Error(k, "a second latency list");
      std::string_view u = UnitSuffix(k).empty() ? unit : UnitSuffix(k);
      double scale = NanosecondsPerUnit(u);
      if (scale == 0) return r.Error("unit", "unknown unit '" + std::string(u) + "' (expected ns, us, ms or s)");
      ASSIGN_OR_RETURN(out.latency_ns, r.Numbers(value, k, scale));
    } else if (k == "throughput" || k == "items_per_second") {
      ASSIGN_OR_RETURN(out.items_per_second, r.Numbers(value, k, 1));
    } else if (IsQualityName(k) || k == "quality") {
      auto add = [&](const std::string& name, element v, const std::string& at) -> Status {
        if (v.is_array()) {
          ASSIGN_OR_RETURN(std::vector<double> xs, r.Numbers(v, at, 1));
          for (double x : xs) out.quality[name].push_back(x);
          return OkStatus();
        }
        ASSIGN_OR_RETURN(double x, r.Number(v, at));
        out.quality[name].push_back(x);
        return OkStatus();
      };
      if (k == "quality") {
        simdjson::dom::object q;
        if (value.get_object().get(q)) return r.Error("quality", "expected an object of name: number");
        for (auto [qk, qv] : q) RETURN_IF_ERROR(add(std::string(qk), qv, "quality." + std::string(qk)));
      } else {
        RETURN_IF_ERROR(add(k, value, k));
      }
    }
  }
  if (out.latency_ns.empty()) {
    return r.Error("top level", "no latency list (expected a key such as \"latencies\", \"samples\" or \"latency_ms\")");
  }
  if (!out.items_per_second.empty() && out.items_per_second.size() != out.latency_ns.size()) {
    return r.Error("throughput", "has " + std::to_string(out.items_per_second.size()) + " values for " +
                                     std::to_string(out.latency_ns.size()) + " latencies");
  }
  return out;
}

StatusOr<SampleFile> ParseJson(const std::string& path, std::string_view content, const SampleFileOptions& options) {
  simdjson::padded_string json(content);
  simdjson::dom::parser parser;
  element root;
  if (simdjson::error_code e = parser.parse(json).get(root)) {
    return ErrStatus(path + ":" + LocateJsonError(json) + ": invalid JSON (" + simdjson::error_message(e) + ")");
  }
  JsonReader r(path);
  if (root.is_array()) {
    SampleFile out;
    out.format = "json";
    double scale = NanosecondsPerUnit(options.default_unit);
    ASSIGN_OR_RETURN(out.latency_ns, r.Numbers(root, "top level", scale));
    if (out.latency_ns.empty()) return ErrStatus(path + ": no samples in the file");
    return out;
  }
  if (!root.is_object()) return r.Error("top level", "expected an array of latencies or an object");
  simdjson::dom::array arr;
  if (!root["results"].get_array().get(arr)) return ParseHyperfine(r, root, options);
  if (!root["benchmarks"].get_array().get(arr)) return ParseGoogleBenchmark(r, root, options);
  return ParseJsonObject(r, root, options);
}

}  // namespace

double NanosecondsPerUnit(std::string_view unit) {
  if (unit == "ns") return 1;
  if (unit == "us") return 1e3;
  if (unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  return 0;
}

bool LooksLikeSampleFile(const std::string& path) {
  StatusOr<std::string> prefix = ReadPrefix(path, kDetectPrefixBytes);
  if (!prefix.ok()) return false;
  // A trace file is not a sample file: a native .aiprof file, the SDK's event
  // file ("AIPROFS\n") and an Nsight Systems export ("SQLite format 3") start
  // with a letter, as a text sample file does. Among JSON files, which the
  // Chrome importer claims whatever their keys, the keys below decide.
  if (std::string_view(*prefix).substr(0, kNativeMagic.size()) == kNativeMagic) return false;
  if (const ImporterEntry* importer = DetectFileImporter(*prefix);
      importer != nullptr && std::string_view(importer->name) != "chrome_json") {
    return false;
  }
  std::string_view p = TrimAsciiSpace(*prefix);
  if (p.empty()) return false;
  char c = p[0];
  if (c == '[') {
    std::string_view rest = TrimAsciiSpace(p.substr(1));
    return !rest.empty() && (std::isdigit(static_cast<unsigned char>(rest[0])) || rest[0] == '-' || rest[0] == '.' || rest[0] == ']');
  }
  if (c == '{') {
    // Chrome/Kineto traces carry traceEvents; benchmark files have their own keys near the top.
    if (p.find("\"traceEvents\"") != std::string_view::npos) return false;
    for (std::string_view k : {"\"results\"", "\"benchmarks\"", "\"latencies\"", "\"latency", "\"samples\"", "\"times\""}) {
      if (p.find(k) != std::string_view::npos) return true;
    }
    return false;
  }
  // Text or CSV: printable first line (a number or a header).
  return std::isdigit(static_cast<unsigned char>(c)) || std::isalpha(static_cast<unsigned char>(c)) || c == '#' || c == '.';
}

StatusOr<SampleFile> ParseSampleFile(const std::string& path, std::string_view content, const SampleFileOptions& options) {
  if (NanosecondsPerUnit(options.default_unit) == 0) {
    return ErrStatus("unknown sample unit '" + options.default_unit + "' (expected ns, us, ms or s)");
  }
  std::string_view t = TrimAsciiSpace(content);
  if (t.empty()) return ErrStatus(path + ": empty file");
  if (t[0] == '[' || t[0] == '{') return ParseJson(path, content, options);
  return ParseText(path, content, options);
}

StatusOr<SampleFile> ReadSampleFile(const std::string& path, const SampleFileOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, ByteSource::Open(path));
  std::string content;
  std::vector<char> buf(1 << 16);
  for (;;) {
    ASSIGN_OR_RETURN(size_t n, source->Read(buf.data(), buf.size()));
    if (n == 0) break;
    content.append(buf.data(), n);
    if (content.size() > (size_t{1} << 30)) return ErrStatus(path + ": larger than 1 GiB; not a benchmark result file");
  }
  return ParseSampleFile(path, content, options);
}

}  // namespace aiprof
