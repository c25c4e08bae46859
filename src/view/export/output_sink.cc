#include "src/view/export/output_sink.h"

namespace aiprof {

Status FileSink::Write(std::string_view bytes) {
  if (buffer_.size() + bytes.size() > kBufferBytes) {
    RETURN_IF_ERROR(file_.Write(buffer_));
    buffer_.clear();
    if (bytes.size() > kBufferBytes) return file_.Write(bytes);
  }
  buffer_.append(bytes);
  return OkStatus();
}

Status FileSink::Commit() {
  RETURN_IF_ERROR(file_.Write(buffer_));
  buffer_.clear();
  return file_.Commit();
}

}  // namespace aiprof
