// Where a view writes: a string in tests, an atomically written file in the
// CLI (the file appears only if the whole view rendered).
#ifndef AIPROF_SRC_VIEW_VIEW_SINK_H_
#define AIPROF_SRC_VIEW_VIEW_SINK_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "src/base/atomic_file.h"
#include "src/base/status.h"

namespace aiprof {

// How many bytes a view or export collects before it hands them to its sink
// (and the file sink before it writes): a few large writes, bounded memory.
inline constexpr size_t kViewFlushBytes = 1 << 20;

class ViewSink {
 public:
  virtual ~ViewSink() = default;
  virtual Status Append(std::string_view bytes) = 0;
};

// Collects everything in a string. Visible for testing.
class StringViewSink : public ViewSink {
 public:
  Status Append(std::string_view bytes) override {
    out_.append(bytes);
    return OkStatus();
  }
  const std::string& str() const { return out_; }

 private:
  std::string out_;
};

// Buffers up to 1 MiB, then writes through an AtomicFileWriter; the file
// replaces `path` only on Commit().
class FileViewSink : public ViewSink {
 public:
  Status Open(const std::string& path) { return writer_.Open(path); }
  Status Append(std::string_view bytes) override;
  Status Commit();

 private:
  AtomicFileWriter writer_;
  std::string buffer_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_VIEW_SINK_H_
