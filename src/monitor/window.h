// The rolling window of `aiprof monitor`: the requests, steps and counter
// samples of the last `window_ns`, and their statistics.
//
// Quantiles are exact over the window (nearest rank: the smallest value with
// at least q·n values at or below it, found with nth_element on a copy each
// time the statistics are taken) while the window holds at most
// kExactWindowLimit samples. Beyond that (a busy service: 60 s at 10^4
// requests/s) they come from DDSketches (src/base/duration_sketch.h, 1%
// relative error) kept per 1/64 of the window and merged, so the monitor's
// cost per interval stays bounded; the window is then rounded to whole
// 1/64ths. Counts, errors, mean and max are exact either way.
#ifndef AIPROF_SRC_MONITOR_WINDOW_H_
#define AIPROF_SRC_MONITOR_WINDOW_H_

#include <cstdint>
#include <climits>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "src/base/duration_sketch.h"

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
  double cpu_seconds_total = -1;  // user + system CPU time since the process started
  uint64_t lost_records = 0;  // live records overwritten before the monitor read them (since start)
  bool quantiles_exact = true;  // false: from the merged sketches (1% relative error)
  std::map<std::string, double> counters;  // newest value of each counter seen in the window
};

// Nearest-rank quantile q in [0, 1] of `values` (reordered); 0 when empty.
double NearestRankQuantile(std::vector<double>* values, double q);

// Above this many samples in the window, quantiles come from the sketches.
inline constexpr size_t kExactWindowLimit = 200'000;
// The sketches cover the window in this many parts.
inline constexpr int64_t kWindowParts = 64;

// One series of durations (request latencies, step times) over the window.
class DurationWindow {
 public:
  DurationWindow(int64_t window_ns, size_t exact_limit);
  void Add(int64_t end_ns, int64_t value_ns, bool error);
  void Advance(int64_t now_ns);

  struct Summary {
    uint64_t count = 0, errors = 0;
    double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
    bool exact = true;
  };
  Summary Summarize(int64_t now_ns) const;
  // Sketch parts held: at most (window + the latest allowance) / part + 2.
  size_t parts() const { return parts_.size(); }  // Visible for testing.
  // The samples held one by one (oldest first): f(end_ns, value_ns, error).
  // Past kExactWindowLimit the window keeps only sketches for the rest, and
  // `complete` says the list misses some.
  template <typename F>
  void ForEachSample(F&& f, bool* complete, int64_t now_ns) const {
    *complete = ExactValid(now_ns);
    for (const Sample& s : exact_) f(s.end_ns, s.value_ns, s.error);
  }

 private:
  struct Sample {
    int64_t end_ns;
    int64_t value_ns;
    bool error;
  };
  struct Part {
    int64_t start_ns = 0;
    DurationSketch sketch;
    uint64_t errors = 0;
    double sum = 0, max = 0;
  };
  bool ExactValid(int64_t now_ns) const { return incomplete_until_ns_ < now_ns - window_ns_; }
  int64_t window_ns_, part_ns_;
  size_t exact_limit_;
  std::deque<Sample> exact_;
  // Samples were left out of exact_ (it was full) up to this end time.
  int64_t incomplete_until_ns_ = INT64_MIN;
  std::deque<Part> parts_;
};

class RollingWindow {
 public:
  RollingWindow(int64_t window_ns, int64_t start_ns, size_t exact_limit = kExactWindowLimit)
      : window_ns_(window_ns), start_ns_(start_ns), requests_(window_ns, exact_limit), steps_(window_ns, exact_limit) {}

  void AddRequest(int64_t end_ns, int64_t latency_ns, bool error) { requests_.Add(Clamp(end_ns), latency_ns, error); }
  void AddStep(int64_t end_ns, int64_t duration_ns) { steps_.Add(Clamp(end_ns), duration_ns, false); }
  void AddCounter(const std::string& name, int64_t ts_ns, double value);
  // Records are read after they end, on one clock (CLOCK_MONOTONIC): one
  // dated after `latest_ns` (a service writing the live channel wrongly) is
  // taken as ending then and counted, so that it leaves the window in time
  // and the sketch parts and counters stay bounded. Set before each drain.
  void SetLatest(int64_t latest_ns) { latest_ns_ = latest_ns; }
  uint64_t clamped() const { return clamped_; }
  // What the window holds (bounded: kExactWindowLimit samples per series,
  // the parts above, one point per counter name seen in the window).
  size_t parts() const { return requests_.parts() + steps_.parts(); }  // Visible for testing.
  size_t counters() const { return counters_.size(); }                 // Visible for testing.
  // Drops what ended before now - window.
  void Advance(int64_t now_ns);
  // Statistics of what the window holds (process fields left unknown).
  WindowStats Stats(int64_t now_ns) const;
  // The window's requests as CSV: end_monotonic_ns,latency_ns,error (the
  // evidence a dead service leaves); *complete as ForEachSample's.
  std::string RequestsCsv(int64_t now_ns, bool* complete) const;

 private:
  struct CounterPoint {
    int64_t ts_ns;
    double value;
  };
  int64_t Clamp(int64_t end_ns) {
    if (end_ns <= latest_ns_) return end_ns;
    ++clamped_;
    return latest_ns_;
  }
  int64_t window_ns_, start_ns_;
  int64_t latest_ns_ = INT64_MAX;
  uint64_t clamped_ = 0;
  DurationWindow requests_, steps_;
  std::map<std::string, CounterPoint> counters_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_MONITOR_WINDOW_H_
