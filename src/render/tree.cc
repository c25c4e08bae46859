#include "src/render/tree.h"

#include <cmath>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "src/render/escape.h"

namespace aiprof {

Tree Tree::Bool(bool b) {
  Tree t;
  t.kind_ = Kind::kBool;
  t.bool_ = b;
  return t;
}

Tree Tree::Number(double v) {
  if (!std::isfinite(v)) return Tree();
  Tree t;
  t.kind_ = Kind::kNumber;
  t.number_ = v;
  return t;
}

Tree Tree::Integer(int64_t v) {
  Tree t;
  t.kind_ = Kind::kNumber;
  t.number_ = static_cast<double>(v);
  t.is_integer_ = true;
  t.integer_ = v;
  return t;
}

Tree Tree::String(std::string_view s) {
  Tree t;
  t.kind_ = Kind::kString;
  t.str_ = std::string(s);
  return t;
}

Tree Tree::List() {
  Tree t;
  t.kind_ = Kind::kList;
  return t;
}

Tree Tree::Map() {
  Tree t;
  t.kind_ = Kind::kMap;
  return t;
}

Tree& Tree::Set(std::string_view key, Tree value) {
  entries_.emplace_back(std::string(key), std::move(value));
  return entries_.back().second;
}

Tree& Tree::Push(Tree value) {
  items_.push_back(std::move(value));
  return items_.back();
}

namespace {

// An Integer exactly; else the shortest text that reads back as the same
// double.
std::string NumberText(const Tree& t) {
  if (t.is_integer()) return fmt::format("{}", t.integer());
  const double v = t.number();
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{}", v);
}

void Json(const Tree& t, int indent, std::string* out) {
  const std::string pad(static_cast<size_t>(indent) * 2, ' ');
  switch (t.kind()) {
    case Tree::Kind::kNull: *out += "null"; return;
    case Tree::Kind::kBool: *out += t.boolean() ? "true" : "false"; return;
    case Tree::Kind::kNumber: *out += NumberText(t); return;
    case Tree::Kind::kString: *out += JsonString(t.str()); return;
    case Tree::Kind::kList:
      if (t.items().empty()) {
        *out += "[]";
        return;
      }
      *out += "[\n";
      for (size_t i = 0; i < t.items().size(); ++i) {
        *out += pad + "  ";
        Json(t.items()[i], indent + 1, out);
        *out += i + 1 < t.items().size() ? ",\n" : "\n";
      }
      *out += pad + "]";
      return;
    case Tree::Kind::kMap:
      if (t.entries().empty()) {
        *out += "{}";
        return;
      }
      *out += "{\n";
      for (size_t i = 0; i < t.entries().size(); ++i) {
        *out += pad + "  " + JsonString(t.entries()[i].first) + ": ";
        Json(t.entries()[i].second, indent + 1, out);
        *out += i + 1 < t.entries().size() ? ",\n" : "\n";
      }
      *out += pad + "}";
      return;
  }
}

void Yaml(const Tree& t, YAML::Emitter* e) {
  switch (t.kind()) {
    case Tree::Kind::kNull: *e << YAML::Null; return;
    case Tree::Kind::kBool: *e << t.boolean(); return;
    case Tree::Kind::kNumber: *e << NumberText(t); return;
    case Tree::Kind::kString:
      // Quoted always: a trace string such as "true", "1e3" or "- x" must
      // read back as the same string.
      *e << YAML::DoubleQuoted << t.str();
      return;
    case Tree::Kind::kList:
      *e << YAML::BeginSeq;
      for (const Tree& item : t.items()) Yaml(item, e);
      *e << YAML::EndSeq;
      return;
    case Tree::Kind::kMap:
      *e << YAML::BeginMap;
      for (const auto& [key, value] : t.entries()) {
        *e << YAML::Key << key << YAML::Value;
        Yaml(value, e);
      }
      *e << YAML::EndMap;
      return;
  }
}

}  // namespace

std::string TreeToJson(const Tree& tree) {
  std::string out;
  Json(tree, 0, &out);
  out += "\n";
  return out;
}

std::string TreeToYaml(const Tree& tree) {
  YAML::Emitter e;
  e.SetIndent(2);
  Yaml(tree, &e);
  std::string out = e.c_str();
  out += "\n";
  return out;
}

}  // namespace aiprof
