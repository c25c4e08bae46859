// The native .aiprof file: the model's columns written as they are in memory,
// so loading is a few large reads instead of parsing.
//
// Layout (little-endian): "AIPROF\0\n", u32 version, then sections in a fixed
// order (strings, tracks, slices, args, instants, counters, flows, steps,
// op metrics, step breakdown, callsites, stack samples, op statistics, metadata, diagnostics), each column as u64 count + raw values, and
// "AIPROFEND" at the end so truncation is detected. Bump kNativeVersion when
// the layout changes; older versions are refused with a clear message.
#ifndef AIPROF_SRC_MODEL_NATIVE_FILE_H_
#define AIPROF_SRC_MODEL_NATIVE_FILE_H_

#include <memory>
#include <string>
#include <string_view>

#include "src/base/status.h"
#include "src/model/trace.h"

namespace aiprof {

inline constexpr std::string_view kNativeMagic("AIPROF\0\n", 8);
inline constexpr uint32_t kNativeVersion = 5;  // 3: columns 8-byte aligned for mapping; 4: callsites, stack samples; 5: op statistics

// Writes `trace` to `path` atomically.
Status WriteNativeFile(const Trace& trace, const std::string& path);
// Loads a file written by WriteNativeFile; checks every count against the file size.
StatusOr<std::unique_ptr<Trace>> ReadNativeFile(const std::string& path);

}  // namespace aiprof

#endif  // AIPROF_SRC_MODEL_NATIVE_FILE_H_
