// Allocated memory over time per device, for charts: from PyTorch's
// [memory] instants ("Total Allocated") and torch_npu's memory_record.csv
// counter tracks ("... Total Allocated(MB) NPU:n"). Each series is
// down-sampled to at most `max_points` points by keeping, per time bucket,
// the largest value (so the peak is never lost).
#ifndef AIPROF_SRC_ANALYSIS_MEMORY_MEMORY_SERIES_H_
#define AIPROF_SRC_ANALYSIS_MEMORY_MEMORY_SERIES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

struct MemorySeries {
  std::string label;               // "rank 0 CUDA:0", "NPU:0 PTA+GE"
  std::vector<int64_t> ts_ns;      // ascending
  std::vector<double> bytes;       // allocated at ts_ns[i]
  double peak_bytes = 0;           // over all samples, before down-sampling
  bool deltas = false;             // while building: bytes are signed per-event sizes
};

// Linear in instants + counters (one sort per series).
std::vector<MemorySeries> ComputeMemorySeries(const Trace& trace, size_t max_points);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_MEMORY_MEMORY_SERIES_H_
