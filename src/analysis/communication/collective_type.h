// What kind of collective a communication slice is, from its name or the
// profiler's "Collective name" arg.
//
// Names seen in real traces: NCCL/RCCL kernels
// ("ncclKernel_AllReduce_RING_LL_Sum_float(...)", "ncclDevKernel_SendRecv"),
// Kineto's "Collective name" arg ("allreduce", "all_gather",
// "reduce_scatter", "all_to_all", "broadcast", "send", "recv"), and HCCL
// tasks ("hcom_allReduce__586_0_1", "hcom_allGather_", "hcom_reduceScatter_",
// "hcom_alltoallv_", "hcom_send_", "hcom_receive_"). Matching ignores case
// and underscores; longer names are tried first ("allreduce" before
// "reduce").
#ifndef AIPROF_SRC_ANALYSIS_COMMUNICATION_COLLECTIVE_TYPE_H_
#define AIPROF_SRC_ANALYSIS_COMMUNICATION_COLLECTIVE_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace aiprof {

enum class CollectiveType : uint8_t {
  kAllReduce = 0,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kReduce,
  kSendRecv,  // point-to-point: send, recv, SendRecv kernels
  kBarrier,
  kOther,
};
inline constexpr size_t kCollectiveTypeCount = 9;

// "all_reduce", "all_gather", ..., "other".
const char* CollectiveTypeName(CollectiveType type);
// The name of a stored type byte (a cluster digest's): "other" for a value
// out of range.
const char* CollectiveTypeNameOfByte(uint8_t type);

// The type named by `name` (a kernel/task name or a "Collective name" arg).
CollectiveType ClassifyCollective(std::string_view name);

// Bus-bandwidth factor of nccl-tests (doc/PERFORMANCE.md): busbw = algbw ×
// factor for `ranks` participants; allreduce 2(n−1)/n, allgather,
// reducescatter and alltoall (n−1)/n, others 1.
double BusBandwidthFactor(CollectiveType type, int64_t ranks);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_COMMUNICATION_COLLECTIVE_TYPE_H_
