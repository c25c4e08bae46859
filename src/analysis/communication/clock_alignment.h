// Aligning the ranks' clocks by the ends of their paired collectives: the
// one estimator `aiprof analyze` of a multi-rank trace (cross_rank.h) and
// `aiprof cluster` (src/cluster/cluster_reduce.h) both use.
//
// Assumption: a collective ends at the same moment on every rank (none can
// leave an all-reduce before the last rank's data is in), so the difference
// of two ranks' end times is the difference of their clocks. A rank's
// offset is the median over the collectives used of
//   e_{r,i} − median_{r'}(e_{r',i})
// (relative to the median rank: robust to a straggler, whose arrivals move
// but whose ends do not, and to a few collectives that end apart). It is
// subtracted from the rank's times. Differences are taken relative to the
// first member's end: epoch nanoseconds (~1.8e18) are not exact in a
// double (steps of 256 ns), their differences are.
//
// Collectives used: the completed ones (PairedSums::complete), not the
// stalled ones (every rank present sat in it until its own timeout: its
// ends tell the timeouts apart, not the clocks) nor the incomplete ones (a
// rank left before the last arrived: its end is no common moment). On
// clocks that disagree an incomplete collective cannot be told (a spread
// that large marks none), so the offsets are estimated from the
// non-stalled ones, the figures summed on them, and, when that finds
// incomplete ones, estimated once more without them.
//
// Where collectives do not end together on the true clock (gloo's CPU
// all-reduce ends its ranks a few ms apart; a broadcast's root may leave
// first; point-to-point ends differ by the transfer), the offset takes in
// that systematic difference and the aligned wait and lateness move with
// it; the residual end spread is tested as the raw one (kMaxEndSpreadShare),
// so a pairing whose ends cannot be made to agree stays untrusted.
#ifndef AIPROF_SRC_ANALYSIS_COMMUNICATION_CLOCK_ALIGNMENT_H_
#define AIPROF_SRC_ANALYSIS_COMMUNICATION_CLOCK_ALIGNMENT_H_

#include <cstdint>
#include <vector>

#include "src/analysis/communication/collective_pairing.h"

namespace aiprof {

// Per member, its clock's offset (ns, subtracted from its times) from the
// ends of the paired collectives `use[j]` holds (pairing.matched order); 0
// for a member in none of them.
std::vector<int64_t> EstimateClockOffsets(const std::vector<const CollectiveSequences*>& members,
                                          const CollectivePairing& pairing, const std::vector<bool>& use);

struct ClockAlignment {
  bool aligned = false;            // offsets estimated and applied
  std::vector<int64_t> offset_ns;  // per member; all 0 when not aligned
  PairedSums sums;                 // on the aligned clocks; the raw sums when not aligned
};

// `raw`: SumPairedCollectives(members, pairing) on the traces' own clocks.
// When `align` and something is paired, the offsets (above) and the sums
// on them; else `raw` unchanged.
ClockAlignment AlignClocks(const std::vector<const CollectiveSequences*>& members, const CollectivePairing& pairing,
                           const PairedSums& raw, bool align);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_COMMUNICATION_CLOCK_ALIGNMENT_H_
