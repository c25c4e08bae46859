// Memory peaks per (rank, device type, device id): the peak allocated and
// reserved bytes, when the allocated peak happened and during which op.
//
// Two sources:
//   - PyTorch "[memory]" instant events: "Total Allocated" / "Total
//     Reserved"; the op is the innermost slice on the event's thread
//     enclosing that moment (the op that allocated).
//   - torch_npu memory_record.csv counters (tracks of process "memory
//     (memory_record.csv)" named "<Component> Total Allocated(MB) NPU:<n>"):
//     the PTA+GE component (the whole device allocator: PyTorch adapter plus
//     graph engine), else PTA, else GE; MB × 2^20 → bytes (the file's MB
//     values are multiples of 2^-20, so the double is exact). The allocation
//     that makes the peak is the operator_memory.csv record (instant of
//     category "operator_memory" on that NPU) allocated at the peak's
//     timestamp, else the last one before it; the op is the innermost host
//     slice of that rank enclosing the peak. A device seen in both sources
//     keeps the memory_record.csv figures.
// The first sample reaching the maximum is the peak's time.
//
// memory_peak_util needs the device's capacity: "totalGlobalMem" of that
// device in the trace's deviceProperties; otherwise it is unavailable.
#ifndef AIPROF_SRC_ANALYSIS_MEMORY_MEMORY_PEAKS_H_
#define AIPROF_SRC_ANALYSIS_MEMORY_MEMORY_PEAKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

class MetricSet;

// PyTorch's device type for torch_npu devices (c10::DeviceType::PrivateUse1).
inline constexpr int64_t kNpuDeviceType = 20;
inline constexpr uint32_t kNoInstant = UINT32_MAX;

struct MemoryPeak {
  int32_t rank = kNoRank;
  int64_t device_type = 0;  // PyTorch's: 0 CPU, 1 CUDA, ..., 20 NPU (kNpuDeviceType)
  int64_t device_id = -1;
  uint64_t events = 0;
  double peak_allocated = 0, peak_reserved = 0;
  int64_t peak_allocated_ts_ns = 0;
  uint32_t peak_allocated_op = kNoSlice;  // enclosing slice, or kNoSlice
  double capacity_bytes = 0;               // 0 when unknown
  // memory_record.csv only: component used ("PTA+GE", "PTA", "GE") and the
  // operator_memory allocation at or just before the peak (kNoInstant if none).
  std::string component;
  uint32_t peak_allocation = kNoInstant;  // row in Trace::instants
};

struct MemoryResult {
  std::vector<MemoryPeak> devices;  // by (rank, type, id)
  // Without any peak: instants with a numeric "Bytes" but no "Total
  // Allocated" (older Kineto's [memory] events): each allocation's signed
  // size only, so the allocator's total is not in the trace (the report's
  // chart plots their running sum, net since the trace began).
  uint64_t bytes_only_events = 0;
};

// Linear in instants and counters (plus per-track binary searches).
MemoryResult ComputeMemoryPeaks(const Trace& trace);

// Why there is no peak (result.devices empty): no memory events at all, or
// [memory] events carrying Bytes only. The net since the trace began is not
// published as the peak: memory allocated before the trace (weights, the
// caching allocator's blocks) is not in it, so it understates the peak by an
// unknown amount, and memory_peak_util against the device's capacity with it.
std::string NoMemoryPeakReason(const MemoryResult& result);

// One line: the peak, device, time, the allocation that made it and the op.
std::string DescribePeak(const Trace& trace, const MemoryPeak& peak);

// Publishes memory_peak_allocated_bytes, memory_peak_reserved_bytes,
// memory_peak_util (from accelerators when the trace has any, else CPU) and
// "memory_pressure" evidence.
void PublishMemoryPeaks(const Trace& trace, const MemoryResult& result, MetricSet* metrics);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_MEMORY_MEMORY_PEAKS_H_
