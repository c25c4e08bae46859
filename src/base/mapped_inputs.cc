#include "src/base/mapped_inputs.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace aiprof {
namespace {

// Fixed slots, so the handler reads them without locks or allocation: a slot
// is claimed by `used`, filled, then published by a release store of `end`
// (0: empty); the handler reads `end` with acquire, so it sees the message.
constexpr int kSlots = 64;
constexpr size_t kMessageBytes = 768;
struct Slot {
  std::atomic<bool> used{false};
  std::atomic<uintptr_t> begin{0}, end{0};
  char message[kMessageBytes];
  size_t message_bytes = 0;
};
Slot slots[kSlots];

void OnBusError(int sig, siginfo_t* info, void*) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(info->si_addr);
  for (const Slot& s : slots) {
    const uintptr_t end = s.end.load(std::memory_order_acquire);
    if (end == 0 || at < s.begin.load(std::memory_order_relaxed) || at >= end) continue;
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
    const std::string text = "aiprof: error: " + path.substr(0, 400) +
                             ": the file shrank while it was read (truncated or rewritten by another program); read "
                             "a copy that nothing writes to\n";
    s.message_bytes = std::min(text.size(), kMessageBytes);
    std::memcpy(s.message, text.data(), s.message_bytes);
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
  struct sigaction action = {};
  action.sa_sigaction = OnBusError;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGBUS, &action, nullptr);
}

}  // namespace aiprof
