#include "src/analysis/common/text_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace aiprof {

std::string FormatFixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string FormatDurationNs(double ns) {
  double a = std::fabs(ns);
  if (a < 1e3) return FormatFixed(ns, 0) + " ns";
  if (a < 1e6) return FormatFixed(ns / 1e3, 2) + " us";
  if (a < 1e9) return FormatFixed(ns / 1e6, 2) + " ms";
  return FormatFixed(ns / 1e9, 3) + " s";
}

std::string FormatPercent(double ratio) { return FormatFixed(ratio * 100, 1) + "%"; }

std::string FormatBytes(double bytes) {
  double a = std::fabs(bytes);
  if (a < 1024) return FormatFixed(bytes, 0) + " B";
  if (a < 1024.0 * 1024) return FormatFixed(bytes / 1024, 2) + " KiB";
  if (a < 1024.0 * 1024 * 1024) return FormatFixed(bytes / (1024.0 * 1024), 2) + " MiB";
  return FormatFixed(bytes / (1024.0 * 1024 * 1024), 2) + " GiB";
}

std::string InstanceNameKey(std::string_view name) {
  std::string out(name);
  const size_t hash = out.rfind('#');
  if (hash != std::string::npos && hash + 1 < out.size() && std::all_of(out.begin() + hash + 1, out.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      })) {
    out.replace(hash + 1, std::string::npos, "*");
  }
  return out;
}

}  // namespace aiprof
