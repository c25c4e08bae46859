// Number formatting shared by the report's HTML and Markdown renderings, so
// both print a figure the same way. Internal to src/report/page.
#ifndef AIPROF_SRC_REPORT_PAGE_REPORT_FORMAT_H_
#define AIPROF_SRC_REPORT_PAGE_REPORT_FORMAT_H_

#include <cmath>
#include <string>

#include <fmt/format.h>

namespace aiprof::report_format {

// A duration given in ms, in s / ms / µs as its size asks; "n/a" if not finite.
inline std::string Ms(double ms) {
  if (!std::isfinite(ms)) return "n/a";
  if (std::fabs(ms) >= 1000) return fmt::format("{:.2f} s", ms / 1000);
  if (std::fabs(ms) >= 1) return fmt::format("{:.2f} ms", ms);
  return fmt::format("{:.1f} µs", ms * 1000);
}

// A fraction as a percentage with one decimal; "n/a" if not finite.
inline std::string Pct(double f) { return std::isfinite(f) ? fmt::format("{:.1f}%", f * 100) : "n/a"; }

}  // namespace aiprof::report_format

#endif  // AIPROF_SRC_REPORT_PAGE_REPORT_FORMAT_H_
