// The rolling window of `aiprof monitor`: the requests, steps and counter
// samples of the last `window_ns`, and their statistics.
//
// Quantiles are exact over the window (nearest rank: the smallest value with
// at least q·n values at or below it), found with nth_element on a copy each
// time the statistics are taken (every --interval): O(n) per quantile, a few
// milliseconds at 10^5 requests in the window.
#ifndef AIPROF_SRC_MONITOR_WINDOW_H_
#define AIPROF_SRC_MONITOR_WINDOW_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace aiprof {

struct WindowStats {
  int64_t now_ns = 0;      // CLOCK_MONOTONIC when taken
  int64_t window_ns = 0;   // --window
  int64_t covered_ns = 0;  // min(window, time since the monitor attached)
  uint64_t requests = 0, errors = 0, steps = 0;
  // Request latency (ns); meaningful when requests > 0.
  double p50_ns = 0, p90_ns = 0, p99_ns = 0, max_ns = 0, mean_ns = 0;
  double throughput_per_s = 0;  // requests / covered time
  // Step time (ns); meaningful when steps > 0.
  double step_p50_ns = 0, step_p99_ns = 0, step_max_ns = 0;
  double step_rate_per_s = 0;
  // The process (from /proc); < 0 when unknown.
  double cpu_util = -1;  // CPU time / wall time over the last interval (1.0 = one core)
  double rss_bytes = -1;
  uint64_t lost_records = 0;  // live records overwritten before the monitor read them (since start)
  std::map<std::string, double> counters;  // newest value of each counter seen in the window
};

// Nearest-rank quantile q in [0, 1] of `values` (reordered); 0 when empty.
double NearestRankQuantile(std::vector<double>* values, double q);

class RollingWindow {
 public:
  RollingWindow(int64_t window_ns, int64_t start_ns) : window_ns_(window_ns), start_ns_(start_ns) {}

  void AddRequest(int64_t end_ns, int64_t latency_ns, bool error);
  void AddStep(int64_t end_ns, int64_t duration_ns);
  void AddCounter(const std::string& name, int64_t ts_ns, double value);
  // Drops what ended before now - window.
  void Advance(int64_t now_ns);
  // Statistics of what the window holds (process fields left unknown).
  WindowStats Stats(int64_t now_ns) const;

 private:
  struct Sample {
    int64_t end_ns;
    int64_t value_ns;
    bool error;
  };
  struct CounterPoint {
    int64_t ts_ns;
    double value;
  };
  int64_t window_ns_, start_ns_;
  std::deque<Sample> requests_, steps_;
  std::map<std::string, CounterPoint> counters_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_MONITOR_WINDOW_H_
