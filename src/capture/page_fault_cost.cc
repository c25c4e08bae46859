#include "src/capture/page_fault_cost.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>

#include "src/base/clock.h"

namespace aiprof {
namespace {

long MinorFaults() {
  rusage u;
  if (getrusage(RUSAGE_THREAD, &u) != 0) return -1;
  return u.ru_minflt;
}

}  // namespace

PageFaultCost MeasurePageFaultCost(size_t pages, int repetitions) {
  PageFaultCost r;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t bytes = pages * page;
  char text[256];
  std::snprintf(text, sizeof(text),
                "median of %d repetitions: mmap %zu fresh anonymous %zu-byte pages (MADV_NOHUGEPAGE), write one byte "
                "per page, time minus a second pass over the same pages, divided by the minor faults getrusage "
                "counted (aiprof's own process, at capture start)",
                repetitions, pages, page);
  r.method = text;
  for (int rep = 0; rep < repetitions; ++rep) {
    void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      r.error = std::string("mmap: ") + std::strerror(errno);
      return r;
    }
    madvise(m, bytes, MADV_NOHUGEPAGE);
    volatile char* p = static_cast<volatile char*>(m);
    const long f0 = MinorFaults();
    const int64_t t0 = MonotonicNs();
    for (size_t i = 0; i < bytes; i += page) p[i] = 1;
    const int64_t t1 = MonotonicNs();
    const long f1 = MinorFaults();
    for (size_t i = 0; i < bytes; i += page) p[i] = 2;
    const int64_t t2 = MonotonicNs();
    munmap(m, bytes);
    const long faults = f1 - f0;
    if (f0 < 0 || faults <= 0) continue;
    const double ns = static_cast<double>((t1 - t0) - (t2 - t1)) / static_cast<double>(faults);
    r.runs_ns.push_back(std::max(ns, 0.0));
  }
  if (r.runs_ns.empty()) {
    r.error = "getrusage counted no minor faults while touching fresh pages";
    return r;
  }
  std::vector<double> v = r.runs_ns;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  r.median_ns = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  r.ok = true;
  return r;
}

}  // namespace aiprof
