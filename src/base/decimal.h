// Exact decimal text → integer conversions for timestamps.
//
// Trace timestamps are written as decimal microseconds ("1736408883704643.212",
// "25.118000000000052", "1.5e3"). Going through a double loses nanoseconds past
// 2^53, so these parse the text digit by digit into integer nanoseconds.
#ifndef AIPROF_SRC_BASE_DECIMAL_H_
#define AIPROF_SRC_BASE_DECIMAL_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace aiprof {

// Parses a JSON-style decimal number (optional sign, digits, fraction,
// exponent) and returns value * 10^scale_pow10 rounded half away from zero.
// Returns nullopt on syntax errors or int64 overflow.
std::optional<int64_t> ParseDecimalScaled(std::string_view text, int scale_pow10);

// Microseconds as decimal text → nanoseconds.
inline std::optional<int64_t> ParseMicrosToNanos(std::string_view text) {
  return ParseDecimalScaled(text, 3);
}

// Plain integer (no fraction, no exponent) → int64.
std::optional<int64_t> ParseInt64(std::string_view text);

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_DECIMAL_H_
