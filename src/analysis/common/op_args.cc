#include "src/analysis/common/op_args.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

#include "src/base/ascii.h"

namespace aiprof {
namespace {

void SkipSpace(std::string_view t, size_t* i) {
  while (*i < t.size() && std::isspace(static_cast<unsigned char>(t[*i]))) ++*i;
}

bool Expect(std::string_view t, size_t* i, char c) {
  SkipSpace(t, i);
  if (*i >= t.size() || t[*i] != c) return false;
  ++*i;
  return true;
}

std::optional<Dims> ParseInts(std::string_view t, size_t* i) {
  Dims out;
  if (!Expect(t, i, '[')) return std::nullopt;
  SkipSpace(t, i);
  if (*i < t.size() && t[*i] == ']') return ++*i, out;
  while (true) {
    SkipSpace(t, i);
    bool neg = *i < t.size() && t[*i] == '-';
    if (neg) ++*i;
    if (*i >= t.size() || !std::isdigit(static_cast<unsigned char>(t[*i]))) return std::nullopt;
    int64_t v = 0;
    // At most 18 digits, as the text form: a longer number would overflow int64.
    for (int digits = 0; *i < t.size() && std::isdigit(static_cast<unsigned char>(t[*i])); ++digits) {
      if (digits == 18) return std::nullopt;
      v = v * 10 + (t[(*i)++] - '0');
    }
    out.push_back(neg ? -v : v);
    SkipSpace(t, i);
    if (*i < t.size() && t[*i] == ',') { ++*i; continue; }
    if (Expect(t, i, ']')) return out;
    return std::nullopt;
  }
}

// torch_npu's text form: items separated by ';', each trimmed of spaces
// and the "\r\n" torch_npu writes after the ';'.
std::vector<std::string_view> TextItems(std::string_view t) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t semi = t.find(';');
    out.push_back(TrimAsciiSpace(t.substr(0, semi)));
    if (semi == std::string_view::npos) return out;
    t.remove_prefix(semi + 1);
  }
}

bool IsListText(std::string_view t) {
  size_t i = 0;
  SkipSpace(t, &i);
  return i < t.size() && t[i] == '[';
}

}  // namespace

std::optional<Dims> ParseIntList(std::string_view t) {
  size_t i = 0;
  if (IsListText(t)) {
    std::optional<Dims> out = ParseInts(t, &i);
    SkipSpace(t, &i);
    return out && i == t.size() ? out : std::nullopt;
  }
  const std::string_view n = TrimAsciiSpace(t);  // a scalar
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), v);
  return !n.empty() && ec == std::errc() && end == n.data() + n.size() ? std::optional<Dims>(Dims{v}) : std::nullopt;
}

std::optional<std::vector<Dims>> ParseDimsList(std::string_view t) {
  std::vector<Dims> out;
  if (!IsListText(t)) {  // torch_npu: "32,3,224,224;\r\n64;\r\n"
    for (std::string_view item : TextItems(t)) {
      Dims d;
      while (!item.empty()) {
        const size_t comma = item.find(',');
        std::string_view n = TrimAsciiSpace(item.substr(0, comma));
        const bool neg = !n.empty() && n.front() == '-';
        if (neg) n.remove_prefix(1);
        if (n.empty() || n.size() > 18) return std::nullopt;
        int64_t v = 0;
        for (char c : n) {
          if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
          v = v * 10 + (c - '0');
        }
        d.push_back(neg ? -v : v);
        if (comma == std::string_view::npos) break;
        item.remove_prefix(comma + 1);
      }
      out.push_back(std::move(d));
    }
    return out;
  }
  size_t i = 0;
  if (!Expect(t, &i, '[')) return std::nullopt;
  SkipSpace(t, &i);
  if (i < t.size() && t[i] == ']') return out;
  while (true) {
    auto d = ParseInts(t, &i);
    if (!d) return std::nullopt;
    out.push_back(std::move(*d));
    SkipSpace(t, &i);
    if (i < t.size() && t[i] == ',') { ++i; continue; }
    if (Expect(t, &i, ']')) return out;
    return std::nullopt;
  }
}

std::optional<std::vector<std::string>> ParseStringList(std::string_view t) {
  std::vector<std::string> out;
  if (!IsListText(t)) {  // torch_npu: "float;\r\nNone;\r\nScalar"
    for (std::string_view item : TextItems(t)) out.emplace_back(item);
    return out;
  }
  size_t i = 0;
  if (!Expect(t, &i, '[')) return std::nullopt;
  SkipSpace(t, &i);
  if (i < t.size() && t[i] == ']') return out;
  while (true) {
    if (!Expect(t, &i, '"')) return std::nullopt;
    std::string s;
    while (i < t.size() && t[i] != '"') {
      if (t[i] == '\\' && i + 1 < t.size()) ++i;
      s.push_back(t[i++]);
    }
    if (i >= t.size()) return std::nullopt;
    ++i;
    out.push_back(std::move(s));
    SkipSpace(t, &i);
    if (i < t.size() && t[i] == ',') { ++i; continue; }
    if (Expect(t, &i, ']')) return out;
    return std::nullopt;
  }
}

OpArgReader::OpArgReader(const Trace& trace)
    : trace_(trace), dims_key_(trace.strings.Find("Input Dims")), types_key_(trace.strings.Find("Input type")) {}

std::optional<StringId> OpArgReader::Key(std::string_view name) const { return trace_.strings.Find(name); }

std::optional<std::string_view> OpArgReader::Text(uint32_t s, std::optional<StringId> key) const {
  if (!key) return std::nullopt;
  const Arg* a = trace_.FindSliceArg(s, *key);
  if (a == nullptr || (a->type != ArgType::kJson && a->type != ArgType::kString)) return std::nullopt;
  return trace_.Str(StringId{a->str});
}

std::optional<std::vector<Dims>> OpArgReader::InputDims(uint32_t s) const {
  auto t = Text(s, dims_key_);
  return t ? ParseDimsList(*t) : std::nullopt;
}

std::optional<std::vector<std::string>> OpArgReader::InputTypes(uint32_t s) const {
  auto t = Text(s, types_key_);
  return t ? ParseStringList(*t) : std::nullopt;
}

std::optional<std::vector<std::string>> OpArgReader::ConcreteInputs(uint32_t s) const {
  auto t = Text(s, Key("Concrete Inputs"));
  return t ? ParseStringList(*t) : std::nullopt;
}

std::optional<double> OpArgReader::Number(uint32_t s, std::string_view key) const {
  auto k = Key(key);
  if (!k) return std::nullopt;
  const Arg* a = trace_.FindSliceArg(s, *k);
  if (a == nullptr) return std::nullopt;
  switch (a->type) {
    case ArgType::kInt: return static_cast<double>(a->i);
    case ArgType::kUint: return static_cast<double>(a->u);
    case ArgType::kDouble: return a->d;
    default: return std::nullopt;
  }
}

std::optional<std::string_view> OpArgReader::String(uint32_t s, std::string_view key) const {
  return Text(s, Key(key));
}

int BytesPerElement(std::string_view t) {
  if (t == "float" || t == "int" || t == "unsigned int" || t == "c10::complex<float>" ) return t == "c10::complex<float>" ? 8 : 4;
  if (t == "double" || t == "long int" || t == "long" || t == "int64_t" || t == "c10::complex<double>") return 8;
  if (t == "c10::Half" || t == "c10::BFloat16" || t == "short int" || t == "half" || t == "bfloat16") return 2;
  if (t == "bool" || t == "signed char" || t == "unsigned char" || t == "c10::Float8_e4m3fn" || t == "c10::Float8_e5m2") return 1;
  return 0;
}

int64_t NumElements(const Dims& d) {
  if (std::find(d.begin(), d.end(), 0) != d.end()) return 0;
  int64_t n = 1;
  for (int64_t x : d) {
    if (__builtin_mul_overflow(n, x, &n)) return std::numeric_limits<int64_t>::max();
  }
  return n;
}

std::string OneLineArgText(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      space = true;
      continue;
    }
    if (space && !out.empty() && out.back() != '[' && c != ']') out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

}  // namespace aiprof
