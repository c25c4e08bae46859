// The native .aiprof file: the model's columns written as they are in memory,
// so loading is a few large reads instead of parsing.
//
// Layout (little-endian): "AIPROF\0\n", u32 version, then sections in a fixed
// order (strings, tracks, slices, args, instants, counters, flows, steps,
// op metrics, step breakdown, callsites, stack samples, op statistics,
// metadata, diagnostics), each column as u64 count + raw values, and
// "AIPROFEND" at the end so truncation is detected; nothing may follow it.
// Since version 6 each block (the header with the string table, each column,
// the metadata, the diagnostics) is followed by the u64 XXH3-64 of its bytes,
// so a changed byte is an error naming its block and offset instead of a
// silently different figure. Bump kNativeVersion when the layout changes;
// version 5 (no checksums) is still read, its structure and references
// checked, with the diagnostic kNativeUncheckedDiagnostic; others are refused.
#ifndef AIPROF_SRC_MODEL_NATIVE_FILE_H_
#define AIPROF_SRC_MODEL_NATIVE_FILE_H_

#include <memory>
#include <string>
#include <string_view>

#include "src/base/status.h"
#include "src/model/trace.h"

namespace aiprof {

inline constexpr std::string_view kNativeMagic("AIPROF\0\n", 8);
// 3: columns 8-byte aligned for mapping; 4: callsites, stack samples; 5: op
// statistics; 6: a checksum after each block.
inline constexpr uint32_t kNativeVersion = 6;
// The previous version, read without checksums (earlier SDKs and serve caches wrote it).
inline constexpr uint32_t kNativeUncheckedVersion = 5;
// The diagnostic a file of kNativeUncheckedVersion loads with; not written to a new file.
inline constexpr std::string_view kNativeUncheckedDiagnostic = "native_file_unchecked";

struct NativeReadOptions {
  // Visible for testing: false skips comparing checksums, so a fuzzer's
  // mutations reach the structural checks behind them.
  bool verify_checksums = true;
};

// Writes `trace` to `path` atomically.
Status WriteNativeFile(const Trace& trace, const std::string& path);
// Loads a file written by WriteNativeFile; checks every block's checksum,
// every count against the file size and every id against its table.
StatusOr<std::unique_ptr<Trace>> ReadNativeFile(const std::string& path, const NativeReadOptions& options = {});

}  // namespace aiprof

#endif  // AIPROF_SRC_MODEL_NATIVE_FILE_H_
