#include "src/importers/json/chrome_json_parser.h"

#include <simdjson.h>

#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "src/base/decimal.h"
#include "src/model/time_range.h"

namespace aiprof {
namespace od = simdjson::ondemand;

namespace {

// An operator in torch's legacy autograd-profiler export (which has no
// "cat"): a namespaced name ("aten::mm", "torch::autograd::AccumulateGrad"),
// an autograd node ("AddmmBackward0", "ReluBackward"), or "detach", which it
// writes without a namespace. The rest are record_function ranges.
bool IsLegacyOpName(std::string_view name) {
  if (name.find("::") != std::string_view::npos || name == "detach" || name == "detach_") return true;
  while (!name.empty() && name.back() >= '0' && name.back() <= '9') name.remove_suffix(1);
  constexpr std::string_view kBackward = "Backward";
  return name.size() > kBackward.size() && name.substr(name.size() - kBackward.size()) == kBackward &&
         name.find(' ') == std::string_view::npos && name.find('#') == std::string_view::npos;
}

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

bool IsDigits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
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

// Writes `text` (one event) to `out` with each string value (after a ':')
// that is not a valid JSON string read as its writer put it, raw: torch
// 1.13's export_chrome_trace and libkineto write names unescaped, so
// record_function('say "hi'), 'dir\\' or a Windows path made the event
// invalid JSON and it was skipped. Such a value ends at the first quote
// followed (past white space) by ',', '}' or ']', as JsonValueScanner cuts
// it; its quotes, backslashes and control bytes are escaped. Valid values,
// keys and array items are copied as they are. Returns false when no value
// needed it (or one has no end), so the event stays as it was read; also
// past a few passes over the text (a run of escaped quotes, each one a
// candidate end, would make it quadratic).
bool EscapeRawStringValues(std::string_view text, std::string* out) {
  size_t work = 0;
  const size_t work_limit = 4 * text.size() + 4096;
  auto is_space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  auto ends_value_at = [&](size_t quote) {
    size_t k = quote + 1;
    while (k < text.size() && is_space(text[k])) ++k;
    return k < text.size() && (text[k] == ',' || text[k] == '}' || text[k] == ']');
  };
  auto is_hex = [](char c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); };
  // End of the JSON string opening at `open` (its closing quote), and whether
  // its escapes and bytes are valid; npos when it does not close.
  auto json_string_end = [&](size_t open, bool* valid) {
    *valid = true;
    for (size_t j = open + 1; j < text.size(); ++j) {
      ++work;
      char c = text[j];
      if (c == '"') return j;
      if (static_cast<unsigned char>(c) < 0x20) *valid = false;
      if (c != '\\') continue;
      char e = j + 1 < text.size() ? text[j + 1] : '\0';
      if (e == 'u') {
        for (size_t h = j + 2; h < j + 6; ++h) {
          if (h >= text.size() || !is_hex(text[h])) *valid = false;
        }
      } else if (std::strchr("\"\\/bfnrt", e) == nullptr || e == '\0') {
        *valid = false;
      }
      ++j;
    }
    return std::string_view::npos;
  };
  out->clear();
  out->reserve(text.size() + 16);
  bool changed = false;
  char last = 0;  // the last byte outside strings that is not white space
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c != '"') {
      out->push_back(c);
      if (!is_space(c)) last = c;
      ++i;
      continue;
    }
    bool valid = false;
    size_t end = json_string_end(i, &valid);
    if (work > work_limit) return false;
    if (last == ':' && !(valid && end != std::string_view::npos && ends_value_at(end))) {
      size_t raw_end = i + 1;
      while (raw_end < text.size() && !(text[raw_end] == '"' && ends_value_at(raw_end))) ++raw_end;
      work += raw_end - i;
      if (raw_end >= text.size() || work > work_limit) return false;
      out->push_back('"');
      for (size_t j = i + 1; j < raw_end; ++j) {
        unsigned char b = static_cast<unsigned char>(text[j]);
        if (b == '"' || b == '\\') {
          out->push_back('\\');
          out->push_back(static_cast<char>(b));
        } else if (b < 0x20) {
          char esc[8];
          std::snprintf(esc, sizeof(esc), "\\u%04x", b);
          out->append(esc);
        } else {
          out->push_back(static_cast<char>(b));
        }
      }
      out->push_back('"');
      changed = true;
      end = raw_end;
    } else if (end == std::string_view::npos) {
      return false;
    } else {
      out->append(text.substr(i, end + 1 - i));
    }
    last = '"';
    i = end + 1;
  }
  return changed;
}

// Strings of one batch: ids in first-seen order from 1 (0 = empty), bytes
// in one arena addressed by offset. Clearing resets only the slots used, so
// a batch of one event (the serial path) costs no more than its strings.
class BatchStrings {
 public:
  BatchStrings() : slots_(kInitialSlots, Slot{0, 0}), mask_(kInitialSlots - 1) { spans_.push_back({0, 0}); }

  uint32_t Intern(std::string_view s) {
    if (s.empty()) return 0;
    uint64_t h = XXH3_64bits(s.data(), s.size());
    uint32_t tag = static_cast<uint32_t>(h >> 32);
    size_t pos = h & mask_;
    for (;; pos = (pos + 1) & mask_) {
      const Slot& slot = slots_[pos];
      if (slot.id == 0) break;
      if (slot.tag == tag && Get(slot.id) == s) return slot.id;
    }
    uint32_t id = static_cast<uint32_t>(spans_.size());
    spans_.push_back({arena_.size(), s.size()});
    arena_.append(s);
    slots_[pos] = Slot{id, tag};
    used_.push_back(static_cast<uint32_t>(pos));
    if (spans_.size() * 2 > slots_.size()) Grow();
    return id;
  }
  std::string_view Get(uint32_t id) const { return std::string_view(arena_.data() + spans_[id].first, spans_[id].second); }
  size_t size() const { return spans_.size(); }
  void Clear() {
    for (uint32_t pos : used_) slots_[pos] = Slot{0, 0};
    used_.clear();
    spans_.resize(1);
    arena_.clear();
  }

 private:
  static constexpr size_t kInitialSlots = 1024;
  struct Slot {
    uint32_t id;  // 0 = empty
    uint32_t tag;
  };
  void Grow() {
    slots_.assign(slots_.size() * 2, Slot{0, 0});
    mask_ = slots_.size() - 1;
    used_.clear();
    for (uint32_t id = 1; id < spans_.size(); ++id) {
      std::string_view s = Get(id);
      uint64_t h = XXH3_64bits(s.data(), s.size());
      size_t pos = h & mask_;
      while (slots_[pos].id != 0) pos = (pos + 1) & mask_;
      slots_[pos] = Slot{id, static_cast<uint32_t>(h >> 32)};
      used_.push_back(static_cast<uint32_t>(pos));
    }
  }

  std::string arena_;
  std::vector<std::pair<size_t, size_t>> spans_;  // id → (offset, length)
  std::vector<Slot> slots_;
  std::vector<uint32_t> used_;  // slots filled since the last Clear
  size_t mask_;
};

}  // namespace

// One batch after the parse phase: what each cut item became, in order.
struct ParsedEvents : BatchPayload {
  struct Event {
    enum class Kind : uint8_t { kEvent, kDiag, kTopLevel, kSkipped };
    Kind kind = Kind::kEvent;
    char ph = 0;
    char scope = 't';
    bool has_pid = false, has_tid = false;
    bool has_ts = false, has_dur = false, bad_ts = false, bad_dur = false;
    bool has_id = false;
    bool hashed_id = false;  // the id is a hash of a decimal beyond 64 bits
    bool bind_enclosing = false;
    uint16_t arg_count = 0;
    uint32_t name = 0, cat = 0;  // batch-local string ids
    uint32_t arg_begin = 0;      // into args
    uint32_t aux = 0;            // kDiag: into diags; kTopLevel / kSkipped: into values
    IdValue pid, tid;            // a string id here is batch-local
    int64_t ts_ns = 0, dur_ns = 0;
    uint64_t id = 0;             // flow id; kSkipped: bytes skipped
    int64_t correlation = kNoCorrelation;
    uint64_t offset = 0;
  };
  struct Diag {
    const char* kind;
    std::string what;
  };
  struct Value {
    std::string key;
    simdjson::padded_string text;
  };

  void Clear() {
    strings.Clear();
    events.clear();
    args.clear();
    diags.clear();
    values.clear();
  }

  BatchStrings strings;
  std::vector<Event> events;
  std::vector<Arg> args;  // keys and string values are batch-local ids
  std::vector<Diag> diags;
  std::vector<Value> values;
};
using ParsedEvent = ParsedEvents::Event;


// The parse phase: text of cut items → ParsedEvents. One per worker.
class ChromeJsonEventParser {
 public:
  void Parse(TokenBatch* batch) {
    if (!batch->payload) batch->payload = std::make_unique<ParsedEvents>();
    ParsedEvents* out = static_cast<ParsedEvents*>(batch->payload.get());
    Begin(out);
    size_t capacity = batch->capacity;
    for (const TokenItem& item : batch->items) {
      const char* data = batch->base + item.begin;
      switch (item.kind) {
        case TokenItem::Kind::kEvent:
          ParseEvent(data, item.len, capacity - item.begin, item.offset);
          break;
        case TokenItem::Kind::kTopLevel:
          AddValue(ParsedEvent::Kind::kTopLevel, batch->keys[item.key_index], std::string_view(data, item.len),
                   item.offset, 0);
          break;
        case TokenItem::Kind::kSkipped:
          AddValue(ParsedEvent::Kind::kSkipped, batch->keys[item.key_index], {}, item.offset, item.len);
          break;
      }
    }
  }

  // Starts a new batch in `out` (cleared).
  void Begin(ParsedEvents* out) {
    out_ = out;
    out_->Clear();
    ++generation_;
    key_correlation_ = Intern("correlation");
  }

  void AddValue(ParsedEvent::Kind kind, std::string_view key, std::string_view text, uint64_t offset,
                uint64_t skipped) {
    ParsedEvent e;
    e.kind = kind;
    e.offset = offset;
    e.id = skipped;
    e.aux = static_cast<uint32_t>(out_->values.size());
    out_->values.push_back({std::string(key), simdjson::padded_string(text)});
    out_->events.push_back(e);
  }

  void ParseEvent(const char* data, size_t len, size_t capacity, uint64_t offset) {
    const size_t events_before = out_->events.size(), diags_before = out_->diags.size();
    const size_t args_before = out_->args.size();
    simdjson::error_code err = simdjson::SUCCESS;
    if (ReadEvent(data, len, capacity, offset, &err) && !name_not_string_) return;
    // Not valid JSON, or a name that is not a string: a writer's raw string
    // (EscapeRawStringValues) is read as written, and said; else the event
    // is read as before.
    if (EscapeRawStringValues(std::string_view(data, len), &escaped_)) {
      out_->events.resize(events_before);
      out_->diags.resize(diags_before);
      out_->args.resize(args_before);
      simdjson::padded_string padded(escaped_);
      simdjson::error_code escaped_err = simdjson::SUCCESS;
      if (ReadEvent(padded.data(), padded.size(), padded.size() + simdjson::SIMDJSON_PADDING, offset, &escaped_err) &&
          !name_not_string_) {
        ParsedEvent read = out_->events.back();
        out_->events.pop_back();
        Diag("unescaped_string", offset,
             "a string written unescaped (a quote, backslash or control byte in a name, as torch's "
             "export_chrome_trace and libkineto write names); read as written");
        out_->events.push_back(read);
        return;
      }
      out_->events.resize(events_before);
      out_->diags.resize(diags_before);
      out_->args.resize(args_before);
      ReadEvent(data, len, capacity, offset, &err);
    }
  }

  // Reads one event into out_ (the event, or an invalid_event_json
  // diagnostic); false when it was not valid JSON.
  bool ReadEvent(const char* data, size_t len, size_t capacity, uint64_t offset, simdjson::error_code* err_out) {
    od::document doc;
    ParsedEvent e;
    e.offset = offset;
    e.arg_begin = static_cast<uint32_t>(out_->args.size());
    od::object obj;
    name_not_string_ = false;
    auto err = parser_.iterate(data, len, capacity).get(doc);
    if (!err) err = doc.get_object().get(obj);
    if (err || !ParseFields(obj, data + len, &e, offset)) {
      out_->args.resize(e.arg_begin);
      *err_out = err ? err : simdjson::TAPE_ERROR;
      Diag("invalid_event_json", offset,
           std::string("an event is not valid JSON (") + simdjson::error_message(*err_out) + "); event skipped");
      return false;
    }
    out_->events.push_back(e);
    return true;
  }

 private:
  void Diag(const char* kind, uint64_t offset, std::string what) {
    ParsedEvent e;
    e.kind = ParsedEvent::Kind::kDiag;
    e.offset = offset;
    e.aux = static_cast<uint32_t>(out_->diags.size());
    out_->diags.push_back({kind, std::move(what)});
    out_->events.push_back(e);
  }

  uint32_t Intern(std::string_view s) { return out_->strings.Intern(s); }

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
        *out = IdValue::Str(StringId{Intern(s)});
      }
      return true;
    }
    if (type != od::json_type::number) return false;
    int64_t n;
    if (!v.get_int64().get(n)) {
      *out = IdValue::Num(n);
      return true;
    }
    uint64_t u;
    if (!v.get_uint64().get(u)) {
      // An id past INT64_MAX (a 64-bit hash) keeps its bits: ids are names.
      *out = IdValue::Num(static_cast<int64_t>(u));
      return true;
    }
    // An exponent id that is a whole number ("tid": 1.5e3) is that number;
    // any other (1.5, 1e30, beyond 64 bits) is kept as its text, a name of
    // its own: truncated or dropped to 0, unrelated threads merged (found
    // by review).
    // A number past a double (1e400) is a name of its own too; it was
    // dropped, and the event put on pid 0.
    double d;
    if (v.get_double().get(d)) {
      *out = IdValue::Str(StringId{Intern(NumberText(v.raw_json_token()))});
      return true;
    }
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == std::trunc(d)) {
      *out = IdValue::Num(static_cast<int64_t>(d));
    } else {
      *out = IdValue::Str(StringId{Intern(NumberText(v.raw_json_token()))});
    }
    return true;
  }

  // Appends one arg; returns false on a JSON error.
  bool ParseArgValue(uint32_t key, od::value v, const char* event_end, ParsedEvent* e) {
    od::json_type type;
    if (v.type().get(type)) return false;
    Arg arg;
    arg.key = StringId{key};
    arg.i = 0;
    switch (type) {
      case od::json_type::number: {
        od::number_type nt;
        if (v.get_number_type().get(nt)) return false;
        if (nt == od::number_type::signed_integer) {
          arg.type = ArgType::kInt;
          if (v.get_int64().get(arg.i)) return false;
          if (key == key_correlation_) {
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
        arg.str = Intern(s);
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
        arg.str = Intern(raw);
        break;
      }
      case od::json_type::object: {
        std::string_view token = v.raw_json_token();
        JsonValueScanner scanner;
        scanner.Start('{');
        size_t n = scanner.Feed(token.data(), static_cast<size_t>(event_end - token.data()));
        if (n >= JsonValueScanner::kInvalid) return false;
        arg.type = ArgType::kJson;
        arg.str = Intern(std::string_view(token.data(), n));
        break;
      }
    }
    if (e->arg_count == UINT16_MAX) return true;  // counted by caller
    out_->args.push_back(arg);
    ++e->arg_count;
    return true;
  }

  // Arg keys repeat on every event ("External id", "Input Dims", ...): a
  // small direct-mapped cache answers them without hashing, valid for the
  // batch (generation) it was filled in.
  uint32_t InternKey(std::string_view key) {
    if (key.empty()) return 0;
    size_t slot = (key.size() * 31 + static_cast<unsigned char>(key[0]) * 7 +
                   static_cast<unsigned char>(key.back())) & (kKeyCacheSize - 1);
    KeyCacheEntry& entry = key_cache_[slot];
    if (entry.generation != generation_ || entry.text.size() != key.size() ||
        std::memcmp(entry.text.data(), key.data(), key.size()) != 0) {
      entry.text.assign(key);
      entry.id = Intern(key);
      entry.generation = generation_;
    }
    return entry.id;
  }

  bool ParseArgs(od::value v, const char* event_end, ParsedEvent* e, uint64_t offset) {
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

  // The event fields this importer reads, told apart by length and bytes
  // (no call per comparison: this runs for every field of every event).
  enum class Field { kOther, kPh, kName, kCat, kTs, kDur, kPid, kTid, kId, kBp, kS, kArgs };
  static Field Classify(std::string_view k) {
    auto is = [&](const auto& lit) { return std::memcmp(k.data(), lit, sizeof(lit) - 1) == 0; };  // fixed size: inlined
    switch (k.size()) {
      case 1: return k[0] == 's' ? Field::kS : Field::kOther;
      case 2:
        if (is("ph")) return Field::kPh;
        if (is("ts")) return Field::kTs;
        if (is("id")) return Field::kId;
        if (is("bp")) return Field::kBp;
        return Field::kOther;
      case 3:
        if (is("pid")) return Field::kPid;
        if (is("tid")) return Field::kTid;
        if (is("dur")) return Field::kDur;
        if (is("cat")) return Field::kCat;
        return Field::kOther;
      case 4:
        if (is("name")) return Field::kName;
        if (is("args")) return Field::kArgs;
        return Field::kOther;
      default: return Field::kOther;
    }
  }

  bool ParseFields(od::object obj, const char* event_end, ParsedEvent* e, uint64_t offset) {
    bool args_seen = false;
    for (auto field_r : obj) {
      od::field field;
      std::string_view key;
      if (std::move(field_r).get(field) || field.unescaped_key().get(key)) return false;
      od::value v = field.value();
      std::string_view s;
      switch (Classify(key)) {
        case Field::kPh:
          if (v.get_string().get(s)) return false;
          e->ph = s.size() == 1 ? s[0] : '?';
          break;
        case Field::kName:
          if (v.get_string().get(s)) {
            name_not_string_ = true;
            Diag("name_not_string", offset, "an event's name is not a string; name left empty");
            break;
          }
          e->name = Intern(s);
          break;
        case Field::kCat:
          if (!v.get_string().get(s)) e->cat = Intern(s);
          break;
        case Field::kTs:
          e->has_ts = true;
          e->bad_ts = !ParseTime(v, &e->ts_ns);
          break;
        case Field::kDur:
          e->has_dur = true;
          e->bad_dur = !ParseTime(v, &e->dur_ns);
          break;
        // A pid or tid that is neither a number nor a string (null, true,
        // an object) put the event on pid 0 or tid 0 unsaid, beside a
        // device's tracks (Kineto's GPU pids are 0, 1, ...): counted.
        case Field::kPid:
          e->has_pid = ParseId(v, &e->pid);
          if (!e->has_pid) Diag("bad_pid_tid", offset, "an event's pid is not a number or a string; put on pid 0");
          break;
        case Field::kTid:
          e->has_tid = ParseId(v, &e->tid);
          if (!e->has_tid) Diag("bad_pid_tid", offset, "an event's tid is not a number or a string; put on tid 0");
          break;
        case Field::kId: {
          std::string_view text = NumberText(v.raw_json_token());
          std::optional<uint64_t> id = ParseFlowId(text);
          if (!id && IsDigits(text)) {
            // A decimal id beyond 64 bits (torch_npu's HostToDevice flows,
            // "40004068119343529983"): its text hashed, so both ends still meet.
            id = XXH3_64bits(text.data(), text.size());
            e->hashed_id = true;
          }
          e->has_id = id.has_value();
          e->id = id.value_or(0);
          break;
        }
        case Field::kBp:
          if (!v.get_string().get(s)) e->bind_enclosing = s == "e";
          break;
        case Field::kS:
          if (!v.get_string().get(s) && s.size() == 1) e->scope = s[0];
          break;
        case Field::kArgs:
          // "args" twice in one event: the last one counts (as JSON.parse
          // reads it). Its args were the last appended, so they are dropped;
          // keeping arg_count while arg_begin moved on made the merge read
          // past the event's args (libFuzzer found it; stale ids, a SEGV).
          if (args_seen) {
            out_->args.resize(e->arg_begin);
            e->arg_count = 0;
            e->correlation = kNoCorrelation;
            Diag("duplicate_args", offset, "an event has \"args\" more than once; the last one read");
          }
          args_seen = true;
          e->arg_begin = static_cast<uint32_t>(out_->args.size());
          if (!ParseArgs(v, event_end, e, offset)) return false;
          break;
        case Field::kOther:
          break;
      }
    }
    return true;
  }

  struct KeyCacheEntry {
    std::string text;
    uint32_t id = 0;
    uint64_t generation = 0;
  };
  static constexpr size_t kKeyCacheSize = 64;
  KeyCacheEntry key_cache_[kKeyCacheSize];
  uint64_t generation_ = 0;
  ParsedEvents* out_ = nullptr;
  od::parser parser_;
  bool name_not_string_ = false;  // set by ParseFields
  std::string escaped_;           // EscapeRawStringValues's output, reused
  // "correlation" is taken out of args; its local id in the current batch.
  uint32_t key_correlation_ = 0;
};

// The merge phase: ParsedEvents → the TraceBuilder, in cut order.
class ChromeJsonMerger {
 public:
  // The event as the old single-phase parser saw it: global ids.
  struct Event {
    char ph = 0;
    StringId name, cat;
    IdValue pid, tid;
    bool has_pid = false, has_tid = false;
    bool has_ts = false, has_dur = false, bad_ts = false, bad_dur = false;
    int64_t ts_ns = 0, dur_ns = 0;
    bool has_id = false, hashed_id = false;
    uint64_t id = 0;
    bool bind_enclosing = false;
    char scope = 't';
    uint64_t arg_begin = 0;
    uint16_t arg_count = 0;
    int64_t correlation = kNoCorrelation;
  };

  ChromeJsonMerger(std::string p, TraceBuilder* b) : path(std::move(p)), builder(b) {
    source = b->AddSource(path);
    key_name = b->Intern("name");
    key_total_allocated = b->Intern("Total Allocated");
    key_total_reserved = b->Intern("Total Reserved");
    key_device_id = b->Intern("Device Id");
    key_device_type = b->Intern("Device Type");
    name_memory = b->Intern("[memory]");
    str_process_name = b->Intern("process_name");
    str_thread_name = b->Intern("thread_name");
  }

  // Flow events whose id was hashed (see ChromeJsonEventParser, "id").
  uint64_t hashed_flow_ids = 0;

  void Merge(const ParsedEvents& in) {
    in_ = &in;
    remap_.assign(in.strings.size(), kUnmapped);
    remap_[0] = 0;
    for (const ParsedEvent& pe : in.events) {
      switch (pe.kind) {
        case ParsedEvent::Kind::kDiag:
          Diag(in.diags[pe.aux].kind, pe.offset, in.diags[pe.aux].what);
          break;
        case ParsedEvent::Kind::kTopLevel: {
          const ParsedEvents::Value& v = in.values[pe.aux];
          OnTopLevelValue(v.key, v.text.data(), v.text.size(), v.text.size() + simdjson::SIMDJSON_PADDING,
                          pe.offset);
          break;
        }
        case ParsedEvent::Kind::kSkipped:
          Diag("value_too_large", pe.offset,
               "a value in \"" + in.values[pe.aux].key + "\" of " + std::to_string(pe.id) +
                   " bytes exceeds the per-event limit; skipped");
          break;
        case ParsedEvent::Kind::kEvent:
          MergeEvent(pe);
          break;
      }
    }
    in_ = nullptr;
  }

 private:
  static constexpr uint32_t kUnmapped = UINT32_MAX;

  // The trace's id of batch-local string `local`, interned on first use.
  StringId Map(uint32_t local) {
    uint32_t& g = remap_[local];
    if (g == kUnmapped) g = builder->Intern(in_->strings.Get(local)).raw;
    return StringId{g};
  }
  IdValue Map(IdValue v) { return v.is_string ? IdValue::Str(Map(v.str.raw)) : v; }

  void MergeEvent(const ParsedEvent& pe) {
    Event e;
    e.ph = pe.ph;
    e.name = Map(pe.name);
    e.cat = Map(pe.cat);
    e.has_pid = pe.has_pid;
    e.has_tid = pe.has_tid;
    if (pe.has_pid) e.pid = Map(pe.pid);
    // torch's legacy autograd-profiler export (export_chrome_trace without
    // Kineto, e.g. Debian's torch 1.13) writes its events with no "cat"
    // under the process name "CPU functions": operators ("aten::mm",
    // "torch::autograd::...") are CPU ops, the rest are record_function
    // ranges (ProfilerStep#N, "## forward ##", Optimizer.step#SGD.step),
    // user annotations, as Kineto files them; so are autograd nodes
    // ("AddmmBackward0") and "detach", which it writes without a namespace
    // (IsLegacyOpName). (Interned on first use: the
    // string table of traces without them stays as it was.)
    if (pe.cat == 0 && pe.has_pid && pe.pid.is_string && in_->strings.Get(pe.pid.str.raw) == "CPU functions") {
      const bool op = IsLegacyOpName(in_->strings.Get(pe.name));
      std::optional<StringId>& cat = op ? str_cpu_op : str_user_annotation;
      if (!cat) cat = builder->Intern(op ? "cpu_op" : "user_annotation");
      e.cat = *cat;
    }
    if (pe.has_tid) e.tid = Map(pe.tid);
    e.has_ts = pe.has_ts;
    e.has_dur = pe.has_dur;
    e.bad_ts = pe.bad_ts;
    e.bad_dur = pe.bad_dur;
    e.ts_ns = pe.ts_ns;
    e.dur_ns = pe.dur_ns;
    e.has_id = pe.has_id;
    e.hashed_id = pe.hashed_id;
    e.id = pe.id;
    e.bind_enclosing = pe.bind_enclosing;
    e.scope = pe.scope;
    e.correlation = pe.correlation;
    e.arg_begin = builder->ArgCursor();
    e.arg_count = pe.arg_count;
    for (uint32_t i = pe.arg_begin; i < pe.arg_begin + pe.arg_count; ++i) {
      Arg a = in_->args[i];
      a.key = Map(a.key.raw);
      if (a.type == ArgType::kString || a.type == ArgType::kJson) a.str = Map(a.str).raw;
      builder->AddArg(a);
    }
    Dispatch(e, pe.offset);
  }

  std::string Where(uint64_t offset) const { return path + ":byte " + std::to_string(offset); }
  void Diag(const char* kind, uint64_t offset, const std::string& what) {
    builder->Diagnose(kind, Where(offset), what);
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

  uint32_t Track(const Event& e) {
    return builder->ThreadTrack(e.has_pid ? e.pid : IdValue::Num(0), e.has_tid ? e.tid : IdValue::Num(0));
  }

  bool CheckTs(const Event& e, uint64_t offset) {
    if (!e.has_ts || e.bad_ts) {
      Diag(e.has_ts ? "bad_ts" : "missing_ts", offset, "an event has no usable ts; event skipped");
      return false;
    }
    if (!TimeInRange(e.ts_ns)) {
      Diag("time_out_of_range", offset, "ts outside +-2^61 ns (times past it could overflow); event skipped");
      return false;
    }
    return true;
  }

  void Dispatch(Event& e, uint64_t offset) {
    switch (e.ph) {
      case 'X': return OnComplete(e, offset);
      case 'B':
        if (!CheckTs(e, offset)) return DropArgs(e);
        builder->AddBegin(Track(e), e.ts_ns, e.name, e.cat, e.arg_begin, e.arg_count, {source, offset});
        return;
      case 'E':
        DropArgs(e);
        if (!CheckTs(e, offset)) return;
        builder->AddEnd(Track(e), e.ts_ns, e.name, {source, offset});
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
        builder->AddFlowEvent(e.id, e.ph, Track(e), e.ts_ns, e.ph != 'f' || e.bind_enclosing, e.cat, {source, offset});
        hashed_flow_ids += e.hashed_id;
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
    if (!SpanInRange(e.ts_ns, e.dur_ns)) {
      Diag("time_out_of_range", offset, "dur over 2^61 ns (its end could overflow); skipped");
      return DropArgs(e);
    }
    if (builder->trace()->Str(e.name) == "dma_request" && builder->trace()->Str(e.cat) == "mtia_ccp_events") {
      AddMtiaCopyBytes(&e, offset);
    }
    builder->AddSlice(Track(e), e.ts_ns, e.dur_ns, e.name, e.cat, e.correlation, e.arg_begin, e.arg_count);
  }

  // Meta MTIA's DMA requests (device copies: kMemcpy, event_kind.cc) give
  // their size as "size"; Kineto's CUDA copies and the Nsight importer give
  // it as "bytes", which the memcpy analysis reads. The raw "size" stays;
  // "bytes" (unsigned) is added after the event's own args. A request
  // without a non-negative integer size is counted: its bytes are unknown.
  void AddMtiaCopyBytes(Event* e, uint64_t offset) {
    const StringPool& strings = builder->trace()->strings;
    const std::optional<StringId> size_key = strings.Find("size");
    const std::optional<StringId> bytes_key = strings.Find("bytes");
    if (bytes_key && FindArg(*e, *bytes_key) != nullptr) return;  // the file says "bytes" itself
    const Arg* size = size_key ? FindArg(*e, *size_key) : nullptr;
    const bool readable =
        size != nullptr && ((size->type == ArgType::kInt && size->i >= 0) || size->type == ArgType::kUint);
    if (!readable || e->arg_count == UINT16_MAX) {
      Diag("mtia_dma_size_unknown", offset,
           "an MTIA dma_request has no non-negative integer \"size\" arg; its bytes are unknown");
      return;
    }
    Arg bytes{};
    bytes.key = bytes_key ? *bytes_key : builder->Intern("bytes");
    bytes.type = ArgType::kUint;
    bytes.u = size->type == ArgType::kInt ? static_cast<uint64_t>(size->i) : size->u;
    builder->AddArg(bytes);
    ++e->arg_count;
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
      if (d && ((d->type == ArgType::kInt && (d->i < 0 || d->i > INT32_MAX)) || d->type == ArgType::kUint)) {
        // Device Id 2^32 was cut to device 0 and -1 became the host's
        // memory (kHostDevice) (input trial, 'in').
        Diag("bad_device_id", offset,
             "a [memory] event's Device Id is not a device (0 to 2^31-1); its memory totals skipped");
        return;
      }
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
      if (v) {
        builder->AddCounter(CounterTrackFor(pid, e.name, series, kHostDevice), e.ts_ns, *v);
      } else {
        Diag("counter_bad_value", offset,
             "series '" + std::string(builder->trace()->Str(args[i].key)) + "' of counter '" +
                 std::string(builder->trace()->Str(e.name)) +
                 "' has a value that is not a number; that sample skipped");
      }
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
      // A syntax error met by a lookup (skipping a malformed value, e.g.
      // {"rank":, ...}) makes simdjson abandon the document's iterator: a
      // further lookup would dereference its null parser (libFuzzer found it;
      // a segfault in release builds). Only a missing field or a value of
      // another type lets the next lookup go on.
      auto go_on = [&](simdjson::error_code err) {
        if (err == simdjson::SUCCESS || err == simdjson::NO_SUCH_FIELD || err == simdjson::INCORRECT_TYPE) return true;
        Diag("invalid_top_level_json", offset,
             "top-level value \"distributedInfo\" is not valid JSON; fields after the error ignored");
        return false;
      };
      od::object obj;
      if (doc.get_object().get(obj)) return;
      int64_t rank;
      simdjson::error_code err = obj["rank"].get_int64().get(rank);
      if (!err && (rank < 0 || rank > INT32_MAX)) {
        // 2^32 + 1 became rank 1 (found by review).
        Diag("bad_rank", offset,
             "distributedInfo.rank " + std::to_string(rank) + " is not a rank (0 to 2^31-1); ignored");
      } else if (!err) {
        builder->SetDefaultRank(static_cast<int32_t>(rank));
        builder->trace()->metadata["rank"] = std::to_string(rank);
      }
      if (!go_on(err)) return;
      int64_t world;
      err = obj["world_size"].get_int64().get(world);
      if (!err) builder->trace()->metadata["world_size"] = std::to_string(world);
      if (!go_on(err)) return;
      std::string_view backend;
      err = obj["backend"].get_string().get(backend);
      if (!err) builder->trace()->metadata["backend"] = std::string(backend);
      go_on(err);
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

  std::string path;
  uint32_t source;  // path in the builder's sources, for B/E pairing's diagnostics
  TraceBuilder* builder;
  const ParsedEvents* in_ = nullptr;
  std::vector<uint32_t> remap_;  // batch-local string id → trace's, or kUnmapped
  od::parser parser;
  StringId key_name, key_total_allocated, key_total_reserved, key_device_id, key_device_type;
  std::optional<StringId> str_cpu_op, str_user_annotation;
  StringId name_memory, str_process_name, str_thread_name;
};

ChromeJsonBatchParser::ChromeJsonBatchParser(std::string path, TraceBuilder* builder, size_t workers)
    : merger_(std::make_unique<ChromeJsonMerger>(std::move(path), builder)) {
  for (size_t i = 0; i < std::max<size_t>(workers, 1); ++i) parsers_.push_back(std::make_unique<ChromeJsonEventParser>());
}

ChromeJsonBatchParser::~ChromeJsonBatchParser() = default;

void ChromeJsonBatchParser::Parse(TokenBatch* batch, size_t worker) { parsers_[worker]->Parse(batch); }

uint64_t ChromeJsonBatchParser::hashed_flow_ids() const { return merger_->hashed_flow_ids; }

void ChromeJsonBatchParser::Merge(TokenBatch* batch) {
  merger_->Merge(*static_cast<const ParsedEvents*>(batch->payload.get()));
}

ChromeJsonParser::ChromeJsonParser(std::string path, TraceBuilder* builder)
    : parser_(std::make_unique<ChromeJsonEventParser>()),
      merger_(std::make_unique<ChromeJsonMerger>(std::move(path), builder)),
      events_(std::make_unique<ParsedEvents>()) {}

ChromeJsonParser::~ChromeJsonParser() = default;

void ChromeJsonParser::OnEvent(const char* data, size_t len, size_t capacity, uint64_t offset) {
  parser_->Begin(events_.get());
  parser_->ParseEvent(data, len, capacity, offset);
  merger_->Merge(*events_);
}

void ChromeJsonParser::OnTopLevelValue(std::string_view key, const char* data, size_t len,
                                       size_t capacity, uint64_t offset) {
  (void)capacity;
  parser_->Begin(events_.get());
  parser_->AddValue(ParsedEvent::Kind::kTopLevel, key, std::string_view(data, len), offset, 0);
  merger_->Merge(*events_);
}

void ChromeJsonParser::OnSkippedValue(std::string_view key, uint64_t offset, uint64_t bytes) {
  parser_->Begin(events_.get());
  parser_->AddValue(ParsedEvent::Kind::kSkipped, key, {}, offset, bytes);
  merger_->Merge(*events_);
}

}  // namespace aiprof
