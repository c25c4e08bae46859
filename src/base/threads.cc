#include "src/base/threads.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <thread>

namespace aiprof {
namespace {
std::atomic<size_t> g_threads{0};
}  // namespace

size_t AvailableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<size_t>(n);
  }
  unsigned hc = std::thread::hardware_concurrency();
  return hc > 0 ? hc : 1;
}

size_t WorkerThreads() {
  size_t n = g_threads.load(std::memory_order_relaxed);
  // Each parse worker keeps a few MiB of batches in flight; past 16 the
  // reader is the limit, so more only costs memory unless asked for.
  return n > 0 ? n : std::min<size_t>(AvailableCores(), 16);
}

void SetWorkerThreads(size_t n) { g_threads.store(n, std::memory_order_relaxed); }

}  // namespace aiprof
