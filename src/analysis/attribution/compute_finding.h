// "Compute named for what it is": which op classes and modules take the
// compute time of the step, in which data type, how efficiently (against the
// device's roofline when the roofline has FLOPs and a device), and what
// would make each faster. Read by the `compute_time` rule (rules/compute.yaml).
//
// Compute time per step (compute_op_ns, the impact; time base: the mean
// steady-state step of the attribution tree, or the main thread's span
// without steps):
//   - device traces (device activity joined to the tree): the device time of
//     the activity launched in the steady steps, per step, at most the step's
//     wall time (the device runs it within or right after the step);
//   - CPU traces: the host time of ops (time class "op") per step.
// Without steps (one pseudo-step: the main thread's span) on a device trace,
// the step time is the window's base, the trace's steady-state time, which
// every impact is a share of: the device runs the work the main thread
// launched past that span (TraceLens's vLLM decode replay: the span is 2.41
// ms, the device computes 10.72 ms of the 19.11 ms trace, and the impact read
// 2.41 ms = 12.6% when bounded by the span).
// Per op class (op_class.h): the outermost ops' host time (CPU) or the
// device time under them (device traces), as a share of compute_op_ns
// (compute_<class>_ratio metrics). On device traces the classes count the
// same activity as compute_op_ns (collectives launched inside an op are
// left out), and an outermost op whose name has no class (a torch.compile
// region replaying a graph) passes its device time to the nearest classed
// op under it, else to each kernel's own name's class ("other" when that
// says nothing either); so does device activity under no op at all (a
// graph launch under a module or a record_function label, as vLLM's decode
// replay: its 421 kernels were in compute_op_ns and in no class).
// Data width (compute_low_precision_ratio): of the GEMM and convolution
// time whose data type is known, the share in 16 bits or fewer, from the
// kernel names (KernelDataWidth) on device traces, else from the roofline
// rows of matmul and convolution ops ("Input type"). Compiled code
// (compute_compiled_ratio): the share of the compute time in torch.compile's
// code (AttributionNodes::compiled: under a compiled region, or Inductor's
// Triton kernels).
#ifndef AIPROF_SRC_ANALYSIS_ATTRIBUTION_COMPUTE_FINDING_H_
#define AIPROF_SRC_ANALYSIS_ATTRIBUTION_COMPUTE_FINDING_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/analysis/attribution/attribution.h"
#include "src/analysis/roofline/ops_to_roofline.h"

namespace aiprof {

class MetricSet;

// Evidence lines of the classes with at least this share of the compute
// (the others counted together in one line), and modules named per class.
inline constexpr double kComputeClassMinShare = 0.01;
inline constexpr size_t kComputeModulesShown = 3;

struct ComputeClass {
  OpClass op_class = OpClass::kOther;
  int64_t ns = 0;  // over the steady steps (host or device time, see above)
  // From the roofline rows of this class (nullopt without FLOPs / a device):
  std::optional<double> achieved_flops_per_second;
  std::optional<double> compute_utilization;  // time-weighted over rows with a peak
  std::string precision;                      // the data type with the most time ("" unknown)
  // The share of the class's time (ns) those figures rest on, at most 1: the
  // rows with a FLOP model, and the rows with any data type. Where the
  // class's time is the device's kernels and few of them have an op with
  // shapes (graph replays: vLLM's elementwise class, 0.6 ms, had one
  // aten::sub row), its figures describe that op, not the class.
  double flops_coverage = 0;
  double precision_coverage = 0;
  std::vector<uint32_t> modules;              // nearest module nodes, largest first
  std::vector<int64_t> module_ns;
};

// Below this share of a class's time, its FLOP/s, share of peak and data
// type are not stated (they would be one op's); below kComputeFiguresFull
// they are stated with the share they rest on.
inline constexpr double kComputeFiguresMinCoverage = 0.10;
inline constexpr double kComputeFiguresFull = 0.90;

struct AnalysisWindow;

struct ComputeResult {
  bool available = false;
  bool device_time = false;    // figures are device time
  double compute_ns = 0;       // per step (compute_op_ns)
  // The step time compute is a share of and bounded by: the steady steps'
  // wall time, or, where the device runs behind the host, the device's
  // period (the window's base; on_device_period), which the device work a
  // step launches fills while the host's span is shorter.
  double wall_ns = 0;          // per step
  bool on_device_period = false;
  bool on_trace_base = false;  // no steps on a device trace: the window's base (see above)
  // GEMM and convolution time whose data width is known, and of it in 16
  // bits or fewer; from the kernel names, else from the roofline's op rows.
  int64_t width_known_ns = 0, width_reduced_ns = 0;
  bool width_from_kernels = false;
  int64_t compiled_ns = 0;            // compute in torch.compile's code, over the steady steps
  int64_t classes_ns = 0;             // Σ classes' ns (the compiled share's denominator)
  std::vector<ComputeClass> classes;  // largest first, classes with time only
  std::string device;          // roofline device name, "" when none
  std::string device_problem;  // why none
};

ComputeResult ComputeComputeTime(const AttributionResult& attribution, const RooflineResult& roofline,
                                 const std::string& device_problem, const AnalysisWindow* window = nullptr);

// What would make a class faster (one sentence, plain text). `reduced`: the
// GEMMs and convolutions already run in 16 bits or fewer (most of their
// time whose type is known), so the advice does not propose bf16/fp16.
// `compiled`: torch.compile's code is in the compute (compute_compiled_ratio
// above zero, as compile_fuse reads it), so the advice does not propose
// torch.compile. `torch`: the trace holds PyTorch's ops (HasTorchOps);
// without them (a CUDA or HIP program's Nsight trace) the advice names what
// to do, not PyTorch's switches for it.
const char* ComputeAdvice(OpClass c, bool device_time, bool reduced = false, bool compiled = false, bool torch = true);

// Publishes compute_op_ns, compute_op_ratio, compute_<class>_ratio,
// compute_low_precision_ratio, compute_compiled_ratio and the "compute"
// evidence lines.
void PublishCompute(const Trace& trace, const AttributionResult& attribution, const ComputeResult& r, MetricSet* m);

// Metric name of a class's share ("compute_conv_ratio", ...).
const char* ComputeClassMetric(OpClass c);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_ATTRIBUTION_COMPUTE_FINDING_H_
