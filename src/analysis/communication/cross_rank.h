// Communication across ranks: who waits for whom, the slow rank, slow links.
//
// Matching: the i-th collective of a (group, type) on one rank is the same
// collective as the i-th of that (group, type) on every other rank that has
// it (ranks run collectives of one group in the same order); surplus
// instances on some ranks are counted as unmatched. For one matched
// collective with arrival (start) a_r and end e_r on rank r:
//   wait_r      = max(a) − a_r            time r waits for the last rank to arrive
//   lateness_r  = a_r − min(a)            how late r arrives
//   transfer_r  = max(0, e_r − max(a))    time in the collective once all ranks are in
// summed over collectives per rank. Arrival times compare clocks across
// ranks; the median spread of end times (all ranks finish a collective
// together) shows how well those clocks agree: when it exceeds 25% of the
// mean matched collective's duration, the clocks are not aligned (or the
// collectives do not pair one to one) and the derived wait, lateness and
// slow rank are not trusted.
// Where torch_npu's communication.json is present, its own per-rank split
// (Elapse, Wait, Transit, Synchronization, Idle time from the "Total Op
// Info" rows) is kept beside ours and preferred for comm_wait_ratio.
//
// Slow rank: the rank with the largest total lateness, tested with
// rank_outlier.h (Dixon's Q for 3–10 ranks, 3σ above; 2 ranks get no
// test). Its excess = its lateness − the median lateness of the other ranks
// (what the others spend waiting for it), as a share of its device span.
//
// Slow links: link_bandwidth.h.
#ifndef AIPROF_SRC_ANALYSIS_COMMUNICATION_CROSS_RANK_H_
#define AIPROF_SRC_ANALYSIS_COMMUNICATION_CROSS_RANK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/analysis/communication/collectives.h"
#include "src/analysis/communication/link_bandwidth.h"
#include "src/analysis/communication/rank_outlier.h"
#include "src/model/trace.h"

namespace aiprof {

inline constexpr double kMaxEndSpreadShare = 0.25;

struct RankCommunication {
  int32_t rank = kNoRank;
  uint64_t matched = 0;  // collectives matched with the other ranks
  int64_t comm_ns = 0;   // Σ durations of those collectives
  int64_t wait_ns = 0, lateness_ns = 0, transfer_ns = 0;
  int64_t span_ns = 0;   // first to last device activity of the rank
  // communication.json's figures, ns; -1 when the file is absent.
  int64_t profiler_elapse_ns = -1, profiler_wait_ns = -1, profiler_transit_ns = -1;
  int64_t profiler_sync_ns = -1, profiler_idle_ns = -1;
};

struct SlowRank {
  int32_t rank = kNoRank;
  OutlierResult test;    // on per-rank lateness
  int64_t excess_ns = 0;  // lateness − median lateness of the others (≥ 0)
  double excess_ratio = 0;  // excess / the rank's device span
};

struct CrossRankResult {
  std::vector<RankCommunication> ranks;  // every rank with collectives or communication.json, by rank
  uint64_t matched = 0;    // collectives matched across ranks
  uint64_t unmatched = 0;  // collective slices left without a partner
  int64_t end_spread_p50_ns = -1;  // median of max(e) − min(e) per matched collective
  double end_spread_share = 0;     // end_spread_p50_ns / mean matched collective duration
  bool clocks_agree = false;       // matched > 0 and end_spread_share ≤ kMaxEndSpreadShare
  std::optional<SlowRank> slow_rank;  // when ≥ 2 ranks have matched collectives
  std::vector<LinkBandwidth> links;   // slowest first; empty without communication_matrix.json
};

CrossRankResult ComputeCrossRank(const Trace& trace, const std::vector<CollectiveSlice>& collectives);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_COMMUNICATION_CROSS_RANK_H_
