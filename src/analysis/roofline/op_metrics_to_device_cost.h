// Roofline inputs of Ascend device tasks, read from the per-op table rows
// joined to them (torch_npu kernel_details.csv, msprof op_summary_*.csv; see
// Trace::op_metrics and docs/importers.md).
//
// Bytes moved (main memory / HBM), measured by the AI Core PMU when the run
// used aic_metrics=Memory: per core side,
//   bytes = (read GB/s + write GB/s) · 1e9 · core time (µs) · 1e-6
// with the cube side aic_main_mem_read_bw(GB/s) / aic_main_mem_write_bw(GB/s)
// (older products: main_mem_read_bw(GB/s) / main_mem_write_bw(GB/s)) over
// aicore_time(us), and the vector side aiv_main_mem_read_bw(GB/s) /
// aiv_main_mem_write_bw(GB/s) over aiv_time(us); the sides are summed. The
// profiler states these bandwidths over the task's core execution time, so
// bandwidth × that time is the traffic (GB taken as 1e9 bytes). A side whose
// core time is missing or zero contributes nothing; with no usable side the
// bytes are unavailable, while a zero bandwidth over a positive time is a
// measured zero. On-chip level columns (aic_l0a_read_bw(GB/s), l1, ub, ...:
// aic_metrics=MemoryL0, MemoryUB) are not main-memory traffic and never used
// as such: the task is flagged and the columns named instead.
//
// FLOPs from the row's Input Shapes / Input Data Types / Input Formats /
// Output Shapes and op type (Type, or OP Type in op_summary), through
// op_cost.h, only where the mapping is sound:
//   - MatMul, MatMulV2/V3, BatchMatMul, BatchMatMulV2/V3 in ND format: the
//     transpose attributes are not recorded, so M and N come from the output
//     [.., M, N] and K from whichever last-two dim of the first input is not
//     M; the second input must hold K and N (in either order), else unavailable;
//   - Conv2D / Conv3D with input, filter and output in NCHW / NCDHW;
//   - elementwise and normalisation ops with an aten counterpart (Add, Mul,
//     RealDiv, Relu, Gelu, SoftmaxV2, LayerNorm, ...) in plain formats.
// Everything else (FlashAttentionScore, whose layout is an attribute; Cast,
// TransData, fractal formats NC1HWC0 / FRACTAL_NZ / FRACTAL_Z, ...) has no FLOPs.
#ifndef AIPROF_SRC_ANALYSIS_ROOFLINE_OP_METRICS_TO_DEVICE_COST_H_
#define AIPROF_SRC_ANALYSIS_ROOFLINE_OP_METRICS_TO_DEVICE_COST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/analysis/roofline/op_cost.h"
#include "src/model/trace.h"

namespace aiprof {

// Where an op's bytes come from: estimated from shapes, or measured by the PMU.
enum class BytesSource { kShapes = 0, kPmu };
const char* BytesSourceName(BytesSource s);  // "shapes", "pmu"

// One core side's PMU figures; NaN where the row has no value.
struct CoreMemoryBandwidth {
  double read_gigabytes_per_second;
  double write_gigabytes_per_second;
  double core_time_us;
};

// Main-memory bytes of a task from its two core sides (formula above), or
// nullopt when neither side has a bandwidth over a positive core time.
std::optional<double> PmuMainMemoryBytes(const CoreMemoryBandwidth& cube, const CoreMemoryBandwidth& vector);

// The row's shape text as written ("8192,2,640;;1,1,8192,8192").
struct AscendShapes {
  std::string_view op_type;
  std::string_view input_shapes, input_types, input_formats, output_shapes;
};

// FLOPs (and shape-estimated bytes) of an Ascend op from its row, or nullopt
// when the op has no sound model or the shapes do not fit it.
std::optional<OpCost> AscendOpCost(const AscendShapes& row);

// The torch dtype name of an Ascend data type ("DT_BF16" → "c10::BFloat16"),
// "" when unknown.
std::string_view TorchDtypeOfAscend(std::string_view ascend_type);

// A joined device task's roofline inputs.
struct DeviceTaskCost {
  uint32_t slice = 0;
  OpFamily family = OpFamily::kNone;
  Precision precision = Precision::kOther;
  std::optional<double> flops;  // nullopt: no sound FLOP model
  std::optional<double> bytes;  // main-memory bytes; nullopt: none known
  BytesSource bytes_source = BytesSource::kShapes;
  bool onchip_pmu_only = false;  // PMU bandwidth columns of on-chip levels only
};

struct DeviceTaskScan {
  std::vector<DeviceTaskCost> tasks;  // every joined kernel, by slice
  std::vector<std::string> onchip_pmu_columns;  // distinct on-chip bandwidth columns seen
};

// Kernels joined to a kernel_details.csv / op_summary.csv row. Linear in op
// metric rows.
DeviceTaskScan ScanDeviceTasks(const Trace& trace);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_ROOFLINE_OP_METRICS_TO_DEVICE_COST_H_
