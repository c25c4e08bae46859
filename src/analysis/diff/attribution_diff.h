// A structural diff of two runs (`aiprof diff A B`, docs/diff.md): the two
// runs' attribution trees (src/analysis/attribution: step → module → op →
// runtime → device activity) aligned node by node, with each node's time per
// steady step in A and in B, the change, and what happened to it (added,
// removed, slower, faster, unchanged, or fewer / more calls: calls_removed,
// calls_added).
//
// Alignment, top down from the two roots (the step): under a pair of aligned
// parents, children pair by
//   1. kind and name (after the user's name map, name_map.h): attribution
//      already sums the instances of one name under one parent (repeated ops
//      are one node with their calls per step), so a name pairs at most once;
//      nodes that share a map entry pair in order of first appearance;
//   2. through the launching op: runtime calls and device activity left over
//      under an aligned pair (cudaLaunchKernel ↔ hipLaunchKernel, an H100 GEMM
//      kernel ↔ an MI300 GEMM kernel: kernels differ by name across hardware,
//      the op that launched them does not). Kernels pair by what they do
//      first (DiffKernelKindOf: a convolution or GEMM with a convolution or
//      GEMM, a layout transpose with a transpose, ...), in order of first
//      appearance within one kind; a kernel of a known kind left over is
//      removed / added (the other run did that work otherwise). Kernels of
//      unknown kind pair by position with what is left (kPosition, "by
//      position, unverified"): such a pair is shown, never ranked;
//   3. by role: data-loading modules left over pair in order (the
//      single-process and the multi-process DataLoader iterator are one role);
//   4. other threads (the "[other thread]" nodes of attribution) in order of
//      first appearance.
// What is left is removed (A only) or added (B only), with its whole subtree.
//
// Time base: host wall time per steady step on the step's critical thread,
// as attribution defines it (the tree's totals over the steady steps divided
// by their number), for every node but device activity; device activity is
// device time per steady step (it runs beside the host time, not in it).
//
// Statistics: where both runs have at least kDiffMinStepsForStats steady
// steps, a node's per-step totals are two samples and `validate`'s location
// comparison (CompareSamples: Welch or Mann-Whitney, effect sizes, bootstrap
// interval, verdict) decides slower / faster / unchanged; it is computed for
// the step and for every paired host node the thresholds rank as changed
// (not only those a report lists: the set of changed nodes does not depend
// on --top). Otherwise a node is slower or
// faster when its per-step change is at least min_effect of its A time and
// at least kDiffMinDeltaNs.
//
// Calls (docs/diff.md, "Fewer or more calls"): a node's time per step is
// its calls per step times its time per call, so a changed node whose calls
// per step changed is split into the part the calls account for,
// (calls B - calls A) x A's time per call, and the part the time per call
// accounts for, calls B x (B's time per call - A's); the two add up to the
// change. The time per call gets its own verdict (validate's test on
// per-call samples where both runs have enough steps with the node, else
// the thresholds on the per-call part), and the node is calls_removed /
// calls_added when the time per call is unchanged or the calls account for
// at least as much of the change as the time per call; otherwise slower /
// faster, as each call is. One of two identical calls gone is "calls
// removed", not "faster".
//
// Cost: linear in the two trees' nodes for the alignment (keys hashed once
// per node, children in CSR, scratch reused: no allocation per node in the
// loop), plus steps × nodes for the per-step samples (one columnar
// bottom-up pass per step over attribution's per-step self times).
#ifndef AIPROF_SRC_ANALYSIS_DIFF_ATTRIBUTION_DIFF_H_
#define AIPROF_SRC_ANALYSIS_DIFF_ATTRIBUTION_DIFF_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/analysis/attribution/attribution.h"
#include "src/analysis/diff/name_map.h"
#include "src/analysis/validation/compare.h"
#include "src/model/trace.h"

namespace aiprof {

// Fewest steady steps per run for per-node statistics (validate's minimum).
inline constexpr size_t kDiffMinStepsForStats = kMinSamplesForTest;
// Without statistics, a change smaller than this per step is "unchanged".
inline constexpr double kDiffMinDeltaNs = 1000;
// Bootstrap resamples per node (the step itself uses validate's default).
inline constexpr int kDiffNodeResamples = 2000;

enum class DiffChange : uint8_t { kUnchanged = 0, kSlower, kFaster, kAdded, kRemoved, kCallsRemoved, kCallsAdded };
// "unchanged", "slower", "faster", "added", "removed", "calls_removed", "calls_added"
const char* DiffChangeName(DiffChange c);

// What happened to a paired entry's time per call, where its calls per step
// changed (DiffCallsChanged): kNone where they did not (or a run lacks the
// entry), else validate's verdict on the time per call, or the thresholds.
enum class DiffPerCall : uint8_t { kNone = 0, kUnchanged, kSlower, kFaster };
const char* DiffPerCallName(DiffPerCall c);  // "", "unchanged", "slower", "faster"

// Whether the calls per step changed between the runs: both ran the entry,
// the calls moved by at least `min_effect` of A's, and at A's time per call
// they account for at least kDiffMinDeltaNs per step (the thresholds of a
// node's time, applied to the calls).
bool DiffCallsChanged(double a_ns, double a_calls, double b_calls, double min_effect);
// Time per call (0 without calls).
inline double DiffPerCallNs(double ns, double calls) { return calls > 0 ? ns / calls : 0; }
// The part of a change per step that the change in calls accounts for, at
// A's time per call: (b_calls - a_calls) x a_ns / a_calls (0 without calls
// in a run). The rest, b_calls x (B's time per call - A's), is the time per
// call's part; the two add up to b_ns - a_ns.
inline double DiffCallsNs(double a_ns, double a_calls, double b_calls) {
  return a_calls > 0 && b_calls > 0 ? (b_calls - a_calls) * (a_ns / a_calls) : 0;
}

enum class DiffMatch : uint8_t { kNone = 0, kName, kMap, kLaunchOrder, kRole, kThread, kPosition };
// "", "name", "map", "through op", "role", "thread", "by position, unverified"
const char* DiffMatchName(DiffMatch m);

// What a kernel does, for pairing kernels through the launching op (rule 2):
// attribution's class of the device node (OpClassOfKernel over
// ClassifyKernel, the project's one kernel classifier), with convolution and
// GEMM one kind (an H100 cuDNN fprop and an MI300 implicit-GEMM convolution
// "igemm_fwd" do the same work), and layout kernels told apart from the
// unknown by name (the layout analysis's IsNamedConversion: transposes that
// copy, "nchwtonhwc"/"nhwctonchw", TransData; and "permute": cuDNN's and
// MIOpen's NCHW ↔ NHWC conversions). kUnknown:
// the classifier knows nothing of the kernel (class other: vendor-specific
// names such as MIOpen's SubTensorOpWithScalar1d or cuBLAS's nvjet_).
enum class DiffKernelKind : uint8_t {
  kUnknown = 0,
  kMatrix,
  kAttention,
  kNorm,
  kReduction,
  kElementwise,
  kLayout,
  kDataMovement,
};
inline constexpr size_t kDiffKernelKindCount = 8;
DiffKernelKind DiffKernelKindOf(OpClass c, std::string_view name);
// "unknown", "matrix", "attention", "norm", "reduction", "elementwise", "layout", "data movement"
const char* DiffKernelKindName(DiffKernelKind k);

struct DiffOptions {
  const DiffNameMap* map = nullptr;  // may be null
  // Rows a report lists (the caller hands it to DiffToDocument); the
  // analysis itself ignores it: every candidate is tested.
  size_t top_n = 20;
  ValidationOptions stats;  // alpha, min_effect, test, seed, resamples (for the step)
};

// The aligned tree as columns; node 0 is the pair of roots, a parent has a
// smaller index than its children. Per-step figures are per steady step of
// each run (A: before, B: after).
struct DiffNodes {
  std::vector<uint32_t> parent;
  std::vector<uint32_t> a, b;  // attribution nodes; kNoNode where the run lacks the node
  std::vector<AttributionKind> kind;
  std::vector<DiffMatch> match;
  std::vector<DiffChange> change;
  std::vector<double> a_ns, b_ns;        // time per step (the time base above; device time for device activity)
  std::vector<double> a_device_ns, b_device_ns;  // device time launched by the node and its subtree, per step
  std::vector<double> a_calls, b_calls;  // instances per step
  std::vector<int32_t> stats;            // index into AttributionDiff::stats, -1: none
  // Where the calls per step changed (Calls, above): the time per call's
  // verdict, and its statistics (index into AttributionDiff::per_call_stats,
  // -1: none).
  std::vector<DiffPerCall> per_call;
  std::vector<int32_t> per_call_stats;
  size_t size() const { return parent.size(); }
  double Delta(size_t i) const { return b_ns[i] - a_ns[i]; }
  // The part of Delta(i) the change in calls accounts for (DiffCallsNs).
  double CallsDelta(size_t i) const { return DiffCallsNs(a_ns[i], a_calls[i], b_calls[i]); }
};

struct DiffNodeStats {
  uint32_t node = 0;
  MetricComparison cmp;  // before = A, after = B, ns per step
};

// Op pairs broken down by call site and input shape (both runs' attribution
// computed with AttributionOptions::op_shapes; else empty). For every
// aligned op pair where either run has more than one row under the node
// (so call site or shape tells instances apart), the rows
// (AttributionResult::op_shapes, keyed by node, shape and call site) pair
//   1. by call site and shape: the same call site (CallSiteOfStack: the
//      Python stack cut at its first nn.Module frame or first frame outside
//      torch's internals) and the same "Input Dims" (+ "Input type") text;
//      rows without a call site never pair here;
//   1b. by the call site's function and shape: the same site with its line
//      number left out ("model.py: forward"), for code edited above the
//      function between the runs (PyTorch names a frame by its function's
//      first line, which then moves);
//   2. by shape alone, in order of first appearance within one shape;
//   3. by the call site's function alone (known in both runs: the same call
//      with another input shape), in order of first appearance;
// the rest is removed or added: rows whose call site and shape both differ
// are not the same call, and are not compared. Figures per steady step: host total, device
// time, calls. Statistics: as for the nodes, for every changed paired
// row when both runs have kDiffMinStepsForStats steady steps, on each
// row's per-step totals (AttributionResult::OpShapes step entries: an
// instance counts in the steady step it opened in, or first has time in;
// a step without the row is 0);
// validate's verdict then decides slower / faster / unchanged. Other rows
// use the threshold rule and say why they have no test (DiffNoStats).
enum class DiffShapeMatch : uint8_t { kNone = 0, kSite, kFunction, kShape, kSiteShapeChanged };
// "", "call site + shape", "function + shape", "shape", "call site, shape changed"
const char* DiffShapeMatchName(DiffShapeMatch m);
// A call site without its line number: "model.py(12): forward" → "model.py: forward".
std::string_view SiteFunction(std::string_view site, std::string* scratch);

// Why a shape row has no statistics.
enum class DiffNoStats : uint8_t { kNone = 0, kOneRun, kFewSteps, kUnchanged };
// "", "in one run only", "fewer than N steady steps in a run", "unchanged by the thresholds"
std::string DiffNoStatsText(DiffNoStats why);

struct DiffShapes {
  std::vector<uint32_t> node;   // the diff node (an aligned op pair)
  std::vector<uint32_t> a, b;   // rows of ra/rb.op_shapes; kNoNode where the run lacks the shape
  std::vector<DiffShapeMatch> match;
  std::vector<DiffChange> change;
  std::vector<double> a_ns, b_ns, a_device_ns, b_device_ns, a_calls, b_calls;  // per steady step
  std::vector<int32_t> stats;       // index into AttributionDiff::shape_stats, -1: none
  std::vector<DiffNoStats> no_stats;  // why not, where stats is -1
  // As DiffNodes: the time per call's verdict where the calls per step
  // changed, and its statistics (index into AttributionDiff::shape_per_call_stats).
  std::vector<DiffPerCall> per_call;
  std::vector<int32_t> per_call_stats;
  size_t size() const { return node.size(); }
  double Delta(size_t i) const { return b_ns[i] - a_ns[i]; }
  double CallsDelta(size_t i) const { return DiffCallsNs(a_ns[i], a_calls[i], b_calls[i]); }
};

// What a run's steps are: recorded step markers (ProfilerStep#N, the
// steps of aiprof trace), inferred from a repeating op pattern, read from a
// breakdown file, or none (one pseudo-step: the main thread's span).
enum class DiffStepsKind : uint8_t { kRecorded = 0, kPattern, kFile, kNone };

struct AttributionDiff {
  bool available = false;
  std::string problem;  // why not, when !available
  size_t steps_a = 0, steps_b = 0;
  bool pseudo_a = false, pseudo_b = false;  // no steps: the main thread's span
  // What each run's steps are (DiffStepsText): recorded markers, a repeating
  // pattern, a breakdown file, or none.
  std::string steps_text_a, steps_text_b;
  double step_a_ns = 0, step_b_ns = 0;       // wall time per steady step
  MetricComparison step;                     // the step wall times as two samples
  std::array<double, kTimeClassCount> class_a_ns{}, class_b_ns{};  // per step
  DiffNodes nodes;
  std::vector<DiffNodeStats> stats;
  // The changes ranking, largest |change| first: changed nodes (not the
  // root, not pairs made by position alone: kPosition), each the outermost
  // node that localises its change (a node whose change one child explains, at least kDiffExplainedShare of it with the
  // same sign, gives way to the child), and the call-site / shape rows of
  // the op nodes that split into their rows (below). ranked[i] is the node
  // (for a row: its op node); ranked_row[i] the row (index into `shapes`)
  // the entry names, or -1 for the node as a whole. An op and its rows are
  // never both ranked: the rows take the op's place.
  //
  // An aligned op node splits into its rows when its change is concentrated
  // in them: it has rows (more than one row in a run), it does not give way
  // to a child, and its largest changed row (by |change|, after the row's
  // own statistics) moves at least kDiffExplainedShare of the op's own
  // |change| — one row holds (nearly) all of it, or rows moving in opposite
  // directions cancel in the op's net change. Its changed rows then enter
  // the ranking in its place (whether or not the op itself was ranked: a
  // net change the thresholds or the test call unchanged can hide two rows
  // that moved a lot), and its unchanged rows stay in "By shape" only. An
  // op that is itself unchanged but has rows in one run only (a call site
  // or shape removed or added) splits too: those rows are structural
  // changes, which the op's net figure can hide in its noise.
  // The rows of an op partition its instances, so the ranked entries of one
  // op never count the same time twice.
  //
  // A node only in one run (added, removed) is ranked as a whole, at the
  // outermost node of what was added or removed (aten::to removed, 8 calls
  // per step, its total): it never gives way to a child, and its
  // descendants of the same time base are not ranked beside it (they were
  // added or removed with it; listing them named aten::to's biggest leaf,
  // aten::copy_, and left out the op's own time). Device activity under an
  // added or removed host node keeps its own entry (device time, another
  // time base).
  std::vector<uint32_t> ranked;
  std::vector<int32_t> ranked_row;
  size_t split_ops = 0;  // op nodes ranked by their rows
  double RankedDelta(size_t i) const {
    return ranked_row[i] >= 0 ? shapes.Delta(static_cast<size_t>(ranked_row[i])) : nodes.Delta(ranked[i]);
  }
  DiffShapes shapes;                  // see DiffShapes; empty without op shapes
  std::vector<uint32_t> shape_ranked;  // changed shape rows, largest |change| first
  std::vector<DiffNodeStats> shape_stats;  // node = the shape row
  // validate's comparison of the time per call (metric "time per call", ns)
  // of nodes and of shape rows whose calls per step changed (Calls, above);
  // node = the diff node / the shape row.
  std::vector<DiffNodeStats> per_call_stats, shape_per_call_stats;
  size_t calls_changed = 0;  // entries of the ranking that are calls_removed / calls_added
  size_t shape_by_site = 0, shape_by_function = 0, shape_by_shape = 0, shape_by_order = 0;  // row pairs per level
  size_t matched = 0, added = 0, removed = 0;
  // Host time per steady step in what only one run has: the totals of the
  // outermost removed (A) and added (B) host nodes (disjoint subtrees, so
  // no time counts twice; device activity left out, it is another time
  // base). On a pair with one planted change this is the change's own
  // cost; when most of both runs' steps are in it, the runs are not one
  // program before and after (DiffRunsUnrelated).
  double removed_ns = 0, added_ns = 0;
  // Per entry of the name map (empty without one): its line in the file and
  // how many distinct node names of A and of B it matched. An entry that
  // matched none on a side (a typo, a name of another run) pairs nothing.
  std::vector<int> map_line;
  std::vector<uint32_t> map_names_a, map_names_b;
  // What each run's steps are; per-step figures compare like with like
  // only when both runs' steps are of one kind (DiffStepsComparable).
  DiffStepsKind steps_kind_a = DiffStepsKind::kRecorded, steps_kind_b = DiffStepsKind::kRecorded;
  size_t through_op = 0, by_map = 0, by_role = 0;  // pairs made by rules 2, 1 (map) and 3
  // Kernel pairs of rule 2 made by position alone, a kernel of unknown kind
  // in at least one run (DiffMatch::kPosition): listed, not ranked.
  size_t by_position = 0;
};

inline constexpr double kDiffExplainedShare = 0.9;

// Share of a run's host step time above which what only that run has makes
// the two runs look like two programs (DiffRunsUnrelated).
inline constexpr double kDiffUnrelatedShare = 0.5;

// True when the two runs' steps are not of one kind (recorded markers in
// one, a repeating pattern or the main thread's span in the other): the
// per-step figures then compare different spans (a pattern's period takes
// in the time between recorded steps).
bool DiffStepsDiffer(const AttributionDiff& d);
// True when what only A has is over kDiffUnrelatedShare of A's host step
// time and what only B has is over that share of B's: most of both steps
// is in nodes the other run lacks (two different models, not one before
// and after a change). A planted change removes or adds part of one side
// (unfused_layernorm: 57% of A's step removed, 5% of B's step added).
bool DiffRunsUnrelated(const AttributionDiff& d);

// A run whose device activity took at most this share of its host step
// time per step is host-bound: its device sat idle at least half of the
// step (the activity's summed time bounds the device's busy time from
// above), so the host step time is the host's (CPU, framework, launches).
inline constexpr double kDiffHostBoundShare = 0.5;
// Whether a run with `device_ns` of device activity per host step of
// `host_step_ns` is host-bound (false without a host step).
bool DiffRunHostBound(double device_ns, double host_step_ns);
// Both runs launched device work and both are host-bound: a host node's
// change is then the host's, not the devices' (bert-small H100 -> MI300:
// the headline read -9.6% while a row's device time went +37%).
bool DiffBothHostBound(const AttributionDiff& d);

// Aligns `rb` (run B, `b`) against `ra` (run A, `a`). Both results must be
// available (else the diff is not, with the reason).
AttributionDiff DiffAttribution(const Trace& a, const AttributionResult& ra, const Trace& b,
                                const AttributionResult& rb, const DiffOptions& options);

// What a run's steps are, for a person: "the recorded step span
// (ProfilerStep#N)", "steps inferred from a repeating op pattern (periodic
// step #N; the trace has no step markers)", "the steps of FILE", or "no
// steps: the main thread's span" (`pseudo`).
std::string DiffStepsText(const Trace& trace, bool pseudo);

// A shape row's label in its run ("" when the instances had no Input Dims).
std::string DiffShapeLabel(const AttributionResult& r, uint32_t row);
// A shape row's call site in its run ("" when none was recorded).
std::string DiffSiteLabel(const AttributionResult& r, uint32_t row);
// A row pair's call site and shape as shown: A's, "A → B" where B's
// differs, B's for a row only in B; "(no call stack)" / "(no Input Dims)"
// when none was recorded.
std::string DiffRowSite(const AttributionResult& ra, const AttributionResult& rb, const DiffShapes& s, uint32_t row);
std::string DiffRowShape(const AttributionResult& ra, const AttributionResult& rb, const DiffShapes& s, uint32_t row);

// Per steady step, the total (self + descendants) of each of `nodes` in
// `r`: out[k * nodes.size() + j] for steady step k. One bottom-up pass per
// step over r.step_self. Visible for testing and for the benchmark.
std::vector<double> PerStepTotals(const AttributionResult& r, const std::vector<uint32_t>& nodes);

// A diff node's label and path ("a / b / c"), from run B where it has the
// node, else from A; a pair with different names reads "A-name → B-name".
std::string DiffNodeLabel(const Trace& a, const AttributionResult& ra, const Trace& b, const AttributionResult& rb,
                          const AttributionDiff& d, uint32_t node);
std::string DiffNodePath(const Trace& a, const AttributionResult& ra, const Trace& b, const AttributionResult& rb,
                         const AttributionDiff& d, uint32_t node);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_DIFF_ATTRIBUTION_DIFF_H_
