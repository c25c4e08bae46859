// Memory peaks from PyTorch "[memory]" instant events: per (rank, device
// type, device id), the peak "Total Allocated" and "Total Reserved", when
// they happened, and the innermost slice on the event's thread enclosing
// that moment (the op that allocated).
//
// memory_peak_util needs the device's capacity: "totalGlobalMem" of that
// device in the trace's deviceProperties; otherwise it is unavailable.
#ifndef AIPROF_SRC_ANALYSIS_MEMORY_MEMORY_PEAKS_H_
#define AIPROF_SRC_ANALYSIS_MEMORY_MEMORY_PEAKS_H_

#include <cstdint>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

class MetricSet;

struct MemoryPeak {
  int32_t rank = kNoRank;
  int64_t device_type = 0;  // PyTorch's: 0 CPU, 1 CUDA, ...
  int64_t device_id = -1;
  uint64_t events = 0;
  double peak_allocated = 0, peak_reserved = 0;
  int64_t peak_allocated_ts_ns = 0;
  uint32_t peak_allocated_op = kNoSlice;  // enclosing slice, or kNoSlice
  double capacity_bytes = 0;               // 0 when unknown
};

struct MemoryResult {
  std::vector<MemoryPeak> devices;  // by (rank, type, id)
};

// Linear in instants (plus a per-track binary search each).
MemoryResult ComputeMemoryPeaks(const Trace& trace);

// Publishes memory_peak_allocated_bytes, memory_peak_reserved_bytes,
// memory_peak_util (from accelerators when the trace has any, else CPU) and
// "memory_pressure" evidence.
void PublishMemoryPeaks(const Trace& trace, const MemoryResult& result, MetricSet* metrics);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_MEMORY_MEMORY_PEAKS_H_
