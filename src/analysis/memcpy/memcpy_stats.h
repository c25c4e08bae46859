// Memory copies by direction: count, bytes, time and share of step time.
//
// Direction comes from the copy's name (CUPTI "Memcpy HtoD (Pageable ->
// Device)", "Memcpy DtoH (Device -> Pinned)", "Memcpy DtoD", "Memcpy PtoP";
// a name with none of these is "other"); bytes from its "bytes" arg.
// Pageable: the name says "Pageable". Synchronous: launched by a runtime call
// whose name contains "Memcpy" but not "Async" (cudaMemcpy, aclrtMemcpy).
// Share of step = copy time inside steps / total step time.
#ifndef AIPROF_SRC_ANALYSIS_MEMCPY_MEMCPY_STATS_H_
#define AIPROF_SRC_ANALYSIS_MEMCPY_MEMCPY_STATS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "src/model/trace.h"

namespace aiprof {

class MetricSet;

enum class CopyDirection : uint8_t { kHostToDevice = 0, kDeviceToHost, kDeviceToDevice, kPeerToPeer, kOther };
inline constexpr size_t kCopyDirectionCount = 5;
const char* CopyDirectionName(CopyDirection d);
CopyDirection ClassifyCopy(std::string_view name);

struct CopyTotals {
  uint64_t count = 0;
  double bytes = 0;
  uint64_t with_bytes = 0;  // copies that carry a "bytes" arg
  int64_t time_ns = 0;
};

struct MemcpyStats {
  std::array<CopyTotals, kCopyDirectionCount> by_direction{};
  uint64_t pageable = 0, synchronous = 0, total = 0;
  int64_t in_steps_ns = 0, step_time_ns = 0;
};

MemcpyStats ComputeMemcpyStats(const Trace& trace);

// Publishes pageable_memcpy_count, memcpy_step_ratio and "memcpy" evidence.
// (memcpy_ratio, a share of device busy time, comes from the breakdown.)
void PublishMemcpyStats(const Trace& trace, const MemcpyStats& stats, MetricSet* metrics);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_MEMCPY_MEMCPY_STATS_H_
