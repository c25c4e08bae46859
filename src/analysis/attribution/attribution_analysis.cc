#include "src/analysis/attribution/attribution_analysis.h"

#include "src/analysis/host_functions/host_functions_analysis.h"
#include "src/analysis/roofline/roofline_analysis.h"
#include "src/analysis/window/window_analysis.h"

namespace aiprof {
namespace {

using U = MetricUnit;

// The metrics it publishes, one a line to read as a table (docs/metrics.md
// documents each).
// clang-format off
constexpr MetricInfo kAttributionMetrics[] = {
        {"attribution_coverage", U::kRatio, "share of the steady step's wall time on the critical thread assigned to a node of the attribution tree (1 by construction)"},
        {"compute_attention_ratio", U::kRatio, "attention ops, share of the compute time (compute_op_ns) by the attribution tree"},
        {"compute_compiled_ratio", U::kRatio, "share of the compute time (compute_op_ns's activity; CPU: op time) in torch.compile's code: under a compiled region, or Inductor's Triton kernels"},
        {"compute_conv_ratio", U::kRatio, "convolution ops, share of the compute time (compute_op_ns) by the attribution tree"},
        {"compute_data_movement_ratio", U::kRatio, "data movement (copies, cat, index, ...) ops, share of the compute time (compute_op_ns) by the attribution tree"},
        {"compute_elementwise_ratio", U::kRatio, "elementwise ops, share of the compute time (compute_op_ns) by the attribution tree"},
        {"compute_gemm_ratio", U::kRatio, "GEMM (matmul, linear, ...) ops, share of the compute time (compute_op_ns) by the attribution tree"},
        {"compute_low_precision_ratio", U::kRatio, "GEMM and convolution time in 16 bits or fewer (bf16, fp16, fp8, int8, fp4), share of their time whose data type is known (kernel names; else the ops' Input type)"},
        {"compute_norm_ratio", U::kRatio, "normalisation ops, share of the compute time (compute_op_ns) by the attribution tree"},
        {"compute_reduction_ratio", U::kRatio, "reduction (sum, softmax, pooling, loss) ops, share of the compute time (compute_op_ns) by the attribution tree"},
        {"compute_op_ns", U::kNanoseconds, "impact: compute time per base by the attribution tree (host op time on CPU traces; on device traces the device activity launched in the step: kernels, copies and memsets; at most the step)"},
        {"compute_op_ratio", U::kRatio, "compute_op_ns over the step's wall time (the device's period where it runs behind; device traces without steps: the trace's steady-state time, the impact base)"},
        {"host_region_ratio", U::kRatio, "host time with no op running of the largest region the program names (record_function, SDK span; not a DataLoader span, not an nn.Module frame) that is host work (no op for at least half its time), share of the mean steady step; CPU-only traces with ops recorded"},
        {"host_region_ns", U::kNanoseconds, "impact: host time with no op running of the largest program-named region (host_region_ratio's), per step"},
        {"untraced_host_ns", U::kNanoseconds, "host time per step on the critical thread outside any recorded op, module or wait on any thread of the process (attribution tree)"},
        {"untraced_host_ratio", U::kRatio, "untraced_host_ns, share of the step's wall time"},
};
// clang-format on

void PublishAttributionAnalysis(AnalysisResults& in, MetricSet* m) {
  const AttributionResult& r = in.Get(kAttribution);
  PublishAttribution(r, m);
  PublishHostRegions(in.trace(), in.Get(kHostRegions), in.Get(kWindow), m);
  PublishCompute(in.trace(), r, in.Get(kComputeFinding), m);
}

ComputeResult ComputeFinding(AnalysisResults& in) {
  const RooflineRun& roofline = in.Get(kRoofline);
  return ComputeComputeTime(in.Get(kAttribution), roofline.result, roofline.problem, &in.Get(kWindow));
}

}  // namespace

const ResultSpec<AttributionResult> kAttribution{
    "attribution", [](AnalysisResults& in) { return ComputeAttribution(in.trace(), &in.Get(kWindow)); }};

const ResultSpec<AttributionResult> kAttributionByShape{
    "attribution_by_shape", [](AnalysisResults& in) {
      return ComputeAttribution(in.trace(), &in.Get(kWindow), AttributionOptions{.op_shapes = true});
    }};

const ResultSpec<ComputeResult> kComputeFinding{"compute_finding", ComputeFinding};

const AnalysisSpec kAttributionAnalysis{"attribution", PublishAttributionAnalysis, nullptr, kAttributionMetrics};

}  // namespace aiprof
