// Shared per-trace lookups for analyses, each built once in linear time:
// which runtime call launched each device activity, which slice encloses
// which (parent), and name predicates shared by several analyses.
#ifndef AIPROF_SRC_ANALYSIS_COMMON_TRACE_INDEX_H_
#define AIPROF_SRC_ANALYSIS_COMMON_TRACE_INDEX_H_

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

// For every slice, the host runtime/driver slice that launched it (from
// Trace::flows whose target is device activity), or kNoSlice.
std::vector<uint32_t> LaunchingCalls(const Trace& trace);

// For every slice, the launch call that carries its op: for a kernel a graph
// launch replayed, the captured launch call a graph-capture merge linked to
// it (flows of category kGraphCaptureFlowCategory, src/importers/graph_capture/),
// else LaunchingCalls(). Analyses that ask which op a kernel belongs to
// (attribution, roofline, phases) read this; those that ask what the host
// did at run time (launch cost, critical path, gaps) read LaunchingCalls().
std::vector<uint32_t> OpLaunchingCalls(const Trace& trace);

// For every slice, the host op (cpu_op) at the start of a flow into it when
// it is device activity (torch_npu's async_npu / torch_to_npu flows link the
// framework op itself, not a runtime call), or kNoSlice.
std::vector<uint32_t> LaunchingOps(const Trace& trace);

// For every slice, the innermost slice on the same track that encloses it
// (start ≤ child start, child end ≤ end), or kNoSlice. Uses the
// (track, ts, longest first) order and depth set by TraceBuilder.
std::vector<uint32_t> ParentSlices(const Trace& trace);

// For every slice, whether a cpu_op encloses it at any depth (`parent` from
// ParentSlices). One pass, parents preceding children in that order: walking
// each slice's ancestors instead is quadratic in the nesting depth
// (test/data/handmade/deep_nesting.py).
std::vector<char> UnderCpuOp(const Trace& trace, const std::vector<uint32_t>& parent);

// Whether the trace holds PyTorch's op layer (cpu_op or python_function
// slices; user annotations alone do not make one: the SDK and capture write
// spans of any program in that category). The diagnosis' platform "pytorch"
// and the compute advice's torch idioms read it.
bool HasTorchOps(const Trace& trace);

// For every track, the [first, last + 1) slice rows of its slices ({0, 0} for
// none): TraceBuilder sorts slices by track, so each track's rows are one run.
std::vector<std::pair<uint32_t, uint32_t>> TrackSliceRanges(const Trace& trace);

// True for blocking synchronization calls and device sync records
// (cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize,
// aclrtSynchronizeStream, CUPTI "Stream Sync"/"Context Sync"/"Event Sync").
// cudaStreamWaitEvent / "Stream Wait Event" are not blocking and excluded.
bool IsBlockingSyncName(std::string_view name);

// True for a synchronous copy call: a runtime call whose name contains
// "memcpy" (any case) but not "async" (cudaMemcpy, hipMemcpyWithStream,
// aclrtMemcpy): it returns only once the copy is done, so its time is a wait.
// With IsBlockingSyncName, what the attribution counts as synchronisation
// and the critical path as sync_call (one rule, shared).
bool IsSyncCopyName(std::string_view name);

// True for data-loader spans (any name containing "dataloader", any case,
// e.g. "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__").
bool IsDataLoaderName(std::string_view name);

// True for the profiler's own wrapper spans, which are structure, never a
// consumer of time: "ProfilerStep#N", "PyTorch Profiler (N)", the "Trace"
// span, "## step N ##" markers and record_param_comms (which wraps a
// collective). Shared by the attribution tree and the critical path.
bool IsProfilerWrapperName(std::string_view name);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_COMMON_TRACE_INDEX_H_
