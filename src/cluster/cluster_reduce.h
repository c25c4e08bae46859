// Reduce: the ranks' digests → the cross-rank picture of the job.
//
// Collectives are paired, and the raw figures (wait, lateness, transfer,
// the median end spread, the clock-agreement test, collectives that did not
// complete on every rank) summed, by the multi-rank analysis's own routine
// (src/analysis/communication/collective_pairing.h): within their step (a
// rank whose profile starts a step later still pairs step by step), by
// position over the whole trace for a (group, type) some holder of which
// numbers no step (keys_by_position). The steps of a rank's collectives are
// set when it is mapped (cluster_map.h), by the same routine.
//
// Clock alignment: every rank ends a collective at the same moment, so a
// rank's clock offset is estimated as the median over the completed
// instances of e_{r,i} − median_r'(e_{r',i}) (relative to the median rank;
// robust to a straggler, whose arrivals move but whose ends do not), by
// the multi-rank analysis's estimator
// (src/analysis/communication/clock_alignment.h). With `align` auto
// the offsets are applied when the raw clocks disagree (then all
// cross-rank figures are on aligned clocks and the residual spread is
// tested the same way); always/never force it.
//
// Stragglers: per instance the last-arriving rank and how much later than
// the median arrival; per rank how often it arrived last. Ranks sharing the
// last arrival exactly: no single rank is last (last_tied > 1, no rank
// counted). Ranks sharing the largest total lateness exactly: no slowest
// rank (slow_rank_unavailable says so). Slow ranks on
// total lateness: 2 ranks no test (the later one is the slowest); 3–10
// Dixon's Q at 95% (rank_outlier.h); more, the robust z-score of Iglewicz
// and Hoaglin, z = 0.6745 (x − median) / MAD, outlier above 3.5 (MAD = 0:
// 1.2533 × mean absolute deviation instead; both 0: any x above the median
// is infinitely far). For each slow rank (the outliers, else the slowest
// when there are 2 ranks), its ops against its peers': the peers are the
// nearest half of the other ranks by L1 distance between op-total vectors
// (the ranks that run the same work: in a job of pipeline stages or of
// differing shards, the global median rank runs other ops), excess = its
// total − the peers' median total of that op; ops whose total is an outlier
// among the peers (robust z of the rank's total over peers and itself >
// 3.5) first, then by excess. Collective kernels are left out (on a slow
// rank they are shorter: it waits less).
//
// Memory: per rank its steps, collective instances (arrival, end) and op
// totals: ranks × (steps + instances + ops), never events.
#ifndef AIPROF_SRC_CLUSTER_CLUSTER_REDUCE_H_
#define AIPROF_SRC_CLUSTER_CLUSTER_REDUCE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/analysis/communication/link_bandwidth.h"
#include "src/analysis/communication/rank_outlier.h"
#include "src/cluster/digest.h"

namespace aiprof {

inline constexpr double kRobustZLimit = 3.5;
inline constexpr size_t kSlowRankOpsReported = 5;
// Missing ranks are listed one by one up to this many expected ranks.
inline constexpr size_t kMaxListedRanks = 1 << 20;

enum class ClockAlign { kAuto, kAlways, kNever };

struct ClusterOptions {
  ClockAlign align = ClockAlign::kAuto;
  // Expected ranks 0..world_size-1; 0: the world size the traces state,
  // or up to the largest rank seen when that is larger or none is stated.
  int64_t world_size = 0;
};

struct ClusterRank {
  int32_t rank = kDigestNoRank;
  std::string host, source, source_format;
  uint64_t slices = 0, steps = 0, diagnostics = 0;
  int64_t span_ns = 0;
  double mean_step_ns = 0;
  int64_t device_busy_ns = 0, device_span_ns = 0;  // summed over devices
  double memory_peak_allocated = 0, memory_peak_reserved = 0, memory_capacity = 0;
  // Matched collectives; raw figures (the rank's own clock).
  uint64_t matched = 0;     // completed ones (raw clocks)
  uint64_t incomplete = 0;  // matched ones not completed on every rank (used clocks), left out of the sums
  int64_t comm_ns = 0, wait_ns = 0, lateness_ns = 0, transfer_ns = 0;
  // Σ its time in stalled collectives (collective_pairing.h): a wait for a
  // rank not in the inputs, in none of the figures above.
  int64_t stalled_wait_ns = 0;
  // Added to its step numbers to count the others' iterations (its profiler
  // started a step apart; collective_pairing.h); 0 normally. Steps and
  // collectives are reported in the shifted numbers.
  int64_t step_shift = 0;
  // Figures on aligned clocks (equal to the raw ones when not aligned).
  int64_t clock_offset_ns = 0;
  int64_t aligned_wait_ns = 0, aligned_lateness_ns = 0, aligned_transfer_ns = 0;
  uint64_t last_arrivals = 0;  // instances where it arrived last (and later than the median)
  double lateness_z = 0;       // robust z of its lateness (more than 10 ranks)
  int64_t profiler_elapse_ns = -1, profiler_wait_ns = -1, profiler_transit_ns = -1;
  int64_t profiler_idle_ns = -1;  // communication.json's Idle Time, ns; -1 absent
  // With ranks missing from the inputs (ClusterResult::missing_count > 0):
  // the part of its time after the last rank present arrived that
  // communication.json calls idle (neither transit nor a wait for a rank
  // present), i.e. a wait for the ranks not in the inputs, at most its
  // transfer. It is taken out of transfer_ns and aligned_transfer_ns. -1:
  // not measured (no ranks missing, or no communication.json).
  int64_t absent_wait_ns = -1;
  // What the importer could not read of its trace (malformed records skipped, ...).
  std::vector<DigestDiagnostic> import_diagnostics;
};

struct ClusterInstance {
  int64_t step = -1;
  std::string group;
  uint8_t type = 0;
  uint64_t ordinal = 0;  // within (group, type)
  uint32_t ranks = 0;
  int32_t last_rank = kDigestNoRank;  // none when tied
  uint32_t last_tied = 1;             // ranks sharing the last arrival exactly
  int64_t late_by_ns = 0;       // last arrival − median arrival (used clocks)
  int64_t late_by_next_ns = 0;  // last arrival − the one before it
  int64_t end_spread_ns = 0;    // max(e) − min(e), used clocks
  // "complete", "incomplete" (not completed on every rank: left out of the
  // sums) or "stalled" (every rank present waited in it for a rank not in
  // the inputs; collective_pairing.h: no last rank among those present).
  std::string state = "complete";
  int64_t waited_ns = 0;                // not complete: the longest time a rank that stayed spent in it
  std::vector<int32_t> late_after_end;  // incomplete: ranks that arrived after another had left it
};

struct ClusterStep {
  int64_t number = -1;
  uint32_t ranks = 0;
  int64_t max_ns = 0, median_ns = 0;  // step time over ranks: the job's is the max
  int32_t slowest_rank = kDigestNoRank;
  int32_t last_rank = kDigestNoRank;  // last to arrive at the step's most delayed collective
  int64_t last_late_by_ns = 0;
  std::string last_collective;        // "all_reduce #3 (group)"
  uint32_t collectives = 0;
};

struct OpDifference {
  std::string name, category;
  uint8_t kind = 0;
  uint64_t count = 0;
  int64_t total_ns = 0;
  double median_total_ns = 0;  // over the peers (0 for a peer without the op)
  double excess_ns = 0;
  double p50_ns = 0, p99_ns = 0;                  // this rank's (sketch)
  double cluster_p50_ns = 0, cluster_p99_ns = 0;  // all ranks' merged sketch
  // Robust z of its total among the peers; NaN with fewer than
  // kSlowRankOpsMinPeersForZ peers (a median and MAD of one or two values
  // say nothing: one peer always gives 0.67).
  double z = 0;
};
inline constexpr size_t kSlowRankOpsMinPeersForZ = 3;

struct SlowRankReport {
  int32_t rank = kDigestNoRank;
  bool outlier = false;
  double statistic = 0, critical = 0;
  int64_t excess_ns = 0;      // lateness − median lateness of the others
  // excess_ns over its device span, or, for a rank without device activity
  // (CPU-only, gloo), over the sum of its step times; excess_ratio_base
  // names which ("" and 0: neither is known).
  double excess_ratio = 0;
  std::string excess_ratio_base;
  uint64_t last_arrivals = 0;
  std::vector<OpDifference> ops;
};

struct ClusterTypeTime {
  int32_t rank = kDigestNoRank;  // kDigestNoRank: the whole job
  uint8_t type = 0;
  uint64_t count = 0;
  int64_t total_ns = 0, max_ns = 0;
  double bytes = 0;
  uint64_t sized = 0;
  int64_t sized_time_ns = 0, group_size = 0;
};

struct ProblemDigest {
  int32_t rank = kDigestNoRank;  // when known
  std::string source;
  std::string reason;  // "missing" for ranks without a digest
};

struct ClusterResult {
  uint64_t digests = 0, usable = 0;
  int64_t world_size_in_traces = 0;
  std::vector<ClusterRank> ranks;  // usable ranks, by rank
  std::vector<ProblemDigest> broken;
  std::vector<int32_t> missing;  // listed when at most kMaxListedRanks are expected
  uint64_t missing_count = 0;
  int64_t expected_ranks = 0;
  // Where expected_ranks comes from: "--world-size", "traces" (the world
  // size a trace states), "communication_matrix.json links" (the largest
  // rank a link names, + 1), "collective group size" (the largest group a
  // collective names) or "largest rank seen". The inputs' own figures are
  // the largest of the last four: a job of 8 ranks profiled on 2 names its
  // other 6 in its links.
  std::string expected_ranks_from;
  // The world size the inputs imply (the largest of the four above, 0 when
  // none), and the source of it: shown beside --world-size when larger.
  int64_t implied_world_size = 0;
  std::string implied_world_size_from;
  // Ranks present at or beyond --world-size (a world size that leaves out a
  // rank the inputs hold).
  std::vector<int32_t> beyond_world_size;
  // Ranks missing and no communication.json to separate the wait for them:
  // the ranks' transfer (time after the last rank present arrived) includes
  // any wait for the missing ranks.
  bool transfer_includes_absent_wait = false;
  // Cross-rank, raw clocks (the multi-rank analysis's figures).
  uint64_t matched = 0, unmatched = 0;
  uint64_t incomplete = 0;                          // matched, not completed on every rank (used clocks)
  uint64_t stalled = 0;                             // matched, waited for a rank not in the inputs
  uint64_t keys_by_step = 0, keys_by_position = 0;  // (group, type) pairs paired within steps / by position
  int64_t raw_end_spread_p50_ns = -1;
  double raw_end_spread_share = 0;
  bool raw_clocks_agree = false;
  // Alignment.
  bool aligned = false;
  int64_t aligned_end_spread_p50_ns = -1;
  double aligned_end_spread_share = 0;
  bool aligned_clocks_agree = false;
  int64_t max_abs_offset_ns = 0;
  bool trusted = false;  // the clocks used agree
  // Wait ratio: Σ wait / Σ collective time.
  std::optional<double> wait_ratio;
  std::string wait_ratio_source, wait_ratio_unavailable;
  // Slow ranks.
  OutlierTest test = OutlierTest::kNone;  // for 3–10 ranks
  std::string test_name = "none";         // "none", "dixon_q" or "robust_z"
  std::string slow_rank_unavailable;  // why there is no slowest rank
  std::optional<SlowRankReport> slowest;  // only when the clocks used agree
  std::vector<SlowRankReport> slow_ranks;  // outliers, most late first (the slowest alone for 2 ranks)
  std::vector<ClusterInstance> instances;  // by step, then arrival order of the key
  std::vector<ClusterStep> steps;
  std::vector<ClusterTypeTime> type_times;  // per (rank, type), then job totals per type
  std::vector<LinkBandwidth> links;         // slowest first
};

class ClusterReducer {
 public:
  explicit ClusterReducer(ClusterOptions options);
  ~ClusterReducer();
  // Takes what the reduce needs from `d` and drops the rest. `digest` names
  // where the digest was read from (a file; empty when the reduce made it
  // itself): a second digest of a rank is reported naming both digests and
  // both inputs, so that the user knows which file to delete.
  void Add(const RankDigest& d, const std::string& digest = "");
  // A digest that could not be read at all (`rank` from its file name, when it tells).
  void AddBroken(const std::string& source, const std::string& reason, int32_t rank = kDigestNoRank);
  ClusterResult Finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Reads every *.digest file under `dir` (sorted by name; every digest of a
// file, as they concatenate) and reduces them. A file that cannot be read,
// bytes in it that are not a whole digest, and a *.digest that is not a
// regular file (never opened: a FIFO would block) are listed in `broken`
// with the reason, naming the file (and the byte offset).
StatusOr<ClusterResult> ReduceDigestFolder(const std::string& dir, const ClusterOptions& options);

}  // namespace aiprof

#endif  // AIPROF_SRC_CLUSTER_CLUSTER_REDUCE_H_
