#include "src/base/mapped_inputs.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace aiprof {
namespace {

// Fixed slots, so the handler reads them without locks or allocation: a slot
// is claimed by `used`, filled, then published by a release store of `end`
// (0: empty); the handler reads `end` with acquire, so it sees the message.
constexpr int kSlots = 64;
constexpr size_t kMessageBytes = 768;
constexpr size_t kPathBytes = 1024;
struct Slot {
  std::atomic<bool> used{false};
  std::atomic<uintptr_t> begin{0}, end{0};
  char message[kMessageBytes]{};
  size_t message_bytes = 0;
  char path[kPathBytes]{};
  size_t path_bytes = 0;
};
// constinit: zero pages in .bss, no start-up loop touching them in every run.
constinit Slot slots[kSlots];

// Recovered faults: the handler takes a number from `fault_count` and
// writes the mapping's path into record number % kRecords, then publishes
// it with `seq` = number + 1 (0 while it is written).
constexpr uint64_t kRecords = 64;
struct FaultRecord {
  std::atomic<uint64_t> seq{0};
  char path[kPathBytes]{};
  size_t path_bytes = 0;
};
constinit FaultRecord records[kRecords];
std::atomic<uint64_t> fault_count{0};
std::atomic<bool> recoverable{false};
std::atomic<uintptr_t> page_bytes{4096};

std::string ShrankMessage(const std::string& path) {
  return path + ": the file shrank while it was read (truncated or rewritten by another program)";
}

// Maps zero pages over [the faulting page, the end of the slot's mapping)
// and records the fault; false when the pages could not be replaced.
bool Recover(const Slot& s, uintptr_t at, uintptr_t end) {
  const uintptr_t page = page_bytes.load(std::memory_order_relaxed);
  const uintptr_t from = at / page * page;
  const uintptr_t to = (end + page - 1) / page * page;
  void* zeros = ::mmap(reinterpret_cast<void*>(from), to - from, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  if (zeros == MAP_FAILED) return false;
  const uint64_t n = fault_count.fetch_add(1, std::memory_order_acq_rel);
  FaultRecord& r = records[n % kRecords];
  r.seq.store(0, std::memory_order_release);
  std::memcpy(r.path, s.path, s.path_bytes);
  r.path_bytes = s.path_bytes;
  r.seq.store(n + 1, std::memory_order_release);
  return true;
}

void OnBusError(int sig, siginfo_t* info, void*) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(info->si_addr);
  for (const Slot& s : slots) {
    const uintptr_t end = s.end.load(std::memory_order_acquire);
    if (end == 0 || at < s.begin.load(std::memory_order_relaxed) || at >= end) continue;
    if (recoverable.load(std::memory_order_relaxed) && Recover(s, at, end)) return;  // the read is retried
    if (::write(STDERR_FILENO, s.message, s.message_bytes) < 0) {
    }
    ::_exit(1);
  }
  // Not an input's mapping: a bug, not bad input; the default action (a core).
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

int RegisterMappedInput(const void* begin, size_t size, const std::string& path) {
  if (begin == nullptr || size == 0) return -1;
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = slots[i];
    if (s.used.exchange(true, std::memory_order_acquire)) continue;
    const std::string text =
        "aiprof: error: " + ShrankMessage(path.substr(0, 400)) + "; read a copy that nothing writes to\n";
    s.message_bytes = std::min(text.size(), kMessageBytes);
    std::memcpy(s.message, text.data(), s.message_bytes);
    s.path_bytes = std::min(path.size(), kPathBytes);
    std::memcpy(s.path, path.data(), s.path_bytes);
    s.begin.store(reinterpret_cast<uintptr_t>(begin), std::memory_order_relaxed);
    s.end.store(reinterpret_cast<uintptr_t>(begin) + size, std::memory_order_release);
    return i;
  }
  return -1;
}

void UnregisterMappedInput(int slot) {
  if (slot < 0 || slot >= kSlots) return;
  slots[slot].end.store(0, std::memory_order_release);
  slots[slot].used.store(false, std::memory_order_release);
}

void InstallMappedInputBusHandler() {
  page_bytes.store(static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)), std::memory_order_relaxed);
  struct sigaction action = {};
  action.sa_sigaction = OnBusError;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGBUS, &action, nullptr);
}

void SetMappedInputFaultsRecoverable(bool on) { recoverable.store(on, std::memory_order_relaxed); }

uint64_t RecoveredMappedInputFaults() { return fault_count.load(std::memory_order_acquire); }

std::string RecoveredMappedInputFault(uint64_t since, const std::string& path) {
  const uint64_t now = fault_count.load(std::memory_order_acquire);
  if (now - since > kRecords) return ShrankMessage(path);
  for (uint64_t n = since; n < now; ++n) {
    const FaultRecord& r = records[n % kRecords];
    // Being written, or overwritten since: assumed to be this file's.
    if (r.seq.load(std::memory_order_acquire) != n + 1) return ShrankMessage(path);
    const std::string_view faulted(r.path, r.path_bytes);
    const bool cut = r.path_bytes == kPathBytes;  // a longer path: only its start is known
    if (faulted == path ||
        (faulted.size() > path.size() && faulted.compare(0, path.size(), path) == 0 && faulted[path.size()] == '/') ||
        (cut && path.compare(0, faulted.size(), faulted) == 0)) {
      return ShrankMessage(std::string(faulted));
    }
  }
  return "";
}

}  // namespace aiprof
