#include "src/analysis/communication/cross_rank.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

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

// Matches collectives by (group, type, ordinal) and sums per-rank times.
void MatchCollectives(const Trace& trace, const std::vector<CollectiveSlice>& collectives, CrossRankResult* r,
                      std::map<int32_t, RankCommunication>* ranks) {
  // (group, type) → rank → windows in time order.
  std::map<std::pair<uint32_t, CollectiveType>, std::map<int32_t, std::vector<RankWindow>>> seq;
  for (const CollectiveSlice& c : collectives) {
    const int64_t ts = trace.slices.ts_ns[c.slice];
    seq[{c.group.raw, c.type}][c.rank].push_back({ts, ts + trace.slices.dur_ns[c.slice]});
    (*ranks)[c.rank].rank = c.rank;
  }
  std::vector<double> end_spreads;
  for (auto& [key, by_rank] : seq) {
    size_t n = SIZE_MAX;
    for (auto& [rank, w] : by_rank) {
      std::sort(w.begin(), w.end(), [](const RankWindow& a, const RankWindow& b) { return a.start_ns < b.start_ns; });
      n = std::min(n, w.size());
    }
    if (by_rank.size() < 2) n = 0;
    for (const auto& [rank, w] : by_rank) r->unmatched += w.size() - n;
    for (size_t i = 0; i < n; ++i) {
      int64_t first = INT64_MAX, last = INT64_MIN, end_lo = INT64_MAX, end_hi = INT64_MIN;
      for (const auto& [rank, w] : by_rank) {
        first = std::min(first, w[i].start_ns);
        last = std::max(last, w[i].start_ns);
        end_lo = std::min(end_lo, w[i].end_ns);
        end_hi = std::max(end_hi, w[i].end_ns);
      }
      for (const auto& [rank, w] : by_rank) {
        RankCommunication& rc = (*ranks)[rank];
        ++rc.matched;
        rc.comm_ns += w[i].end_ns - w[i].start_ns;
        rc.wait_ns += last - w[i].start_ns;
        rc.lateness_ns += w[i].start_ns - first;
        rc.transfer_ns += std::max<int64_t>(0, w[i].end_ns - last);
      }
      end_spreads.push_back(static_cast<double>(end_hi - end_lo));
      ++r->matched;
    }
  }
  if (!end_spreads.empty()) r->end_spread_p50_ns = static_cast<int64_t>(Median(std::move(end_spreads)));
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

std::optional<SlowRank> FindSlowRank(const std::vector<RankCommunication>& ranks) {
  std::vector<const RankCommunication*> matched;
  for (const RankCommunication& rc : ranks) {
    if (rc.matched > 0) matched.push_back(&rc);
  }
  if (matched.size() < 2) return std::nullopt;
  std::vector<double> lateness;
  for (const RankCommunication* rc : matched) lateness.push_back(static_cast<double>(rc->lateness_ns));
  SlowRank s;
  s.test = TestLargestForOutlier(lateness);
  const RankCommunication& slow = *matched[s.test.index];
  s.rank = slow.rank;
  std::vector<double> others;
  for (const RankCommunication* rc : matched) {
    if (rc != &slow) others.push_back(static_cast<double>(rc->lateness_ns));
  }
  s.excess_ns = std::max<int64_t>(0, slow.lateness_ns - static_cast<int64_t>(std::llround(Median(others))));
  s.excess_ratio = slow.span_ns > 0 ? static_cast<double>(s.excess_ns) / static_cast<double>(slow.span_ns) : 0;
  return s;
}

}  // namespace

CrossRankResult ComputeCrossRank(const Trace& trace, const std::vector<CollectiveSlice>& collectives) {
  CrossRankResult r;
  std::map<int32_t, RankCommunication> ranks;
  MatchCollectives(trace, collectives, &r, &ranks);
  ReadProfilerSplit(trace, &ranks);
  const std::map<int32_t, int64_t> spans = RankSpans(trace);
  for (auto& [rank, rc] : ranks) {
    auto it = spans.find(rank);
    rc.span_ns = it == spans.end() ? 0 : it->second;
    r.ranks.push_back(rc);
  }
  int64_t comm_ns = 0;
  uint64_t instances = 0;
  for (const RankCommunication& rc : r.ranks) {
    comm_ns += rc.comm_ns;
    instances += rc.matched;
  }
  if (instances > 0 && comm_ns > 0) {
    r.end_spread_share = static_cast<double>(r.end_spread_p50_ns) / (static_cast<double>(comm_ns) / static_cast<double>(instances));
    r.clocks_agree = r.end_spread_share <= kMaxEndSpreadShare;
  }
  r.slow_rank = FindSlowRank(r.ranks);
  r.links = ComputeLinkBandwidths(trace);
  return r;
}

}  // namespace aiprof
