// Plain-text formatting of figures for evidence lines (reports escape them).
#ifndef AIPROF_SRC_ANALYSIS_COMMON_TEXT_FORMAT_H_
#define AIPROF_SRC_ANALYSIS_COMMON_TEXT_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace aiprof {

// 1234 → "1.23 µs" style: ns, µs, ms or s with 3 significant-ish digits.
std::string FormatDurationNs(double ns);
// 0.3812 → "38.1%".
std::string FormatPercent(double ratio);
// 1536 → "1.50 KiB"; bytes, KiB, MiB, GiB.
std::string FormatBytes(double bytes);
// Fixed-point with `digits` decimals.
std::string FormatFixed(double v, int digits);

// A name whose "#N" suffix (ProfilerStep#7, Optimizer.step#SGD.step#3) is
// a count becomes "#*", so every step's instances group under one key.
std::string InstanceNameKey(std::string_view name);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_COMMON_TEXT_FORMAT_H_
