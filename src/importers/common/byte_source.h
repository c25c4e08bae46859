// Sequential bytes of an input file, decompressed on the fly.
//
// The format is recognised by magic bytes, not the file name: gzip (1f 8b),
// zstd (28 b5 2f fd), else plain. Read() fills a caller-owned buffer, so a
// whole file is never held in memory.
#ifndef AIPROF_SRC_IMPORTERS_COMMON_BYTE_SOURCE_H_
#define AIPROF_SRC_IMPORTERS_COMMON_BYTE_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "src/base/status.h"

namespace aiprof {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Opens `path`, detecting compression from its first bytes. With
  // `background_decompression` a compressed input is decompressed on a
  // thread of its own, a few MiB ahead of the reader, so decompressing
  // overlaps with parsing.
  static StatusOr<std::unique_ptr<ByteSource>> Open(const std::string& path, bool background_decompression = false);
  // Reads up to `n` bytes into `dst`; returns 0 at the end of the stream.
  virtual StatusOr<size_t> Read(char* dst, size_t n) = 0;
  // Bytes of the (compressed) file consumed so far.
  virtual uint64_t file_bytes_read() const = 0;
  virtual const char* compression() const = 0;
  const std::string& path() const { return path_; }

  // A plain regular file may instead be read in place: Map() returns the
  // whole file mapped read-only, followed by at least kMapPaddingBytes
  // readable bytes (so a parser may read past a value's end), or an empty
  // view when the input cannot be mapped (compressed, a pipe, empty).
  static constexpr size_t kMapPaddingBytes = 64;
  virtual std::string_view Map() { return {}; }
  // Tells the source that mapped bytes before `offset` will not be read
  // again, so their pages can leave this process's memory (they stay in the
  // page cache). Thread-safe; offsets only grow.
  virtual void ReleaseMappedBefore(uint64_t offset) { (void)offset; }

 protected:
  std::string path_;
};

// A compressed input may expand at most kMaxExpansion times its compressed
// size once it has produced kExpansionFreeBytes: past that, the read fails
// naming the file and the compressed byte (a zstd frame of RLE blocks turned
// 33 MB into 1 TB of whitespace and kept an import busy for hours; gzip
// cannot pass about 1,032 times, real traces compress 5 to 50 times).
inline constexpr uint64_t kExpansionFreeBytes = uint64_t{1} << 30;
inline constexpr uint64_t kMaxExpansion = 1000;
// Visible for testing: other limits for the readers opened after it (0, 0:
// the defaults above).
void SetExpansionLimitsForTesting(uint64_t free_bytes, uint64_t max_expansion);

// Reads the first `n` decompressed bytes of `path` (for format detection);
// sets `*compression`, when given, to the file's ("none", "gzip", "zstd").
StatusOr<std::string> ReadPrefix(const std::string& path, size_t n, std::string* compression = nullptr);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_COMMON_BYTE_SOURCE_H_
