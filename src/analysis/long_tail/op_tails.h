// Long-tail ops: per op name, duration quantiles and the instances far
// beyond the median.
//
// Ops are device activity (kernels, copies, sets, collectives) when the trace
// has any, else cpu_op slices. Per name: p50/p90/p99 (linear interpolation,
// QuantileSorted) and max; tail instances are those longer than
// kLongTailFactor × p50; tail share = tail time / the op's total time. An op
// "tail-dominated" has tail share > kTailDominatedShare. long_tail_ratio is
// the largest tail share among ops with at least kLongTailMinCount instances
// and at least kLongTailMinTimeShare of all op time (so one odd instance of a
// negligible op does not decide it).
#ifndef AIPROF_SRC_ANALYSIS_LONG_TAIL_OP_TAILS_H_
#define AIPROF_SRC_ANALYSIS_LONG_TAIL_OP_TAILS_H_

#include <cstdint>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

class MetricSet;

inline constexpr double kLongTailFactor = 3.0;
inline constexpr double kTailDominatedShare = 0.5;
inline constexpr uint64_t kLongTailMinCount = 5;
inline constexpr double kLongTailMinTimeShare = 0.01;
inline constexpr size_t kLongTailReported = 5;

struct OpTail {
  StringId name;
  uint64_t count = 0;
  int64_t total_ns = 0, max_ns = 0;
  double p50_ns = 0, p90_ns = 0, p99_ns = 0;
  uint64_t tail_count = 0;
  int64_t tail_ns = 0;
  double tail_excess_ns = 0;  // sum over tail instances of (duration - p50)
  double tail_share = 0;
  bool qualifies = false;  // count and time-share minimums met
};

struct LongTailResult {
  bool device = false;
  int64_t op_time_ns = 0;
  std::vector<OpTail> ops;  // qualifying first, then by tail time, largest first
};

// O(n log n) in slices.
LongTailResult ComputeLongTails(const Trace& trace);

// Publishes long_tail_ratio and "long_tail" evidence.
void PublishLongTails(const Trace& trace, const LongTailResult& result, MetricSet* metrics);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_LONG_TAIL_OP_TAILS_H_
