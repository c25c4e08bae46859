// The clocks in nanoseconds: CLOCK_MONOTONIC (the clock of the SDK's records,
// the live channel, perf samples (attr.clockid) and the capture), for
// deadlines, intervals and timestamps compared with those; CLOCK_REALTIME for
// wall-clock dates.
#ifndef AIPROF_SRC_BASE_CLOCK_H_
#define AIPROF_SRC_BASE_CLOCK_H_

#include <time.h>

#include <cstdint>

namespace aiprof {

inline int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline int64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_CLOCK_H_
