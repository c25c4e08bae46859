#include "src/capture/perf_sampler.h"

#include <algorithm>

#include <linux/perf_event.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace aiprof {
namespace {

// perf's x86-64 register numbering (arch/x86/include/uapi/asm/perf_regs.h):
// AX BX CX DX SI DI BP SP IP (0..8), R8..R15 (16..23).
constexpr uint64_t kUserRegsMask = 0x1ffull | (0xffull << 16);
// Values arrive in bit order: AX BX CX DX SI DI BP SP IP R8..R15. Index of
// each DWARF register (rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip) there.
constexpr int kPerfIndexOfDwarf[kDwarfRegs] = {0, 3, 2, 1, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 8};

constexpr uint64_t kSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
                                 PERF_SAMPLE_CALLCHAIN;
// Page-fault records: header + pid/tid + time, 24 bytes each. Not
// PERF_SAMPLE_PERIOD: with it and a fixed period the kernel writes a record
// for every software event whatever sample_period says
// (perf_swevent_event), so --fault-period N wrote every fault while the
// metadata said N (found in session 14: a period-4 capture counted 4x the
// faults getrusage saw). Each record stands for sample_period faults.
constexpr uint64_t kFaultSampleType = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;

long PerfEventOpen(perf_event_attr* attr, pid_t pid, int cpu, int group, unsigned long flags) {
  return syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

template <typename T>
T Read(const uint8_t*& p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  p += sizeof(T);
  return v;
}

// CPUs listed in /sys/devices/system/cpu/online ("0-3,6").
std::vector<int> OnlineCpus() {
  std::vector<int> out;
  FILE* f = std::fopen("/sys/devices/system/cpu/online", "r");
  if (f != nullptr) {
    int a = 0, b = 0;
    char sep = 0;
    while (std::fscanf(f, "%d", &a) == 1) {
      b = a;
      sep = static_cast<char>(std::fgetc(f));
      if (sep == '-') {
        if (std::fscanf(f, "%d", &b) != 1) break;
        sep = static_cast<char>(std::fgetc(f));
      }
      for (int c = a; c <= b; ++c) out.push_back(c);
      if (sep != ',') break;
    }
    std::fclose(f);
  }
  if (out.empty()) {
    for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN); ++c) out.push_back(static_cast<int>(c));
  }
  return out;
}

// The time of a side-band record (MMAP2, COMM): with sample_id_all and
// kSampleType's TID and TIME, every such record ends with its sample_id
// {u32 pid, tid; u64 time}, after the name padded to 8 bytes.
int64_t RecordTime(const uint8_t* rec, size_t len) {
  if (len < sizeof(perf_event_header) + 16) return 0;
  int64_t t;
  std::memcpy(&t, rec + len - 8, sizeof(t));
  return t;
}

}  // namespace

size_t ExecGeneration(const std::vector<int64_t>* exec_ns, int64_t ts_ns) {
  if (exec_ns == nullptr) return 0;
  return static_cast<size_t>(std::upper_bound(exec_ns->begin(), exec_ns->end(), ts_ns) - exec_ns->begin());
}

PerfSampler::~PerfSampler() {
  Stop();
  for (Event& e : events_) {
    if (e.base != nullptr) munmap(e.base, e.size);
    close(e.fd);
  }
}

Status PerfSampler::OpenTask(int32_t tid, bool enable_on_exec, int* error_errno) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  const bool faults = options_.event == PerfEvent::kPageFaults;
  if (faults) {
    // Every fault (or one in fault_period) of the task, counted in the
    // kernel's fault handler; no stack, no side-band records (the cpu-clock
    // sampler, when on, keeps names and mappings).
    attr.config = PERF_COUNT_SW_PAGE_FAULTS_MIN;
    attr.freq = 0;
    attr.sample_period = options_.fault_period > 0 ? options_.fault_period : 1;
    attr.sample_type = kFaultSampleType;
  } else {
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.freq = 1;
    attr.sample_freq = static_cast<uint64_t>(options_.hz);
    attr.sample_type = kSampleType;
    if (options_.dwarf) {
      attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
      attr.sample_regs_user = kUserRegsMask;
      attr.sample_stack_user = options_.stack_bytes;
    }
    attr.mmap = 1;
    attr.mmap2 = 1;
    attr.comm = 1;
    attr.comm_exec = 1;
    attr.task = 1;
    attr.sample_id_all = 1;
    attr.exclude_callchain_kernel = 1;
  }
  attr.disabled = 1;
  attr.inherit = 1;
  attr.enable_on_exec = enable_on_exec ? 1 : 0;
  attr.exclude_kernel = exclude_kernel_ ? 1 : 0;
  attr.exclude_hv = 1;
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  attr.watermark = 1;
  attr.wakeup_watermark = static_cast<uint32_t>(options_.ring_pages * page / 4);
  // The kernel does not mmap inherited per-task events (cpu -1), so the task
  // is followed on every CPU; events of one CPU share that CPU's ring.
  if (cpus_.empty()) cpus_ = OnlineCpus();
  bool opened_any = false;
  for (int cpu : cpus_) {
    long fd = PerfEventOpen(&attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && (errno == EACCES || errno == EPERM) && !exclude_kernel_) {
      // Kernel-mode samples need more privilege (perf_event_paranoid <= 1):
      // keep user-mode samples.
      exclude_kernel_ = true;
      attr.exclude_kernel = 1;
      fd = PerfEventOpen(&attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    }
    if (fd < 0) {
      if (errno == ENODEV || (errno == EINVAL && opened_any)) continue;  // CPU offline
      *error_errno = errno;
      return ErrStatus(std::string(faults ? "perf_event_open(page-faults, tid " : "perf_event_open(cpu-clock, tid ") + std::to_string(tid) + ", cpu " +
                       std::to_string(cpu) + "): " + std::strerror(errno));
    }
    opened_any = true;
    auto ring = rings_.find(cpu);
    if (ring != rings_.end()) {
      if (ioctl(static_cast<int>(fd), PERF_EVENT_IOC_SET_OUTPUT, events_[ring->second].fd) != 0) {
        *error_errno = errno;
        close(static_cast<int>(fd));
        return ErrStatus(std::string("PERF_EVENT_IOC_SET_OUTPUT: ") + std::strerror(errno));
      }
      events_.push_back(Event{static_cast<int>(fd), nullptr, 0});
      continue;
    }
    size_t size = (options_.ring_pages + 1) * page;
    void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, static_cast<int>(fd), 0);
    if (base == MAP_FAILED) {
      *error_errno = errno;
      close(static_cast<int>(fd));
      return ErrStatus(std::string("mmap of the perf ring buffer: ") + std::strerror(errno));
    }
    rings_[cpu] = events_.size();
    events_.push_back(Event{static_cast<int>(fd), base, size});
  }
  return OkStatus();
}

Status PerfSampler::Start() {
  for (Event& e : events_) {
    // Events waiting for exec are enabled by the kernel at execve.
    ioctl(e.fd, PERF_EVENT_IOC_ENABLE, 0);
  }
  reader_ = std::thread([this] { ReaderLoop(); });
  return OkStatus();
}

void PerfSampler::Stop() {
  if (!reader_.joinable()) return;
  for (Event& e : events_) ioctl(e.fd, PERF_EVENT_IOC_DISABLE, 0);
  stop_.store(true, std::memory_order_release);
  reader_.join();
  for (auto& [pid, times] : data_.exec_ns) std::sort(times.begin(), times.end());
}

void PerfSampler::ReaderLoop() {
  std::vector<pollfd> fds;
  for (const Event& e : events_) {
    if (e.base != nullptr) fds.push_back(pollfd{e.fd, POLLIN, 0});
  }
  while (!stop_.load(std::memory_order_acquire)) {
    poll(fds.data(), fds.size(), 50);
    for (Event& e : events_) {
      if (e.base != nullptr) Drain(&e);
    }
  }
  for (Event& e : events_) {
    if (e.base != nullptr) Drain(&e);
  }
}

void PerfSampler::Drain(Event* e) {
  auto* header = static_cast<perf_event_mmap_page*>(e->base);
  const uint8_t* data = static_cast<const uint8_t*>(e->base) + header->data_offset;
  const uint64_t size = header->data_size;
  uint64_t head = __atomic_load_n(&header->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = header->data_tail;
  while (tail < head) {
    perf_event_header h;
    const uint64_t off = tail % size;
    if (off + sizeof(h) <= size) {
      std::memcpy(&h, data + off, sizeof(h));
    } else {
      uint8_t tmp[sizeof(h)];
      for (size_t i = 0; i < sizeof(h); ++i) tmp[i] = data[(off + i) % size];
      std::memcpy(&h, tmp, sizeof(h));
    }
    if (h.size < sizeof(h) || tail + h.size > head) break;
    if (off + h.size <= size) {
      Parse(data + off, h.size);
    } else {
      scratch_.resize(h.size);
      const size_t first = size - off;
      std::memcpy(scratch_.data(), data + off, first);
      std::memcpy(scratch_.data() + first, data, h.size - first);
      Parse(scratch_.data(), h.size);
    }
    tail += h.size;
    bytes_.fetch_add(h.size, std::memory_order_relaxed);
  }
  __atomic_store_n(&header->data_tail, tail, __ATOMIC_RELEASE);
}

void PerfSampler::Parse(const uint8_t* rec, size_t len) {
  perf_event_header h;
  std::memcpy(&h, rec, sizeof(h));
  const uint8_t* p = rec + sizeof(h);
  const uint8_t* end = rec + len;
  data_.bytes_read += len;
  switch (h.type) {
    case PERF_RECORD_SAMPLE:
      if (options_.event == PerfEvent::kPageFaults) {
        ParseFault(p, end);
      } else {
        ParseSample(p, end, h.misc);
      }
      break;
    case PERF_RECORD_MMAP2: {
      if (end - p < 64) return;
      Mapping m;
      m.pid = static_cast<int32_t>(Read<uint32_t>(p));
      Read<uint32_t>(p);
      m.start = Read<uint64_t>(p);
      m.end = m.start + Read<uint64_t>(p);
      m.pgoff = Read<uint64_t>(p);
      p += 4 + 4 + 8 + 8 + 4 + 4;  // maj, min, ino, ino_generation, prot, flags
      m.path.assign(reinterpret_cast<const char*>(p), strnlen(reinterpret_cast<const char*>(p), end - p));
      m.ts_ns = RecordTime(rec, len);
      data_.mappings.push_back(std::move(m));
      break;
    }
    case PERF_RECORD_COMM: {
      if (end - p < 8) return;
      int32_t pid = static_cast<int32_t>(Read<uint32_t>(p));
      int32_t tid = static_cast<int32_t>(Read<uint32_t>(p));
      if (h.misc & PERF_RECORD_MISC_COMM_EXEC) data_.exec_ns[pid].push_back(RecordTime(rec, len));
      data_.thread_names[tid].assign(reinterpret_cast<const char*>(p), strnlen(reinterpret_cast<const char*>(p), end - p));
      break;
    }
    case PERF_RECORD_FORK: {
      if (end - p < 16) return;
      int32_t pid = static_cast<int32_t>(Read<uint32_t>(p));
      int32_t ppid = static_cast<int32_t>(Read<uint32_t>(p));
      int32_t tid = static_cast<int32_t>(Read<uint32_t>(p));
      int32_t ptid = static_cast<int32_t>(Read<uint32_t>(p));
      const int64_t time = end - p >= 8 ? static_cast<int64_t>(Read<uint64_t>(p)) : 0;
      data_.thread_pid[tid] = pid;
      if (pid != ppid) {
        data_.process_parent[pid] = ppid;
        data_.fork_ns.emplace(pid, time);
      }
      auto it = data_.thread_names.find(ptid);
      if (it != data_.thread_names.end() && !data_.thread_names.count(tid)) {
        std::string name = it->second;
        data_.thread_names[tid] = std::move(name);
      }
      break;
    }
    case PERF_RECORD_LOST: {
      if (end - p < 16) return;
      Read<uint64_t>(p);
      data_.lost_records += Read<uint64_t>(p);
      break;
    }
    default:
      break;
  }
}

void PerfSampler::ParseFault(const uint8_t* p, const uint8_t* end) {
  if (end - p < 16) return;
  RawFault f{};
  f.pid = static_cast<int32_t>(Read<uint32_t>(p));
  f.tid = static_cast<int32_t>(Read<uint32_t>(p));
  f.ts_ns = static_cast<int64_t>(Read<uint64_t>(p));
  f.period = options_.fault_period > 0 ? options_.fault_period : 1;
  data_.faults.push_back(f);
  sample_count_.fetch_add(1, std::memory_order_relaxed);
}

void PerfSampler::ParseSample(const uint8_t* p, const uint8_t* end, uint16_t misc) {
  // Fixed part: ip, pid/tid, time, period, callchain nr.
  if (end - p < 40) return;
  RawSample s{};
  s.ip = Read<uint64_t>(p);
  s.pid = static_cast<int32_t>(Read<uint32_t>(p));
  s.tid = static_cast<int32_t>(Read<uint32_t>(p));
  s.ts_ns = static_cast<int64_t>(Read<uint64_t>(p));
  s.period_ns = static_cast<int64_t>(Read<uint64_t>(p));
  s.kernel_ip = (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
  uint64_t nr = Read<uint64_t>(p);
  if (nr > static_cast<uint64_t>(end - p) / 8) return;
  s.chain_begin = static_cast<uint32_t>(data_.chain.size());
  bool user = false;
  for (uint64_t i = 0; i < nr; ++i) {
    uint64_t ip = Read<uint64_t>(p);
    if (ip >= static_cast<uint64_t>(PERF_CONTEXT_MAX)) {
      user = ip == static_cast<uint64_t>(PERF_CONTEXT_USER);
      continue;
    }
    if (user) data_.chain.push_back(ip);
  }
  s.chain_len = static_cast<uint32_t>(data_.chain.size() - s.chain_begin);
  s.regs_index = UINT32_MAX;
  if (options_.dwarf && end - p >= 8) {
    uint64_t abi = Read<uint64_t>(p);
    if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
      if (end - p < 17 * 8) return;
      uint64_t perf_regs[17];
      for (uint64_t& r : perf_regs) r = Read<uint64_t>(p);
      s.regs_index = static_cast<uint32_t>(data_.regs.size() / kDwarfRegs);
      for (int i = 0; i < kDwarfRegs; ++i) data_.regs.push_back(perf_regs[kPerfIndexOfDwarf[i]]);
    }
    if (end - p >= 8) {
      uint64_t size = Read<uint64_t>(p);
      if (size > 0 && static_cast<uint64_t>(end - p) >= size + 8) {
        const uint8_t* bytes = p;
        p += size;
        uint64_t dyn = std::min<uint64_t>(Read<uint64_t>(p), size);
        if (s.regs_index != UINT32_MAX && data_.stack.size() + dyn <= options_.max_stack_memory) {
          s.stack_begin = data_.stack.size();
          s.stack_len = static_cast<uint32_t>(dyn);
          data_.stack.insert(data_.stack.end(), bytes, bytes + dyn);
        } else if (dyn > 0) {
          if (data_.stacks_dropped++ == 0) data_.first_stack_dropped_ns = s.ts_ns;
        }
      }
    }
  }
  if (data_.thread_pid.find(s.tid) == data_.thread_pid.end()) data_.thread_pid[s.tid] = s.pid;
  data_.samples.push_back(s);
  sample_count_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace aiprof
