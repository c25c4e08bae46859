#include "src/analysis/communication/communication.h"

#include <cmath>
#include <map>

#include "src/analysis/common/text_format.h"
#include "src/analysis/communication/text_helpers.h"
#include "src/analysis/metrics/metric_set.h"

namespace aiprof {
namespace {

constexpr char kCommunicationSource[] = "communication";

using comm_text::GBps;
using comm_text::Ns;
using comm_text::RankName;
using comm_text::Share;

std::string ClocksDisagree(const CrossRankResult& c) {
  std::string out = "the ranks' ends of matched collectives differ by a median " + Ns(c.raw_end_spread_p50_ns) + " (" +
                    FormatPercent(c.raw_end_spread_share) + " of the median collective's duration)";
  if (c.aligned_end_spread_p50_ns < 0) {
    return out + ": clocks not aligned or collectives not paired one to one, so arrival times cannot be compared";
  }
  return out + ", and by " + Ns(c.aligned_end_spread_p50_ns) + " (" + FormatPercent(c.aligned_end_spread_share) +
         ") on clocks aligned by those ends: collectives that do not end together or are not paired one to one, so "
         "arrival times cannot be compared";
}

bool AllRanksHaveProfilerSplit(const CrossRankResult& c) {
  if (c.ranks.empty()) return false;
  for (const RankCommunication& r : c.ranks) {
    if (r.profiler_elapse_ns <= 0 || r.profiler_wait_ns < 0) return false;
  }
  return true;
}

void PublishWaitRatio(const CrossRankResult& c, MetricSet* m) {
  int64_t wait = 0, total = 0;
  if (AllRanksHaveProfilerSplit(c)) {
    for (const RankCommunication& r : c.ranks) {
      wait += r.profiler_wait_ns;
      total += r.profiler_elapse_ns;
    }
    m->Set("comm_wait_ratio", Share(wait, total), "communication.json");
    return;
  }
  for (const RankCommunication& r : c.ranks) {
    wait += r.wait_ns;
    total += r.comm_ns;
  }
  if (c.matched == 0 || total == 0) {
    m->SetUnavailable("comm_wait_ratio",
                      "needs collectives matched across 2 or more ranks, or torch_npu communication.json");
    return;
  }
  if (!c.clocks_agree) {
    m->SetUnavailable("comm_wait_ratio", ClocksDisagree(c));
    return;
  }
  m->Set("comm_wait_ratio", Share(wait, total), kCommunicationSource);
}

void PublishSlowRank(const CommunicationResult& r, MetricSet* m) {
  const CrossRankResult& c = r.cross;
  if (!c.slow_rank && c.slow_rank_tied > 1) {
    const std::string why = c.clocks_agree ? std::to_string(c.slow_rank_tied) +
                                                 " ranks share the largest lateness exactly: no single rank is slowest"
                                           : ClocksDisagree(c);
    m->SetUnavailable("slow_rank_excess_ratio", why);
    m->SetUnavailable("slow_ranks", why);
    return;
  }
  if (!c.slow_rank) {
    const char* why = r.collective_slices == 0
                          ? "no collectives in the trace (no NCCL/RCCL/HCCL kernels or tasks)"
                          : "collectives of only one rank: cross-rank analysis needs the traces of 2 or more ranks "
                            "(import their folder)";
    m->SetUnavailable("slow_rank_excess_ratio", why);
    m->SetUnavailable("slow_ranks", why);
    return;
  }
  if (!c.clocks_agree) {
    m->SetUnavailable("slow_rank_excess_ratio", ClocksDisagree(c));
    m->SetUnavailable("slow_ranks", ClocksDisagree(c));
    return;
  }
  const SlowRank& s = *c.slow_rank;
  // A rank without device activity (CPU-only, gloo): a share of the sum of
  // its step times (cross_rank.h), as `aiprof cluster` judges it; with
  // neither, not 0%.
  if (s.excess_ratio) {
    m->Set("slow_rank_excess_ratio", *s.excess_ratio, kCommunicationSource);
  } else {
    m->SetUnavailable("slow_rank_excess_ratio", RankName(s.rank) +
                                                    " has neither device activity nor steps: no time to take a "
                                                    "share of (slow_rank_excess_ns gives the excess)");
  }
  if (s.test.test == OutlierTest::kNone) {
    m->SetUnavailable("slow_ranks", "2 ranks: too few for an outlier test (Dixon's Q needs 3)");
  } else {
    m->Set("slow_ranks", s.test.outlier ? 1 : 0, kCommunicationSource);
  }
  m->AddEvidence(
      "slow_rank",
      RankName(s.rank) + " arrives last at collectives: " + Ns(s.excess_ns) +
          " later than the median of the other ranks in total" +
          (s.excess_ratio ? " (" + FormatPercent(*s.excess_ratio) + " of " + s.excess_ratio_base + ")" : "") +
          (c.aligned_from_collectives ? ", on clocks aligned by the collectives' ends" : ""));
}

void PublishLinks(const CrossRankResult& c, MetricSet* m) {
  size_t judged = 0, slow = 0;
  for (const LinkBandwidth& l : c.links) {
    judged += l.judged;
    if (!l.slow) continue;
    ++slow;
    m->AddEvidence("slow_link", RankName(l.rank) + " link " + l.link + " (" + l.transport + "): " +
                                    GBps(l.bandwidth_bytes_per_second) + " vs " + l.transport + " median " +
                                    GBps(l.transport_median_bytes_per_second) + ", " + FormatBytes(l.bytes) +
                                    " moved");
  }
  if (judged == 0) {
    m->SetUnavailable("slow_link_count", c.links.empty()
                                             ? "no per-link data (torch_npu communication_matrix.json)"
                                             : "fewer than 3 links of one transport moved 1 MB or more");
    return;
  }
  m->Set("slow_link_count", static_cast<double>(slow), kCommunicationSource);
}

std::string Ranks(const std::vector<int32_t>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
}

// Collectives that did not complete (cross_rank.h, FailedCollective): a
// rank crashed, hung or came after the others gave up. Counted wherever
// collectives were matched across ranks (else absent); the waits' impact per step is
// analyze.cc's (it needs the window).
void PublishFailedCollectives(const CrossRankResult& c, MetricSet* m) {
  // Absent, not unavailable, on a trace without collectives matched across
  // ranks: the rule (rank_failure.yaml, applies_if_computed) has nothing to
  // say about one rank.
  if (c.matched == 0) return;
  m->Set("comm_failed_count", static_cast<double>(c.failed_count), kCommunicationSource);
  for (const FailedCollective& f : c.failed) {
    const std::string where =
        (f.step >= 0 ? "step " + std::to_string(f.step) + " " : std::string()) + CollectiveTypeName(f.type) + ": ";
    m->AddEvidence("failed_collective",
                   f.stalled ? where + Ranks(f.ranks) + " waited " + Ns(f.waited_ns) +
                                   " in it until it ended, for a rank not in the inputs (it never arrived: crashed, "
                                   "hung or killed)"
                             : where + Ranks(f.late_ranks) +
                                   " arrived after another rank had left it (the others "
                                   "gave up after " +
                                   Ns(f.waited_ns) + ")");
  }
  if (c.failed_count > c.failed.size()) {
    m->AddEvidence("failed_collective",
                   "(first " + std::to_string(c.failed.size()) + " of " + std::to_string(c.failed_count) + " listed)");
  }
}

// "ranks 2–7", "ranks 2, 4", "rank 3": runs of consecutive ranks joined.
std::string RankRuns(const std::vector<int32_t>& ranks, uint64_t count) {
  std::string out = count == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (i ? ", " : "") + std::to_string(ranks[i]) + (j > i ? "–" + std::to_string(ranks[j]) : "");
    i = j + 1;
  }
  if (count > ranks.size()) out += ", … (" + std::to_string(count) + " in all)";
  return out;
}

// Ranks the inputs imply but do not hold (cross_rank.h, ExpectRanks), and
// the wait for them that communication.json separates from transfer.
void PublishMissingRanks(const CrossRankResult& c, MetricSet* m) {
  if (c.matched == 0) return;  // absent, as comm_failed_count: nothing across ranks to say
  m->Set("comm_missing_ranks", static_cast<double>(c.missing_count), kCommunicationSource);
  int64_t absent = 0, total = 0;
  for (const RankCommunication& r : c.ranks) {
    absent += std::max<int64_t>(0, r.absent_wait_ns);
    total += r.comm_ns;
  }
  if (c.missing_count == 0) {
    m->Set("comm_absent_wait_ratio", 0, kCommunicationSource);
    return;
  }
  if (c.transfer_includes_absent_wait) {
    m->SetUnavailable("comm_absent_wait_ratio",
                      "ranks are missing and no communication.json separates the wait for them from transfer");
  } else {
    m->Set("comm_absent_wait_ratio", Share(absent, total), kCommunicationSource);
  }
  const std::string missing = RankRuns(c.missing, c.missing_count) + " of the " + std::to_string(c.expected.count) +
                              " the inputs imply (" + c.expected.from + ") " + (c.missing_count == 1 ? "is" : "are") +
                              " not in the trace";
  std::string waits;
  for (const RankCommunication& r : c.ranks) {
    if (r.absent_wait_ns < 0) continue;
    waits += (waits.empty() ? "" : ", ") + RankName(r.rank) + " " + Ns(r.absent_wait_ns) + " of " + Ns(r.comm_ns);
  }
  std::string line = missing + ": ";
  if (!waits.empty()) {
    line +=
        "time in collectives after every rank present had arrived that communication.json calls idle (neither "
        "transit nor a wait for a rank present) is the wait for them, not transfer and not a lack of overlap (" +
        waits + ")";
  } else {
    line +=
        "the time in collectives after every rank present had arrived includes any wait for them, which this "
        "trace cannot tell from transfer";
  }
  m->AddEvidence("communication_bound", line);
  m->AddEvidence("slow_rank", line);
}

void PublishExposedSteps(const CollectiveStats& st, MetricSet* m) {
  for (const StepCommunication& s : st.steps) {
    if (s.exposed_ns < 0 || Share(s.exposed_ns, s.step_ns) < kExposedStepEvidenceShare) continue;
    m->AddEvidence("communication_bound", RankName(s.rank) + " step " + std::to_string(s.number) + ": " +
                                              Ns(s.exposed_ns) + " of " + Ns(s.comm_ns) + " communication exposed (" +
                                              FormatPercent(Share(s.exposed_ns, s.step_ns)) +
                                              (s.on_device_period ? " of the step's device period)" : " of the step)"));
  }
}

}  // namespace

CommunicationResult ComputeCommunication(const Trace& trace, const AnalysisWindow* window) {
  CommunicationResult r;
  r.collectives = CollectCollectives(trace);
  r.collective_slices = r.collectives.size();
  r.collective_steps = CollectiveSteps(trace, r.collectives);
  r.stats = ComputeCollectiveStats(trace, r.collectives, window);
  r.cross = ComputeCrossRank(trace, r.collectives, r.collective_steps);
  return r;
}

void PublishCommunication(const CommunicationResult& result, MetricSet* metrics) {
  PublishWaitRatio(result.cross, metrics);
  PublishSlowRank(result, metrics);
  PublishLinks(result.cross, metrics);
  PublishFailedCollectives(result.cross, metrics);
  PublishMissingRanks(result.cross, metrics);
  PublishExposedSteps(result.stats, metrics);
}

}  // namespace aiprof
