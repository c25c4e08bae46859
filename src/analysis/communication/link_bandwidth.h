// Slow links: torch_npu communication_matrix.json, per (rank, "src-dst")
// link, summed over the "*-total@*" rows (all rows when there are none):
// bandwidth = Σ Transit Size / Σ Transit Time (MB as written, taken as
// 10^6 bytes). LOCAL links and links that moved less than 1 MB (latency
// bound) are not judged. A link is slow when its bandwidth is below 80% of
// the median of the judged links of its transport type (HCCS, PCIE, RDMA,
// SIO, ...), given at least 3 of them.
#ifndef AIPROF_SRC_ANALYSIS_COMMUNICATION_LINK_BANDWIDTH_H_
#define AIPROF_SRC_ANALYSIS_COMMUNICATION_LINK_BANDWIDTH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

inline constexpr double kSlowLinkBandwidthShare = 0.8;
inline constexpr double kMinJudgedLinkBytes = 1e6;
inline constexpr size_t kMinLinksToCompare = 3;

struct LinkBandwidth {
  int32_t rank = kNoRank;
  std::string link;       // "src-dst" as written
  std::string transport;  // "HCCS", "PCIE", "RDMA", "SIO", "LOCAL", ...
  double bytes = 0;
  double time_ns = 0;
  double bandwidth_bytes_per_second = 0;
  double transport_median_bytes_per_second = 0;  // 0 when not judged
  bool judged = false;
  bool slow = false;
};

// Per (rank, link), slowest first; empty without communication_matrix.json.
std::vector<LinkBandwidth> ComputeLinkBandwidths(const Trace& trace);

// Judges `links` (rank, link, transport, bytes, time_ns and bandwidth set)
// against their transport's median as above and sorts them slowest first:
// what ComputeLinkBandwidths does after reading the matrix. The cluster
// reduce calls it on the links of every rank's digest.
void JudgeAndSortLinks(std::vector<LinkBandwidth>* links);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_COMMUNICATION_LINK_BANDWIDTH_H_
