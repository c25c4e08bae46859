// The critical path of each step through a dependency graph over host
// threads, launches, device streams, synchronisation and collectives.
//
// Graph (one node per slice, its start and its end; edges are stored as a
// few slice indices per slice, built in O(n log n) with no per-event
// allocation). The edge kinds follow Holistic Trace Analysis's
// critical_path_analysis (OPERATOR_KERNEL, KERNEL_LAUNCH_DELAY,
// KERNEL_KERNEL_DELAY, SYNC_DEPENDENCY) plus the cross-rank join:
//   kNesting      host: parent start → child start, child end → parent end
//                 (a thread's runtime calls on a track of their own, as
//                 Ascend's CANN layer records them, nest in its ops);
//   kThreadOrder  host: a slice's end → the next sibling's start on its thread;
//   kLaunch       the launching runtime call's start → the device activity's
//                 start (correlation ids / flows);
//   kStreamOrder  device: an activity's end → the next activity's start on
//                 its stream (streams run in order);
//   kSync         device activity end → the end of the host call waiting for
//                 it: cudaStreamSynchronize (the stream's last activity
//                 launched before the call), cudaDeviceSynchronize (every
//                 stream of the device), cudaEventSynchronize (the stream the
//                 recorded event was on, from the CUPTI "Event Sync" record);
//                 without CUPTI sync records, any blocking sync call
//                 (IsBlockingSyncName) waits for every stream of its rank;
//   kStreamWait   cudaStreamWaitEvent: the last activity launched on the
//                 event's stream before its cudaEventRecord → the first
//                 activity launched on the waiting stream after the wait
//                 (CUPTI "Stream Wait Event" records name the event and the
//                 stream); Ascend: an EVENT_WAIT task that ends with a
//                 collective of its rank → the stream's next activity
//                 (LinkEventWaits in dependency_graph.cc); a stream wait
//                 call the trace leaves unresolved (no CUPTI record, no
//                 event record: ROCm traces) is bound to a collective when
//                 the timing allows only it (LinkCollectiveWaits);
//   kHandoff      host threads record no wake-ups: a slice that starts work
//                 on its thread (top level, or under a profiler wrapper)
//                 after a gap is taken to wait for the latest such work that
//                 ended on another thread of its process inside that gap
//                 (the forward pass on the main thread → the autograd
//                 thread's backward; the backward's end → the optimizer);
//                 only gaps of at least kMinHandoffGapNs count (shorter
//                 ones are a busy thread's own dispatch time);
//   kCollective   one collective across ranks as the multi-rank analysis
//                 paired it (CrossRankResult::paired_slices: within steps,
//                 completed ones only; collective_pairing.h): it ends only
//                 once its last rank arrives, so the latest arrival's start
//                 → every rank's end (a tie for the latest: no edge). Used
//                 only when the ranks' own clocks agree
//                 (CrossRankResult::clocks_agree and not
//                 aligned_from_collectives: the walk compares trace times
//                 across ranks, which that alignment does not move).
//
// Path: for each step (FindSteps' timeline steps, per rank; without steps,
// each rank's whole trace), from the latest end among the step's host span
// and the device activity its calls launched, walk back along the binding
// dependency — the predecessor that finished last — to the step's start.
// In a graph whose edges carry the measured time differences this is the
// longest path (HTA takes networkx's longest path over the same edges), so
// the path's length is the step's makespan (step start to its last device
// activity's end), and every nanosecond of it is assigned once: to the slice
// running on the path (its own time, children excluded) or to the wait
// between a dependency and the next node, by PathClass (time_class.h). A
// copy hidden under compute is off the path; a copy the host or a stream
// waited for is on it. A collective whose last rank arrived late moves the
// path to that rank: the step names the rank and the op it was late for.
// Linear in slices per step (each slice is visited at most twice); a walk
// longer than 4 × slices + 64 nodes stops and is reported as truncated.
#ifndef AIPROF_SRC_ANALYSIS_CRITICAL_PATH_CRITICAL_PATH_H_
#define AIPROF_SRC_ANALYSIS_CRITICAL_PATH_CRITICAL_PATH_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "src/analysis/critical_path/time_class.h"
#include "src/analysis/launches/launch_hold.h"
#include "src/model/trace.h"

namespace aiprof {

class MetricSet;
struct AnalysisWindow;
struct CrossRankResult;

// The shortest idle gap on a thread that a hand-off from another thread
// may explain (critical_path.h, kHandoff).
inline constexpr int64_t kMinHandoffGapNs = 50'000;

// The shortest stream idle that counts as a stream waiting (a launched
// activity whose stream sat idle before it): shorter gaps are the device's
// normal 1-3 µs scheduling between kernels. Used by LinkCollectiveWaits'
// condition 1 (dependency_graph.cc) and by
// StepPath::device_idle_unexplained_ns.
inline constexpr int64_t kMinStreamIdleGapNs = 10'000;
// kMinLaunchHoldNs (src/analysis/launches/launch_hold.h): the shortest wait,
// after a launch call returned, before its activity started on an idle
// stream, that is the device holding launched work (DeviceStart).
// LinkCollectiveWaits' condition 3: the collective a waiting stream is
// bound to ended at most this long before the stream's next activity began.
inline constexpr int64_t kCollectiveWaitMatchNs = 50'000;

enum class DepKind : uint8_t {
  kNone = 0,  // the path's first segment
  kNesting,
  kThreadOrder,
  kLaunch,
  kStreamOrder,
  kSync,
  kStreamWait,
  kCollective,
  kHandoff,
};
inline constexpr size_t kDepKindCount = 9;
const char* DepKindName(DepKind kind);
// Where a dependency edge is drawn (the timeline's path overlay, the Chrome
// JSON export's flows): from the source's end, except a launch (the call's
// start) and a collective (the last arrival's start); to the target's
// start, except a sync and a collective (the waiting call's, the rank's end).
// So every edge runs forward in time: a sync runs from the device work's end
// to the call's end.
constexpr bool DepLeavesFromEnd(DepKind kind) { return kind != DepKind::kLaunch && kind != DepKind::kCollective; }
constexpr bool DepArrivesAtEnd(DepKind kind) { return kind == DepKind::kSync || kind == DepKind::kCollective; }

// The dependency graph, as per-slice arrays (kNoSlice where none). Host
// slices use parent/prev/last_child; device activities use prev (the
// previous activity on the stream), launch, wait_on (kStreamWait source) and
// peer (kCollective: the matched instance that arrived last, when another
// rank's); host sync calls use wait_on (kSync source); handoff is kHandoff's
// source.
struct DependencyGraph {
  std::vector<uint32_t> parent, prev, last_child, launch, wait_on, peer, handoff;
  std::vector<PathClass> cls;  // class of each slice's own time
  std::vector<bool> on_device;  // slice is device activity on a stream
  std::array<uint64_t, kDepKindCount> edges{};  // edge count per kind
  bool cross_rank = false;  // collectives were joined across ranks
  // Host calls that make a stream wait for an event (runtime, driver or
  // sync calls on a host track whose name IsStreamWaitCallName accepts:
  // cudaStreamWaitEvent, hipStreamWaitEvent, cuStreamWaitEvent,
  // aclrtStreamWaitEvent): all of them, and those no CUPTI "Stream Wait
  // Event" record resolved (the trace does not say which stream waited for
  // what; Ascend's EVENT_WAIT tasks resolve them all).
  uint64_t wait_calls = 0, wait_calls_unresolved = 0;
  // kStreamWait edges bound by LinkCollectiveWaits' timing rule.
  uint64_t waits_bound_by_timing = 0;
};

// A stretch of the critical path: [start_ns, end_ns) spent in `slice`'s own
// time (or waiting before it, for idle classes), reached from the previous
// segment through `via`.
struct PathSegment {
  int64_t start_ns = 0, end_ns = 0;
  uint32_t slice = kNoSlice;  // the slice running (or waited for, for idle classes)
  PathClass cls = PathClass::kIdleOther;
  DepKind via = DepKind::kNone;
};

// A dependency between two slices on different tracks that the path
// follows (a launch, a stream wait, a sync, a collective join, stream order).
struct PathEdge {
  uint32_t from_slice = kNoSlice, to_slice = kNoSlice;
  DepKind kind = DepKind::kNone;
};

struct StepPath {
  int32_t rank = kNoRank;
  int64_t number = -1;       // the step's number, -1 when unknown or no steps
  size_t step_index = SIZE_MAX;  // index into FindSteps().steps; SIZE_MAX: a whole-trace window
  int64_t start_ns = 0;      // the step's start
  int64_t end_ns = 0;        // its sink: the latest end of its host span and launched activity
  int64_t step_dur_ns = 0;   // the step as recorded (host span)
  std::array<int64_t, kPathClassCount> by_class_ns{};  // path time by class; sums to end − start
  // Device time of the step's launched activity per class (compute, copy,
  // collective), on the path or not: the base of the on-path shares.
  std::array<int64_t, kPathClassCount> device_total_ns{};
  // The path's time in the device classes (compute, copy, collective),
  // split by whose work it is; per class own + earlier + later + other_rank
  // == by_class_ns. Launch times are the walk's own time base (measured, or
  // a rewalk's replayed times), as the step's start is.
  //   own: the step's own activity (step_of: launched in it), same base as
  //     device_total_ns, so own_on_path_ns ≤ device_total_ns per class;
  //   earlier: this rank's activity launched before the step's start
  //     (earlier steps' backlog: the device runs behind the host, and the
  //     path, which ends with the step's last own work, runs back through
  //     the work queued before it);
  //   later: this rank's work launched at or after the step's start that is
  //     not the step's own (launched after the step's host span ended), and
  //     device-class slices that no step launches (a collective span on a
  //     host thread);
  //   other_rank: another rank's work (the path crossed to the rank that
  //     arrived last at a collective).
  std::array<int64_t, kPathClassCount> own_on_path_ns{}, earlier_on_path_ns{}, later_on_path_ns{},
      other_rank_on_path_ns{};
  // Path time a stream idled before an activity it had been handed with no
  // recorded dependency to explain it: the activity's launch call had ended
  // and its stream predecessor had ended at least kMinStreamIdleGapNs
  // before it started (the idle is measured from the later of the two ends;
  // shorter gaps are scheduling), or, where the launch binds (no
  // predecessor held it), the call had returned at least kMinLaunchHoldNs
  // before it started (the wait after the return; the call's own time is
  // runtime; shorter waits are the launch's latency, idle_host_bound). Part of
  // by_class_ns[kIdleOther]. With unresolved stream waits
  // (DependencyGraph::wait_calls_unresolved), likely such waits.
  int64_t device_idle_unexplained_ns = 0;
  size_t first_segment = 0, segment_count = 0;  // into CriticalPathResult::segments, time order
  size_t first_edge = 0, edge_count = 0;        // into CriticalPathResult::edges
  // Across ranks: the path moved to another rank at a collective whose last
  // arrival that rank was; the first such jump (latest in time). Where the
  // path did not move (no join: clocks aligned by collective ends, or a wait
  // not linked to its collective, as a CPU gloo job's main thread waiting
  // for the all-reduce its own thread runs), the last arrival of the paired
  // collective whose wait holds the most of the step's path idle (and
  // collective) time, at least half the wait (NameWaitedRanks,
  // critical_path.cc), with the clocks agreeing: then waited_collective is this rank's collective and
  // waited_cause unknown.
  int32_t waited_rank = kNoRank;
  uint32_t waited_collective = kNoSlice;  // the late rank's collective (see above); kNoSlice unknown
  uint32_t waited_cause = kNoSlice;       // the slice on the path just before it on that rank
  int64_t waited_late_ns = 0;             // its arrival after this rank's
  bool truncated = false;
  bool steady = false;  // inside the analysis window's steady state
  uint32_t host_sink = kNoSlice;    // the step's host span (or the rank's latest-ending host slice)
  uint32_t device_sink = kNoSlice;  // the latest-ending device activity the step launched
  // A host slice starting at the step's start (its host span, a periodic
  // step's first op, a whole-trace window's first slice): a what-if replay
  // moves the step's start with it.
  uint32_t start_slice = kNoSlice;
  int64_t length_ns() const { return end_ns - start_ns; }
};

// Where a step's wall time ends, for the texts that state a time base
// ("step start to ..."): its last device work, or, for steps that launched
// none (a CPU-only trace), its own end on the host.
inline const char* StepEndText(bool host_only) {
  return host_only ? "its end on the host" : "the end of its last device work";
}

// How many of the largest on-path consumers CriticalPathResult keeps.
inline constexpr size_t kPathTopSlicesKept = 8;

// The own time of one slice name on the counted steps' paths.
struct PathSliceTotal {
  StringId name;
  PathClass cls = PathClass::kCompute;  // the class of its last segment (steps and segments in time order)
  int64_t on_path_ns = 0;               // summed over the counted steps (÷ window_steps: per step)
};

struct CriticalPathResult {
  DependencyGraph graph;
  std::vector<StepPath> steps;
  std::vector<PathSegment> segments;
  std::vector<PathEdge> edges;
  // Sums over the steady-state steps (all steps when none is marked steady).
  size_t window_steps = 0;
  int64_t window_path_ns = 0;
  std::array<int64_t, kPathClassCount> window_by_class_ns{};
  std::array<int64_t, kPathClassCount> window_device_total_ns{};
  std::array<int64_t, kPathClassCount> window_own_on_path_ns{}, window_earlier_on_path_ns{}, window_later_on_path_ns{},
      window_other_rank_on_path_ns{};
  int64_t window_device_idle_unexplained_ns = 0;
  // The largest on-path consumers: slices (not idle) by name over the same
  // steps as the sums above, most on-path time first (equal: by name id), at
  // most kPathTopSlicesKept. ComputeCriticalPath only (a rewalk leaves it empty).
  std::vector<PathSliceTotal> window_top_slices;
  // The step (index into steps) whose work each device activity is: its
  // launching call's start (unlinked: its own start) falls in the step on its
  // rank; without steps, its rank's window. kNoSlice: none.
  std::vector<uint32_t> step_of;
  // The slices on some step's path, by slice index (for the exports).
  std::vector<bool> on_path;
};

// Some step is steady and no steady step launched device work (a CPU-only
// trace): their wall time ends on the host (StepEndText).
bool SteadyStepsAreHostOnly(const CriticalPathResult& path);

struct CriticalPathOptions {
  const AnalysisWindow* window = nullptr;      // marks steady steps
  const CrossRankResult* cross = nullptr;      // collectives are joined only when its clocks agree
  bool keep_graph = true;                      // keep DependencyGraph in the result (the what-if replays it)
};

// Asks the kernel to back [p, p + bytes) with transparent huge pages where it
// allows them (Linux, THP "madvise" or "always"): the path's per-slice arrays
// and segments are written once, and first-touch page faults of 4 KiB pages
// were most of their cost on large traces. A hint: no effect elsewhere.
void AdviseHugePages(const void* p, size_t bytes);

// Builds the graph. O(n log n) in slices.
DependencyGraph BuildDependencyGraph(const Trace& trace, const CriticalPathOptions& options = {});

// Graph and path of every step.
CriticalPathResult ComputeCriticalPath(const Trace& trace, const CriticalPathOptions& options = {});

// The path of each of `measured`'s steps walked again over its graph (kept:
// keep_graph) with every slice's times replaced by `start`/`end` (a
// what-if's replay). A step starts where its host span now starts and ends
// at the later new end of its two sinks; segments, edges and the sums by
// class are ComputeCriticalPath's, over the new times (own, earlier, later
// and other ranks' work too: launch times and the step's start both
// replayed; whose step an activity is stays the measured step_of). The
// result keeps no graph. Empty when the graph was not kept or the sizes differ.
CriticalPathResult RewalkCriticalPath(const Trace& trace, const CriticalPathResult& measured,
                                      const std::vector<int64_t>& start, const std::vector<int64_t>& end);

// Publishes critical_path_ns and the on-path time of compute, copies,
// collectives, host work and idle per steady step (the window's base).
void PublishCriticalPath(const CriticalPathResult& r, MetricSet* metrics);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_CRITICAL_PATH_CRITICAL_PATH_H_
