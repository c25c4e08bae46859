// Roofline per op: FLOPs and bytes of each tensor op (op_cost.h), its time,
// and where it sits against a device's peaks (device_peaks.h).
//
// Which ops:
//   - device tasks joined to a kernel_details.csv / op_summary.csv row
//     (Ascend; op_metrics_to_device_cost.h): FLOPs from the row's shapes where
//     the op type has a sound model, bytes moved from the PMU main-memory
//     bandwidth columns (measured) when the run recorded them, else from the
//     shapes (estimated). A task is placed when its FLOPs or bytes are known;
//     FLOPs stay unknown (never guessed) otherwise. Time: the task's duration;
//   - host ops (cpu_op) whose name has a FLOP model and whose shapes
//     were recorded ("Input Dims"/"Input type", record_shapes=True). Only the
//     outermost modelled op of a call chain is counted (aten::conv2d, not the
//     aten::convolution → aten::_convolution → aten::mkldnn_convolution inside
//     it; aten::linear, not its aten::addmm), so nothing is counted twice; a
//     host op that launched a device task placed above is left out for the
//     same reason (counted in ops_on_device_tasks).
// Host FLOPs: the profiler's own `flops` arg of the op or of the outermost ops
// inside it that carry one (with_flops=True), else the estimate of
// op_cost.h. A convolution's output size comes from its recorded stride,
// padding and dilation ("Concrete Inputs"), else from the first input of the
// next op on the same thread that has an input of its rank, when that input
// has the same N and Cout; without either it is assumed equal to the input
// size (flagged).
// Host time: on traces with device kernels, the kernels launched under the op
// (launch flows, then enclosing host slices); ops that launched none are
// left out. On CPU-only traces, the op's own duration.
// Per instance: arithmetic intensity AI = FLOPs / bytes; with a device, the
// peak P for the op's precision and bandwidth B give the ridge point P / B:
// memory-bound when AI < P / B, otherwise compute-bound; attainable FLOP/s =
// min(P, AI · B). Linear in slices (× nesting depth) and op metric rows.
#ifndef AIPROF_SRC_ANALYSIS_ROOFLINE_OPS_TO_ROOFLINE_H_
#define AIPROF_SRC_ANALYSIS_ROOFLINE_OPS_TO_ROOFLINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/analysis/roofline/device_peaks.h"
#include "src/analysis/roofline/op_cost.h"
#include "src/analysis/roofline/op_metrics_to_device_cost.h"
#include "src/model/trace.h"

namespace aiprof {

class MetricSet;

// Rows reported in evidence lines per bound.
inline constexpr size_t kRooflineEvidenceRows = 3;

struct RooflineRow {
  std::string name;
  OpFamily family = OpFamily::kNone;
  Precision precision = Precision::kOther;
  uint64_t count = 0;
  int64_t time_ns = 0;
  double flops = 0;
  double bytes = 0;
  uint64_t flops_from_trace = 0;  // instances whose FLOPs are the profiler's `flops` arg
  uint64_t output_assumed = 0;    // conv instances whose output size was assumed
  int64_t memory_bound_time_ns = 0;  // instances below the ridge point (needs a device)
  BytesSource bytes_source = BytesSource::kShapes;
  bool flops_known = true;   // false: no sound FLOP model (a device task placed by its PMU bytes)
  bool device_task = false;  // a device task with a per-op table row, not a host op
};

enum class Bound { kUnknown = 0, kCompute, kMemory };
const char* BoundName(Bound b);

// A row placed on a device's roofline; figures are nullopt when a
// denominator is zero or the device has no peak for the precision.
struct RooflinePoint {
  std::optional<double> arithmetic_intensity_flops_per_byte;
  std::optional<double> achieved_flops_per_second;
  std::optional<double> achieved_bytes_per_second;
  std::optional<double> attainable_flops_per_second;  // min(P, AI·B)
  std::optional<double> ai_utilization;       // achieved / attainable
  std::optional<double> compute_utilization;  // achieved / P
  std::optional<double> bandwidth_utilization;  // achieved bytes/s / B
  Bound bound = Bound::kUnknown;
};
RooflinePoint EvaluateRow(const RooflineRow& row, const DevicePeaks* device);

struct RooflineResult {
  bool device_time = false;  // times are device kernel times
  std::optional<DevicePeaks> device;
  std::vector<RooflineRow> rows;  // by time, largest first
  uint64_t ops = 0;               // instances counted
  uint64_t ops_without_shapes = 0;  // modelled ops left out: shapes missing or not fitting
  uint64_t ops_without_time = 0;    // device traces: modelled ops that launched no kernel
  uint64_t ops_on_device_tasks = 0;  // host ops left out: their kernels are placed as device tasks
  // Device tasks joined to a kernel_details / op_summary row:
  uint64_t device_tasks = 0;
  uint64_t device_ops = 0;                    // placed (FLOPs or bytes known, duration > 0)
  uint64_t device_tasks_with_flops = 0;
  uint64_t device_tasks_pmu_bytes = 0;        // main-memory bytes from PMU bandwidth × core time
  uint64_t device_tasks_shape_bytes = 0;      // no main-memory PMU columns: bytes from shapes
  uint64_t device_tasks_onchip_pmu_only = 0;  // PMU bandwidth of on-chip levels only (e.g. MemoryL0)
  uint64_t device_tasks_without_time = 0;     // zero duration: not placed
  std::vector<std::string> onchip_pmu_columns;  // those columns, by name
  int64_t time_ns = 0;
  double flops = 0, bytes = 0;  // FLOPs over instances whose FLOPs are known
  int64_t time_with_flops_ns = 0;
  int64_t time_with_pmu_bytes_ns = 0;
  double pmu_bytes = 0;
  bool any_flops_estimated = false;  // some FLOPs from op_cost.h, not the profiler
  // Over instances with FLOPs whose precision has a peak on the device:
  int64_t time_with_peak_ns = 0;
  double flops_with_peak = 0;
  double peak_flop_ns = 0;  // Σ time_ns · peak FLOP/s, for time-weighted utilization
  int64_t time_bound_known_ns = 0;  // of them, with bytes > 0: bound decidable
  int64_t memory_bound_time_ns = 0;
};

// The device whose peaks apply: `name` from the devices file(s) (LoadDevices
// with `devices_file`); empty `name` = the device named in the trace
// metadata, else, on CPU-only traces, the calibrated entry "cpu-local".
// nullopt with `problem` saying why when none applies.
std::optional<DevicePeaks> ResolveDevice(const Trace& trace, const std::string& name,
                                         const std::string& devices_file, std::string* problem);

// `device` may be null: the per-op FLOPs, bytes, AI and achieved rates are
// still computed; bounds and utilizations need it.
RooflineResult ComputeRoofline(const Trace& trace, const DevicePeaks* device);

// The shape-based cost of one slice (ignoring its `flops` arg), with the
// convolution output taken from its consumer. Visible for testing.
std::optional<OpCost> ShapeCostOfSlice(const Trace& trace, uint32_t slice);

// Publishes compute_util (Σ FLOPs / Σ time·peak), memory_bandwidth_util
// (Σ bytes / (Σ time · B); measured=true only when every byte came from the
// PMU) and memory_bound_time_ratio (time of memory-bound instances / time of
// instances whose bound is known), the FLOP-based two measured=false, with
// "memory_bound" / "compute_bound" evidence; unavailable with the reason when
// there is no device or no placed op. `device_problem` (may be empty) says
// why there is no device.
void PublishRoofline(const RooflineResult& result, const std::string& device_problem, MetricSet* metrics);

// Lines on device tasks: how many were placed, where their FLOPs and bytes
// came from, and on-chip-only PMU columns; empty without device tasks.
std::vector<std::string> DescribeDeviceTasks(const RooflineResult& result);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_ROOFLINE_OPS_TO_ROOFLINE_H_
