// Opens any supported input into a Trace. File formats are told apart by
// content (magic bytes, first JSON bytes), never by file name; a folder is a
// torch_npu or msprof output, or a folder of several ranks' outputs
// (folder_importer.h). A new file format adds one entry to kImporters in
// importer_registry.cc: the "unrecognised format" errors, the server's scan
// of a folder (src/serve/indexer.cc) and the sample-file check
// (src/importers/samples/sample_file.h) read the formats from it.
#ifndef AIPROF_SRC_IMPORTERS_COMMON_IMPORTER_REGISTRY_H_
#define AIPROF_SRC_IMPORTERS_COMMON_IMPORTER_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"
#include "src/model/trace.h"

namespace aiprof {

class TraceBuilder;

struct ImporterEntry {
  const char* name;
  const char* label;  // what its files are called in messages ("Nsight Systems SQLite export")
  // The endings its files' names carry, space-separated (".aiprof .aiprof.part"):
  // the server's scan records a file named so even when its first bytes are
  // not the format, so that a broken trace shows as a failed run.
  const char* endings;
  // True if the first decompressed bytes of the file look like this format.
  bool (*detect)(std::string_view prefix);
  Status (*import)(const std::string& path, TraceBuilder* builder);
  // True if the importer reads the file in place (maps it, or hands it to
  // SQLite) rather than as a byte stream: a gzip or zstd file of this format
  // is then read through a decompressed copy (decompressed_copy.h).
  bool reads_in_place;
};

// A pipe, device or `-` (standard input) is copied to an unlinked temporary
// file first: its format is checked once kStreamFormatCheckBytes have come
// (or at the end), and the copy stops with an error past
// kMaxStreamedInputBytes (docs/importers.md).
inline constexpr uint64_t kStreamFormatCheckBytes = 1 << 20;
inline constexpr uint64_t kMaxStreamedInputBytes = uint64_t{64} << 30;

// How many first (decompressed) bytes of a file the detect functions see.
inline constexpr size_t kDetectPrefixBytes = 4096;

// Imports `path`: a trace file in any known format, a native .aiprof, or a folder.
StatusOr<std::unique_ptr<Trace>> ImportTrace(const std::string& path);

// Imports the paths given as one input: one path as ImportTrace; several as
// one run's SDK files, merged by process (ImportSdkFiles in
// folder_importer.h), labelled by their paths joined by spaces.
StatusOr<std::unique_ptr<Trace>> ImportTraces(const std::vector<std::string>& paths);

// Imports one file (never a folder).
StatusOr<std::unique_ptr<Trace>> ImportTraceFile(const std::string& path);

// True if a file starting with `prefix` is a format ImportTraceFile reads.
bool IsImportableFilePrefix(std::string_view prefix);

// Every file importer, in the order their detect functions are tried.
std::span<const ImporterEntry> FileImporters();

// The importer that reads a file starting with `prefix`; nullptr for a
// native .aiprof file or a format none reads.
const ImporterEntry* DetectFileImporter(std::string_view prefix);

// What a file may be, for messages: every importer's label and the .aiprof
// file, with the compressions read.
std::string KnownFileFormats();

// True if `name` ends like a file of a format ImportTraceFile reads (an
// importer's endings, .aiprof) or a compressed one (.gz, .zst).
bool HasTraceFileEnding(std::string_view name);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_COMMON_IMPORTER_REGISTRY_H_
