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

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_COMMON_STEPS_H_
