#include <errno.h>

#include "src/sdk/sdk_internal.h"

namespace aiprof::sdkrt {

int WriteNativeTrace(const WriteRequest&, const char*) { return ENOSYS; }

}  // namespace aiprof::sdkrt
