// The cost of one first-touch minor page fault on this machine, measured by
// aiprof trace at capture start and stored in the trace's metadata
// (capture.page_fault_cost_ns, docs/capture.md "Page faults").
#ifndef AIPROF_SRC_CAPTURE_PAGE_FAULT_COST_H_
#define AIPROF_SRC_CAPTURE_PAGE_FAULT_COST_H_

#include <cstddef>
#include <string>
#include <vector>

namespace aiprof {

struct PageFaultCost {
  bool ok = false;
  double median_ns = 0;           // median over the repetitions
  std::vector<double> runs_ns;    // per repetition: ns per fault
  std::string method;             // how it was measured, for the metadata
  std::string error;              // why not, when !ok
};

// Per repetition: mmap `pages` fresh anonymous pages (MADV_NOHUGEPAGE, so
// each 4 KiB page faults on its own), write one byte per page (timed,
// CLOCK_MONOTONIC), write them again (timed: the same loop without faults),
// count the faults taken with getrusage(RUSAGE_THREAD) around the first
// pass, munmap; ns per fault = (first - second) / faults. The result is the
// median of the repetitions.
PageFaultCost MeasurePageFaultCost(size_t pages = 1024, int repetitions = 5);

}  // namespace aiprof

#endif  // AIPROF_SRC_CAPTURE_PAGE_FAULT_COST_H_
