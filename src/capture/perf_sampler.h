// Host CPU sampling with perf_event_open(2): a software cpu-clock event per
// traced task and CPU (inherited by the threads and processes the task
// creates; the kernel mmaps inherited events only per CPU), one ring buffer
// per CPU that the CPU's events share, drained by a reader thread.
//
// Each sample carries pid/tid, a CLOCK_MONOTONIC timestamp (attr.use_clockid,
// the SDK's clock), the period it stands for (cpu-clock counts nanoseconds),
// the frame-pointer call chain the kernel walked and, with DWARF unwinding on,
// a copy of the top of the user stack plus the user registers, unwound after
// the run (dwarf_unwinder.h). MMAP2/COMM/FORK records keep what is needed to
// symbolise after the process is gone.
#ifndef AIPROF_SRC_CAPTURE_PERF_SAMPLER_H_
#define AIPROF_SRC_CAPTURE_PERF_SAMPLER_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "src/base/status.h"

namespace aiprof {

// x86-64 user registers kept per sample, in DWARF register order 0..16
// (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8..r15, rip).
inline constexpr int kDwarfRegs = 17;

struct RawSample {
  int64_t ts_ns;
  int64_t period_ns;
  int32_t pid, tid;
  uint32_t chain_begin, chain_len;  // into PerfData::chain (user frames, leaf first)
  uint32_t regs_index;              // into PerfData::regs (kDwarfRegs each), UINT32_MAX: none
  uint64_t stack_begin;             // into PerfData::stack
  uint32_t stack_len;
  bool kernel_ip;                   // sampled in kernel mode (ip is a kernel address)
  uint64_t ip;
};

// One PERF_COUNT_SW_PAGE_FAULTS_MIN sample: `period` minor page faults of
// thread `tid`, the last of them at `ts_ns` (CLOCK_MONOTONIC).
struct RawFault {
  int64_t ts_ns;
  int32_t pid, tid;
  uint64_t period;
};

struct Mapping {
  int32_t pid;
  uint64_t start, end, pgoff;
  std::string path;
  std::string name = {};  // the module's name in frames when it is not `path` ("[vdso]" for its image's copy)
  int64_t ts_ns = 0;      // CLOCK_MONOTONIC of its PERF_RECORD_MMAP2; 0: read from /proc at attach
};

// What a recording collected (the reader thread's output, read after Stop()).
struct PerfData {
  std::vector<RawSample> samples;
  std::vector<RawFault> faults;     // PerfEvent::kPageFaults samplers only
  std::vector<uint64_t> chain;
  std::vector<uint64_t> regs;
  std::vector<uint8_t> stack;
  std::vector<Mapping> mappings;
  std::unordered_map<int32_t, std::string> thread_names;  // tid -> comm
  std::unordered_map<int32_t, int32_t> thread_pid;         // tid -> pid
  std::unordered_map<int32_t, int32_t> process_parent;     // forked pid -> parent pid
  std::unordered_map<int32_t, int64_t> fork_ns;            // forked pid -> CLOCK_MONOTONIC of its fork
  // pid -> the CLOCK_MONOTONIC times of its execve calls while traced
  // (PERF_RECORD_COMM with COMM_EXEC), ascending once the sampler stopped
  // (the per-CPU rings are read in no global order). A launcher (env,
  // taskset, a pyenv shim) execs again in the same pid: each exec starts an
  // image of its own (ExecGeneration).
  std::unordered_map<int32_t, std::vector<int64_t>> exec_ns;
  uint64_t lost_records = 0;       // PERF_RECORD_LOST totals (ring overflow)
  uint64_t stacks_dropped = 0;     // stack copies not kept (memory cap)
  int64_t first_stack_dropped_ns = 0;  // CLOCK_MONOTONIC of the first sample whose copy was not kept
  uint64_t bytes_read = 0;
};

// Which of a pid's images ran at `ts_ns`, given its ascending exec times
// (PerfData::exec_ns; null: none): 0 before its first traced execve, k
// after its k-th.
size_t ExecGeneration(const std::vector<int64_t>* exec_ns, int64_t ts_ns);

// What a sampler records: cpu-clock stack samples (the host layer), or
// minor page faults (PERF_COUNT_SW_PAGE_FAULTS_MIN: one record per `period`
// faults with tid and time, no stack, no MMAP/COMM/FORK records).
enum class PerfEvent : uint8_t { kCpuClock, kPageFaults };

struct PerfOptions {
  PerfEvent event = PerfEvent::kCpuClock;
  uint64_t fault_period = 1;       // kPageFaults: faults per record
  int hz = 999;
  bool dwarf = true;               // copy user stack + registers for DWARF unwinding
  uint32_t stack_bytes = 8192;     // user stack copied per sample
  uint64_t max_stack_memory = 512ull << 20;  // cap on kept stack copies
  size_t ring_pages = 256;         // data pages per ring (power of two)
};

class PerfSampler {
 public:
  explicit PerfSampler(PerfOptions options) : options_(options) {}
  ~PerfSampler();

  // Opens a disabled event on `tid` (a thread or process id), inherited by
  // what it creates; with `enable_on_exec` the kernel enables it at the
  // task's next execve. Fills `*error_errno` when perf_event_open fails.
  Status OpenTask(int32_t tid, bool enable_on_exec, int* error_errno);
  // Enables the events (unless they wait for exec) and starts the reader.
  Status Start();
  // Disables the events, drains the rings, stops the reader.
  void Stop();
  size_t event_count() const { return events_.size(); }
  bool kernel_excluded() const { return exclude_kernel_; }
  // Live figures for progress lines.
  uint64_t samples_so_far() const { return sample_count_.load(std::memory_order_relaxed); }
  uint64_t bytes_so_far() const { return bytes_.load(std::memory_order_relaxed); }

  PerfData& data() { return data_; }

 private:
  struct Event {
    int fd;
    void* base;
    size_t size;
  };
  void ReaderLoop();
  void Drain(Event* e);
  void Parse(const uint8_t* rec, size_t len);
  void ParseSample(const uint8_t* p, const uint8_t* end, uint16_t misc);
  void ParseFault(const uint8_t* p, const uint8_t* end);

  PerfOptions options_;
  bool exclude_kernel_ = false;
  std::vector<int> cpus_;
  std::unordered_map<int, size_t> rings_;  // cpu -> index in events_ of its mmapped event
  std::vector<Event> events_;             // base == nullptr: output redirected to its CPU's ring
  std::vector<uint8_t> scratch_;
  std::thread reader_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> sample_count_{0}, bytes_{0};
  PerfData data_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_CAPTURE_PERF_SAMPLER_H_
