#include "src/view/view_sink.h"

namespace aiprof {

Status FileViewSink::Append(std::string_view bytes) {
  buffer_.append(bytes);
  if (buffer_.size() < kViewFlushBytes) return OkStatus();
  Status status = writer_.Write(buffer_);
  buffer_.clear();
  return status;
}

Status FileViewSink::Commit() {
  if (!buffer_.empty()) {
    RETURN_IF_ERROR(writer_.Write(buffer_));
    buffer_.clear();
  }
  return writer_.Commit();
}

}  // namespace aiprof
