#include "src/importers/ascend/communication_importer.h"

#include <simdjson.h>

#include <cmath>
#include <limits>

#include "src/importers/ascend/folder_member.h"
#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

namespace dom = simdjson::dom;

struct Walker {
  TraceBuilder* builder;
  int32_t rank;
  StringId source;
  std::string key;  // path below the op, reused

  void Leaf(StringId op, dom::element v) {
    double d;
    std::string_view s;
    if (!v.get_double().get(d)) {
      builder->AddOpMetric(kNoSlice, rank, source, op, builder->Intern(key), d, StringId{});
    } else if (!v.get_string().get(s)) {
      builder->AddOpMetric(kNoSlice, rank, source, op, builder->Intern(key), std::numeric_limits<double>::quiet_NaN(),
                           builder->Intern(s));
    }
  }

  // Flattens the leaves under `obj` into metrics of `op`.
  void Flatten(StringId op, dom::object obj) {
    for (auto [k, v] : obj) {
      if (k == "Size Distribution") continue;
      size_t mark = key.size();
      if (!key.empty()) key += '/';
      key.append(k);
      dom::object child;
      if (!v.get_object().get(child)) {
        Flatten(op, child);
      } else {
        Leaf(op, v);
      }
      key.resize(mark);
    }
  }
};

// Where `text`, which simdjson refused, goes wrong, as far as brackets and
// strings tell: a closing bracket that closes nothing or the wrong one, or the
// end inside a string or an open object/array (a file cut short). Empty when
// the brackets and strings are sound (the error is in a value).
std::string JsonErrorPlace(std::string_view text) {
  std::string open;  // '{' / '[' not yet closed
  uint64_t line = 1;
  bool in_string = false, escaped = false;
  auto at = [&](size_t byte) { return "byte " + std::to_string(byte) + " (line " + std::to_string(line) + ")"; };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      open.push_back(c);
    } else if (c == '}' || c == ']') {
      if (open.empty() || open.back() != (c == '}' ? '{' : '[')) {
        return "'" + std::string(1, c) + "' at " + at(i) + " closes nothing open there";
      }
      open.pop_back();
    }
  }
  if (in_string) return "truncated JSON: input ends at " + at(text.size()) + " inside a string";
  if (!open.empty()) {
    return "truncated JSON: input ends at " + at(text.size()) + " with " + std::to_string(open.size()) +
           " object(s)/array(s) open";
  }
  return "";
}

}  // namespace

Status ImportCommunicationJson(const std::string& path, int32_t rank, bool is_matrix, TraceBuilder* builder) {
  // Read whole, plain or compressed (folder_member.h); the reads count into
  // the thread's import budget as they come.
  ASSIGN_OR_RETURN(simdjson::padded_string text, LoadJsonMember(path));
  dom::parser parser;
  dom::element root;
  if (auto err = parser.parse(text).get(root)) {
    std::string place = JsonErrorPlace(std::string_view(text.data(), text.size()));
    return ErrStatus(path + ": not valid JSON: " + (place.empty() ? "" : place + ": ") + simdjson::error_message(err));
  }
  dom::object steps;
  if (root.get_object().get(steps)) return ErrStatus(path + ": expected an object of steps at the top level");
  size_t slash = path.find_last_of('/');
  Walker w{builder, rank, builder->Intern(MemberName(slash == std::string::npos ? path : path.substr(slash + 1))), {}};
  for (auto [step, by_kind] : steps) {
    dom::object kinds;
    if (by_kind.get_object().get(kinds)) {
      builder->Diagnose("bad_communication_step", path + ": step " + std::string(step), "a step is not an object; skipped");
      continue;
    }
    for (auto [kind, ops_value] : kinds) {
      dom::object ops;
      if (ops_value.get_object().get(ops)) continue;
      for (auto [op_name, op_value] : ops) {
        dom::object op_obj;
        if (op_value.get_object().get(op_obj)) continue;
        std::string base = std::string(step) + "/" + std::string(op_name);
        if (!is_matrix) {
          w.Flatten(builder->Intern(base), op_obj);
          continue;
        }
        for (auto [link, link_value] : op_obj) {
          dom::object link_obj;
          if (link_value.get_object().get(link_obj)) continue;
          w.Flatten(builder->Intern(base + "/" + std::string(link)), link_obj);
        }
      }
    }
  }
  return OkStatus();
}

}  // namespace aiprof
