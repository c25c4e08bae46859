// Pairing collectives across ranks, and the per-rank figures over the pairs:
// the one routine both `aiprof analyze` of a multi-rank trace
// (cross_rank.h) and `aiprof cluster` (src/cluster/cluster_reduce.h) use.
//
// Steps: a collective belongs to the step (Trace::steps of its own rank,
// numbered by ProfilerStep#N or a "step N" annotation) whose window
// [start_N, start of the rank's next step) holds the time it was issued:
// for device activity the host call that launched it (a kernel the device
// runs late, after the next step began on the host, still belongs to the
// step that issued it), else its start. Before the first step: -1. Steps
// the model found as repetitions of a periodic op pattern number each
// rank's repetitions from 1 wherever its profile began, so they pair
// nothing: -1 for all.
//
// Pairing: per (group, type), when every rank holding it has instances in a
// numbered step, the i-th instance of step N on each such rank is one
// collective, n = the fewest instances of any of them in step N (a rank
// whose profile began or ended a step apart from the others' still pairs
// its collectives with the same step's); otherwise the i-th over the whole
// trace (pairing by position; CollectivePairing says for how many keys).
// Instances beyond n are unmatched.
//
// Step numbers that do not count the same iteration: a rank whose profiler
// started an iteration later numbers it ProfilerStep#N−1 where the others
// say #N, so pairing within step N would join different iterations (its
// ends a whole step from the others'; clock alignment would then take that
// step for a clock offset). Before pairing, each member's shift k (its step
// N + k is the reference member's step N; the reference is the member with
// the most instances in numbered steps) is found from the differences of
// its collectives' ends and the reference's, e_m − e_ref, so paired: on the
// right pairing every difference is the clocks' offset (a collective ends
// on every rank at one moment), on a wrong one it moves with the
// iterations' lengths. The k in ±kMaxStepShift (at least kStepShiftMinPairs
// pairs) whose differences spread least (median absolute deviation) is
// taken when that spread is under 1/kStepShiftMargin of the unshifted
// pairing's. Free of the clocks' offset, so no offset reads as a shift; a
// perfectly periodic job (every iteration as long) shows no shift, and
// then needs none to be told apart. Shifts are then stated in the numbers
// most members use (the reference may be the one apart; on a tie, its
// own). CollectivePairing::step_shift says which members were renumbered.
//
// Figures of one paired collective, on the clocks given (per-member
// offsets subtracted), with arrivals a_r and ends e_r:
//   wait_r = max(a) − a_r, lateness_r = a_r − min(a),
//   transfer_r = max(0, e_r − max(a)), end spread = max(e) − min(e).
// Clocks agree when the median end spread is at most kMaxEndSpreadShare of
// the median paired duration (over every member's time in every paired
// collective but the stalled ones). The median, not the mean: a few long
// collectives (a timed-out one, a long wait for a rank that came late) made
// the mean a multiple of the usual collective and any spread look small;
// torch 1.13's legacy traces, whose times count from each rank's own
// profiler start, passed with ends a median 11.0 and 13.4 ms apart where
// the median collective lasted 16.5 and 26.5 ms (test/data/crash_gloo/
// late_past_timeout, test/data/step_offset_gloo/recorded). A collective completes on every rank only once
// all have arrived, so, when the clocks agree, an instance where some rank
// ends before the last arrival, by more than that median spread (the
// clocks' own disagreement), did not complete: a peer failed in it (a crashed rank's surviving peers
// leave it with an error; its duration is no transfer) or it is mispaired.
// Such instances are counted as incomplete and left out of every per-rank
// sum (they still count in the end spread, which judges the clocks).
//
// Stalled: a peer that never arrived (crashed or hung, its trace not among
// the inputs) leaves the ranks that are there sitting in the collective
// until their timeout; all of them arrived, so on their clocks it looks
// like a long transfer. A paired collective is stalled when it is the last
// collective every member entered (the job stopped there) and on every
// member it lasted at least kStalledMinNs and kStalledFactor × the median
// of that member's other collectives. Its time is a wait for a rank not in
// the inputs, not transfer: counted (stalled, stalled_ns per member) and
// left out of the sums and of the clocks' agreement (its ends tell the
// ranks' timeouts apart, not their clocks). A peer that arrived after the others gave up is
// among the inputs: that instance is incomplete, and the members that
// arrived after the earliest end are the late ones (LateAfterEnd).
//
// Last arrival: the rank whose arrival is the latest; when two or more
// ranks share it exactly, no single rank is last (PairedArrival::tied).
#ifndef AIPROF_SRC_ANALYSIS_COMMUNICATION_COLLECTIVE_PAIRING_H_
#define AIPROF_SRC_ANALYSIS_COMMUNICATION_COLLECTIVE_PAIRING_H_

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "src/analysis/communication/collectives.h"
#include "src/model/trace.h"

namespace aiprof {

inline constexpr double kMaxEndSpreadShare = 0.25;
// Step shifts tried (above), how much less a shifted pairing's end
// differences must spread than the unshifted one's, and on how many pairs.
inline constexpr int64_t kMaxStepShift = 2;
inline constexpr double kStepShiftMargin = 4;
inline constexpr size_t kStepShiftMinPairs = 3;
// A stalled collective (above) lasted at least this long on every member
// (timeouts: gloo 30 min, NCCL's watchdog 10 min by default; users set
// seconds) ...
inline constexpr int64_t kStalledMinNs = 1'000'000'000;
// ... and this many times the median of the member's other collectives.
inline constexpr double kStalledFactor = 10;

// One instance of a collective on one rank, ns on the rank's clock.
struct CollectiveInstance {
  int64_t arrival_ns = 0, end_ns = 0;
  int64_t step = -1;  // CollectiveSteps(); -1 none
  uint32_t id = 0;    // the caller's (the multi-rank analysis: the slice row)
};

// (group id, CollectiveType as a byte); group ids are the caller's.
using CollectiveKey = std::pair<uint32_t, uint8_t>;
// One rank's instances per key, each vector in arrival order.
using CollectiveSequences = std::map<CollectiveKey, std::vector<CollectiveInstance>>;

// One collective across ranks: (member, index in that member's sequence of
// `key`) per rank that holds the key, members in the order given.
struct PairedCollective {
  CollectiveKey key;
  int64_t step = -1;  // the step it was paired within; -1 by position or before the first step
  std::vector<std::pair<uint32_t, uint32_t>> members;
};

struct CollectivePairing {
  std::vector<PairedCollective> matched;  // by key, then step, then ordinal
  uint64_t unmatched = 0;                 // instances left without a partner
  uint64_t keys_by_step = 0;              // keys held by 2+ members, paired within steps
  uint64_t keys_by_position = 0;          // ... paired by position (a holder numbers no step)
  // Per member, the number added to its step numbers to count the
  // reference member's iterations (above); all 0 when the numbers agree.
  std::vector<int64_t> step_shift;
};

// The step of each collective (same order as `collectives`), as above.
std::vector<int64_t> CollectiveSteps(const Trace& trace, const std::vector<CollectiveSlice>& collectives);

// `members[m]`: rank m's sequences (sorted by arrival). O(instances log).
CollectivePairing PairCollectives(const std::vector<const CollectiveSequences*>& members);

// Per-member sums over the completed paired collectives, on the clocks
// `offset_ns[m]` (subtracted from member m's times; empty: all 0).
struct PairedSums {
  std::vector<bool> complete;     // per paired collective (pairing.matched order)
  std::vector<bool> stalled;      // per paired collective: waited for a rank not in the inputs (above)
  std::vector<uint64_t> matched;  // completed collectives the member took part in
  std::vector<int64_t> comm_ns, wait_ns, lateness_ns, transfer_ns;
  std::vector<uint64_t> incomplete_by_member;  // incomplete ones it took part in
  uint64_t incomplete = 0;                     // paired collectives that did not complete on every rank
  std::vector<int64_t> stalled_ns;             // Σ its durations in stalled collectives
  uint64_t stalled_count = 0;                  // stalled paired collectives
  int64_t end_spread_p50_ns = -1;              // over every paired collective
  double end_spread_share = 0;                 // / median paired duration (above)
  bool clocks_agree = false;
};
PairedSums SumPairedCollectives(const std::vector<const CollectiveSequences*>& members,
                                const CollectivePairing& pairing, const std::vector<int64_t>& offset_ns = {});

// Members (indices into c.members) that arrived after another member had
// already left the collective (an incomplete one: they came after the
// others gave up), on the given clocks, by arrival.
std::vector<uint32_t> LateAfterEnd(const std::vector<const CollectiveSequences*>& members, const PairedCollective& c,
                                   const std::vector<int64_t>& offset_ns = {});

// The last arrival of one paired collective on the given clocks.
struct PairedArrival {
  uint32_t last = 0;    // index into PairedCollective::members; meaningful when tied == 1
  uint32_t tied = 0;    // members sharing the latest arrival (1: a single last rank)
  int64_t last_ns = 0;  // the latest arrival (offset subtracted)
};
PairedArrival LastArrival(const std::vector<const CollectiveSequences*>& members, const PairedCollective& c,
                          const std::vector<int64_t>& offset_ns = {});

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_COMMUNICATION_COLLECTIVE_PAIRING_H_
