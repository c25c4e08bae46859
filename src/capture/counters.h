// Process and GPU counters, sampled every `period` by a thread of their own:
//   /proc/PID/stat: CPU utilisation (% of one core, (utime+stime) per wall
//   time), RSS bytes, thread count; /proc/PID/task/*/status: voluntary and
//   involuntary context switches per second (summed over threads);
//   NVML (libnvidia-ml.so.1, loaded with dlopen when present): per GPU
//   utilisation %, memory used bytes, power W.
// Timestamps are CLOCK_MONOTONIC.
#ifndef AIPROF_SRC_CAPTURE_COUNTERS_H_
#define AIPROF_SRC_CAPTURE_COUNTERS_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace aiprof {

struct CounterPoint {
  int64_t ts_ns;
  int32_t pid;     // the process, or -1 for a GPU counter
  int32_t device;  // GPU index, or -1 for a process counter
  uint16_t name;   // index into CounterSampler::names()
  double value;
};

class Nvml;

class CounterSampler {
 public:
  CounterSampler(int64_t period_ns, bool gpu);
  ~CounterSampler();
  void AddProcess(int32_t pid);
  void Start();
  void Stop();
  const std::vector<CounterPoint>& points() const { return points_; }
  const std::vector<std::string>& names() const { return names_; }
  // "loaded, N GPUs" or why NVML is not used.
  const std::string& nvml_status() const { return nvml_status_; }

  // Visible for testing: one sampling pass at `now_ns`.
  void SampleOnce(int64_t now_ns);

 private:
  struct Proc {
    int32_t pid;
    bool have_prev = false;
    int64_t prev_ts = 0;
    uint64_t prev_cpu_ticks = 0, prev_vol = 0, prev_invol = 0;
  };
  uint16_t Name(const std::string& name);
  void SampleProcess(Proc* p, int64_t now_ns);
  void SampleGpus(int64_t now_ns);
  void Loop();

  int64_t period_ns_;
  std::vector<Proc> procs_;
  std::vector<CounterPoint> points_;
  std::vector<std::string> names_;
  std::string nvml_status_;
  Nvml* nvml_ = nullptr;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_CAPTURE_COUNTERS_H_
