// Graph-replayed kernels attributed to the ops that captured them.
//
// A CUDA/HIP graph replay (cudaGraphLaunch, hipGraphLaunch) runs hundreds of
// kernels from one host call: the replay trace links every kernel to that
// call, and no op encloses it. The ops live in a second trace, recorded while
// the graph was captured (between StreamBeginCapture and StreamEndCapture),
// where each captured launch call (hipLaunchKernel, cudaLaunchKernel,
// hipMemcpyAsync, ...) sits under its op and module as usual, but launches
// no kernel. This merge pairs the replayed kernels of each graph launch with
// the captured launch calls of one capture window:
//
//   1. by graph node id, when both sides carry one (Kineto's "graph node id");
//   2. else in order, when the counts agree and the names do (a captured
//      launch names its kernel in its "kernel" arg on ROCm; where it names
//      none the order is taken unverified and counted);
//   3. else greedily in order, skipping captured launches that name another
//      kernel (the profiler dropped or added a few);
//   4. else by name: the i-th replayed kernel of a name takes the i-th
//      captured launch of that name (the graph scheduler reordered
//      independent nodes).
// (TraceLens's trace_capture_merge does 2-4 the same way; this is our own
// code over the model.) The window is the one that pairs the most kernels,
// so a folder of captures for several batch sizes needs no batch size.
//
// The captured launches and their enclosing slices (ops, modules, Python
// frames inside the window) are copied into the replay trace on a host track
// of their own per overlapping replay ("graph capture" tracks of the replay's
// process), re-timed by a monotone map that puts each captured launch at its
// replayed kernel's start: the copy shows where each op's kernels ran, and
// nesting is kept (a monotone map keeps containment). The copied times are
// not host time; the track's name says so. Each pair becomes a flow of
// category "graph capture" from the copied launch to the replayed kernel,
// after the replay's own flows, so LaunchingCalls() still names the graph
// launch (launch cost, critical path, gaps, LLM phases) and
// OpLaunchingCalls() the captured launch (attribution, roofline, kernel
// classes, layout, casts, op tails, op coverage). The attribution tree puts
// each copy where its graph launch ran (beside it, in its step), whatever
// the copy's re-timed times (src/analysis/attribution/attribution.h).
//
// Bad input is never merged silently: a capture with no capture window, or a
// replay with no graph launch, is an error; graph launches whose kernels no
// window pairs are counted (metadata and a diagnostic), never guessed.
#ifndef AIPROF_SRC_IMPORTERS_GRAPH_CAPTURE_GRAPH_CAPTURE_MERGE_H_
#define AIPROF_SRC_IMPORTERS_GRAPH_CAPTURE_GRAPH_CAPTURE_MERGE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/base/status.h"
#include "src/model/trace.h"

namespace aiprof {

struct GraphCaptureSource {
  std::string label;  // the file name, for messages and track names
  const Trace* trace = nullptr;
};

struct GraphCaptureMergeStats {
  uint64_t capture_windows = 0;      // StreamBeginCapture..StreamEndCapture pairs in the captures
  uint64_t graph_launches = 0;       // graph launch calls of the replay that launched device work
  uint64_t merged_launches = 0;      // of them, paired with a capture window
  uint64_t replayed_activities = 0;  // device activities the graph launches ran
  uint64_t matched_activities = 0;   // of them, paired with a captured launch
  uint64_t unverified_activities = 0;  // paired in order while the capture named no kernel
  uint64_t copied_slices = 0;        // capture slices copied into the replay
  // Pairs by method: graph node id, in order, greedy, by name.
  uint64_t by_node_id = 0, in_order = 0, greedy = 0, by_name = 0;
};

// Merges `captures` into `replay` (both finalized). See the file comment.
StatusOr<GraphCaptureMergeStats> MergeGraphCaptures(Trace* replay, const std::vector<GraphCaptureSource>& captures);

// A folder laid out as TraceLens's: one replay trace file beside a
// capture_traces/ folder whose execution_details.json lists the capture
// files ([{"file": ..., "batch_size": N, "mode": "FULL"|"PIECEWISE"}, ...]).
struct GraphCaptureLayout {
  std::string replay;
  std::vector<std::string> captures;
};
// The layout of `dir`, nullopt when it has no capture_traces/execution_details.json;
// an error when it has one that is malformed or names a missing file, or when
// the replay trace is not exactly one file.
StatusOr<std::optional<GraphCaptureLayout>> FindGraphCaptureLayout(const std::string& dir);

// A trace file given alone (`aiprof analyze DIR/replay.json.gz`) whose
// folder holds capture_traces/execution_details.json: when the trace has
// graph launches, a diagnostic "graph_capture_not_merged" at that file
// naming the folder and the flags that merge it. Not merged silently: a
// file reads the same wherever it lies, TraceLens merges only a capture
// folder it is given (--capture_folder), and vLLM writes the capture of
// rank 0 only into the folder that holds every rank's and session's
// replay traces, so the capture beside a file need not be its own.
void NoteGraphCaptureBeside(const std::string& file, Trace* trace);

// Imports `replay_path` and each capture file and merges them; the figures
// go to the trace's metadata ("graph_capture.*") and, for what did not pair,
// its diagnostics.
StatusOr<std::unique_ptr<Trace>> ImportWithGraphCaptures(const std::string& replay_path,
                                                         const std::vector<std::string>& capture_paths);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_GRAPH_CAPTURE_GRAPH_CAPTURE_MERGE_H_
