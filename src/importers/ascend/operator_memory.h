// torch_npu's per-operator memory files: operator_memory.csv (one row per
// tensor allocation) and l2_cache.csv (per-task L2 hit and victim rates).
//
// operator_memory.csv → one instant per allocation on a per-device thread
// track "operator memory NPU:<n>" (Layer::kDevice, process label "operator
// memory"), at Allocation Time, named after the operator (Name), category
// "operator_memory", with integer args in bytes and ns converted exactly from
// the decimal text:
//   size_bytes                        Size(KB) × 1024
//   release_ts_ns, duration_ns        Release Time(us), Duration(us); absent
//                                     when the tensor outlived the capture
//   alloc_total_allocated_bytes, alloc_total_reserved_bytes,
//   alloc_total_active_bytes,
//   release_total_allocated_bytes, ... (MB) × 1048576, each when present
// Instants, not slices: allocations overlap without nesting, and slices on a
// device track would count as device activity. The "Total" columns belong to
// the allocator that made the allocation (PTA for aten:: ops, GE for cann::
// ops), so the combined peak comes from memory_record.csv's PTA+GE rows.
#ifndef AIPROF_SRC_IMPORTERS_ASCEND_OPERATOR_MEMORY_H_
#define AIPROF_SRC_IMPORTERS_ASCEND_OPERATOR_MEMORY_H_

#include <cstdint>
#include <string>

#include "src/base/status.h"

namespace aiprof {

class TraceBuilder;

inline constexpr char kOperatorMemoryCategory[] = "operator_memory";

// Imports operator_memory.csv (before Finalize). Rows without a usable name,
// size, allocation time or NPU device are counted as "bad_operator_memory_row".
Status ImportOperatorMemory(const std::string& path, int32_t rank, TraceBuilder* builder);

// Joins l2_cache.csv rows (after Finalize) to the device slice of `rank`
// with the same name, "Task Id" arg and stream (tid); each numeric rate
// ("Hit Rate", "Victim Rate"; N/A skipped) becomes an op metric with source
// "l2_cache.csv". Unmatched rows are kept unjoined and counted as
// "l2_cache_row_unmatched".
Status JoinL2Cache(const std::string& path, int32_t rank, TraceBuilder* builder);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_ASCEND_OPERATOR_MEMORY_H_
