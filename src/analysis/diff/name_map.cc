#include "src/analysis/diff/name_map.h"

#include <re2/re2.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

namespace aiprof {
namespace {

// The largest map file read (a map is a few hundred lines; anything this
// large is not one).
constexpr size_t kMaxNameMapBytes = 16u << 20;

int LineOf(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

// `regexes`: the map's regexes so far, both sides (kMaxNameMapRegexes).
StatusOr<DiffNameMap::Pattern> ReadNamePattern(const YAML::Node& entry, const char* key, const std::string& file,
                                               size_t* regexes) {
  const YAML::Node v = entry[key];
  const std::string where = file + ":" + std::to_string(LineOf(entry)) + ": ";
  if (!v || !v.IsScalar() || v.Scalar().empty()) {
    return ErrStatus(where + "each map entry needs '" + key + "': a name, or /regex/");
  }
  DiffNameMap::Pattern p;
  p.text = v.Scalar();
  if (p.text.size() >= 2 && p.text.front() == '/' && p.text.back() == '/') {
    // RE2: matching time linear in the name, no recursion (std::regex
    // overflowed the stack on a 50,000-character op name from a trace, and
    // took seconds per character on /^(a+)+$/).
    if (++*regexes > kMaxNameMapRegexes) {
      return ErrStatus(where + "more than " + std::to_string(kMaxNameMapRegexes) +
                       " regexes in one name map (list plain names, or join patterns with |)");
    }
    RE2::Options options;
    options.set_log_errors(false);
    options.set_max_mem(kMaxNameMapRegexBytes);
    auto re = std::make_shared<const RE2>(p.text.substr(1, p.text.size() - 2), options);
    if (!re->ok()) {
      return ErrStatus(where + "'" + key + "': not a valid regex " + p.text + " (" + re->error() +
                       (re->error_code() == RE2::ErrorPatternTooLarge
                            ? ": a regex's program is held to " + std::to_string(kMaxNameMapRegexBytes >> 10) + " KiB"
                            : "") +
                       ")");
    }
    p.re = std::move(re);
  }
  return p;
}

}  // namespace

bool DiffNameMap::Pattern::Matches(std::string_view name) const {
  if (!re) return name == text;
  return RE2::PartialMatch(re2::StringPiece(name.data(), name.size()), *re);
}

StatusOr<DiffNameMap> DiffNameMap::Parse(std::string_view yaml, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return ErrStatus(file + ":" + std::to_string(e.mark.line + 1) + ": YAML syntax error: " + e.msg);
  }
  DiffNameMap out;
  size_t regexes = 0;
  try {
    if (!root.IsMap() || !root["map"] || !root["map"].IsSequence()) {
      return ErrStatus(file + ":" + std::to_string(LineOf(root)) +
                       ": a name map holds a map with a 'map' list of {a: NAME, b: NAME} entries");
    }
    for (const YAML::Node& n : root["map"]) {
      if (!n.IsMap()) return ErrStatus(file + ":" + std::to_string(LineOf(n)) + ": a map entry is {a: NAME, b: NAME}");
      if (out.entries_.size() >= kMaxNameMapEntries) {
        return ErrStatus(file + ":" + std::to_string(LineOf(n)) + ": more than " + std::to_string(kMaxNameMapEntries) +
                         " map entries");
      }
      // A key other than a and b is a typo or a feature the map lacks
      // ("regex: true", "kind: op"): refused rather than ignored.
      for (const auto& kv : n) {
        const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
        if (k != "a" && k != "b") {
          return ErrStatus(file + ":" + std::to_string(LineOf(kv.first.IsScalar() ? kv.first : n)) +
                           ": a map entry has only 'a' and 'b' (not '" + k.substr(0, 80) + "')");
        }
      }
      Entry e;
      ASSIGN_OR_RETURN(e.a, ReadNamePattern(n, "a", file, &regexes));
      ASSIGN_OR_RETURN(e.b, ReadNamePattern(n, "b", file, &regexes));
      e.line = LineOf(n);
      out.entries_.push_back(std::move(e));
    }
  } catch (const YAML::Exception& e) {
    return ErrStatus(file + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  return out;
}

StatusOr<DiffNameMap> DiffNameMap::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrStatus(path + ": cannot open the name map");
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxNameMapBytes) {
      return ErrStatus(path + ": a name map larger than " + std::to_string(kMaxNameMapBytes >> 20) + " MiB");
    }
  }
  return Parse(text, path);
}

int DiffNameMap::Find(int side, std::string_view name) const {
  for (size_t i = 0; i < entries_.size(); ++i) {
    if ((side == 0 ? entries_[i].a : entries_[i].b).Matches(name)) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace aiprof
