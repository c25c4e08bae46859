// The communication slices of a trace, read once: every device slice whose
// kind is kCollective (NCCL/RCCL kernels, HCCL group tasks), with its rank,
// device, type, group and message size. A trace without any (CPU-only
// training with the gloo backend) uses the host spans PyTorch records around
// each collective instead: user annotations named "gloo:<op>", on the host
// (device kHostDevice), where gloo runs the collective; the c10d:: ops
// enclosing them are not counted again. ("nccl:<op>" spans only time the
// launch, so they are never used.)
//
// Group: the "Process Group Name" arg (Kineto), else the track name for
// HCCL ("Group 0 Communication"), else empty. Message size: the larger of
// "In msg nelems" and "Out msg nelems" times the size of "dtype" (Kineto
// NCCL kernels); unknown otherwise. Participants: "Group size".
#ifndef AIPROF_SRC_ANALYSIS_COMMUNICATION_COLLECTIVES_H_
#define AIPROF_SRC_ANALYSIS_COMMUNICATION_COLLECTIVES_H_

#include <cstdint>
#include <vector>

#include "src/analysis/communication/collective_type.h"
#include "src/model/trace.h"

namespace aiprof {

struct CollectiveSlice {
  uint32_t slice = kNoSlice;
  int32_t rank = kNoRank;
  int32_t device = kHostDevice;
  CollectiveType type = CollectiveType::kOther;
  StringId group;          // empty string id when unknown
  double bytes = -1;       // message size; -1 when unknown
  int64_t group_size = 0;  // participants; 0 when unknown
};

// In slice order (track, start). O(slices).
std::vector<CollectiveSlice> CollectCollectives(const Trace& trace);

// Bytes per element of a c10 ScalarType name as Kineto writes it for NCCL
// ("Float" 4, "Half" 2, "BFloat16" 2, "Long" 8, "Byte" 1, ...); 0 if unknown.
int ScalarTypeBytes(std::string_view dtype);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_COMMUNICATION_COLLECTIVES_H_
