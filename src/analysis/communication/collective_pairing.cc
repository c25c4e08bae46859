#include "src/analysis/communication/collective_pairing.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "src/analysis/common/trace_index.h"
#include "src/base/quantile.h"
#include "src/model/periodic_steps.h"

namespace aiprof {
namespace {

struct StepStart {
  int64_t start_ns, number;
};

// Per rank, its steps by start.
std::map<int32_t, std::vector<StepStart>> StepsByRank(const Trace& trace) {
  std::map<int32_t, std::vector<StepStart>> out;
  const StepTable& s = trace.steps;
  for (size_t i = 0; i < s.size(); ++i) out[s.rank[i]].push_back({s.ts_ns[i], s.number[i]});
  for (auto& [rank, v] : out) {
    std::stable_sort(v.begin(), v.end(),
                     [](const StepStart& a, const StepStart& b) { return a.start_ns < b.start_ns; });
  }
  return out;
}

// The number of the step whose window [start_i, start_{i+1}) holds `ts`; -1 before the first.
int64_t StepAt(const std::vector<StepStart>& steps, int64_t ts) {
  auto it =
      std::upper_bound(steps.begin(), steps.end(), ts, [](int64_t v, const StepStart& s) { return v < s.start_ns; });
  return it == steps.begin() ? -1 : std::prev(it)->number;
}

int64_t Offset(const std::vector<int64_t>& offset_ns, uint32_t member) {
  return offset_ns.empty() ? 0 : offset_ns[member];
}

// Stalled collectives (collective_pairing.h): per paired collective,
// whether it is the last one every member entered and lasted, on every
// member, kStalledMinNs and kStalledFactor × the median of the member's
// other collectives.
std::vector<bool> FindStalled(const std::vector<const CollectiveSequences*>& members,
                              const CollectivePairing& pairing) {
  std::vector<bool> out(pairing.matched.size(), false);
  std::vector<int64_t> latest(members.size(), INT64_MIN);
  std::vector<double> usual(members.size(), -1);  // median of the other durations; -1 none
  for (size_t m = 0; m < members.size(); ++m) {
    for (const auto& [key, v] : *members[m]) {
      for (const CollectiveInstance& c : v) latest[m] = std::max(latest[m], c.arrival_ns);
    }
    std::vector<double> others;
    for (const auto& [key, v] : *members[m]) {
      for (const CollectiveInstance& c : v) {
        if (c.arrival_ns != latest[m]) others.push_back(static_cast<double>(c.end_ns - c.arrival_ns));
      }
    }
    if (!others.empty()) usual[m] = Median(std::move(others));
  }
  for (size_t j = 0; j < pairing.matched.size(); ++j) {
    const PairedCollective& c = pairing.matched[j];
    bool stalled = true;
    for (const auto& [m, i] : c.members) {
      const CollectiveInstance& a = members[m]->at(c.key)[i];
      const int64_t dur = a.end_ns - a.arrival_ns;
      stalled &= a.arrival_ns == latest[m] && usual[m] >= 0 && dur >= kStalledMinNs &&
                 static_cast<double>(dur) >= kStalledFactor * usual[m];
    }
    out[j] = stalled;
  }
  return out;
}

constexpr int64_t kBeforeSteps = INT64_MIN;

// Per (key, step), a member's instances in arrival order.
using StepBuckets = std::map<std::pair<CollectiveKey, int64_t>, std::vector<const CollectiveInstance*>>;

StepBuckets BucketByStep(const CollectiveSequences& seq) {
  StepBuckets out;
  for (const auto& [key, v] : seq) {
    for (const CollectiveInstance& c : v) {
      if (c.step >= 0) out[{key, c.step}].push_back(&c);
    }
  }
  return out;
}

// The spread of e_m − e_ref (median absolute deviation from its median)
// with m's step N + k paired with ref's step N: on the right pairing every
// difference is the clocks' offset (each collective ends on every rank at
// one moment), on a wrong one it moves with the iterations' lengths.
// Offset-free, so a clock offset of any size never reads as a shift.
// `*pairs`: how many instances so pair.
double EndGapSpread(const StepBuckets& ref, const StepBuckets& m, int64_t k, size_t* pairs) {
  std::vector<double> gaps;
  for (const auto& [at, r] : ref) {
    auto it = m.find({at.first, at.second + k});
    if (it == m.end()) continue;
    for (size_t i = 0; i < std::min(r.size(), it->second.size()); ++i) {
      gaps.push_back(static_cast<double>(it->second[i]->end_ns - r[i]->end_ns));
    }
  }
  *pairs = gaps.size();
  if (gaps.empty()) return 0;
  const double median = Median(gaps);
  for (double& g : gaps) g = std::abs(g - median);
  return Median(std::move(gaps));
}

std::vector<int64_t> StepShifts(const std::vector<const CollectiveSequences*>& members) {
  std::vector<int64_t> out(members.size(), 0);
  std::vector<StepBuckets> buckets;
  size_t ref = 0, most = 0;
  for (size_t m = 0; m < members.size(); ++m) {
    buckets.push_back(BucketByStep(*members[m]));
    size_t n = 0;
    for (const auto& [at, v] : buckets.back()) n += v.size();
    if (n > most) most = n, ref = m;
  }
  if (most == 0) return out;
  for (size_t m = 0; m < members.size(); ++m) {
    if (m == ref || buckets[m].empty()) continue;
    size_t pairs = 0;
    const double unshifted = EndGapSpread(buckets[ref], buckets[m], 0, &pairs);
    double best = unshifted / kStepShiftMargin;
    for (int64_t k = -kMaxStepShift; k <= kMaxStepShift; ++k) {
      if (k == 0) continue;
      const double spread = EndGapSpread(buckets[ref], buckets[m], k, &pairs);
      if (pairs < kStepShiftMinPairs || spread >= best) continue;
      best = spread;
      out[m] = -k;  // m's step S is the reference's S − k
    }
  }
  // In the numbers most members use: the reference may be the one apart.
  std::map<int64_t, size_t> votes;
  for (size_t m = 0; m < members.size(); ++m) {
    if (!buckets[m].empty()) ++votes[out[m]];
  }
  int64_t mode = 0;
  size_t most_votes = 0;
  for (const auto& [shift, n] : votes) {
    if (n > most_votes || (n == most_votes && shift == 0)) mode = shift, most_votes = n;
  }
  for (size_t m = 0; m < members.size(); ++m) {
    if (!buckets[m].empty()) out[m] -= mode;
  }
  return out;
}

}  // namespace

std::vector<int64_t> CollectiveSteps(const Trace& trace, const std::vector<CollectiveSlice>& collectives) {
  std::vector<int64_t> out(collectives.size(), -1);
  auto from = trace.metadata.find("steps.from");
  if (trace.steps.size() == 0 || (from != trace.metadata.end() && from->second == kPeriodicPatternSource)) return out;
  const std::map<int32_t, std::vector<StepStart>> steps = StepsByRank(trace);
  const auto unknown_rank = steps.find(kNoRank);
  std::vector<uint32_t> launches;
  for (size_t i = 0; i < collectives.size(); ++i) {
    const CollectiveSlice& c = collectives[i];
    auto it = steps.find(c.rank);
    if (it == steps.end()) it = unknown_rank;
    if (it == steps.end()) continue;
    int64_t issued = trace.slices.ts_ns[c.slice];
    if (IsDeviceActivity(trace.slices.kind[c.slice])) {
      if (launches.empty()) launches = LaunchingCalls(trace);
      if (launches[c.slice] != kNoSlice) issued = trace.slices.ts_ns[launches[c.slice]];
    }
    out[i] = StepAt(it->second, issued);
  }
  return out;
}

CollectivePairing PairCollectives(const std::vector<const CollectiveSequences*>& members) {
  CollectivePairing out;
  out.step_shift = StepShifts(members);
  std::map<CollectiveKey, std::vector<uint32_t>> holders;
  for (uint32_t m = 0; m < members.size(); ++m) {
    for (const auto& [key, v] : *members[m]) {
      if (!v.empty()) holders[key].push_back(m);
    }
  }
  for (const auto& [key, hs] : holders) {
    if (hs.size() < 2) {
      out.unmatched += members[hs[0]]->at(key).size();
      continue;
    }
    bool by_step = true;
    for (uint32_t m : hs) {
      const std::vector<CollectiveInstance>& v = members[m]->at(key);
      by_step &= std::any_of(v.begin(), v.end(), [](const CollectiveInstance& c) { return c.step >= 0; });
    }
    ++(by_step ? out.keys_by_step : out.keys_by_position);
    // Bucket (the step, or -1 for all when by position) → per holder, its
    // instances' indices in arrival order.
    std::map<int64_t, std::vector<std::vector<uint32_t>>> buckets;
    for (size_t h = 0; h < hs.size(); ++h) {
      const std::vector<CollectiveInstance>& v = members[hs[h]]->at(key);
      for (uint32_t i = 0; i < v.size(); ++i) {
        // Before the first step: a bucket of its own (a shifted step may be −1).
        const int64_t step = v[i].step >= 0 ? v[i].step + out.step_shift[hs[h]] : kBeforeSteps;
        std::vector<std::vector<uint32_t>>& b = buckets[by_step ? step : kBeforeSteps];
        b.resize(hs.size());
        b[h].push_back(i);
      }
    }
    for (const auto& [step, per] : buckets) {
      size_t n = SIZE_MAX;
      for (const std::vector<uint32_t>& idx : per) n = std::min(n, idx.size());
      for (const std::vector<uint32_t>& idx : per) out.unmatched += idx.size() - n;
      for (size_t i = 0; i < n; ++i) {
        PairedCollective c{key, step == kBeforeSteps ? -1 : step, {}};
        for (size_t h = 0; h < hs.size(); ++h) c.members.emplace_back(hs[h], per[h][i]);
        out.matched.push_back(std::move(c));
      }
    }
  }
  return out;
}

PairedSums SumPairedCollectives(const std::vector<const CollectiveSequences*>& members,
                                const CollectivePairing& pairing, const std::vector<int64_t>& offset_ns) {
  PairedSums s;
  const size_t n = members.size();
  s.matched.assign(n, 0);
  s.comm_ns.assign(n, 0);
  s.wait_ns.assign(n, 0);
  s.lateness_ns.assign(n, 0);
  s.transfer_ns.assign(n, 0);
  s.incomplete_by_member.assign(n, 0);
  s.stalled_ns.assign(n, 0);
  s.stalled = FindStalled(members, pairing);
  auto at = [&](const PairedCollective& c, size_t k) -> const CollectiveInstance& {
    return members[c.members[k].first]->at(c.key)[c.members[k].second];
  };
  // First pass: the clocks' agreement, from every paired collective but
  // the stalled ones.
  std::vector<double> spreads, durations;
  spreads.reserve(pairing.matched.size());
  for (size_t j = 0; j < pairing.matched.size(); ++j) {
    if (s.stalled[j]) continue;
    const PairedCollective& c = pairing.matched[j];
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t k = 0; k < c.members.size(); ++k) {
      const CollectiveInstance& a = at(c, k);
      const int64_t off = Offset(offset_ns, c.members[k].first);
      lo = std::min(lo, a.end_ns - off);
      hi = std::max(hi, a.end_ns - off);
      durations.push_back(static_cast<double>(a.end_ns - a.arrival_ns));
    }
    spreads.push_back(static_cast<double>(hi - lo));
  }
  if (!spreads.empty()) s.end_spread_p50_ns = static_cast<int64_t>(Median(std::move(spreads)));
  // Of the median duration, not the mean: a few long collectives (a timed-out
  // one, a long wait for a late rank) made any spread look small.
  const double usual = durations.empty() ? 0 : Median(std::move(durations));
  if (usual > 0) {
    s.end_spread_share = static_cast<double>(s.end_spread_p50_ns) / usual;
    s.clocks_agree = s.end_spread_share <= kMaxEndSpreadShare;
  }
  // Second pass: per-member sums over the collectives that completed (on
  // clocks that do not agree, an early end says nothing: all are summed).
  const int64_t tolerance = std::max<int64_t>(0, s.end_spread_p50_ns);
  s.complete.assign(pairing.matched.size(), false);
  for (size_t j = 0; j < pairing.matched.size(); ++j) {
    const PairedCollective& c = pairing.matched[j];
    if (s.stalled[j]) {
      ++s.stalled_count;
      for (size_t k = 0; k < c.members.size(); ++k) {
        const CollectiveInstance& a = at(c, k);
        s.stalled_ns[c.members[k].first] += a.end_ns - a.arrival_ns;
      }
      continue;
    }
    int64_t first = INT64_MAX, last = INT64_MIN, earliest_end = INT64_MAX;
    for (size_t k = 0; k < c.members.size(); ++k) {
      const CollectiveInstance& a = at(c, k);
      const int64_t off = Offset(offset_ns, c.members[k].first);
      first = std::min(first, a.arrival_ns - off);
      last = std::max(last, a.arrival_ns - off);
      earliest_end = std::min(earliest_end, a.end_ns - off);
    }
    if (s.clocks_agree && earliest_end < last - tolerance) {
      ++s.incomplete;
      for (const auto& [m, i] : c.members) ++s.incomplete_by_member[m];
      continue;
    }
    s.complete[j] = true;
    for (size_t k = 0; k < c.members.size(); ++k) {
      const uint32_t m = c.members[k].first;
      const CollectiveInstance& a = at(c, k);
      const int64_t off = Offset(offset_ns, m), arrival = a.arrival_ns - off, end = a.end_ns - off;
      ++s.matched[m];
      s.comm_ns[m] += a.end_ns - a.arrival_ns;
      s.wait_ns[m] += last - arrival;
      s.lateness_ns[m] += arrival - first;
      s.transfer_ns[m] += std::max<int64_t>(0, end - last);
    }
  }
  return s;
}

std::vector<uint32_t> LateAfterEnd(const std::vector<const CollectiveSequences*>& members, const PairedCollective& c,
                                   const std::vector<int64_t>& offset_ns) {
  int64_t earliest_end = INT64_MAX;
  for (const auto& [m, i] : c.members)
    earliest_end = std::min(earliest_end, members[m]->at(c.key)[i].end_ns - Offset(offset_ns, m));
  std::vector<std::pair<int64_t, uint32_t>> late;
  for (uint32_t k = 0; k < c.members.size(); ++k) {
    const auto [m, i] = c.members[k];
    const int64_t arrival = members[m]->at(c.key)[i].arrival_ns - Offset(offset_ns, m);
    if (arrival > earliest_end) late.emplace_back(arrival, k);
  }
  std::sort(late.begin(), late.end());
  std::vector<uint32_t> out;
  for (const auto& [t, k] : late) out.push_back(k);
  return out;
}

PairedArrival LastArrival(const std::vector<const CollectiveSequences*>& members, const PairedCollective& c,
                          const std::vector<int64_t>& offset_ns) {
  PairedArrival out;
  out.last_ns = std::numeric_limits<int64_t>::min();
  for (size_t k = 0; k < c.members.size(); ++k) {
    const auto [m, i] = c.members[k];
    const int64_t t = members[m]->at(c.key)[i].arrival_ns - Offset(offset_ns, m);
    if (t > out.last_ns) {
      out.last_ns = t;
      out.last = static_cast<uint32_t>(k);
      out.tied = 1;
    } else if (t == out.last_ns) {
      ++out.tied;
    }
  }
  return out;
}

}  // namespace aiprof
