// Units of the figures in documents (document.h), and their formatting for
// people. Document builders attach a unit to a raw number; only renderers
// turn it into text, so every format prints a figure the same way.
#ifndef AIPROF_SRC_RENDER_UNITS_H_
#define AIPROF_SRC_RENDER_UNITS_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace aiprof {

// Integer nanoseconds as exact decimal microseconds: 1234567 → "1234.567",
// 5000 → "5". No rounding, no double.
std::string NsToUsText(int64_t ns);

namespace render {

// The unit of a raw number in a document.
enum class Unit {
  kNone,            // a plain number, printed as it is
  kNs,              // nanoseconds; shown as ns / µs / ms / s as its size asks
  kMs,              // milliseconds; shown as µs / ms / s
  kBytes,           // bytes; shown as B / KiB / MiB / GiB
  kFraction,        // a share 0..1; shown as a percentage
  kChange,          // a relative change; shown as a signed percentage (+12.34%)
  kCount,           // a whole count; shown with thousands separators
  kPerSecond,       // events per second
  kBytesPerSecond,  // shown as GB/s
  kFlopsPerSecond,  // shown as TFLOP/s / GFLOP/s
  kRatio,           // a factor (×)
};

// The unit's short name for machine output and column headers ("ns", "%").
std::string_view UnitName(Unit unit);
// `value` in `unit` for people: "1.23 ms", "45.6%", "12,345", "3.2 GB/s";
// "n/a" when not finite.
std::string FormatQuantity(double value, Unit unit);

}  // namespace render

}  // namespace aiprof

#endif  // AIPROF_SRC_RENDER_UNITS_H_
