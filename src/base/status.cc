#include "src/base/status.h"

namespace aiprof {

Status ErrStatus(std::string message) { return Status::Error(std::move(message)); }

}  // namespace aiprof
