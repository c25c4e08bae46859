// Long-tail ops: per op name, duration quantiles and the instances far
// beyond the median.
//
// Ops are device activity (kernels, copies, sets, collectives) when the trace
// has any, else cpu_op slices, grouped by name and shape: a kernel's launch
// configuration ("grid" and "block" args), an op's "Input Dims", where the
// trace records them (one elementwise kernel over tensors of 23 sizes ran
// 1 µs to 378 µs in ResNet50; by name alone its large sizes were its "tail").
// Per group: p50/p90/p99 (linear interpolation,
// QuantileSorted) and max; tail instances are those longer than
// kLongTailFactor × p50; tail share = tail time / the op's total time. An op
// "tail-dominated" has tail share > kTailDominatedShare. long_tail_ratio is
// the largest tail share among ops with at least kLongTailMinCount instances
// and at least kLongTailMinTimeShare of all op time (so one odd instance of a
// negligible op does not decide it).
#ifndef AIPROF_SRC_ANALYSIS_LONG_TAIL_OP_TAILS_H_
#define AIPROF_SRC_ANALYSIS_LONG_TAIL_OP_TAILS_H_

#include <cstdint>
#include <string>
#include <string_view>
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
  // The shape it was grouped by: a kernel's grid and block args and its
  // launching op's Input Dims, an op's Input Dims (shape_b and shape_c
  // unused); indices into LongTailResult::shape_labels (0: none).
  uint32_t shape_a = 0, shape_b = 0, shape_c = 0;
  uint64_t count = 0;
  int64_t total_ns = 0, max_ns = 0;
  double p50_ns = 0, p90_ns = 0, p99_ns = 0;
  uint64_t tail_count = 0;
  int64_t tail_ns = 0;
  double tail_excess_ns = 0;  // sum over tail instances of (duration - p50)
  double tail_share = 0;
  bool qualifies = false;  // count and time-share minimums met
  // Excess of tail instances that are top-level (not inside another op of the
  // same timeline, so not counted twice) — the wall-clock impact.
  double top_level_excess_ns = 0;
  // Tail instances that hold a tail instance of a qualifying op nested inside them
  // (aten::conv2d around aten::mkldnn_convolution): slow because of the inner
  // op, which the evidence names instead (CPU ops; kernels do not nest).
  uint64_t wrapping_tail_count = 0;
  // Warm-up instances (outside the analysis window: warm-up steps, start-up)
  // are counted apart, against the steady-state median.
  uint64_t warmup_count = 0, warmup_tail_count = 0;
  double warmup_excess_ns = 0;
};

struct LongTailResult {
  bool device = false;
  int64_t op_time_ns = 0;
  // Collective kernels and NCCL/HCCL kernels are left out: their duration
  // includes waiting for peers (communication wait, not a slow op).
  uint64_t communication_left_out = 0;
  int64_t communication_left_out_ns = 0;
  std::vector<OpTail> ops;  // qualifying first, then by tail time, largest first
  // The shape args' texts on one line (OneLineArgText), [0] = "" (none).
  std::vector<std::string> shape_labels;
  // Instances that start outside the window: warm-up steps, time between
  // steps, and device work that starts after the span of the step that
  // launched it (a step's device tail).
  uint64_t outside_window = 0;
  // The window is the device's periods (AnalysisWindow::DeviceIntervals):
  // device activity where the device runs behind the host.
  bool on_device_periods = false;
};

// O(n log n) in slices.
struct AnalysisWindow;
// With `window`, statistics are over the instances that start inside it
// (the steady steps' spans); the others are counted apart.
LongTailResult ComputeLongTails(const Trace& trace, const AnalysisWindow* window = nullptr);

// The shape an op tail was grouped by, as text: "grid [80, 1, 1], block
// [128, 1, 1]", "Input Dims [[8, 64], [64]]", or "" when the trace has none.
std::string OpTailShape(const Trace& trace, const LongTailResult& result, const OpTail& op);

// Publishes long_tail_ratio and "long_tail" evidence.
void PublishLongTails(const Trace& trace, const LongTailResult& result, MetricSet* metrics);
// Publishes long_tail_excess_ns per the window's base.
void PublishLongTailImpact(const LongTailResult& result, const AnalysisWindow& window, MetricSet* metrics);

// True for NCCL / HCCL / HCOM collective kernels by name.
bool IsCollectiveKernelName(std::string_view name);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_LONG_TAIL_OP_TAILS_H_
