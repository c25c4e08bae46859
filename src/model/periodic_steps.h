// Steps from a repeating op sequence: the last fallback of
// TraceBuilder::ExtractSteps, for traces with no ProfilerStep#N and no step
// annotations (a plain training loop under torch.profiler without
// prof.step(), an Nsight capture of a CUDA program's time steps).
//
// On each host thread the sequence of outermost ops (slices that are not
// Python frames and lie inside no other such slice; so depth 0 in a trace
// without Python stacks) is read by name. A period p (1 <= p <= kMaxPeriod
// ops) is accepted when the names repeat exactly with period p, a
// repetition holds at least two different names (one op repeated is no
// step: a run of one name has every period), and the
// steps it gives are at least kMinRepetitions whole repetitions whose ops
// cover more than kMinCoverage of the thread's busy time (the summed
// durations of its outermost ops). The smallest such p is taken; a warm-up
// prefix and a tail (a partial repetition) are left out of the steps.
//
// Linear time: a run covering more than half the busy time holds the op at
// the busy-time median m, and a run of >= 3 repetitions of period p holds a
// match name[i] == name[i + p] at i = m or i = m - p. So the candidates are
// the distances from m to the other occurrences of name[m] within
// kMaxPeriod, each checked by growing the run of matches around m.
//
// Phase: a step starts at the op of the repetition that follows the largest
// idle gap (summed over the repetitions), unless an op of the repetition is
// a DataLoader call, in which case the step starts at it (as ProfilerStep#N
// does: the data fetch opens the step). Step k spans from its first op's
// start to the next step's first op's start; the last step ends at the
// start of the op after it when that op continues the pattern (a partial
// repetition), else at the end of its last op.
#ifndef AIPROF_SRC_MODEL_PERIODIC_STEPS_H_
#define AIPROF_SRC_MODEL_PERIODIC_STEPS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

inline constexpr uint32_t kMaxPeriod = 10000;      // ops per repetition
inline constexpr uint32_t kMinRepetitions = 3;     // steps
inline constexpr double kMinCoverage = 0.5;        // of the thread's busy time (strictly more)
// The metadata "steps.from" of such steps, and the step source analyses report.
inline constexpr std::string_view kPeriodicPatternSource = "periodic pattern";

// One thread's outermost ops, in time order.
struct OpSequence {
  std::vector<uint32_t> name;        // any id; equal ids are equal names
  std::vector<int64_t> start_ns, end_ns;
  std::vector<uint8_t> data_loader;  // 1: a DataLoader call (preferred step start); may be empty
};

struct StepSpanNs {
  int64_t start_ns = 0, dur_ns = 0;
};

struct PeriodicPattern {
  uint32_t period = 0;   // ops per repetition (the mean when not exact); 0: no pattern
  bool exact = true;     // false: the approximate pattern (see periodic_steps.cc)
  uint32_t first = 0;    // index of the first step's first op
  int64_t busy_ns = 0;   // the thread's busy time (sum of its outermost ops' durations)
  int64_t covered_ns = 0;  // the steps' ops' summed durations
  std::vector<StepSpanNs> steps;
  bool found() const { return period > 0; }
  double coverage() const { return busy_ns > 0 ? static_cast<double>(covered_ns) / static_cast<double>(busy_ns) : 0; }
};

// The smallest accepted exact period of `seq`, its phase and steps; or the
// approximate pattern (periodic_steps.cc) when there is no exact one or it
// holds more busy time.
PeriodicPattern FindPeriodicPattern(const OpSequence& seq);

// The trace's best pattern: the host thread whose steps cover the most busy
// time. `track` is kNoTrack when no thread has one.
struct TracePattern {
  uint32_t track = kNoTrack;
  PeriodicPattern pattern;
};
TracePattern FindTracePeriodicSteps(const Trace& trace);

}  // namespace aiprof

#endif  // AIPROF_SRC_MODEL_PERIODIC_STEPS_H_
