// Durations on the command line: "60s", "500ms", "2m", "1h", "1.5" (seconds).
#ifndef AIPROF_SRC_CLI_DURATION_FLAG_H_
#define AIPROF_SRC_CLI_DURATION_FLAG_H_

#include <cmath>
#include <cstdint>
#include <string>

namespace aiprof {

// `s` in ns; -1 when malformed, negative or past int64's nanoseconds (292
// years): the conversion of a larger double is undefined (clang's UBSan
// found "1000000000h" read as INT64_MIN by luck).
inline int64_t ParseDuration(const std::string& s) {
  size_t end = 0;
  double v = 0;
  try {
    v = std::stod(s, &end);
  } catch (...) {
    return -1;
  }
  const std::string unit = s.substr(end);
  double scale = unit.empty() || unit == "s" ? 1e9 : unit == "ms" ? 1e6 : unit == "us" ? 1e3 : unit == "m" ? 60e9
               : unit == "h" ? 3600e9 : -1;
  if (scale < 0 || !(v >= 0) || !std::isfinite(v)) return -1;
  const double ns = v * scale;
  if (!(ns < 9223372036854775807.0)) return -1;
  return static_cast<int64_t>(ns);
}

}  // namespace aiprof

#endif  // AIPROF_SRC_CLI_DURATION_FLAG_H_
