// A what-if scenario's text (`aiprof whatif --scenario`, a rule's
// `scenario:` and `removal:`, a card's stored scenario): its clauses, parsed
// and put in canonical form. The simulation that replays a scenario is
// src/analysis/whatif/whatif.h; the grammar lives here, below the rules, so
// the rule loader refuses a bad scenario at load time without reaching the
// simulation. Grammar (docs/whatif.md): clauses separated by ';'
//   remove-idle data_loading|host_bound|sync|other|startup
//   remove PATTERN            ops and kernels whose name contains PATTERN
//   scale PATTERN FACTOR      their durations × FACTOR (FACTOR ≥ 0)
//   every N PATTERN           the matching work runs on one step in N, not
//                             at all on the others: "checkpoint every 10th
//                             step" (per rank: the steps numbered a multiple
//                             of N where the numbers run consecutively, else
//                             the 1st, (N+1)-th ... steady step; a note names
//                             them)
//   overlap-data-loading N    data loading moves to N workers running beside
//                             the step: its time leaves the step, but a step
//                             is never shorter than its loading time / N
//                             (the workers' throughput)
//   graph-launch              the step replayed as one captured graph: host
//                             ops and runtime calls take no time, no launch
//                             delay, no idle between host work (an ideal
//                             CUDA/HIP graph or graph mode)
//   fuse P1 P2 ...            every chain of consecutive ops (a thread's
//                             siblings) or kernels (a stream's activities)
//                             named P1, P2, ... becomes one (whatif/graph_edits.h)
//   overlap-comm              collectives no longer block their stream's
//                             compute; only host waits, the step's end and
//                             the next collective wait for them
//   remove-comm               device collectives take no time (a finding's
//                             cause removed: communication_bound's removal)
//   device NAME [from NAME]   every kernel (CPU traces: every top-level op)
//                             scaled by the ratio of its roofline time on
//                             NAME to that on the trace's device
//   remove-page-faults        each host slice's self time shortened by the
//                             time of the page faults it holds (aiprof
//                             trace's records x the measured cost of one;
//                             src/analysis/page_faults/fault_slices.h)
// A matching host op's factor applies to its children and to the device
// work it launched, unless they match a clause of their own.
#ifndef AIPROF_SRC_ANALYSIS_SCENARIO_SCENARIO_H_
#define AIPROF_SRC_ANALYSIS_SCENARIO_SCENARIO_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/analysis/gaps/idle_gaps.h"
#include "src/analysis/roofline/device_peaks.h"
#include "src/base/status.h"

namespace aiprof {

// `scale`'s largest factor (a slice a million times longer is already a
// different program; larger ones only overflow).
inline constexpr double kMaxScaleFactor = 1e6;

struct WhatIfClause {
  enum class Kind : uint8_t {
    kRemoveIdle,
    kRemove,
    kScale,
    kGraphLaunch,
    kOverlapDataLoading,
    kEvery,
    kFuse,
    kOverlapComm,
    kDevice,
    kRemovePageFaults,
    kRemoveComm
  };
  Kind kind = Kind::kRemove;
  GapCause cause = GapCause::kOther;  // kRemoveIdle
  std::string pattern;                // kRemove, kScale
  double factor = 0;                  // kScale (kRemove: 0); kOverlapDataLoading: the workers
  int64_t every = 0;                  // kEvery: N
  std::vector<std::string> chain;     // kFuse: the chain's patterns, in order (≥ 2)
  std::string device, from_device;    // kDevice: target; source ("" = the trace's own)
};

struct Scenario {
  std::string text;
  // `text` with its clauses and words separated by exactly one "; " and one
  // space, and each parsed number in a number's place (scale's FACTOR,
  // every's N, overlap-data-loading's WORKERS) in its shortest form.
  std::string canonical;
  std::vector<WhatIfClause> clauses;
  // Set by ResolveScenarioDevices (whatif.h): a device clause's target
  // (`to`) and the trace's device (`from`: the clause's `from NAME`, else
  // the device the trace names, else, on CPU-only traces, the calibrated
  // "cpu-local").
  std::optional<DevicePeaks> device_to, device_from;
};

// Parses `text`; the error names the clause and what was expected.
StatusOr<Scenario> ParseScenario(std::string_view text);

// Scenario::canonical of `text` (its white space alone collapsed when it
// does not parse): the key under which past cases of a scenario are found
// (CorrectWhatIfByHistory), so "scale  x .10;remove y" and "scale x 0.1;
// remove y" are one scenario. Clause order is kept (a later clause wins
// where patterns overlap).
std::string CanonicalScenarioText(std::string_view text);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_SCENARIO_SCENARIO_H_
