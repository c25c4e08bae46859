// CPU utilisation and RSS of a process from /proc/<pid>/stat and status.
#ifndef AIPROF_SRC_MONITOR_PROC_STATS_H_
#define AIPROF_SRC_MONITOR_PROC_STATS_H_

#include <cstdint>
#include <string>

namespace aiprof {

class ProcStats {
 public:
  explicit ProcStats(int pid) : pid_(pid) {}
  // Reads the process now; cpu_util is over the time since the previous
  // call (-1 on the first call or when /proc is unreadable), rss in bytes (-1).
  void Sample(int64_t now_ns, double* cpu_util, double* rss_bytes);
  // utime + stime in seconds at the last Sample (-1 before one succeeded).
  double cpu_seconds() const { return have_ticks_ ? static_cast<double>(last_ticks_) / ticks_per_s_ : -1; }

 private:
  int pid_;
  int64_t last_ns_ = 0;
  uint64_t last_ticks_ = 0;
  bool have_ticks_ = false;
  double ticks_per_s_ = 100;
};

// Whether `pid` has exited (a zombie its parent has not reaped yet). Its
// /proc/<pid>/stat state alone is not enough: the thread-group leader reads
// Z (or X) while another of its threads lives on, briefly while a non-leader
// thread execs (the leader waits as a zombie until that thread takes over
// its pid) and for good once the main thread called pthread_exit(). So Z is
// believed only when no thread in /proc/<pid>/task is in another state.
// False when the process is gone altogether (kill(pid, 0) tells that).
bool IsZombieProcess(int pid);

// utime + stime in clock ticks from a /proc/<pid>/stat line; false when malformed.
// Visible for testing.
bool ParseStatCpuTicks(const std::string& stat_line, uint64_t* ticks);
// VmRSS in bytes from /proc/<pid>/status text; -1 when absent. Visible for testing.
double ParseStatusRssBytes(const std::string& status_text);

}  // namespace aiprof

#endif  // AIPROF_SRC_MONITOR_PROC_STATS_H_
