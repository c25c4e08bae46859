// Page faults per slice, for the what-if clause `remove-page-faults`
// (docs/whatif.md): each recorded fault is charged to the innermost slice
// that encloses its time on the faulting thread's tracks (same pid and tid;
// the latest-starting one across tracks), whose self time it was spent in.
// Kept apart from page_faults.h, which analyze.h includes.
#ifndef AIPROF_SRC_ANALYSIS_PAGE_FAULTS_FAULT_SLICES_H_
#define AIPROF_SRC_ANALYSIS_PAGE_FAULTS_FAULT_SLICES_H_

#include <cstdint>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

struct FaultsBySlice {
  bool has_records = false;
  bool cost_known = false;
  double cost_ns = 0;             // capture.page_fault_cost_ns
  uint64_t period = 1;            // faults per record
  std::vector<uint32_t> faults;   // per slice (records x period), empty without records
  uint64_t outside_slices = 0;    // faults no slice encloses (kept by the replay)
};

// O(slices + faults log faults). Step markers (ProfilerStep…) are not
// charged: a fault in a step outside every op is outside_slices.
FaultsBySlice ComputeFaultsBySlice(const Trace& trace);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_PAGE_FAULTS_FAULT_SLICES_H_
