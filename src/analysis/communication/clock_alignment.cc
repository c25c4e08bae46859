#include "src/analysis/communication/clock_alignment.h"

#include <cmath>

#include "src/base/quantile.h"

namespace aiprof {

std::vector<int64_t> EstimateClockOffsets(const std::vector<const CollectiveSequences*>& members,
                                          const CollectivePairing& pairing, const std::vector<bool>& use) {
  std::vector<std::vector<double>> dev(members.size());
  std::vector<double> ends;
  for (size_t j = 0; j < pairing.matched.size(); ++j) {
    if (j >= use.size() || !use[j]) continue;
    const PairedCollective& c = pairing.matched[j];
    auto end = [&](size_t k) { return members[c.members[k].first]->at(c.key)[c.members[k].second].end_ns; };
    const int64_t base = end(0);
    ends.clear();
    for (size_t k = 0; k < c.members.size(); ++k) ends.push_back(static_cast<double>(end(k) - base));
    const double median = Median(ends);
    for (size_t k = 0; k < c.members.size(); ++k) dev[c.members[k].first].push_back(ends[k] - median);
  }
  std::vector<int64_t> offset(members.size(), 0);
  for (size_t m = 0; m < members.size(); ++m) offset[m] = std::llround(Median(std::move(dev[m])));
  return offset;
}

ClockAlignment AlignClocks(const std::vector<const CollectiveSequences*>& members, const CollectivePairing& pairing,
                           const PairedSums& raw, bool align) {
  ClockAlignment out;
  out.offset_ns.assign(members.size(), 0);
  if (!align || pairing.matched.empty()) {
    out.sums = raw;
    return out;
  }
  out.aligned = true;
  out.offset_ns = EstimateClockOffsets(members, pairing, raw.complete);
  out.sums = SumPairedCollectives(members, pairing, out.offset_ns);
  // Incomplete ones show only on clocks that agree: once more without them.
  if (out.sums.incomplete > 0 && out.sums.complete != raw.complete) {
    out.offset_ns = EstimateClockOffsets(members, pairing, out.sums.complete);
    out.sums = SumPairedCollectives(members, pairing, out.offset_ns);
  }
  return out;
}

}  // namespace aiprof
