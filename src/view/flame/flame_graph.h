// The flame graph's frame tree, built from the model in one pass over its
// events, stored in columns (one row per distinct call path).
//
// Source of the stacks:
//   - stack samples (Trace::samples + Trace::callsites) when any selected
//     thread has them: each sample adds its weight_ns to its leaf's self time;
//   - otherwise the nesting of slices on each host thread track (python
//     functions, cpu ops, user annotations, runtime calls, SDK spans): a
//     slice's parent is the innermost open slice that encloses it, and each
//     instant goes to the latest started open slice (as `aiprof query`'s
//     slices.parent and self_ns): a frame's self time is its slices'
//     self_ns, its total the sum over its subtree. A slice that starts
//     inside another and outlives it is kept whole under the slice that
//     encloses it. Step markers ProfilerStep#N merge into one frame
//     "ProfilerStep#*".
// Row 0 is the root ("all"); each selected thread is a child of the root,
// labelled by its name ("rank R / " first in multi-rank traces). A parent's
// row precedes its children's, so totals fold bottom-up in one reverse pass.
#ifndef AIPROF_SRC_VIEW_FLAME_FLAME_GRAPH_H_
#define AIPROF_SRC_VIEW_FLAME_FLAME_GRAPH_H_

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"
#include "src/view/view_registry.h"

namespace aiprof {

struct Trace;

inline constexpr uint32_t kNoFrame = UINT32_MAX;

// What a frame is, for colouring and the tooltip.
enum class FrameClass : uint8_t {
  kRoot = 0,
  kThread,
  kPython,      // python_function slices, Python frames of samples
  kOperator,    // cpu_op
  kAnnotation,  // user_annotation, SDK spans
  kRuntime,     // cuda/CANN runtime and driver calls, syncs
  kNative,      // native frames of samples
  kKernelMode,  // kernel-mode frames of samples
  kOther,
};
const char* FrameClassName(FrameClass c);

struct FrameTree {
  // Columns, one row per frame (call path).
  std::vector<uint32_t> parent;  // kNoFrame for the root
  std::vector<uint32_t> name;    // into names
  std::vector<uint32_t> module;  // into names (0 = none): a sample frame's native module (library)
  // With --color-by module (span nesting only): 1 for a frame made by
  // slices that are nn.Modules (or record_function / SDK spans) as the
  // attribution tree counts them (SliceModules); empty otherwise.
  std::vector<uint8_t> nn_module;
  std::vector<FrameClass> kind;
  std::vector<uint32_t> depth;   // 0 for the root
  std::vector<int64_t> total_ns;
  std::vector<int64_t> self_ns;
  // A diff's frames only (flame_from_diff): the node's calls per steady step
  // (DiffNodes::a_calls / b_calls); empty for other trees.
  std::vector<double> calls;
  // Distinct frame names; [0] is "". Views into the trace's strings or owned_.
  std::vector<std::string_view> names;

  bool from_samples = false;
  bool from_diff = false;       // nodes of a diff's alignment (flame_from_diff)
  uint64_t events = 0;          // slices, samples or diff nodes read
  // Slices that started inside an open slice and outlived it (kept whole
  // under the slice that encloses them; the one outlived has no time after).
  uint64_t outliving_events = 0;
  uint32_t threads = 0;

  size_t size() const { return parent.size(); }
  // What the frames were built from, and what one event is: "span nesting"
  // (slices), "stack samples" (samples), "aligned diff nodes" (nodes).
  std::string_view source() const {
    return from_diff ? "aligned diff nodes" : from_samples ? "stack samples" : "span nesting";
  }
  std::string_view event_noun() const { return from_diff ? "nodes" : from_samples ? "samples" : "slices"; }
  int64_t root_total_ns() const { return total_ns.empty() ? 0 : total_ns[0]; }
  // The names from the root's child down to `frame`, joined by `sep`.
  std::string PathOf(uint32_t frame, std::string_view sep) const;

  std::deque<std::string> owned_;  // thread labels and other names we made
};

// Builds the tree of the tracks of `trace` that pass options' --thread and
// --rank filters (an error when they select nothing).
StatusOr<FrameTree> BuildFrameTree(const Trace& trace, const ViewOptions& options);

// For each frame of `tree`, the matching frame of `baseline` (same names on
// the path from the root), or kNoFrame. Threads are matched by label; when
// labels differ (thread ids change between runs) the unmatched threads pair
// up in order of total time.
std::vector<uint32_t> MatchFrames(const FrameTree& tree, const FrameTree& baseline);

// Folded stacks, one line per call path with self time: "a;b;c 123" (ns).
// Names are escaped: ';' becomes U+FF1B (；), line feed U+2424 (␤) and
// carriage return U+240D (␍), so each line stays one stack for FlameGraph,
// inferno and speedscope. With `baseline` (and its MatchFrames result), the
// lines carry two counts, "a;b;c BASE NEW" (difffolded.pl's format);
// baseline paths absent from `tree` are written with NEW = 0.
// Frames deeper than kMaxFoldedDepth are summed into one line per ancestor at
// that depth, "...;[frames deeper than 256 folded here] N", so the output
// stays linear in the tree (a path per line would be quadratic in depth).
inline constexpr uint32_t kMaxFoldedDepth = 256;
std::string FoldedStacks(const FrameTree& tree, const FrameTree* baseline = nullptr,
                         const std::vector<uint32_t>* match = nullptr);
// One frame name escaped as in FoldedStacks. Visible for testing.
std::string FoldedName(std::string_view name);

// Shared by the flame writers that read the model directly (speedscope):
// the host thread tracks passing --thread/--rank, whether any has stack
// samples, a thread's frame label, and which slices are stack frames.
std::vector<bool> SelectedThreads(const Trace& trace, const ViewOptions& options);
bool HasSamples(const Trace& trace, const std::vector<bool>& selected);
bool IsMultiRank(const Trace& trace);
std::string ThreadLabel(const Trace& trace, uint32_t track, bool multi_rank);
bool IsStackSlice(const Trace& trace, uint32_t slice);

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_FLAME_FLAME_GRAPH_H_
