// Communication across ranks: who waits for whom, the slow rank, slow links.
//
// Matching, and the figures of one matched collective (wait, lateness,
// transfer, end spread, the clocks' agreement, collectives that did not
// complete): collective_pairing.h, the routine `aiprof cluster` uses too.
// Collectives are paired within their step (each rank's own step table);
// by position over the whole trace only for a (group, type) some rank of
// which numbers no step (CrossRankResult::keys_by_position says how many).
// When the clocks do not agree, they are aligned by the collectives' ends
// (clock_alignment.h, the estimator `aiprof cluster` uses: it assumes a
// collective ends at the same moment on every rank) and the figures summed
// again on the aligned clocks; when those agree, every wait, lateness,
// transfer and the slow rank are on them (aligned_from_collectives, each
// rank's clock_offset_ns). When they still do not agree (or the
// collectives do not pair one to one) the derived wait, lateness and slow
// rank are not trusted.
// Where torch_npu's communication.json is present, its own per-rank split
// (Elapse, Wait, Transit, Synchronization, Idle time from the "Total Op
// Info" rows) is kept beside ours and preferred for comm_wait_ratio.
//
// Slow rank: the rank with the largest total lateness, tested with
// rank_outlier.h (Dixon's Q for 3–10 ranks, 3σ above; 2 ranks get no
// test). Its excess = its lateness − the median lateness of the other ranks
// (what the others spend waiting for it), as a share of its device span
// (of the sum of its step times on a rank without device activity).
// When two or more ranks share the largest lateness exactly, no single rank
// is slowest: no slow rank, and slow_rank_tied says how many share it.
//
// Slow links: link_bandwidth.h.
//
// Expected ranks (ExpectRanks, the rule `aiprof cluster` uses too): the
// largest of the world size a trace states, the ranks communication_matrix
// .json's links name (largest + 1), the largest group a collective names,
// and the largest rank present + 1. A job of 8 ranks profiled on 2 names the
// other 6 in its links. With ranks missing, the time after the last rank
// present arrived holds the wait for them: where communication.json gives
// a rank's idle time (neither transit nor a wait for a peer that arrived),
// that is taken out of its transfer as absent_wait_ns; without it the two
// cannot be told apart (CrossRankResult::transfer_includes_absent_wait).
#ifndef AIPROF_SRC_ANALYSIS_COMMUNICATION_CROSS_RANK_H_
#define AIPROF_SRC_ANALYSIS_COMMUNICATION_CROSS_RANK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/analysis/common/intervals.h"
#include "src/analysis/communication/clock_alignment.h"
#include "src/analysis/communication/collective_pairing.h"
#include "src/analysis/communication/collectives.h"
#include "src/analysis/communication/link_bandwidth.h"
#include "src/analysis/communication/rank_outlier.h"
#include "src/model/trace.h"

namespace aiprof {

struct RankCommunication {
  int32_t rank = kNoRank;
  uint64_t matched = 0;     // completed collectives matched with the other ranks
  uint64_t incomplete = 0;  // matched ones that did not complete on every rank (left out of the sums)
  int64_t comm_ns = 0;      // Σ durations of the completed ones
  int64_t wait_ns = 0, lateness_ns = 0, transfer_ns = 0;
  // Added to its step numbers to pair with the other ranks' iterations
  // (collective_pairing.h: its profiler started a step apart); 0 normally.
  int64_t step_shift = 0;
  int64_t stalled_ns = 0;  // Σ its time in stalled collectives: waiting for a rank not in the inputs
  // Subtracted from its times when CrossRankResult::aligned_from_collectives; else 0.
  int64_t clock_offset_ns = 0;
  int64_t span_ns = 0;   // first to last device activity of the rank
  int64_t steps_ns = 0;  // Σ the durations of its steps (Trace::steps of the rank)
  // communication.json's figures, ns; -1 when the file is absent.
  int64_t profiler_elapse_ns = -1, profiler_wait_ns = -1, profiler_transit_ns = -1;
  int64_t profiler_sync_ns = -1, profiler_idle_ns = -1;
  // With ranks missing (CrossRankResult::missing_count > 0): its
  // communication.json idle, at most its transfer, taken out of
  // transfer_ns: the wait for the ranks not in the inputs. -1 not measured.
  int64_t absent_wait_ns = -1;
};

// The largest rank a communication_matrix.json link ("<src>-<dst>") names;
// -1 when the link is not two rank numbers joined by '-'.
int64_t LargestLinkRank(std::string_view link);

struct ExpectedRanks {
  int64_t count = 0;
  // "traces" (a stated world size), "communication_matrix.json links",
  // "collective group size" or "largest rank seen"; "" when count is 0.
  std::string from;
};
// The largest of the four (ties go to the first named).
ExpectedRanks ExpectRanks(int64_t stated_world_size, int64_t link_world, int64_t group_world,
                          int64_t largest_rank_seen);

struct SlowRank {
  int32_t rank = kNoRank;
  OutlierResult test;    // on per-rank lateness
  int64_t excess_ns = 0;  // lateness − median lateness of the others (≥ 0)
  // excess / the rank's device span, or, for a rank without device
  // activity (CPU-only, gloo), / the sum of its step times: the rule
  // `aiprof cluster` judges CPU ranks by (docs/cluster.md). None with
  // neither; excess_ratio_base names which ("its device span", "the sum of
  // its step times").
  std::optional<double> excess_ratio;
  std::string excess_ratio_base;
};

// A matched collective that did not complete normally (collective_pairing.h):
// stalled — every rank in the inputs sat in it until it ended, waiting for
// a rank not in the inputs (crashed or hung) — or incomplete with ranks that
// arrived after another had already left it (after the others gave up).
struct FailedCollective {
  int64_t step = -1;
  CollectiveType type = CollectiveType::kOther;
  StringId group;
  bool stalled = false;
  std::vector<int32_t> ranks;       // its members, by rank
  std::vector<int32_t> late_ranks;  // incomplete: arrived after another had left, by arrival
  int64_t waited_ns = 0;            // the longest time a member that was there spent in it
  int64_t first_arrival_ns = 0;
};
inline constexpr size_t kMaxMissingRanksListed = 1024;
// FailedCollectives listed at most (all are counted).
inline constexpr size_t kMaxFailedCollectivesListed = 20;

struct CrossRankResult {
  // Ranks the inputs imply (ExpectRanks), and those of them not in the
  // trace (listed up to kMaxMissingRanksListed, all counted).
  ExpectedRanks expected;
  uint64_t missing_count = 0;
  std::vector<int32_t> missing;
  // Ranks missing and some rank with matched collectives has no
  // communication.json idle to separate the wait for them from transfer.
  bool transfer_includes_absent_wait = false;
  std::vector<RankCommunication> ranks;  // every rank with collectives or communication.json, by rank
  uint64_t matched = 0;                  // collectives matched across ranks
  uint64_t incomplete = 0;               // of those, not completed on every rank (a peer failed in it)
  uint64_t stalled = 0;                  // of those, stalled: waited for a rank not in the inputs
  // Failed collectives (FailedCollective: stalled, or some rank arrived after
  // another had left), all of them (`failed` lists the first few), and each
  // wait in them of a rank that was there: [arrival, end) of its slice, in
  // trace time, one per rank and collective (not merged: ranks add up).
  uint64_t failed_count = 0;
  Intervals failed_waits;
  uint64_t unmatched = 0;                // collective slices left without a partner
  // Stalled ones and incomplete ones with late ranks, in pairing order
  // (first kMaxFailedCollectivesListed).
  std::vector<FailedCollective> failed;
  // (group, type) pairs held by 2+ ranks, paired within steps / by position
  // (a rank holding it numbers no step: the i-th over the whole trace).
  uint64_t keys_by_step = 0, keys_by_position = 0;
  // On the clocks the figures use (aligned when aligned_from_collectives):
  int64_t end_spread_p50_ns = -1;  // median of max(e) − min(e) per matched collective
  double end_spread_share = 0;     // end_spread_p50_ns / median matched collective duration
  bool clocks_agree = false;       // matched > 0 and end_spread_share ≤ kMaxEndSpreadShare
  // On the traces' own clocks (the same as above unless aligned).
  int64_t raw_end_spread_p50_ns = -1;
  double raw_end_spread_share = 0;
  // Alignment by collective ends (clock_alignment.h), tried when the raw
  // clocks disagree: the spread it left (-1: not tried), and whether the
  // aligned clocks agree and so every figure here is on them.
  int64_t aligned_end_spread_p50_ns = -1;
  double aligned_end_spread_share = 0;
  bool aligned_from_collectives = false;
  std::optional<SlowRank> slow_rank;  // when ≥ 2 ranks have matched collectives and no tie
  uint32_t slow_rank_tied = 0;        // > 1: that many ranks share the largest lateness
  std::vector<LinkBandwidth> links;   // slowest first; empty without communication_matrix.json
  // Each completed matched collective's slices, one per rank (by rank): the
  // pairing other analyses join ranks by (the critical path's collectives).
  // Only on the traces' own clocks: a join compares the slices' trace times
  // across ranks, which the offsets do not move, so empty when
  // aligned_from_collectives.
  std::vector<std::vector<uint32_t>> paired_slices;
  // Per paired_slices entry, the slice of the last arrival (LastArrival,
  // collective_pairing.h); kNoSlice when two or more share it exactly.
  std::vector<uint32_t> paired_last;
  // Each completed matched collective's lateness per member, on the clocks
  // the figures use: what SlowRankExcessWithin sums over a window.
  struct MemberLateness {
    int32_t rank = kNoRank;
    int64_t arrival_ns = 0;  // trace time (the rank's own clock)
    int64_t lateness_ns = 0;
  };
  std::vector<std::vector<MemberLateness>> paired_lateness;
};

// The slow rank's excess (SlowRank::excess_ns's rule: its lateness − the
// median lateness of the other ranks with matched collectives) over only
// the completed collectives whose arrival on the slow rank lies in
// `window` (merged trace-time intervals: the steady steps of that rank), so
// that an excess per steady step divides the excess of those steps, not of
// the warm-up too. 0 without a slow rank; `collectives`, when given, gets
// how many collectives were summed.
int64_t SlowRankExcessWithin(const CrossRankResult& r, const Intervals& window, uint64_t* collectives = nullptr);

// `steps`: CollectiveSteps(trace, collectives), same order; the 2-argument
// form computes them.
CrossRankResult ComputeCrossRank(const Trace& trace, const std::vector<CollectiveSlice>& collectives,
                                 const std::vector<int64_t>& steps);
CrossRankResult ComputeCrossRank(const Trace& trace, const std::vector<CollectiveSlice>& collectives);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_COMMUNICATION_CROSS_RANK_H_
