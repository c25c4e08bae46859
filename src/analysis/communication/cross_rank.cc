#include "src/analysis/communication/cross_rank.h"

#include <algorithm>
#include <charconv>
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
  for (size_t j = 0; j < pairing.matched.size(); ++j) {
    if (!sums.complete[j]) continue;
    const PairedCollective& c = pairing.matched[j];
    int64_t first = INT64_MAX;
    for (const auto& [m, i] : c.members) first = std::min(first, members[m]->at(c.key)[i].arrival_ns - offset[m]);
    std::vector<CrossRankResult::MemberLateness>& v = r->paired_lateness.emplace_back();
    for (const auto& [m, i] : c.members) {
      const int64_t a = members[m]->at(c.key)[i].arrival_ns;
      v.push_back({rank_of[m], a, a - offset[m] - first});
    }
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
  if (slow.span_ns > 0) {
    s.excess_ratio = static_cast<double>(s.excess_ns) / static_cast<double>(slow.span_ns);
    s.excess_ratio_base = "its device span";
  } else if (slow.steps_ns > 0) {
    // No device activity (CPU-only, gloo): the time its steps took, as the
    // cluster reduce judges it.
    s.excess_ratio = static_cast<double>(s.excess_ns) / static_cast<double>(slow.steps_ns);
    s.excess_ratio_base = "the sum of its step times";
  }
  return s;
}

// Expected and missing ranks (ExpectRanks) from what the trace holds.
void FindMissingRanks(const Trace& trace, const std::vector<CollectiveSlice>& collectives, CrossRankResult* r) {
  std::vector<int32_t> present;
  for (size_t t = 0; t < trace.tracks.size(); ++t) {
    if (trace.tracks.rank[t] >= 0) present.push_back(trace.tracks.rank[t]);
  }
  for (const RankCommunication& rc : r->ranks) {
    if (rc.rank >= 0) present.push_back(rc.rank);
  }
  std::sort(present.begin(), present.end());
  present.erase(std::unique(present.begin(), present.end()), present.end());
  int64_t stated = 0, links = 0, groups = 0;
  if (auto it = trace.metadata.find("world_size"); it != trace.metadata.end()) {
    std::from_chars(it->second.data(), it->second.data() + it->second.size(), stated);
  }
  for (const LinkBandwidth& l : r->links) links = std::max(links, LargestLinkRank(l.link) + 1);
  for (const CollectiveSlice& c : collectives) groups = std::max(groups, c.group_size);
  // No rank in the trace: none expected.
  if (present.empty()) return;
  r->expected = ExpectRanks(stated, links, groups, int64_t{present.back()} + 1);
  const int64_t n = r->expected.count;
  const int64_t in = std::lower_bound(present.begin(), present.end(), n) - present.begin();
  r->missing_count = static_cast<uint64_t>(std::max<int64_t>(0, n - in));
  size_t k = 0;
  for (int64_t rank = 0; rank < n && r->missing.size() < kMaxMissingRanksListed; ++rank) {
    while (k < present.size() && present[k] < rank) ++k;
    if (k == present.size() || present[k] != rank) r->missing.push_back(static_cast<int32_t>(rank));
  }
}

}  // namespace

int64_t LargestLinkRank(std::string_view link) {
  const size_t dash = link.find('-');
  if (dash == std::string_view::npos) return -1;
  int64_t best = -1;
  for (std::string_view part : {link.substr(0, dash), link.substr(dash + 1)}) {
    int32_t v = -1;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || end != part.data() + part.size() || v < 0) return -1;
    best = std::max<int64_t>(best, v);
  }
  return best;
}

int64_t SlowRankExcessWithin(const CrossRankResult& r, const Intervals& window, uint64_t* collectives) {
  if (collectives) *collectives = 0;
  if (!r.slow_rank) return 0;
  const int32_t slow = r.slow_rank->rank;
  std::map<int32_t, int64_t> lateness;
  for (const RankCommunication& rc : r.ranks) {
    if (rc.matched > 0) lateness[rc.rank] = 0;
  }
  for (const auto& members : r.paired_lateness) {
    auto it = std::find_if(members.begin(), members.end(),
                           [&](const CrossRankResult::MemberLateness& m) { return m.rank == slow; });
    if (it == members.end() || !IntervalsContain(window, it->arrival_ns)) continue;
    if (collectives) ++*collectives;
    for (const auto& m : members) lateness[m.rank] += m.lateness_ns;
  }
  std::vector<double> others;
  for (const auto& [rank, l] : lateness) {
    if (rank != slow) others.push_back(static_cast<double>(l));
  }
  if (others.empty()) return 0;
  return std::max<int64_t>(0, lateness[slow] - static_cast<int64_t>(std::llround(Median(others))));
}

ExpectedRanks ExpectRanks(int64_t stated_world_size, int64_t link_world, int64_t group_world,
                          int64_t largest_rank_seen) {
  ExpectedRanks out;
  const std::pair<int64_t, const char*> sources[] = {{stated_world_size, "traces"},
                                                     {link_world, "communication_matrix.json links"},
                                                     {group_world, "collective group size"},
                                                     {largest_rank_seen, "largest rank seen"}};
  for (const auto& [n, from] : sources) {
    if (n > out.count) {
      out.count = n;
      out.from = from;
    }
  }
  return out;
}

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
  std::map<int32_t, int64_t> step_sums;
  for (size_t i = 0; i < trace.steps.size(); ++i) step_sums[trace.steps.rank[i]] += trace.steps.dur_ns[i];
  for (auto& [rank, rc] : ranks) {
    auto it = spans.find(rank);
    rc.span_ns = it == spans.end() ? 0 : it->second;
    auto st = step_sums.find(rank);
    rc.steps_ns = st == step_sums.end() ? 0 : st->second;
    r.ranks.push_back(rc);
  }
  r.links = ComputeLinkBandwidths(trace);
  FindMissingRanks(trace, collectives, &r);
  // Ranks missing: communication.json's idle after the last rank present
  // arrived is the wait for them, not transfer.
  for (RankCommunication& rc : r.ranks) {
    if (r.missing_count == 0 || rc.matched == 0) continue;
    if (rc.profiler_idle_ns < 0) {
      r.transfer_includes_absent_wait = true;
      continue;
    }
    rc.absent_wait_ns = std::min(rc.profiler_idle_ns, rc.transfer_ns);
    rc.transfer_ns -= rc.absent_wait_ns;
  }
  r.slow_rank = FindSlowRank(r.ranks, &r.slow_rank_tied);
  return r;
}

}  // namespace aiprof
