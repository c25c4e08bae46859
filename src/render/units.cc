#include "src/render/units.h"

#include <cmath>

#include <fmt/format.h>

namespace aiprof {

std::string NsToUsText(int64_t ns) {
  bool negative = ns < 0;
  uint64_t v = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::string out = (negative ? "-" : "") + std::to_string(v / 1000);
  unsigned frac = static_cast<unsigned>(v % 1000);
  if (frac != 0) {
    char digits[4] = {static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                      static_cast<char>('0' + frac % 10), 0};
    std::string f(digits);
    while (!f.empty() && f.back() == '0') f.pop_back();
    out += "." + f;
  }
  return out;
}

namespace render {
namespace {

std::string Duration(double seconds) {
  double a = std::fabs(seconds);
  if (a >= 1) return fmt::format("{:.2f} s", seconds);
  if (a >= 1e-3) return fmt::format("{:.2f} ms", seconds * 1e3);
  if (seconds == 0) return "0";
  if (a >= 1e-6) return fmt::format("{:.1f} µs", seconds * 1e6);
  return fmt::format("{:.0f} ns", seconds * 1e9);
}

std::string Grouped(double value) {
  std::string digits = fmt::format("{:.0f}", std::fabs(value));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return (value < 0 && digits != "0" ? "-" : "") + out;
}

std::string Scaled(double value, const char* const* units, size_t count, double step, const char* fmt_text) {
  size_t i = 0;
  while (i + 1 < count && std::fabs(value) >= step) {
    value /= step;
    ++i;
  }
  return fmt::format(fmt::runtime(fmt_text), value, units[i]);
}

}  // namespace

std::string_view UnitName(Unit unit) {
  switch (unit) {
    case Unit::kNone: return "";
    case Unit::kNs: return "ns";
    case Unit::kMs: return "ms";
    case Unit::kBytes: return "bytes";
    case Unit::kFraction: return "fraction";
    case Unit::kChange: return "change";
    case Unit::kCount: return "count";
    case Unit::kPerSecond: return "per_second";
    case Unit::kBytesPerSecond: return "bytes_per_second";
    case Unit::kFlopsPerSecond: return "flops_per_second";
    case Unit::kRatio: return "ratio";
  }
  return "";
}

std::string FormatQuantity(double value, Unit unit) {
  if (!std::isfinite(value)) return "n/a";
  static const char* const kBytes[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  static const char* const kRate[] = {"/s", "k/s", "M/s", "G/s"};
  static const char* const kFlops[] = {"FLOP/s", "kFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s"};
  switch (unit) {
    case Unit::kNone: return fmt::format("{:.6g}", value);
    case Unit::kNs: return Duration(value / 1e9);
    case Unit::kMs: return Duration(value / 1e3);
    case Unit::kBytes:
      return std::fabs(value) < 1024 ? fmt::format("{:.0f} B", value) : Scaled(value, kBytes, 5, 1024, "{:.1f} {}");
    case Unit::kFraction: return fmt::format("{:.1f}%", value * 100);
    case Unit::kChange: return fmt::format("{:+.2f}%", value * 100);
    case Unit::kCount: return Grouped(value);
    case Unit::kPerSecond: return Scaled(value, kRate, 4, 1000, "{:.3g}{}");
    case Unit::kBytesPerSecond: return fmt::format("{:.2f} GB/s", value / 1e9);
    case Unit::kFlopsPerSecond: return Scaled(value, kFlops, 6, 1000, "{:.3g} {}");
    case Unit::kRatio: return fmt::format("{:.2f}×", value);
  }
  return fmt::format("{}", value);
}

}  // namespace render
}  // namespace aiprof
