// Layout and format conversions: where time goes into changing a tensor's
// memory layout (NCHW↔NHWC, TransData, transposes that copy) rather than
// computing.
//
// A conversion is one of:
//   - a device kernel or host op whose name says so (case-insensitive
//     "transdata", "nchwtonhwc", "nhwctonchw", "format_cast"/"formatcast",
//     and, for device kernels only, "transpose": MIOpen's batched_transpose_*,
//     Ascend's TransposeD, a transpose copy kernel), except kernels that
//     compute and only mention a transpose: Inductor's Triton kernels
//     (triton_*: their names list every aten op fused into them, transpose
//     among them), fusions ("fused"/"fusion") and GEMM kernels ("gemm",
//     Tensile's Cijk_, CUTLASS), whose names carry operand layouts;
//   - on PyTorch host ops (no strides in the trace, so by structure): an
//     aten::copy_ whose two tensors have the same shape (rank ≥ 2) and the
//     same dtype, under aten::to / aten::_to_copy / aten::contiguous, or under
//     an aten::clone called by aten::contiguous / aten::flatten /
//     aten::reshape. to() with the same dtype and device only copies to
//     change memory format; contiguous/flatten/reshape only clone a
//     non-contiguous input. Copies that launch a device memcpy are device
//     transfers, not conversions. The counted instance is the outermost
//     conversion op of the chain; its trigger is the nearest enclosing
//     non-conversion op (or annotation).
// Share: with device activity, conversion kernel time (named kernels plus
// kernels launched inside a host conversion) over all kernel time; on
// CPU-only traces, conversion op time over top-level cpu_op time.
#ifndef AIPROF_SRC_ANALYSIS_LAYOUT_LAYOUT_CONVERSIONS_H_
#define AIPROF_SRC_ANALYSIS_LAYOUT_LAYOUT_CONVERSIONS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

class MetricSet;

inline constexpr size_t kLayoutTopReported = 5;

struct ConversionGroup {
  std::string op;       // the conversion op or kernel name
  std::string trigger;  // nearest enclosing non-conversion op, or "" if none
  uint64_t count = 0;
  int64_t total_ns = 0;
};

struct LayoutResult {
  bool device = false;  // measured on device kernels (else CPU ops)
  uint64_t count = 0;
  int64_t conversion_ns = 0;
  int64_t denominator_ns = 0;  // all kernel time, or top-level cpu_op time
  std::vector<ConversionGroup> groups;  // by total time, largest first
  std::vector<uint32_t> slices;         // the conversion kernels (or host ops)
};

// Whether a slice's name says it converts a layout (the named rule above;
// "transpose" for device kernels only, never a kernel that computes). The
// diff pairs kernels of this kind with each other (src/analysis/diff).
bool IsNamedConversion(std::string_view name, bool device_kernel);

// Linear in slices (plus sorting the groups).
LayoutResult ComputeLayoutConversions(const Trace& trace);

// Publishes layout_conversion_ratio, layout_conversion_count_per_step and
// "layout_conversion" evidence.
void PublishLayoutConversions(const Trace& trace, const LayoutResult& result, MetricSet* metrics);

struct AnalysisWindow;
// Publishes layout_conversion_ns: the union of the conversions' time inside
// the analysis window, per the window's base.
void PublishLayoutImpact(const Trace& trace, const LayoutResult& result, const AnalysisWindow& window,
                         MetricSet* metrics);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_LAYOUT_LAYOUT_CONVERSIONS_H_
