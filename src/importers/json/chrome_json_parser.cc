#include "src/importers/json/chrome_json_parser.h"

#include <simdjson.h>

#include <charconv>
#include <optional>
#include <unordered_map>

#include "src/base/decimal.h"

namespace aiprof {
namespace od = simdjson::ondemand;

namespace {

// Text of a number token, with quotes removed when it was written as a string.
std::string_view NumberText(std::string_view raw) {
  while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' ||
                          raw.back() == '\t' || raw.back() == ',')) {
    raw.remove_suffix(1);
  }
  if (raw.size() >= 2 && raw.front() == '"') {
    size_t close = raw.find('"', 1);
    if (close == std::string_view::npos) return {};
    raw = raw.substr(1, close - 1);
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t')) raw.remove_suffix(1);
    while (!raw.empty() && (raw.front() == ' ' || raw.front() == '\t')) raw.remove_prefix(1);
  }
  return raw;
}

std::optional<uint64_t> ParseFlowId(std::string_view text) {
  uint64_t v = 0;
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

struct ChromeJsonParser::Impl {
  struct Event {
    char ph = 0;
    StringId name, cat;
    IdValue pid, tid;
    bool has_pid = false, has_tid = false;
    bool has_ts = false, has_dur = false, bad_ts = false, bad_dur = false;
    int64_t ts_ns = 0, dur_ns = 0;
    bool has_id = false;
    uint64_t id = 0;
    bool bind_enclosing = false;
    char scope = 't';
    uint64_t arg_begin = 0;
    uint16_t arg_count = 0;
    int64_t correlation = kNoCorrelation;
  };

  Impl(std::string p, TraceBuilder* b) : path(std::move(p)), builder(b) {
    key_name = b->Intern("name");
    key_total_allocated = b->Intern("Total Allocated");
    key_total_reserved = b->Intern("Total Reserved");
    key_device_id = b->Intern("Device Id");
    key_device_type = b->Intern("Device Type");
    name_memory = b->Intern("[memory]");
    str_process_name = b->Intern("process_name");
    str_thread_name = b->Intern("thread_name");
    key_correlation = b->Intern("correlation");
  }

  std::string Where(uint64_t offset) const { return path + ":byte " + std::to_string(offset); }
  void Diag(const char* kind, uint64_t offset, const std::string& what) {
    builder->Diagnose(kind, Where(offset), what);
  }

  bool ParseTime(od::value v, int64_t* out) {
    std::string_view raw = v.raw_json_token();
    std::optional<int64_t> ns = ParseMicrosToNanos(NumberText(raw));
    if (!ns) return false;
    *out = *ns;
    return true;
  }

  bool ParseId(od::value v, IdValue* out) {
    od::json_type type;
    if (v.type().get(type)) return false;
    if (type == od::json_type::string) {
      std::string_view s;
      if (v.get_string().get(s)) return false;
      // Older PyTorch writes "tid": "25738" on slices and 25738 on flows.
      if (std::optional<int64_t> n = ParseInt64(s)) {
        *out = IdValue::Num(*n);
      } else {
        *out = IdValue::Str(builder->Intern(s));
      }
      return true;
    }
    if (type != od::json_type::number) return false;
    int64_t n;
    if (!v.get_int64().get(n)) {
      *out = IdValue::Num(n);
      return true;
    }
    double d;
    if (v.get_double().get(d)) return false;
    *out = IdValue::Num(static_cast<int64_t>(d));
    return true;
  }

  // Appends one arg; returns false on a JSON error.
  bool ParseArgValue(StringId key, od::value v, const char* event_end, Event* e) {
    od::json_type type;
    if (v.type().get(type)) return false;
    Arg arg;
    arg.key = key;
    arg.i = 0;
    switch (type) {
      case od::json_type::number: {
        od::number_type nt;
        if (v.get_number_type().get(nt)) return false;
        if (nt == od::number_type::signed_integer) {
          arg.type = ArgType::kInt;
          if (v.get_int64().get(arg.i)) return false;
          if (key == key_correlation) {
            e->correlation = arg.i;
            return true;
          }
        } else if (nt == od::number_type::unsigned_integer) {
          arg.type = ArgType::kUint;
          if (v.get_uint64().get(arg.u)) return false;
        } else {
          arg.type = ArgType::kDouble;
          if (v.get_double().get(arg.d)) return false;
        }
        break;
      }
      case od::json_type::string: {
        std::string_view s;
        if (v.get_string().get(s)) return false;
        arg.type = ArgType::kString;
        arg.str = builder->Intern(s).raw;
        break;
      }
      case od::json_type::boolean: {
        bool b;
        if (v.get_bool().get(b)) return false;
        arg.type = ArgType::kBool;
        arg.i = b ? 1 : 0;
        break;
      }
      case od::json_type::null:
        arg.type = ArgType::kNull;
        break;
      case od::json_type::array: {
        od::array a;
        std::string_view raw;
        if (v.get_array().get(a) || a.raw_json().get(raw)) return false;
        arg.type = ArgType::kJson;
        arg.str = builder->Intern(raw).raw;
        break;
      }
      case od::json_type::object: {
        std::string_view token = v.raw_json_token();
        JsonValueScanner scanner;
        scanner.Start('{');
        size_t n = scanner.Feed(token.data(), static_cast<size_t>(event_end - token.data()));
        if (n >= JsonValueScanner::kInvalid) return false;
        arg.type = ArgType::kJson;
        arg.str = builder->Intern(std::string_view(token.data(), n)).raw;
        break;
      }
    }
    if (e->arg_count == UINT16_MAX) return true;  // counted by caller
    builder->AddArg(arg);
    ++e->arg_count;
    return true;
  }

  // Arg keys repeat on every event ("External id", "Input Dims", ...): a
  // small direct-mapped cache answers them without hashing the pool.
  StringId InternKey(std::string_view key) {
    if (key.empty()) return StringId{};
    size_t slot = (key.size() * 31 + static_cast<unsigned char>(key[0]) * 7 +
                   static_cast<unsigned char>(key.back())) & (kKeyCacheSize - 1);
    KeyCacheEntry& entry = key_cache[slot];
    if (entry.text != key) {
      entry.text.assign(key);
      entry.id = builder->Intern(key);
    }
    return entry.id;
  }

  bool ParseArgs(od::value v, const char* event_end, Event* e, uint64_t offset) {
    od::object obj;
    if (v.get_object().get(obj)) {
      Diag("args_not_object", offset, "an event's args is not an object; args ignored");
      return true;
    }
    for (auto field_r : obj) {
      od::field field;
      std::string_view key;
      if (std::move(field_r).get(field) || field.unescaped_key().get(key)) return false;
      if (!ParseArgValue(InternKey(key), field.value(), event_end, e)) return false;
    }
    if (e->arg_count == UINT16_MAX) Diag("too_many_args", offset, "more than 65535 args; the rest dropped");
    return true;
  }

  bool ParseFields(od::object obj, const char* event_end, Event* e, uint64_t offset) {
    for (auto field_r : obj) {
      od::field field;
      std::string_view key;
      if (std::move(field_r).get(field) || field.unescaped_key().get(key)) return false;
      od::value v = field.value();
      std::string_view s;
      if (key == "ph") {
        if (v.get_string().get(s)) return false;
        e->ph = s.size() == 1 ? s[0] : '?';
      } else if (key == "name") {
        if (v.get_string().get(s)) {
          Diag("name_not_string", offset, "an event's name is not a string; name left empty");
          continue;
        }
        e->name = builder->Intern(s);
      } else if (key == "cat") {
        if (v.get_string().get(s)) continue;
        e->cat = builder->Intern(s);
      } else if (key == "ts") {
        e->has_ts = true;
        e->bad_ts = !ParseTime(v, &e->ts_ns);
      } else if (key == "dur") {
        e->has_dur = true;
        e->bad_dur = !ParseTime(v, &e->dur_ns);
      } else if (key == "pid") {
        e->has_pid = ParseId(v, &e->pid);
      } else if (key == "tid") {
        e->has_tid = ParseId(v, &e->tid);
      } else if (key == "id") {
        std::string_view raw = v.raw_json_token();
        std::optional<uint64_t> id = ParseFlowId(NumberText(raw));
        e->has_id = id.has_value();
        e->id = id.value_or(0);
      } else if (key == "bp") {
        if (!v.get_string().get(s)) e->bind_enclosing = s == "e";
      } else if (key == "s") {
        if (!v.get_string().get(s) && s.size() == 1) e->scope = s[0];
      } else if (key == "args") {
        e->arg_begin = builder->ArgCursor();
        if (!ParseArgs(v, event_end, e, offset)) return false;
      }
    }
    return true;
  }

  void DropArgs(const Event& e) {
    builder->trace()->args.resize(e.arg_begin);
  }

  const Arg* FindArg(const Event& e, StringId key) const {
    const auto& args = builder->trace()->args;
    for (uint64_t i = e.arg_begin; i < e.arg_begin + e.arg_count; ++i) {
      if (args[i].key == key) return &args[i];
    }
    return nullptr;
  }

  void OnEvent(const char* data, size_t len, size_t capacity, uint64_t offset) {
    od::document doc;
    Event e;
    e.arg_begin = builder->ArgCursor();
    od::object obj;
    auto err = parser.iterate(data, len, capacity).get(doc);
    if (!err) err = doc.get_object().get(obj);
    if (err || !ParseFields(obj, data + len, &e, offset)) {
      builder->trace()->args.resize(e.arg_begin);
      Diag("invalid_event_json", offset,
           std::string("an event is not valid JSON (") + simdjson::error_message(err ? err : simdjson::TAPE_ERROR) +
               "); event skipped");
      return;
    }
    Dispatch(e, offset);
  }

  uint32_t Track(const Event& e) {
    return builder->ThreadTrack(e.has_pid ? e.pid : IdValue::Num(0), e.has_tid ? e.tid : IdValue::Num(0));
  }

  bool CheckTs(const Event& e, uint64_t offset) {
    if (!e.has_ts || e.bad_ts) {
      Diag(e.has_ts ? "bad_ts" : "missing_ts", offset, "an event has no usable ts; event skipped");
      return false;
    }
    return true;
  }

  void Dispatch(Event& e, uint64_t offset) {
    switch (e.ph) {
      case 'X': return OnComplete(e, offset);
      case 'B':
        if (!CheckTs(e, offset)) return DropArgs(e);
        builder->AddBegin(Track(e), e.ts_ns, e.name, e.cat, e.arg_begin, e.arg_count);
        return;
      case 'E':
        DropArgs(e);
        if (!CheckTs(e, offset)) return;
        builder->AddEnd(Track(e), e.ts_ns);
        return;
      case 'i':
      case 'I':
      case 'n':
        return OnInstant(e, offset);
      case 'C':
        return OnCounter(e, offset);
      case 'M':
        return OnMetadata(e);
      case 's':
      case 't':
      case 'f':
        DropArgs(e);
        if (!CheckTs(e, offset)) return;
        if (!e.has_id) {
          Diag("flow_without_id", offset, "a flow event has no id; skipped");
          return;
        }
        builder->AddFlowEvent(e.id, e.ph, Track(e), e.ts_ns, e.ph != 'f' || e.bind_enclosing, e.cat);
        return;
      case 0:
        DropArgs(e);
        Diag("missing_ph", offset, "an event has no ph; skipped");
        return;
      default:
        DropArgs(e);
        Diag("unsupported_phase", offset, std::string("ph '") + e.ph + "' is not imported; event skipped");
        return;
    }
  }

  void OnComplete(Event& e, uint64_t offset) {
    if (!CheckTs(e, offset)) return DropArgs(e);
    if (!e.has_dur || e.bad_dur) {
      Diag(e.has_dur ? "bad_dur" : "missing_dur", offset, "a complete (X) event has no usable dur; skipped");
      return DropArgs(e);
    }
    if (e.dur_ns < 0) {
      Diag("negative_duration", offset, "a complete (X) event has a negative dur; skipped");
      return DropArgs(e);
    }
    builder->AddSlice(Track(e), e.ts_ns, e.dur_ns, e.name, e.cat, e.correlation, e.arg_begin, e.arg_count);
  }

  void OnInstant(Event& e, uint64_t offset) {
    if (!CheckTs(e, offset)) return DropArgs(e);
    uint32_t track = Track(e);
    builder->AddInstant(track, e.ts_ns, e.name, e.cat, e.scope, e.arg_begin, e.arg_count);
    if (e.name != name_memory) return;
    // PyTorch's [memory] events carry running totals: keep them as counters.
    int32_t device = kHostDevice;
    if (const Arg* a = FindArg(e, key_device_type); a && a->type == ArgType::kInt && a->i != 0) {
      const Arg* d = FindArg(e, key_device_id);
      device = d && d->type == ArgType::kInt ? static_cast<int32_t>(d->i) : 0;
    }
    IdValue pid = e.has_pid ? e.pid : IdValue::Num(0);
    for (StringId key : {key_total_allocated, key_total_reserved}) {
      const Arg* a = FindArg(e, key);
      std::optional<double> v = a ? NumericValue(*a) : std::nullopt;
      if (v) builder->AddCounter(CounterTrackFor(pid, name_memory, key, device), e.ts_ns, *v);
    }
  }

  void OnCounter(Event& e, uint64_t offset) {
    if (!CheckTs(e, offset)) return DropArgs(e);
    IdValue pid = e.has_pid ? e.pid : IdValue::Num(0);
    const auto& args = builder->trace()->args;
    for (uint64_t i = e.arg_begin; i < e.arg_begin + e.arg_count; ++i) {
      std::optional<double> v = NumericValue(args[i]);
      // One track per series; a lone or "value" series is named after the event.
      StringId series = e.arg_count > 1 && builder->trace()->Str(args[i].key) != "value" ? args[i].key : StringId{};
      if (v) builder->AddCounter(CounterTrackFor(pid, e.name, series, kHostDevice), e.ts_ns, *v);
    }
    DropArgs(e);
  }

  static std::optional<double> NumericValue(const Arg& a) {
    switch (a.type) {
      case ArgType::kDouble: return a.d;
      case ArgType::kInt: return static_cast<double>(a.i);
      case ArgType::kUint: return static_cast<double>(a.u);
      default: return std::nullopt;
    }
  }

  // The counter track of (process, event, series, device). Cached, so the
  // name is built and interned once per track, not once per sample.
  uint32_t CounterTrackFor(IdValue pid, StringId event, StringId series, int32_t device) {
    CounterKey k{pid.is_string, pid.is_string ? pid.str.raw : pid.num, event.raw, series.raw, device};
    auto it = counter_tracks.find(k);
    if (it != counter_tracks.end()) return it->second;
    std::string name;
    if (event == name_memory) {  // "Total Allocated (device 0)"
      name = std::string(builder->trace()->Str(series)) +
             (device == kHostDevice ? " (CPU)" : " (device " + std::to_string(device) + ")");
    } else {
      name = std::string(builder->trace()->Str(event));
      if (!series.empty()) name += " " + std::string(builder->trace()->Str(series));
    }
    uint32_t track = builder->CounterTrack(pid, builder->Intern(name), device);
    counter_tracks.emplace(k, track);
    return track;
  }

  void OnMetadata(Event& e) {
    const Arg* name = FindArg(e, key_name);
    if (name && name->type == ArgType::kString) {
      StringId value{name->str};
      IdValue pid = e.has_pid ? e.pid : IdValue::Num(0);
      if (e.name == str_process_name) builder->SetProcessName(pid, value);
      if (e.name == str_thread_name) builder->SetThreadName(Track(e), value);
    }
    DropArgs(e);
  }

  void OnTopLevelValue(std::string_view key, const char* data, size_t len, size_t capacity, uint64_t offset) {
    od::document doc;
    if (parser.iterate(data, len, capacity).get(doc)) {
      Diag("invalid_top_level_json", offset, "top-level value \"" + std::string(key) + "\" is not valid JSON");
      return;
    }
    if (key == "baseTimeNanoseconds") {
      std::string_view raw;
      std::optional<int64_t> base;
      if (!doc.raw_json_token().get(raw)) base = ParseInt64(NumberText(raw));
      if (!base) {
        Diag("bad_base_time", offset, "baseTimeNanoseconds is not an integer; ignored");
        return;
      }
      builder->SetTimeBaseNs(*base);
      return;
    }
    if (key == "distributedInfo") {
      int64_t rank;
      od::object obj;
      if (!doc.get_object().get(obj)) {
        if (!obj["rank"].get_int64().get(rank)) {
          builder->SetDefaultRank(static_cast<int32_t>(rank));
          builder->trace()->metadata["rank"] = std::to_string(rank);
        }
        int64_t world;
        if (!obj["world_size"].get_int64().get(world)) builder->trace()->metadata["world_size"] = std::to_string(world);
        std::string_view backend;
        if (!obj["backend"].get_string().get(backend)) builder->trace()->metadata["backend"] = std::string(backend);
      }
      return;
    }
    if (key == "deviceProperties") {
      builder->trace()->metadata["device_properties"] = std::string(data, len);
      return;
    }
    std::string_view s;
    if (len <= 256 && !doc.get_string().get(s)) {
      builder->trace()->metadata[std::string(key)] = std::string(s);
    } else if (len <= 64) {
      builder->trace()->metadata[std::string(key)] = std::string(data, len);
    }
  }

  struct CounterKey {
    bool pid_is_string;
    int64_t pid;
    uint32_t event, series;
    int32_t device;
    bool operator==(const CounterKey&) const = default;
  };
  struct CounterKeyHash {
    size_t operator()(const CounterKey& k) const {
      return std::hash<int64_t>()(k.pid) ^ (size_t{k.event} * 0x9E3779B97F4A7C15ull) ^
             (size_t{k.series} << 17) ^ (static_cast<size_t>(k.device) << 40) ^ k.pid_is_string;
    }
  };
  std::unordered_map<CounterKey, uint32_t, CounterKeyHash> counter_tracks;

  struct KeyCacheEntry {
    std::string text;
    StringId id;
  };
  static constexpr size_t kKeyCacheSize = 64;
  KeyCacheEntry key_cache[kKeyCacheSize];

  std::string path;
  TraceBuilder* builder;
  od::parser parser;
  StringId key_name, key_total_allocated, key_total_reserved, key_device_id, key_device_type;
  StringId key_correlation;
  StringId name_memory, str_process_name, str_thread_name;
};

ChromeJsonParser::ChromeJsonParser(std::string path, TraceBuilder* builder)
    : impl_(std::make_unique<Impl>(std::move(path), builder)) {}

ChromeJsonParser::~ChromeJsonParser() = default;

void ChromeJsonParser::OnEvent(const char* data, size_t len, size_t capacity, uint64_t offset) {
  impl_->OnEvent(data, len, capacity, offset);
}

void ChromeJsonParser::OnTopLevelValue(std::string_view key, const char* data, size_t len,
                                       size_t capacity, uint64_t offset) {
  impl_->OnTopLevelValue(key, data, len, capacity, offset);
}

void ChromeJsonParser::OnSkippedValue(std::string_view key, uint64_t offset, uint64_t bytes) {
  impl_->Diag("value_too_large", offset,
              "a value in \"" + std::string(key) + "\" of " + std::to_string(bytes) +
                  " bytes exceeds the per-event limit; skipped");
}

}  // namespace aiprof
