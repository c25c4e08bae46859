// The monotonic clock in nanoseconds (CLOCK_MONOTONIC, the clock the SDK's
// records and the live channel use), for deadlines, intervals and timestamps
// compared with them.
#ifndef AIPROF_SRC_BASE_CLOCK_H_
#define AIPROF_SRC_BASE_CLOCK_H_

#include <time.h>

#include <cstdint>

namespace aiprof {

inline int64_t MonotonicNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_CLOCK_H_
