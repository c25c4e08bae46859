// Device idle that is start-up's, not the steady state's: one rule for every
// reading of device idle (the gap causes of idle_gaps.h, the critical path's
// time classes, what-if's idle removal).
//
// Start-up work of a rank's host: time it spent on one-off work while its
// device had nothing to run:
//   - the window's start-up calls (AnalysisWindow::startup_calls: runtime or
//     driver calls of at least kStartupCallMinNs and kStartupOutlierFactor x
//     their name's median, the device not busy through them), wherever they
//     lie, inside a step too: the window cuts start-up only between steps.
//     HTA's mi250_minitoy: one hipLaunchKernel of 6.54 ms (its name's median
//     6.3 us; the first launch of its kernel, loading its code object) inside
//     the trace's one steady step;
//   - stream capture windows (src/analysis/common/capture_windows.h): the
//     launches inside record nodes into a CUDA/HIP graph and run nothing.
//     TraceLens's vLLM capture trace: 421 of its 431 launch calls, in one
//     54.98 ms window.
// Idle that start-up work of its rank covers for at least half its length
// (kStartupIdleMinShare) is start-up idle: the host was busy with one-off
// work, neither slow at launching the steady state's work (host_bound) nor
// waiting for the device. Holistic Trace Analysis calls any idle before a
// late launch "host wait"; that reading holds for the steady state, where a
// faster host shortens it, not for work done once.
//
// Built once per trace, with the window (AnalysisWindow::startup_work): the
// gaps, the critical path and what-if read that one.
#ifndef AIPROF_SRC_ANALYSIS_WINDOW_STARTUP_WORK_H_
#define AIPROF_SRC_ANALYSIS_WINDOW_STARTUP_WORK_H_

#include <cstdint>
#include <map>

#include "src/analysis/common/intervals.h"
#include "src/model/trace.h"

namespace aiprof {

// The share of an idle interval start-up work must cover to make it start-up idle.
inline constexpr double kStartupIdleMinShare = 0.5;

class StartupWork {
 public:
  // Start-up calls' and capture windows' intervals, each merged per rank
  // (AnalysisWindow::startup_by_rank, CaptureWindowsByRank).
  StartupWork(const std::map<int32_t, Intervals>& startup_calls, const std::map<int32_t, Intervals>& capture_windows);
  StartupWork() = default;  // none
  // The capture windows alone: a trace read without a window.
  static StartupWork CaptureWindowsOnly(const Trace& trace);

  // True when start-up work of `rank` covers at least kStartupIdleMinShare
  // of [start_ns, end_ns) (non-empty).
  bool Covers(int32_t rank, int64_t start_ns, int64_t end_ns) const;
  // Its length inside [start_ns, end_ns).
  int64_t Within(int32_t rank, int64_t start_ns, int64_t end_ns) const;
  bool empty() const { return by_rank_.empty(); }

 private:
  std::map<int32_t, CoveredTime> by_rank_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_WINDOW_STARTUP_WORK_H_
