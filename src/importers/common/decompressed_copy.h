// A compressed input decompressed to a private temporary file, for the
// formats that are read in place rather than as a byte stream: an Nsight
// Systems SQLite export (SQLite needs a seekable file), an .aiprof file and
// an SDK event file (both mapped). Users gzip or zstd their traces; these
// formats were "corrupt" when compressed (input trial, 'in').
//
// The copy is created under $TMPDIR without a name (O_TMPFILE, mode 0600;
// where the file system lacks it, named and unlinked at once) and read back
// through /proc/self/fd/N: no other process can see a partial copy, and
// none is left behind however this process ends (SIGKILL included). Its
// size is bounded by kMaxDecompressedCopyBytes, by ByteSource's expansion
// limit (kMaxExpansion) and by the thread's import budget, whichever comes
// first; past one the copy stops with an error naming the file. A finished
// copy gives its bytes back to the budget: the importer that reads it counts
// them as it would count the plain file's, so the input is charged once.
//
// SQLite resolves the symbolic links of the path it opens, and
// /proc/self/fd/N of a file without a name resolves to nothing. An opener
// like it asks OpenableName() for a real name (a link in a private folder,
// mode 0700) and calls DropOpenableName() as soon as it holds the file open:
// the name exists for the span of an open() call.
#ifndef AIPROF_SRC_IMPORTERS_COMMON_DECOMPRESSED_COPY_H_
#define AIPROF_SRC_IMPORTERS_COMMON_DECOMPRESSED_COPY_H_

#include <cstdint>
#include <memory>
#include <string>

#include "src/base/status.h"

namespace aiprof {

inline constexpr uint64_t kMaxDecompressedCopyBytes = uint64_t{64} << 30;

class DecompressedCopy {
 public:
  // Decompresses all of `path` (gzip or zstd) into a new private copy.
  // `format` names what the file holds, for the error messages.
  static StatusOr<std::unique_ptr<DecompressedCopy>> Create(const std::string& path, const std::string& format);
  ~DecompressedCopy();
  DecompressedCopy(const DecompressedCopy&) = delete;
  DecompressedCopy& operator=(const DecompressedCopy&) = delete;

  // Where the copy is read: /proc/self/fd/N.
  const std::string& path() const { return path_; }
  // Decompressed bytes in the copy.
  uint64_t bytes() const { return bytes_; }

  // Visible for testing: another size limit for the copies made after it (0: the default).
  static void SetMaxBytesForTesting(uint64_t max_bytes);

 private:
  friend StatusOr<std::string> OpenableName(const std::string& path);
  friend void DropOpenableName(const std::string& path);
  DecompressedCopy(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  void DropName();
  int fd_;
  std::string path_;
  uint64_t bytes_ = 0;
  std::string name_folder_, name_;  // while OpenableName's link exists
};

// `path` itself, unless it is a live DecompressedCopy's path(): then a name
// linked to the copy that resolves without symbolic links.
StatusOr<std::string> OpenableName(const std::string& path);
// Removes the name OpenableName(path) made, if any (the open file stays readable).
void DropOpenableName(const std::string& path);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_COMMON_DECOMPRESSED_COPY_H_
