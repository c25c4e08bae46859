// Writes a file atomically: data goes to a temporary file in the same folder,
// which is fsynced and renamed over the target only on Commit(). A crash or
// error leaves either the old file or the new one, never half of one.
#ifndef AIPROF_SRC_BASE_ATOMIC_FILE_H_
#define AIPROF_SRC_BASE_ATOMIC_FILE_H_

#include <cstdio>
#include <string>
#include <string_view>

#include "src/base/status.h"

namespace aiprof {

class AtomicFileWriter {
 public:
  ~AtomicFileWriter();  // removes the temporary file unless committed
  Status Open(const std::string& path);
  Status Write(const void* data, size_t n);
  Status Write(std::string_view s) { return Write(s.data(), s.size()); }
  Status Commit();

 private:
  std::string path_, tmp_path_;
  FILE* file_ = nullptr;
  bool failed_ = false;
};

// Writes `content` to `path` atomically.
Status WriteFileAtomically(const std::string& path, std::string_view content);

// Checks, before any work, that `path` can be written atomically: its folder
// exists, is a folder and is writable, and `path` itself is not a folder.
// For commands whose work is expensive or cannot be repeated (a capture).
Status CheckWritableOutput(const std::string& path);

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_ATOMIC_FILE_H_
