// DescribeCommunication: the analyze report's plain-text lines.
#include <map>

#include "src/analysis/common/text_format.h"
#include "src/analysis/communication/communication.h"
#include "src/analysis/communication/text_helpers.h"

namespace aiprof {
namespace {

using comm_text::GBps;
using comm_text::Ns;
using comm_text::RankName;
using comm_text::Share;

void DescribeTypes(const CollectiveStats& st, std::vector<std::string>* out) {
  for (const CollectiveTypeStats& t : st.by_type) {
    std::string line = RankName(t.rank) + " " + CollectiveTypeName(t.type) + ": x" + std::to_string(t.count) + ", " +
                       Ns(t.total_ns) + " (" + FormatPercent(Share(t.total_ns, st.total_ns)) +
                       " of collective time), longest " + Ns(t.max_ns);
    if (t.sized > 0) {
      line += "; " + FormatBytes(t.bytes) + " in " + std::to_string(t.sized) + " sized, algbw " +
              GBps(t.AlgBandwidthBytesPerSecond());
      if (t.group_size > 0) {
        line += ", busbw " + GBps(t.BusBandwidthBytesPerSecond()) + " (group of " + std::to_string(t.group_size) + ")";
      }
    }
    out->push_back(line);
  }
}

void DescribeSteps(const CollectiveStats& st, std::vector<std::string>* out) {
  std::map<int32_t, size_t> shown;
  for (const StepCommunication& s : st.steps) {
    if (++shown[s.rank] > kStepLinesPerRank) continue;
    std::string line = RankName(s.rank) + " step " + std::to_string(s.number) + ":";
    if (s.comm_ns >= 0) {
      line += " communication " + Ns(s.comm_ns) + ", exposed " + Ns(s.exposed_ns) + " (" +
              FormatPercent(Share(s.exposed_ns, s.step_ns)) + " of the step's " + Ns(s.step_ns) + ")";
    }
    if (s.profiler_comm_ns >= 0 || s.profiler_exposed_ns >= 0) {
      line += " [step_trace_time.csv: Communication " + Ns(s.profiler_comm_ns) + ", Not Overlapped " +
              Ns(s.profiler_exposed_ns) + "]";
    }
    out->push_back(line);
  }
  for (const auto& [rank, n] : shown) {
    if (n > kStepLinesPerRank) out->push_back(RankName(rank) + ": " + std::to_string(n - kStepLinesPerRank) + " more steps");
  }
}

void DescribeRanks(const CrossRankResult& c, std::vector<std::string>* out) {
  size_t with_matches = 0;
  for (const RankCommunication& r : c.ranks) with_matches += r.matched > 0;
  if (with_matches >= 2) {
    out->push_back("across " + std::to_string(with_matches) + " ranks: " + std::to_string(c.matched) +
                   " collectives matched, " + std::to_string(c.unmatched) + " slices unmatched; end times agree within " +
                   Ns(c.end_spread_p50_ns) + " (median spread: how well the ranks' clocks agree)");
    if (!c.clocks_agree) {
      out->push_back("  caution: that spread is " + FormatPercent(c.end_spread_share) +
                     " of a mean collective, so the ranks' clocks (or the pairing of collectives) disagree: "
                     "wait and lateness below are not trusted");
    }
  }
  for (const RankCommunication& r : c.ranks) {
    if (r.matched == 0 && r.profiler_elapse_ns < 0) continue;
    std::string line = RankName(r.rank) + ":";
    if (r.matched > 0) {
      line += " waits " + Ns(r.wait_ns) + " for later ranks, arrives " + Ns(r.lateness_ns) + " late in total, " +
              Ns(r.transfer_ns) + " in collectives once all ranks are in (" + std::to_string(r.matched) + " matched)";
    }
    if (r.profiler_elapse_ns >= 0) {
      line += " [communication.json: elapse " + Ns(r.profiler_elapse_ns) + ", wait " + Ns(r.profiler_wait_ns) +
              ", transit " + Ns(r.profiler_transit_ns) + ", synchronization " + Ns(r.profiler_sync_ns) + ", idle " +
              Ns(r.profiler_idle_ns) + "]";
    }
    out->push_back(line);
  }
}

void DescribeSlowRank(const CrossRankResult& c, std::vector<std::string>* out) {
  if (!c.slow_rank) return;
  const SlowRank& s = *c.slow_rank;
  if (!c.clocks_agree) return;
  std::string line = "slowest to arrive: " + RankName(s.rank) + ", " + Ns(s.excess_ns) +
                     " later than the median of the others (" + FormatPercent(s.excess_ratio) + " of its device span); ";
  if (s.test.test == OutlierTest::kNone) {
    line += "2 ranks: too few for an outlier test";
  } else {
    line += std::string(s.test.test == OutlierTest::kDixonQ ? "Dixon's Q " : "z ") + FormatFixed(s.test.statistic, 3) +
            " vs " + FormatFixed(s.test.critical, 3) + (s.test.outlier ? ": an outlier" : ": not an outlier");
  }
  out->push_back(line);
}

void DescribeLinks(const CrossRankResult& c, std::vector<std::string>* out) {
  if (c.links.empty()) return;
  size_t judged = 0, slow = 0;
  for (const LinkBandwidth& l : c.links) {
    judged += l.judged;
    slow += l.slow;
  }
  out->push_back("links: " + std::to_string(c.links.size()) + " (rank, link) pairs, " + std::to_string(judged) +
                 " judged, " + std::to_string(slow) + " slow (below 80% of their transport's median)");
  size_t listed = 0;
  for (const LinkBandwidth& l : c.links) {
    if (!l.judged || (listed >= 3 && !l.slow)) continue;
    ++listed;
    out->push_back("  " + RankName(l.rank) + " " + l.link + " " + l.transport + ": " +
                   GBps(l.bandwidth_bytes_per_second) + " (median " + GBps(l.transport_median_bytes_per_second) +
                   ")" + (l.slow ? " SLOW" : ""));
  }
}

}  // namespace

std::vector<std::string> DescribeCommunication(const CommunicationResult& r) {
  std::vector<std::string> out;
  if (r.collective_slices == 0 && r.cross.ranks.empty() && r.cross.links.empty() && r.stats.steps.empty()) {
    return {"no collectives in the trace (no NCCL/RCCL/HCCL kernels or tasks)"};
  }
  DescribeTypes(r.stats, &out);
  DescribeSteps(r.stats, &out);
  DescribeRanks(r.cross, &out);
  DescribeSlowRank(r.cross, &out);
  DescribeLinks(r.cross, &out);
  return out;
}

}  // namespace aiprof
