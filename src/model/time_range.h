// The range of times the model accepts, so that no end (start + duration), no
// difference of two times and no shift by the time base can overflow int64.
// Importers check records with these before handing them to TraceBuilder and
// count the rest (diagnostic "time_out_of_range", naming the record);
// TraceBuilder checks again for whatever an importer passes unchecked.
#ifndef AIPROF_SRC_MODEL_TIME_RANGE_H_
#define AIPROF_SRC_MODEL_TIME_RANGE_H_

#include <cstdint>

namespace aiprof {

// ±2^61 ns is ±73 years around the trace's own zero. Times, durations and the
// time base each stay within it, so start + duration + base stays within
// ±3 * 2^61 < 2^63 and two such times differ by less than 2^63.
inline constexpr int64_t kMaxAbsTimeNs = int64_t{1} << 61;

inline bool TimeInRange(int64_t t_ns) { return t_ns >= -kMaxAbsTimeNs && t_ns <= kMaxAbsTimeNs; }

// A slice [start, start + duration] the model can hold: both in range, duration >= 0.
inline bool SpanInRange(int64_t start_ns, int64_t dur_ns) {
  return TimeInRange(start_ns) && dur_ns >= 0 && dur_ns <= kMaxAbsTimeNs;
}

// end - start without overflow, when both are in range and end >= start; false otherwise.
inline bool DurationBetween(int64_t start_ns, int64_t end_ns, int64_t* dur_ns) {
  if (!TimeInRange(start_ns) || !TimeInRange(end_ns) || end_ns < start_ns) return false;
  *dur_ns = end_ns - start_ns;
  return *dur_ns <= kMaxAbsTimeNs;
}

}  // namespace aiprof

#endif  // AIPROF_SRC_MODEL_TIME_RANGE_H_
