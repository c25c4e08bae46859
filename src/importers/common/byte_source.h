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

#include "src/base/status.h"

namespace aiprof {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Opens `path`, detecting compression from its first bytes.
  static StatusOr<std::unique_ptr<ByteSource>> Open(const std::string& path);
  // Reads up to `n` bytes into `dst`; returns 0 at the end of the stream.
  virtual StatusOr<size_t> Read(char* dst, size_t n) = 0;
  // Bytes of the (compressed) file consumed so far.
  virtual uint64_t file_bytes_read() const = 0;
  virtual const char* compression() const = 0;
  const std::string& path() const { return path_; }

 protected:
  std::string path_;
};

// Reads the first `n` decompressed bytes of `path` (for format detection).
StatusOr<std::string> ReadPrefix(const std::string& path, size_t n);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_COMMON_BYTE_SOURCE_H_
