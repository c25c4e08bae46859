#include "src/analysis/scenario/scenario.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace aiprof {
namespace {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t b = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      std::string_view part = s.substr(b, i - b);
      while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
      while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
      if (!part.empty()) out.push_back(part);
      b = i + 1;
    }
  }
  return out;
}

StatusOr<WhatIfClause> ParseClause(std::string_view clause) {
  std::vector<std::string_view> w = Split(clause, ' ');
  WhatIfClause c;
  const std::string where = "scenario clause '" + std::string(clause) + "': ";
  if (w[0] == "remove-idle") {
    if (w.size() != 2) return ErrStatus(where + "expected 'remove-idle data_loading|host_bound|sync|other|startup'");
    c.kind = WhatIfClause::Kind::kRemoveIdle;
    if (w[1] == "data_loading")
      c.cause = GapCause::kDataLoading;
    else if (w[1] == "host_bound")
      c.cause = GapCause::kHostBound;
    else if (w[1] == "sync")
      c.cause = GapCause::kSync;
    else if (w[1] == "other")
      c.cause = GapCause::kOther;
    else if (w[1] == "startup")
      c.cause = GapCause::kStartup;
    else
      return ErrStatus(where + "unknown cause '" + std::string(w[1]) +
                       "' (data_loading, host_bound, sync, other, startup)");
    return c;
  }
  if (w[0] == "overlap-data-loading") {
    if (w.size() != 2) return ErrStatus(where + "expected 'overlap-data-loading WORKERS'");
    c.kind = WhatIfClause::Kind::kOverlapDataLoading;
    std::string f(w[1]);
    char* end = nullptr;
    const long n = std::strtol(f.c_str(), &end, 10);
    if (end == f.c_str() || *end != '\0' || n < 1 || n > 1024) {
      return ErrStatus(where + "WORKERS must be a whole number from 1 to 1024, got '" + f + "'");
    }
    c.factor = static_cast<double>(n);
    return c;
  }
  if (w[0] == "graph-launch") {
    if (w.size() != 1) return ErrStatus(where + "expected 'graph-launch' (no arguments)");
    c.kind = WhatIfClause::Kind::kGraphLaunch;
    return c;
  }
  if (w[0] == "remove") {
    if (w.size() != 2) return ErrStatus(where + "expected 'remove PATTERN' (one word, matched as a substring)");
    c.kind = WhatIfClause::Kind::kRemove;
    c.pattern = std::string(w[1]);
    return c;
  }
  if (w[0] == "scale") {
    if (w.size() != 3) return ErrStatus(where + "expected 'scale PATTERN FACTOR'");
    c.kind = WhatIfClause::Kind::kScale;
    c.pattern = std::string(w[1]);
    std::string f(w[2]);
    // Decimal only (digits, one '.', an exponent): strtod alone also took
    // hex ("0x5" is 5, not 0.5), "inf" and "nan".
    const bool decimal = !f.empty() && f.find_first_not_of("0123456789.eE+-") == std::string::npos &&
                         (std::isdigit(static_cast<unsigned char>(f[0])) || f[0] == '.');
    char* end = nullptr;
    c.factor = decimal ? std::strtod(f.c_str(), &end) : -1;
    if (!decimal || end == f.c_str() || *end != '\0' || !std::isfinite(c.factor) || c.factor < 0 ||
        c.factor > kMaxScaleFactor) {
      return ErrStatus(where + "FACTOR must be a number from 0 to 1e6, got '" + f + "'");
    }
    return c;
  }
  if (w[0] == "every") {
    if (w.size() != 3) return ErrStatus(where + "expected 'every N PATTERN'");
    c.kind = WhatIfClause::Kind::kEvery;
    std::string f(w[1]);
    char* end = nullptr;
    const long long n = std::strtoll(f.c_str(), &end, 10);
    if (end == f.c_str() || *end != '\0' || n < 1 || n > 1000000) {
      return ErrStatus(where + "N must be a whole number from 1 to 1000000, got '" + f + "'");
    }
    c.every = n;
    c.pattern = std::string(w[2]);
    return c;
  }
  if (w[0] == "fuse") {
    if (w.size() < 3)
      return ErrStatus(where + "expected 'fuse PATTERN PATTERN...' (a chain of at least two ops or kernels, in order)");
    if (w.size() > 33) return ErrStatus(where + "at most 32 patterns in a chain");
    c.kind = WhatIfClause::Kind::kFuse;
    for (size_t k = 1; k < w.size(); ++k) c.chain.emplace_back(w[k]);
    return c;
  }
  if (w[0] == "remove-page-faults") {
    if (w.size() != 1) return ErrStatus(where + "expected 'remove-page-faults' (no arguments)");
    c.kind = WhatIfClause::Kind::kRemovePageFaults;
    return c;
  }
  if (w[0] == "remove-comm") {
    if (w.size() != 1) return ErrStatus(where + "expected 'remove-comm' (no arguments)");
    c.kind = WhatIfClause::Kind::kRemoveComm;
    return c;
  }
  if (w[0] == "overlap-comm") {
    if (w.size() != 1) return ErrStatus(where + "expected 'overlap-comm' (no arguments)");
    c.kind = WhatIfClause::Kind::kOverlapComm;
    return c;
  }
  if (w[0] == "device") {
    if (w.size() != 2 && !(w.size() == 4 && w[2] == "from")) {
      return ErrStatus(where + "expected 'device NAME' or 'device NAME from NAME' (names from data/devices.yaml)");
    }
    c.kind = WhatIfClause::Kind::kDevice;
    c.device = std::string(w[1]);
    if (w.size() == 4) c.from_device = std::string(w[3]);
    return c;
  }
  return ErrStatus(
      where + "unknown verb '" + std::string(w[0]) +
      "' (remove-idle, remove, scale, every, graph-launch, overlap-data-loading, fuse, overlap-comm, remove-comm, "
      "device, remove-page-faults)");
}

// A clause's words once spaced; with its parse `c`, the number in a
// number's place as parsed, in its shortest form ("0.10", ".1" and "1e-1"
// are one factor). Patterns stay as written.
std::string ClauseText(const WhatIfClause* c, std::string_view clause) {
  using Kind = WhatIfClause::Kind;
  size_t at = SIZE_MAX;  // the word that is a number, if any
  double number = 0;
  if (c != nullptr && c->kind == Kind::kScale) {
    at = 2;
    number = c->factor;
  } else if (c != nullptr && (c->kind == Kind::kEvery || c->kind == Kind::kOverlapDataLoading)) {
    at = 1;
    number = c->kind == Kind::kEvery ? static_cast<double>(c->every) : c->factor;
  }
  std::string out;
  std::vector<std::string_view> words = Split(clause, ' ');
  for (size_t k = 0; k < words.size(); ++k) {
    if (k) out += ' ';
    if (k != at) {
      out += words[k];
      continue;
    }
    char buf[32];
    out.append(buf, std::to_chars(buf, buf + sizeof buf, number).ptr);
  }
  return out;
}

}  // namespace

StatusOr<Scenario> ParseScenario(std::string_view text) {
  Scenario sc;
  sc.text = std::string(text);
  for (std::string_view clause : Split(text, ';')) {
    ASSIGN_OR_RETURN(WhatIfClause c, ParseClause(clause));
    sc.canonical += (sc.canonical.empty() ? "" : "; ") + ClauseText(&c, clause);
    sc.clauses.push_back(std::move(c));
  }
  if (sc.clauses.empty()) return ErrStatus("empty scenario (see docs/whatif.md)");
  return sc;
}

std::string CanonicalScenarioText(std::string_view text) {
  StatusOr<Scenario> sc = ParseScenario(text);
  if (sc.ok()) return sc->canonical;
  std::string out;
  for (std::string_view clause : Split(text, ';')) out += (out.empty() ? "" : "; ") + ClauseText(nullptr, clause);
  return out;
}

}  // namespace aiprof
