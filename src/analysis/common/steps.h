// One definition of a trace's steps, shared by every command (summary,
// analyze, diagnose, validate):
//   1. Trace::steps — ProfilerStep#N markers, else "## step N ##" / "step N"
//      annotations (found by TraceBuilder), with start and duration;
//   2. otherwise the profiler-written step breakdown (torch_npu / msprof
//      step_trace_time.csv, Trace::step_breakdown): one step per (rank, step)
//      row lasting Computing + Communication(Not Overlapped) + Free (the
//      device-side step time; torch_npu's Stage column is the same sum written
//      rounded and is the fallback, then msprof's "Iteration Time(us)").
//      These steps have no start time (start_ns = kUnknownStart).
// Trace::steps found from a periodic pattern of ops (TraceBuilder's last
// fallback, src/model/periodic_steps.h) are timeline steps too; the trace's
// metadata "steps.*" describes the pattern (StepList::pattern).
#ifndef AIPROF_SRC_ANALYSIS_COMMON_STEPS_H_
#define AIPROF_SRC_ANALYSIS_COMMON_STEPS_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "src/model/periodic_steps.h"
#include "src/model/trace.h"

namespace aiprof {

inline constexpr int64_t kUnknownStart = std::numeric_limits<int64_t>::min();

struct StepSpan {
  int32_t rank = kNoRank;
  int64_t number = -1;            // N of ProfilerStep#N, the breakdown's step; -1 unknown
  StringId name;                  // Trace::steps name; empty for breakdown steps
  int64_t start_ns = kUnknownStart;
  int64_t dur_ns = 0;
  uint32_t row = kNoSlice;        // row in Trace::steps; kNoSlice for breakdown steps
  // Breakdown columns when written (ns), else -1.
  int64_t computing_ns = -1, communication_not_overlapped_ns = -1, free_ns = -1;
  bool has_start() const { return start_ns != kUnknownStart; }
};

// How timeline steps were found when they come from a periodic pattern of
// ops rather than from markers.
struct StepPattern {
  int64_t period_ops = 0;   // ops per repetition (step); the mean when not exact
  bool exact = true;        // false: names nearly the same from step to step (src/model/periodic_steps.cc)
  std::string thread;       // tid as written
  std::string thread_name;  // the track's name
  double coverage = 0;      // the steps' ops' busy time / the thread's busy time
  int parts = 1;            // merged traces: how many parts' steps came from a pattern
};

struct StepList {
  // "timeline" (Trace::steps) or the breakdown file name
  // ("step_trace_time.csv"); empty when there are no steps.
  std::string source;
  bool from_pattern = false;  // timeline steps found from a periodic pattern (see `pattern`)
  StepPattern pattern;
  // What aiprof trace's hook made its ProfilerStep#N marker steps from
  // ("optimizer.step", "dataloader.next", "module.forward"; metadata
  // capture.steps_from), empty otherwise.
  std::string hook_source;
  std::vector<StepSpan> steps;  // timeline steps in Trace::steps order; breakdown steps by (rank, step)

  // The source analyses report: "periodic pattern" for pattern steps, else `source`.
  std::string_view reported_source() const { return from_pattern ? kPeriodicPatternSource : std::string_view(source); }
};

StepList FindSteps(const Trace& trace);

// The step time's two readings. A step's host span (ProfilerStep#N) is how
// long the host took to issue it; where the device runs behind the host
// (each step's device work ends later after its host span than the previous
// one's), the host runs ahead into a growing queue and the step rate is the
// device's: the time between the ends of consecutive steps' device work.
//
// A step's work end is the later of its host span's end and the end of the
// last device activity it owns. A device activity belongs to the step its
// launching call (LaunchingCalls: a graph launch for a graph's kernels)
// starts in, on its rank; one with no launch call in the trace to the step
// its own start falls in (the rule of the critical path's windows,
// FindWindows in src/analysis/critical_path/critical_path.cc). Its period
// runs from the work end of the previous step of its rank (by start) to its
// own; a rank's first step has none (what came before it is not a step).
struct StepPeriods {
  // Per StepList step (timeline steps; -1 for breakdown steps and, for the
  // period, a rank's first step).
  std::vector<int64_t> work_end_ns, period_ns;
  std::vector<size_t> previous;  // the rank's previous step, SIZE_MAX for none
  // The device activities the step owns (by the rule above): 0 for a step
  // that launched no device work, as a step cut short when the profiler
  // stopped (TrailingTruncated, src/analysis/window/analysis_window.h).
  std::vector<uint32_t> device_activities;
};
StepPeriods ComputeStepPeriods(const Trace& trace, const StepList& list);

// The device runs behind when its period exceeds the host's step by more
// than this share: over the chosen steps with a period, mean period >
// (1 + kDeviceBehindMinExcess) x mean host span, and each such step's work
// ends after its host span (device work is what is late: steps with gaps
// between them on a CPU trace are not).
inline constexpr double kDeviceBehindMinExcess = 0.05;

// Which reading a step time is.
enum class StepTimeBase : uint8_t {
  kHostSpan,      // the recorded host span (ProfilerStep#N, annotation, breakdown row)
  kDevicePeriod,  // end of one step's device work to the next's
};

// The base for `steps` (indices into list.steps, e.g. the steady ones):
// kDevicePeriod when the device runs behind over those with a period, else
// kHostSpan. `periods_used` (may be null) gets the indices of `steps` that
// have a period.
StepTimeBase ChooseStepTimeBase(const StepList& list, const StepPeriods& periods, const std::vector<size_t>& steps,
                                std::vector<size_t>* periods_used);

// "host span" or "device period", as figures name their base.
const char* StepTimeBaseName(StepTimeBase base);

// What hides communication: time a collective runs beside device activity
// of `kind` on its device is overlapped, not exposed, for compute kernels
// only; copies and memsets beside a collective hide none of it (they move
// data too, often over the same links). The one rule of a step's exposed
// communication, |C| - |C ∩ K| per device with C its collectives and K the
// activity this accepts: analyze's per-step figures (collective_stats.h),
// the gaps' overlap (idle_gaps.h) and the summary's step breakdown
// (Communication(Not Overlapped), step_breakdown.h).
inline bool HidesCommunication(EventKind kind) { return kind == EventKind::kKernel; }

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_COMMON_STEPS_H_
