// Where a view or an export writes its bytes: a string (tests) or a file
// written atomically through a buffer, so large outputs stream to disk in
// bounded memory.
#ifndef AIPROF_SRC_VIEW_EXPORT_OUTPUT_SINK_H_
#define AIPROF_SRC_VIEW_EXPORT_OUTPUT_SINK_H_

#include <string>
#include <string_view>

#include "src/base/atomic_file.h"
#include "src/base/status.h"

namespace aiprof {

class OutputSink {
 public:
  virtual ~OutputSink() = default;
  virtual Status Write(std::string_view bytes) = 0;
};

// Collects everything in memory.
class StringSink : public OutputSink {
 public:
  Status Write(std::string_view bytes) override {
    out_.append(bytes);
    return OkStatus();
  }
  const std::string& str() const { return out_; }

 private:
  std::string out_;
};

// Buffers writes (1 MiB) into an AtomicFileWriter; the file appears only on
// Commit(), so a failed export leaves no half-written output.
class FileSink : public OutputSink {
 public:
  Status Open(const std::string& path) { return file_.Open(path); }
  Status Write(std::string_view bytes) override;
  Status Commit();

 private:
  static constexpr size_t kBufferBytes = 1 << 20;
  AtomicFileWriter file_;
  std::string buffer_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_EXPORT_OUTPUT_SINK_H_
