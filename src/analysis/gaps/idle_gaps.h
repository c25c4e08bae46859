// Temporal breakdown and idle gaps, per device (or, on CPU-only traces, per
// rank's main thread).
//
// Device timeline of one (rank, device): all device activity (kernels,
// copies, sets, collectives). With unions of intervals (Holistic Trace
// Analysis's temporal breakdown):
//   busy = |∪ all|, compute = |∪ kernels|, comm = |∪ collectives|,
//   memcpy = |∪ copies and sets|, span = first start .. last end,
//   idle = span − busy.
// A gap is a maximal interval inside the span with no activity. Its cause, in
// this order of precedence (the first that holds wins):
//   0. startup: start-up work of the same rank (window/startup_work.h: the window's
//      start-up calls, stream capture windows) covers at least half of the
//      gap: one-off work, not the steady state's idle;
//   1. data_loading: a data-loader span (IsDataLoaderName) of the same rank
//      overlaps the gap;
//   2. sync: a blocking sync call or record (IsBlockingSyncName), or a
//      synchronous copy call (IsSyncCopyName: cudaMemcpy,
//      hipMemcpyWithStream; the host waits in it as in a sync, the rule the
//      attribution and the critical path share), of the same rank overlaps
//      the gap;
//   3. host_bound: the runtime call that launched the activity ending the gap
//      began at or after the gap's start (the device waited for the host);
//   4. other.
// Window idle (TimelineBreakdown::window_idle_by_cause_ns, the idle impacts):
// the window's time with no activity on the timeline: the gaps' parts inside
// the window and, when the window is steps (has_step_starts), also the
// window's time before the first activity and after the last (not gaps: they
// stay out of the gap list, histogram and ratios). Each edge takes the rules
// above as one interval (a host span must cover half of it to name its
// cause): [window start, first start) ends at the first activity; [last end,
// window end) has no next activity, so never host_bound.
// Busy + idle in the window = its length (per-trace windows: its part inside
// the span, their ends being the capture's). A rank's timelines use the
// rank's own steps (AnalysisWindow::IntervalsOfRank).
// Host CPU samples inside the largest gaps are their evidence: the leaf frames
// the host ran while the device was idle (AttachHostSamples; published under
// the evidence topic "host_samples_in_gaps").
// aiprof's own work in the target (category aiprof_overhead, of the same
// rank) is not the program's idle: it is cut out of the gaps (a gap across
// it becomes its parts on either side, each with the gap's cause) and
// counted as aiprof_overhead_ns; the ratios are of the span less it.
// CPU-only traces: the timeline is the thread with the most cpu_op time in
// each rank ("main thread"); busy = |∪ cpu_op| (top-level op time); only
// data_loading and other apply.
// The causes' order in GapCause is their columns' order in every output
// (idle_by_cause tables, the breakdown bar, the timeline's lanes); startup
// came last, after the four older ones, so their columns and colours stay.
#ifndef AIPROF_SRC_ANALYSIS_GAPS_IDLE_GAPS_H_
#define AIPROF_SRC_ANALYSIS_GAPS_IDLE_GAPS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

class MetricSet;

enum class GapCause : uint8_t { kDataLoading = 0, kSync, kHostBound, kOther, kStartup };
inline constexpr size_t kGapCauseCount = 5;
const char* GapCauseName(GapCause cause);

// Gap histogram bucket upper bounds (exclusive), ns; the last bucket is open.
inline constexpr std::array<int64_t, 5> kGapBucketUpperNs = {1'000, 10'000, 100'000, 1'000'000, 10'000'000};
inline constexpr size_t kGapBucketCount = kGapBucketUpperNs.size() + 1;
// How many of the largest gaps each timeline keeps.
inline constexpr size_t kLargestGapsKept = 5;

// How many leaf frames a gap's host-sample evidence names.
inline constexpr size_t kGapHostFramesKept = 3;

struct Gap {
  int64_t start_ns = 0, end_ns = 0;
  GapCause cause = GapCause::kOther;
  uint32_t next_slice = kNoSlice;  // activity that ends the gap
  // Host CPU samples (perf / Nsight Systems) of the same rank inside the gap,
  // filled for the largest gaps only: what the host was running while the
  // device idled. Leaf frames, most samples first.
  uint64_t host_samples = 0;
  std::vector<std::pair<StringId, uint64_t>> top_host_frames;
};

struct TimelineBreakdown {
  int32_t rank = kNoRank;
  int32_t device = kHostDevice;  // kHostDevice: a CPU main thread
  uint32_t track = kNoTrack;     // CPU main thread's track; kNoTrack for devices
  int64_t span_start_ns = 0, span_ns = 0;
  int64_t busy_ns = 0, compute_ns = 0, comm_ns = 0, memcpy_ns = 0, idle_ns = 0;
  int64_t comm_overlap_ns = 0;  // |∪ collectives ∩ ∪ kernels|: communication hidden behind compute
  // Communication not hidden behind compute, over the span.
  int64_t comm_exposed_ns() const { return comm_ns - comm_overlap_ns; }
  // aiprof's own work in the target (AiprofOverheadByRank: the capture's
  // torch hook exporting its chunks) inside the span's gaps: neither busy
  // nor idle, cut out of the gaps. busy + idle + aiprof_overhead = span.
  int64_t aiprof_overhead_ns = 0;
  std::array<int64_t, kGapCauseCount> idle_by_cause_ns{};
  uint64_t gap_count = 0;
  std::array<uint64_t, kGapBucketCount> gap_hist_count{};
  std::array<int64_t, kGapBucketCount> gap_hist_ns{};
  std::array<std::array<int64_t, kGapCauseCount>, kGapBucketCount> gap_hist_ns_by_cause{};  // [bucket][cause]
  std::vector<Gap> largest_gaps;  // longest first
  std::vector<Gap> gaps;          // every gap in time order; only with GapsOptions::keep_all_gaps
  // Inside the analysis window (the steady state, src/analysis/window, this
  // rank's steps): idle by cause, with steps also before the first and after
  // the last activity; window_busy_ns + Σ window_idle_by_cause_ns = window
  // (per-trace windows: window ∩ span).
  std::array<int64_t, kGapCauseCount> window_idle_by_cause_ns{};
  int64_t window_memcpy_exposed_ns = 0;  // copies not overlapped by compute or communication
  int64_t window_comm_exposed_ns = 0;    // communication not overlapped by compute
  int64_t window_busy_ns = 0;
};

// What GapsResult::device_util is a share of.
enum class UtilBase : uint8_t {
  kNone = 0,     // no timelines (or a zero base): unknown
  kSteadySteps,  // the steady steps' wall time (each rank's own steps: the analysis window)
  kSpan,         // each timeline's span (first to last activity), less aiprof's own work in it
};

struct GapsResult {
  bool cpu_only = false;        // no device activity: CPU main-thread timelines
  bool has_launch_links = false;  // some device activity has a known launching call
  std::vector<TimelineBreakdown> timelines;  // by (rank, device)
  // Device utilisation: the one figure every output shows (the metric
  // device_util, the report's headline card, serve's runs list), summed over
  // the timelines (time-weighted). Where the window is steady steps with
  // starts: Σ window_busy_ns / Σ (window_busy_ns + Σ window_idle_by_cause_ns),
  // the busy share of the steady steps' wall time (less aiprof's own work);
  // else Σ busy_ns / Σ (span_ns − aiprof_overhead_ns). The device's own span
  // alone can be a sliver of the step (HTA's triton_example: one 1.8 us
  // kernel in a 13.3 s step read 100%) and counts the warm-up. CPU-only: the
  // main threads' op time. -1 and kNone: no timelines, or a zero base.
  double device_util = -1;
  UtilBase device_util_base = UtilBase::kNone;
};

struct AnalysisWindow;

struct GapsOptions {
  // Also keep every gap (TimelineBreakdown::gaps), e.g. for the timeline view.
  bool keep_all_gaps = false;
  // With a window (the steady state, src/analysis/window), also the window_* figures.
  const AnalysisWindow* window = nullptr;
};

// O(n log n) in slices.
GapsResult ComputeGaps(const Trace& trace, const GapsOptions& options = {});

// Publishes device_util (GapsResult::device_util) and device_idle_ratio
// (1 − device_util, on the same base), compute_ratio, comm_ratio,
// comm_overlap_ratio (overlap / comm), comm_exposed_ratio ((comm − overlap) /
// span),
// memcpy_ratio, idle_host_bound_ratio, idle_sync_ratio, idle_startup_ratio,
// data_loading_ratio (sums over all timelines, i.e. time-weighted, of the
// spans less aiprof's own work) and
// host_bound / sync_bound / data_loading / startup evidence.
void PublishGaps(const Trace& trace, const GapsResult& result, MetricSet* metrics);

// Fills host_samples / top_host_frames of every timeline's largest gaps.
void AttachHostSamples(const Trace& trace, GapsResult* result);

// Publishes the impacts in wall-clock time per the window's base (per step
// or per trace), each averaged over a rank's devices: idle_host_bound_ns,
// idle_sync_ns, data_loading_wait_ns, idle_other_ns, idle_startup_ns,
// memcpy_exposed_ns, comm_exposed_ns.
void PublishGapImpacts(const GapsResult& result, const AnalysisWindow& window, MetricSet* metrics);

// One plain-text line describing gap `g` of timeline `tl`.
std::string DescribeGap(const Trace& trace, const TimelineBreakdown& tl, const Gap& g);

// Idle with no known cause (GapCause::kOther, idle_other_ns) as texts name
// it, by the timelines' kind: the device's idle, or on a CPU-only trace
// (GapsResult::cpu_only: each rank's main thread, no device) the main
// thread's time between its ops. One wording for every text that lists it
// (diagnose's unexplained-time consumers).
const char* IdleOtherDescription(bool cpu_only);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_GAPS_IDLE_GAPS_H_
