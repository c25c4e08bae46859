// The attribution tree: every nanosecond of a step's wall time on the step's
// critical thread, assigned exactly once, as a tree
//   step → module path → op → (sub-ops, runtime calls) → device activity
// with the time that no op accounts for beside the ops.
//
// Definitions:
//   - steps: the timeline steps (FindSteps) that have a start; the critical
//     thread of a step is the track its step marker lies on (ProfilerStep#N
//     on the main thread). Without steps, one pseudo-step: the span of the
//     host thread with the most cpu_op time (first start to last end of its
//     slices other than profiler wrappers).
//   - the tree is summed over the steady-state steps of the analysis window
//     (src/analysis/window: warm-up steps left out) and shown per step
//     (divided by their number); per-step rows give every step's wall time
//     and its time by class.
//   - nodes: a slice of the critical thread that is not structure becomes a
//     node under the node of its innermost enclosing non-structure slice,
//     keyed by (parent, kind, name), so instances of the same path add up.
//     Modules: python_function "nn.Module: X_N", record_function labels
//     (user_annotation, and cpu_op names carrying '#', e.g.
//     "Optimizer.step#SGD.step"), SDK spans and pipeline nodes; ops: cpu_op;
//     runtime: runtime/driver calls and sync records. Structure (no node, its
//     time goes to the enclosing node): profiler wrappers (IsProfilerWrapperName),
//     the step's own marker, python_function frames that are not modules,
//     gpu annotations.
//   - self time of a node = the time its slices cover minus the time its
//     children cover; total = self + children's totals. Overlapping slices
//     (a child that outlives its parent) are clipped to the parent.
//   - time on the critical thread under no node at all ("holes"): claimed by
//     the other host threads of the same process and rank, most cpu_op time
//     first, where they run a node at that moment (PyTorch's autograd
//     thread runs the backward pass while the main thread waits in
//     loss.backward()): those nodes sit under a thread node. What no thread
//     covers is "host time outside any recorded op" (untraced: Python and
//     framework code between ops, or a wait the profiler did not record).
//   - device activity (kernels, copies, sets, collectives) joins the host
//     node that launched it through the launch flows (OpLaunchingCalls, then
//     LaunchingOps for torch_npu); its time is device time: it is not part of
//     the wall-time sum and is shown beside the host time (device_ns).
//   - graph replays merged with their capture (src/importers/graph_capture):
//     a replayed kernel joins its captured launch call, and each replay's
//     copied modules, ops and launch calls join the tree where its graph
//     launch ran: under the node enclosing the launch (beside it), in the
//     launch's step, whatever their re-timed times (the kernels run after
//     the launch returns, often past the step), with instances and device
//     time but no host time; the merge's "graph replay: ..." root is
//     structure. A replay launched in a warm-up step is left out, one
//     launched in no step joins nothing; a kernel whose copy joined no tree
//     joins the graph launch (LaunchingCalls).
//   - time class of a node: data loading (a DataLoader span and all under
//     it), synchronisation (blocking sync calls and synchronous copy calls:
//     cudaMemcpy, hipMemcpyWithStream, not cudaMemcpyAsync), communication (collective
//     ops: c10d::, nccl, hccl, all_reduce...), start-up (the window's
//     start-up calls), launch (other runtime calls: host launch overhead),
//     op (cpu_op), module code (a module's own time outside its ops),
//     untraced. A wait class (data loading, sync, communication, start-up) of
//     a node holds for everything under it.
// Linear in slices and flows: one sweep per thread with a stack, names
// classified once per distinct string, nodes found through a hash map per
// (parent, kind, name); no allocation per event.
#ifndef AIPROF_SRC_ANALYSIS_ATTRIBUTION_ATTRIBUTION_H_
#define AIPROF_SRC_ANALYSIS_ATTRIBUTION_ATTRIBUTION_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/analysis/attribution/op_class.h"
#include "src/model/trace.h"

namespace aiprof {

class MetricSet;
struct AnalysisWindow;

inline constexpr uint32_t kNoNode = UINT32_MAX;

enum class AttributionKind : uint8_t { kRoot = 0, kThread, kModule, kOp, kRuntime, kDevice, kUntraced };
const char* AttributionKindName(AttributionKind kind);

enum class TimeClass : uint8_t {
  kOp = 0,
  kModuleCode,
  kLaunch,
  kSync,
  kCommunication,
  kDataLoading,
  kStartup,
  kUntraced,
};
inline constexpr size_t kTimeClassCount = 8;
const char* TimeClassName(TimeClass c);

// The tree as columns; node 0 is the root (the step), a parent always has a
// smaller index than its children. Times are sums over the steady steps.
struct AttributionNodes {
  std::vector<uint32_t> parent;
  std::vector<AttributionKind> kind;
  std::vector<StringId> name;       // empty for the root, thread and untraced nodes
  std::vector<uint32_t> track;      // thread nodes: the thread's track; else kNoTrack
  std::vector<TimeClass> time_class;
  std::vector<OpClass> op_class;    // ops and device activity: from the name
  std::vector<uint64_t> count;      // instances (slices) in the steady steps
  std::vector<int64_t> self_ns;     // host wall time
  std::vector<int64_t> total_ns;
  std::vector<int64_t> device_self_ns;   // device activity launched by this node itself
  std::vector<int64_t> device_total_ns;  // ... by it and everything under it
  // 1: torch.compile's code: a compiled region (IsCompiledRegionName), a
  // node under one, or an Inductor kernel (IsInductorKernelName).
  std::vector<uint8_t> compiled;
  std::vector<DataWidth> data_width;  // device nodes: KernelDataWidth of the name; else kUnknown
  size_t size() const { return parent.size(); }
};

struct AttributionStep {
  int32_t rank = kNoRank;
  int64_t number = -1;
  StringId name;
  uint32_t track = kNoTrack;  // the critical thread
  int64_t start_ns = 0, wall_ns = 0;
  int64_t attributed_ns = 0;  // Σ by_class_ns; equals wall_ns (checked by tests)
  bool steady = false;        // in the window's steady state (part of the tree)
  std::array<int64_t, kTimeClassCount> by_class_ns{};
};

struct AttributionResult {
  bool available = false;
  std::string problem;        // why not, when !available
  bool pseudo_step = false;   // no steps: one step = the main thread's span
  // The trace's tracks are on more than one rank: a thread node's label
  // names its rank (each rank's threads are nodes of their own).
  bool several_ranks = false;
  size_t steps = 0;           // steady steps in the tree
  AttributionNodes nodes;
  std::vector<AttributionStep> per_step;  // every attributed step, in time order per track
  int64_t wall_ns = 0;                    // Σ steady steps' wall time (= root total)
  std::array<int64_t, kTimeClassCount> by_class_ns{};  // over the steady steps
  int64_t device_ns = 0;           // device activity joined to a node
  int64_t unlinked_device_ns = 0;  // device activity starting inside steady steps, joined to none
  int64_t unlinked_compute_ns = 0;  // ... of which not collectives (by kind or NCCL/HCCL name)
  // Host self time per steady step and node, so a node's per-step figures
  // (src/analysis/diff) need no second sweep: CSR over the steady steps in
  // per_step order, the k-th steady step's entries at [begin[k], begin[k+1]),
  // each node at most once per step. Σ over steps = nodes.self_ns.
  struct StepSelf {
    std::vector<uint32_t> begin;  // steady steps + 1 offsets
    std::vector<uint32_t> node;
    std::vector<int64_t> ns;
  } step_self;
  // Opt-in (AttributionOptions::op_shapes; empty otherwise): every op node's
  // instances broken down by input shape, so repeated ops of one name under
  // one parent (the several aten::conv2d of a ResNet block) can be told
  // apart. The shape key is the slice's "Input Dims" arg as the trace gives
  // it, with its "Input type" when present (the text OpArgReader parses,
  // src/analysis/common/op_args.h, white space trimmed); each distinct text
  // is labelled once, instances are looked up by interned string id.
  // Rows of node n are at [begin[n], begin[n+1]), in order of first
  // appearance; per node, Σ rows = the node's count, self_ns, total_ns and
  // device_total_ns (over the steady steps, like the node's figures).
  //
  // Rows are keyed by (node, shape, call site). The call site of an instance
  // is its Python call stack cut at the first frame that is an nn.Module
  // frame or outside torch's internals (CallSiteOfStack below): from the
  // slice's "Call stack" arg (PyTorch with with_stack), else from the
  // python_function slices enclosing it on its thread; none without either.
  // Per-step totals (for the diff's statistics per row): each instance's
  // total goes to the steady step it opened in (one opened in a warm-up
  // step: the first steady step it has time in); row r's entries are at
  // [step_begin[r], step_begin[r+1]), steady step ordinals ascending.
  struct OpShapes {
    std::vector<std::string> labels;       // per shape id; "" = no Input Dims on the slice
    std::vector<std::string> site_labels;  // per call-site id; "" = no call site
    std::vector<uint32_t> begin;           // nodes + 1 offsets; empty when not computed
    std::vector<uint32_t> node, shape, site;
    std::vector<uint64_t> count;
    std::vector<int64_t> self_ns, total_ns, device_ns;
    std::vector<uint32_t> step_begin;  // rows + 1
    std::vector<uint32_t> step;        // steady step ordinal (0 = first steady step)
    std::vector<int64_t> step_ns;
    bool computed() const { return !begin.empty(); }
    size_t size() const { return node.size(); }
  } op_shapes;
  double PerStep(int64_t ns) const { return steps > 0 ? static_cast<double>(ns) / static_cast<double>(steps) : 0; }
  // Share of the wall time assigned to a node: 1 by construction.
  double Coverage() const;
};

struct AttributionOptions {
  // Also fill AttributionResult::op_shapes (per op node, input shape and call
  // site). The tree itself is the same with or without it. Costs a few words
  // per slice, three arg lookups per op instance (Input Dims, Input type,
  // Call stack), one classification per distinct python_function name, and a
  // sort of the per-step entries (one per op instance at most).
  bool op_shapes = false;
};

// The call site of a Python call stack given innermost frame first
// (PyTorch's "Call stack" arg: frames joined by ';'): the first frame that
// is an nn.Module frame ("nn.Module: Linear_0") or a frame outside torch's
// internals (not "<built-in ...>", not under a "torch/" folder), with its
// folders dropped up to site-packages/dist-packages (else to the file's
// name) so the key does not depend on where the run lay:
// "model.py(12): forward". "" when no frame qualifies. PyTorch names a
// frame by its function's first line, so two calls from one function share
// their site.
std::string CallSiteOfStack(std::string_view stack);
// Whether one frame is a call site (see above), and its label ("" when not).
bool IsCallSiteFrame(std::string_view frame);
std::string CallSiteLabel(std::string_view frame);

// `window` may be null: then every step is steady.
AttributionResult ComputeAttribution(const Trace& trace, const AnalysisWindow* window);
AttributionResult ComputeAttribution(const Trace& trace, const AnalysisWindow* window,
                                     const AttributionOptions& options);

// A node's label: the module, op or kernel name ("nn.Module: " dropped), the
// thread's name ("[other thread 3]", "[other thread 3 (rank 1)]" in a trace
// of several ranks), or "(host time outside any recorded op)".
std::string NodeLabel(const Trace& trace, const AttributionResult& r, uint32_t node);
// The path of labels from the root's child to `node`, joined by " / ".
std::string NodePath(const Trace& trace, const AttributionResult& r, uint32_t node);

// Per op class: host time of the outermost ops (ops whose parent is not an
// op) and device time of all activity under them, over the steady steps.
struct OpClassTime {
  std::array<int64_t, kOpClassCount> host_ns{};
  std::array<int64_t, kOpClassCount> device_ns{};
};
OpClassTime TimeByOpClass(const AttributionResult& r);

// Modules ranked by their exclusive time (total minus the totals of the
// modules under them), largest first; at most `limit`.
std::vector<uint32_t> ModulesByExclusiveTime(const AttributionResult& r, size_t limit);

// The module of every slice, for the views' colour by module (--color-by
// module): a slice that is a module by the tree's rules above (nn.Module
// python_function frames, record_function labels, SDK spans, pipeline
// nodes; never profiler wrappers or step markers) is its own module; any
// other host slice takes the innermost module enclosing it on its thread;
// device activity takes the module of the call (else the op) that launched
// it. `outer` is, for a module slice, the module enclosing it (kNoSlice at
// the top). Linear: one sweep per thread with a stack.
struct SliceModuleMap {
  std::vector<uint32_t> of;     // per slice: its module slice, or kNoSlice
  std::vector<uint32_t> outer;  // per slice: for module slices, the enclosing module slice
};
SliceModuleMap SliceModules(const Trace& trace);
// A module's label: its name without the "nn.Module: " prefix.
std::string_view ModuleLabel(std::string_view name);

// Publishes attribution_coverage, attributed_op_ratio (op + launch time
// over wall), untraced_ratio and per-class *_ns per step (attribution_*_ns).
void PublishAttribution(const AttributionResult& r, MetricSet* metrics);


}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_ATTRIBUTION_ATTRIBUTION_H_
