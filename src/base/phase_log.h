// Wall times of the sub-phases of a command's phases (import → parse,
// finalize: sort, ...), collected where they run and printed by --timing.
// Phases are coarse (a handful per command), so a mutex is fine.
#ifndef AIPROF_SRC_BASE_PHASE_LOG_H_
#define AIPROF_SRC_BASE_PHASE_LOG_H_

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace aiprof {

// Phases are only kept while enabled (by --timing), so a long-running
// process (aiprof monitor) that imports again and again keeps nothing.
void EnablePhaseLog(bool enabled);
void LogPhase(std::string name, double ms);
// The phases logged since the last call, in the order they ended.
std::vector<std::pair<std::string, double>> TakePhaseLog();

// Logs the wall time from construction to destruction as `name`.
class ScopedPhase {
 public:
  explicit ScopedPhase(const char* name) : name_(name), start_(std::chrono::steady_clock::now()) {}
  // `prefix` + `name`: phases of a second run in one command ("before.").
  ScopedPhase(const std::string& prefix, const char* name)
      : name_(prefix + name), start_(std::chrono::steady_clock::now()) {}
  ~ScopedPhase() {
    LogPhase(name_, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count());
  }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  std::string name_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_PHASE_LOG_H_
