// The what-if clauses that change more than one op's duration — fuse,
// overlap-comm, device — as edits of the dependency graph
// (src/analysis/critical_path/critical_path.h) that the replay (whatif.cc)
// applies. Definitions (docs/whatif.md, "Grammar"):
//
// fuse P1 P2 ... Pk: a chain is k consecutive slices of one track — a host
// thread's siblings (the graph's thread order) or a device stream's
// activities (stream order) — whose names contain P1, ..., Pk in that order;
// a slice is in at most one chain (earliest start first). The chain becomes
// one op / kernel:
//   - launches after the first cost nothing: the runtime launch calls of the
//     chain's kernels after its first take no time; each such kernel starts
//     the moment the chain's previous kernel ends (its launch edge is
//     dropped, no gap);
//   - host members after the first: on a trace with device work they are
//     dispatch only and take no time (their subtree too); on a CPU-only trace
//     they are the compute and keep it; either way the thread gap before
//     them goes (no interpreter time between fused ops);
//   - summed compute, no intermediate traffic: the intermediate between
//     members j−1 and j is taken to be member j's largest tensor input (the
//     op's recorded shapes and dtype; else member j−1's); it is no longer
//     written by j−1 nor read by j. A memory-bound member's time is scaled
//     by (its bytes − those bytes) / its bytes (its roofline bytes: Σ inputs
//     + output, op_cost.h); compute-bound members and members without shapes
//     keep their time (counted in the notes). Memory-bound: the elementwise
//     family (op_cost.h: ≤ 1 FLOP per element, below every listed device's
//     ridge point); matmul, convolution and attention count as
//     compute-bound. Not modelled: the allocations of the intermediates (a
//     fused op allocates none) and the dispatch time of CPU ops.
//
// overlap-comm: collectives move to a stream of their own beside compute: a
// compute activity no longer waits for a collective before it on its
// stream (its stream predecessor becomes the previous non-collective).
// Still waiting for a collective, its consumers as far as a trace shows
// them: host calls that synchronise on its stream, explicit stream waits
// for it (cudaStreamWaitEvent: already a consumer), and the next collective
// of its stream (collectives stay in order). A collective on a stream of its
// own with waits is already overlapped: nothing changes. Not modelled:
// contention between the overlapped kernels, and compute on the same stream
// that consumes the collective's output with no recorded wait.
//
// device NAME [from NAME]: each device activity's time × the ratio of its
// roofline time on the target to that on the trace's device, where the
// roofline time of FLOPs F and bytes B is max(F / peak(precision),
// B / bandwidth) (a kernel keeps its measured efficiency against the
// roofline). F and B are those of the op that launched the kernel (its
// nearest ancestor with a shape model; every kernel of an op gets the op's
// ratio). Without them (fallback, counted): GEMM, attention and Triton
// template kernels by the compute-peak ratio (fp32, else bf16, else fp16:
// the first precision both devices list), every other kernel and memsets by
// the memory-bandwidth ratio. Collectives (the interconnect is not in
// devices.yaml) and host↔device copies keep their time; device-to-device
// copies scale by bandwidth. Host work is unchanged. On a CPU-only trace the
// ops are the compute: each top-level op (cpu_op with no cpu_op above it)
// and its subtree scale by its own ratio, or by bandwidth without shapes.
#ifndef AIPROF_SRC_ANALYSIS_WHATIF_GRAPH_EDITS_H_
#define AIPROF_SRC_ANALYSIS_WHATIF_GRAPH_EDITS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/whatif/whatif.h"

namespace aiprof {

struct GraphEdits {
  // Per slice, multiplying the duration factor of the pattern clauses
  // (empty: no edit). Host slices: propagated to their subtree.
  std::vector<float> factor;
  // fuse: a member after its chain's first starts no earlier than this
  // slice's end, with no lag (device: the chain's previous kernel, its
  // launch edge dropped; host: the previous member, the thread gap dropped).
  std::vector<uint32_t> after;  // kNoSlice: none (empty: no fuse)
  // overlap-comm (empty otherwise): each device activity's stream
  // predecessor with collectives skipped (a collective keeps its own), the
  // previous collective on its stream (strictly before it), and which
  // activities are collectives.
  std::vector<uint32_t> stream_prev, comm_prev;
  std::vector<uint8_t> comm;
  std::vector<std::string> notes;
};

// The edits of the scenario's fuse, overlap-comm and device clauses.
// Linear in slices (× nesting depth for the ancestor walks, memoised).
GraphEdits BuildGraphEdits(const Trace& trace, const DependencyGraph& g, const Scenario& scenario);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_WHATIF_GRAPH_EDITS_H_
