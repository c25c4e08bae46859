#include "src/analysis/communication/cross_rank.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "src/base/quantile.h"

namespace aiprof {
namespace {

struct RankWindow {
  int64_t start_ns, end_ns;
};

// First-to-last device activity per rank.
std::map<int32_t, int64_t> RankSpans(const Trace& trace) {
  std::map<int32_t, RankWindow> w;
  for (uint32_t s = 0; s < trace.slices.size(); ++s) {
    if (!IsDeviceActivity(trace.slices.kind[s])) continue;
    const int64_t a = trace.slices.ts_ns[s], b = a + trace.slices.dur_ns[s];
    auto [it, fresh] = w.try_emplace(trace.tracks.rank[trace.slices.track[s]], RankWindow{a, b});
    it->second.start_ns = std::min(it->second.start_ns, a);
    it->second.end_ns = std::max(it->second.end_ns, b);
  }
  std::map<int32_t, int64_t> out;
  for (const auto& [rank, win] : w) out[rank] = win.end_ns - win.start_ns;
  return out;
}

// The stalled collectives, and the incomplete ones some rank arrived at
// after another had left (FailedCollective).
// Late arrivals on the clocks `offset_ns`; waits in trace time.
void ListFailed(const std::vector<const CollectiveSequences*>& members, const std::vector<int32_t>& rank_of,
                const CollectivePairing& pairing, const PairedSums& sums, const std::vector<int64_t>& offset_ns,
                CrossRankResult* r) {
  std::vector<FailedCollective>* out = &r->failed;
  for (size_t j = 0; j < pairing.matched.size(); ++j) {
    if (sums.complete[j]) continue;
    const PairedCollective& c = pairing.matched[j];
    const std::vector<uint32_t> late = sums.stalled[j] ? std::vector<uint32_t>{} : LateAfterEnd(members, c, offset_ns);
    if (!sums.stalled[j] && late.empty()) continue;
    ++r->failed_count;
    for (size_t k = 0; k < c.members.size(); ++k) {
      if (std::find(late.begin(), late.end(), k) != late.end()) continue;
      const CollectiveInstance& a = members[c.members[k].first]->at(c.key)[c.members[k].second];
      r->failed_waits.emplace_back(a.arrival_ns, a.end_ns);
    }
    if (out->size() >= kMaxFailedCollectivesListed) continue;
    FailedCollective f;
    f.step = c.step;
    f.type = static_cast<CollectiveType>(c.key.second);
    f.group = StringId{c.key.first};
    f.stalled = sums.stalled[j];
    f.first_arrival_ns = INT64_MAX;
    for (size_t k = 0; k < c.members.size(); ++k) {
      const auto [m, i] = c.members[k];
      const CollectiveInstance& a = members[m]->at(c.key)[i];
      f.ranks.push_back(rank_of[m]);
      f.first_arrival_ns = std::min(f.first_arrival_ns, a.arrival_ns);
      if (std::find(late.begin(), late.end(), k) == late.end())
        f.waited_ns = std::max(f.waited_ns, a.end_ns - a.arrival_ns);
    }
    for (uint32_t k : late) f.late_ranks.push_back(rank_of[c.members[k].first]);
    std::sort(f.ranks.begin(), f.ranks.end());
    out->push_back(std::move(f));
  }
}

// Pairs the collectives within their steps (collective_pairing.h) and sums
// the per-rank figures.
void MatchCollectives(const Trace& trace, const std::vector<CollectiveSlice>& collectives,
                      const std::vector<int64_t>& steps, CrossRankResult* r,
                      std::map<int32_t, RankCommunication>* ranks) {
  std::map<int32_t, CollectiveSequences> by_rank;
  for (size_t i = 0; i < collectives.size(); ++i) {
    const CollectiveSlice& c = collectives[i];
    const int64_t ts = trace.slices.ts_ns[c.slice];
    by_rank[c.rank][{c.group.raw, static_cast<uint8_t>(c.type)}].push_back(
        {ts, ts + trace.slices.dur_ns[c.slice], steps[i], c.slice});
    (*ranks)[c.rank].rank = c.rank;
  }
  std::vector<int32_t> rank_of;
  std::vector<const CollectiveSequences*> members;
  for (auto& [rank, seq] : by_rank) {
    for (auto& [key, v] : seq) {
      std::stable_sort(v.begin(), v.end(), [](const CollectiveInstance& a, const CollectiveInstance& b) {
        return a.arrival_ns < b.arrival_ns;
      });
    }
    rank_of.push_back(rank);
    members.push_back(&seq);
  }
  const CollectivePairing pairing = PairCollectives(members);
  const PairedSums raw = SumPairedCollectives(members, pairing);
  // Clocks that disagree: aligned by the collectives' ends (clock_alignment.h),
  // used when the aligned clocks agree.
  const ClockAlignment alignment = AlignClocks(members, pairing, raw, !raw.clocks_agree);
  r->aligned_from_collectives = alignment.aligned && alignment.sums.clocks_agree;
  const PairedSums& sums = r->aligned_from_collectives ? alignment.sums : raw;
  const std::vector<int64_t> offset =
      r->aligned_from_collectives ? alignment.offset_ns : std::vector<int64_t>(members.size(), 0);
  r->matched = pairing.matched.size();
  r->unmatched = pairing.unmatched;
  r->keys_by_step = pairing.keys_by_step;
  r->keys_by_position = pairing.keys_by_position;
  r->incomplete = sums.incomplete;
  r->end_spread_p50_ns = sums.end_spread_p50_ns;
  r->end_spread_share = sums.end_spread_share;
  r->clocks_agree = sums.clocks_agree;
  r->raw_end_spread_p50_ns = raw.end_spread_p50_ns;
  r->raw_end_spread_share = raw.end_spread_share;
  if (alignment.aligned) {
    r->aligned_end_spread_p50_ns = alignment.sums.end_spread_p50_ns;
    r->aligned_end_spread_share = alignment.sums.end_spread_share;
  }
  r->stalled = sums.stalled_count;
  ListFailed(members, rank_of, pairing, sums, offset, r);
  // The join by trace times (paired_slices) only on the traces' own clocks.
  for (size_t j = 0; j < pairing.matched.size() && !r->aligned_from_collectives; ++j) {
    if (!sums.complete[j]) continue;
    const PairedCollective& c = pairing.matched[j];
    std::vector<uint32_t>& slices = r->paired_slices.emplace_back();
    for (const auto& [m, i] : c.members) slices.push_back(members[m]->at(c.key)[i].id);
    const PairedArrival last = LastArrival(members, c);
    r->paired_last.push_back(last.tied == 1 ? slices[last.last] : kNoSlice);
  }
  for (size_t m = 0; m < members.size(); ++m) {
    RankCommunication& rc = (*ranks)[rank_of[m]];
    rc.matched = sums.matched[m];
    rc.incomplete = sums.incomplete_by_member[m];
    rc.comm_ns = sums.comm_ns[m];
    rc.wait_ns = sums.wait_ns[m];
    rc.lateness_ns = sums.lateness_ns[m];
    rc.transfer_ns = sums.transfer_ns[m];
    rc.stalled_ns = sums.stalled_ns[m];
    rc.step_shift = pairing.step_shift[m];
    rc.clock_offset_ns = offset[m];
  }
}

// communication.json "Total Op Info" rows, summed per rank over steps.
void ReadProfilerSplit(const Trace& trace, std::map<int32_t, RankCommunication>* ranks) {
  const OpMetricTable& m = trace.op_metrics;
  static constexpr std::pair<std::string_view, int64_t RankCommunication::*> kKeys[] = {
      {"Communication Time Info/Elapse Time(ms)", &RankCommunication::profiler_elapse_ns},
      {"Communication Time Info/Wait Time(ms)", &RankCommunication::profiler_wait_ns},
      {"Communication Time Info/Transit Time(ms)", &RankCommunication::profiler_transit_ns},
      {"Communication Time Info/Synchronization Time(ms)", &RankCommunication::profiler_sync_ns},
      {"Communication Time Info/Idle Time(ms)", &RankCommunication::profiler_idle_ns},
  };
  for (size_t i = 0; i < m.size(); ++i) {
    if (trace.Str(m.source[i]) != "communication.json" || !trace.Str(m.op[i]).ends_with("/Total Op Info")) continue;
    if (std::isnan(m.value[i])) continue;
    std::string_view key = trace.Str(m.key[i]);
    for (const auto& [name, field] : kKeys) {
      if (key != name) continue;
      RankCommunication& rc = (*ranks)[m.rank[i]];
      rc.rank = m.rank[i];
      int64_t& v = rc.*field;
      v = std::max<int64_t>(v, 0) + std::llround(m.value[i] * 1e6);
    }
  }
}

// The rank with the largest lateness; none when fewer than 2 ranks matched
// collectives, or when *tied > 1 ranks share the largest lateness.
std::optional<SlowRank> FindSlowRank(const std::vector<RankCommunication>& ranks, uint32_t* tied) {
  std::vector<const RankCommunication*> matched;
  for (const RankCommunication& rc : ranks) {
    if (rc.matched > 0) matched.push_back(&rc);
  }
  if (matched.size() < 2) return std::nullopt;
  std::vector<double> lateness;
  for (const RankCommunication* rc : matched) lateness.push_back(static_cast<double>(rc->lateness_ns));
  const double largest = *std::max_element(lateness.begin(), lateness.end());
  *tied = static_cast<uint32_t>(std::count(lateness.begin(), lateness.end(), largest));
  if (*tied > 1) return std::nullopt;
  SlowRank s;
  s.test = TestLargestForOutlier(lateness);
  const RankCommunication& slow = *matched[s.test.index];
  s.rank = slow.rank;
  std::vector<double> others;
  for (const RankCommunication* rc : matched) {
    if (rc != &slow) others.push_back(static_cast<double>(rc->lateness_ns));
  }
  s.excess_ns = std::max<int64_t>(0, slow.lateness_ns - static_cast<int64_t>(std::llround(Median(others))));
  if (slow.span_ns > 0) s.excess_ratio = static_cast<double>(s.excess_ns) / static_cast<double>(slow.span_ns);
  return s;
}

}  // namespace

CrossRankResult ComputeCrossRank(const Trace& trace, const std::vector<CollectiveSlice>& collectives) {
  return ComputeCrossRank(trace, collectives, CollectiveSteps(trace, collectives));
}

CrossRankResult ComputeCrossRank(const Trace& trace, const std::vector<CollectiveSlice>& collectives,
                                 const std::vector<int64_t>& steps) {
  CrossRankResult r;
  std::map<int32_t, RankCommunication> ranks;
  MatchCollectives(trace, collectives, steps, &r, &ranks);
  ReadProfilerSplit(trace, &ranks);
  const std::map<int32_t, int64_t> spans = RankSpans(trace);
  for (auto& [rank, rc] : ranks) {
    auto it = spans.find(rank);
    rc.span_ns = it == spans.end() ? 0 : it->second;
    r.ranks.push_back(rc);
  }
  r.slow_rank = FindSlowRank(r.ranks, &r.slow_rank_tied);
  r.links = ComputeLinkBandwidths(trace);
  return r;
}

}  // namespace aiprof
