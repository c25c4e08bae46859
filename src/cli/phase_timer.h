// --timing: wall time of each phase of a command, printed to stderr.
#ifndef AIPROF_SRC_CLI_PHASE_TIMER_H_
#define AIPROF_SRC_CLI_PHASE_TIMER_H_

#include <chrono>
#include <cstdio>

#include "src/base/phase_log.h"

namespace aiprof {

class PhaseTimer {
 public:
  explicit PhaseTimer(bool enabled) : enabled_(enabled), last_(Clock::now()) { EnablePhaseLog(enabled); }
  // Prints the time since the previous mark, labelled `phase`.
  void Mark(const char* phase) {
    if (!enabled_) return;
    Clock::time_point now = Clock::now();
    double ms = std::chrono::duration<double, std::milli>(now - last_).count();
    std::fprintf(stderr, "aiprof: %-14s %9.1f ms\n", phase, ms);
    for (const auto& [name, sub_ms] : TakePhaseLog()) {
      std::fprintf(stderr, "aiprof:   %-22s %7.1f ms\n", name.c_str(), sub_ms);
    }
    last_ = now;
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  Clock::time_point last_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_CLI_PHASE_TIMER_H_
