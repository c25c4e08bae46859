#include "src/base/decimal.h"

#include <charconv>
#include <limits>

namespace aiprof {
namespace {

struct DecimalParts {
  bool negative = false;
  std::string_view int_digits;
  std::string_view frac_digits;
  int64_t exponent = 0;
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::optional<DecimalParts> SplitDecimal(std::string_view s) {
  DecimalParts p;
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) p.negative = s[i++] == '-';
  size_t start = i;
  while (i < s.size() && IsDigit(s[i])) ++i;
  p.int_digits = s.substr(start, i - start);
  if (i < s.size() && s[i] == '.') {
    size_t fs = ++i;
    while (i < s.size() && IsDigit(s[i])) ++i;
    p.frac_digits = s.substr(fs, i - fs);
  }
  if (p.int_digits.empty() && p.frac_digits.empty()) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool exp_neg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) exp_neg = s[i++] == '-';
    size_t es = i;
    while (i < s.size() && IsDigit(s[i]) && i - es < 6) p.exponent = p.exponent * 10 + (s[i++] - '0');
    if (i == es) return std::nullopt;
    if (exp_neg) p.exponent = -p.exponent;
  }
  if (i != s.size()) return std::nullopt;
  return p;
}

// Fast path for the common shape "digits[.digits]" with at most 15 integer
// digits: exact in uint64 without the general machinery.
std::optional<int64_t> ParseSimpleDecimal(std::string_view text, int scale_pow10) {
  size_t i = 0, n = text.size();
  uint64_t value = 0;
  size_t int_digits = 0;
  while (i < n && IsDigit(text[i])) {
    if (++int_digits > 19) return std::nullopt;
    if (__builtin_mul_overflow(value, uint64_t{10}, &value) ||
        __builtin_add_overflow(value, static_cast<uint64_t>(text[i] - '0'), &value)) {
      return std::nullopt;
    }
    ++i;
  }
  if (int_digits == 0) return std::nullopt;
  int kept = 0;
  int round_digit = 0;
  if (i < n && text[i] == '.') {
    ++i;
    size_t frac_start = i;
    while (i < n && IsDigit(text[i])) {
      if (kept < scale_pow10) {
        value = value * 10 + static_cast<uint64_t>(text[i] - '0');  // checked below
        ++kept;
      } else if (i == frac_start + static_cast<size_t>(scale_pow10)) {
        round_digit = text[i] - '0';
      }
      ++i;
    }
    if (i == frac_start) return std::nullopt;
  }
  if (i != n) return std::nullopt;  // exponent or junk: general path
  for (; kept < scale_pow10; ++kept) {
    if (__builtin_mul_overflow(value, uint64_t{10}, &value)) return std::nullopt;
  }
  if (round_digit >= 5) ++value;
  // 19 integer digits scaled by 1000 can wrap; the general path then decides.
  if (value > static_cast<uint64_t>(INT64_MAX) || int_digits + static_cast<size_t>(scale_pow10) > 19) {
    return std::nullopt;
  }
  return static_cast<int64_t>(value);
}

}  // namespace

std::optional<int64_t> ParseDecimalScaled(std::string_view text, int scale_pow10) {
  if (scale_pow10 >= 0 && scale_pow10 <= 3 && !text.empty() && IsDigit(text[0])) {
    if (std::optional<int64_t> v = ParseSimpleDecimal(text, scale_pow10)) return v;
  }
  std::optional<DecimalParts> parts = SplitDecimal(text);
  if (!parts) return std::nullopt;
  // The decimal point moves right by `shift` places; digits past it round.
  int64_t shift = parts->exponent + scale_pow10;
  unsigned __int128 acc = 0;
  const unsigned __int128 kLimit = static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max()) + 1;
  auto push_digit = [&](int d) {
    acc = acc * 10 + static_cast<unsigned>(d);
    return acc <= kLimit;
  };
  int round_digit = -1;  // first digit dropped, decides rounding
  int64_t int_len = static_cast<int64_t>(parts->int_digits.size());
  int64_t total_len = int_len + static_cast<int64_t>(parts->frac_digits.size());
  int64_t keep = int_len + shift;  // digits (from the left) that stay integral
  for (int64_t k = 0; k < total_len; ++k) {
    char c = k < int_len ? parts->int_digits[k] : parts->frac_digits[k - int_len];
    if (k < keep) {
      if (!push_digit(c - '0')) return std::nullopt;
    } else {
      round_digit = c - '0';
      break;
    }
  }
  // Trailing zeros the exponent adds; zero stays zero however many.
  for (int64_t k = total_len; k < keep && acc != 0; ++k) {
    if (!push_digit(0)) return std::nullopt;
  }
  if (round_digit >= 5) ++acc;
  if (parts->negative) {
    if (acc > kLimit) return std::nullopt;
    return static_cast<int64_t>(-static_cast<__int128>(acc));
  }
  if (acc >= kLimit) return std::nullopt;
  return static_cast<int64_t>(acc);
}

std::optional<int64_t> ParseInt64(std::string_view text) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace aiprof
