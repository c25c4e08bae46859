#include "src/analysis/communication/communication_analysis.h"

#include "src/analysis/common/intervals.h"
#include "src/analysis/window/window_analysis.h"

namespace aiprof {
namespace {

using U = MetricUnit;

// The metrics it publishes, one a line to read as a table (docs/metrics.md
// documents each).
// clang-format off
constexpr MetricInfo kCommunicationMetrics[] = {
        {"comm_failed_count", U::kCount, "collectives that did not complete: a rank never arrived (crashed, hung, killed) or arrived after the others gave up"},
        {"comm_wait_ratio", U::kRatio, "time ranks wait in collectives for later ranks, share of collective time"},
        {"comm_missing_ranks", U::kCount, "ranks the inputs imply (a stated world size, communication_matrix.json links, a collective's group size, the largest rank) but do not hold; set where collectives are matched across ranks"},
        {"comm_absent_wait_ratio", U::kRatio, "with ranks missing: the time in matched collectives after every rank present arrived that communication.json calls idle (the wait for the ranks not in the inputs), share of collective time; 0 with none missing"},
        {"slow_link_count", U::kCount, "links below 80% of the median bandwidth of their transport type"},
        {"slow_rank_excess_ratio", U::kRatio, "how much later the last-arriving rank reaches collectives than the median other rank, share of its device span (of the sum of its step times on a rank without device activity: CPU-only, gloo)"},
        {"slow_ranks", U::kCount, "ranks the outlier test (Dixon's Q for 3-10 ranks, 3 sigma above) flags as late to collectives"},
        {"comm_failed_wait_ns", U::kNanoseconds, "impact: time ranks present sat in failed collectives (waiting for a rank that never came or came too late), per step"},
        {"slow_rank_excess_ns", U::kNanoseconds, "impact: how much later the slowest rank reaches collectives than the median rank, per its step"},
};
// clang-format on

void PublishSlowRankImpact(const CommunicationResult& r, const AnalysisWindow& w, MetricSet* m) {
  if (!r.cross.slow_rank || !r.cross.clocks_agree) {
    m->SetUnavailable("slow_rank_excess_ns", "no slow rank measured (see slow_rank_excess_ratio)");
    return;
  }
  const SlowRank& s = *r.cross.slow_rank;
  double steps = 0;
  for (const auto& [rank, n] : w.steps_by_rank) {
    if (rank == s.rank || rank == kNoRank) steps += static_cast<double>(n);
  }
  // The others wait for the late rank in every collective: its excess over
  // the collectives of its steady steps (cross_rank.h, SlowRankExcessWithin:
  // not the warm-up's too), per such step; over the whole trace when there
  // are no steps.
  const double excess =
      steps > 0 ? static_cast<double>(SlowRankExcessWithin(r.cross, w.DeviceIntervalsOfRank(s.rank))) / steps
                : static_cast<double>(s.excess_ns);
  m->Set("slow_rank_excess_ns", excess, "communication");
}

// The failed collectives' waits (cross_rank.h), over the steady-state
// window, per step (ranks' steps all counted) or per trace.
void PublishFailedWaitImpact(const CommunicationResult& r, const AnalysisWindow& w, MetricSet* m) {
  if (r.cross.matched == 0) return;  // absent, as comm_failed_count
  int64_t waited = 0;
  for (const auto& wait : r.cross.failed_waits) waited += IntersectionLength({wait}, w.intervals);
  m->Set("comm_failed_wait_ns",
         w.steps > 0 ? static_cast<double>(waited) / static_cast<double>(w.steps) : static_cast<double>(waited),
         "communication");
}

void PublishCommunicationAnalysis(AnalysisResults& in, MetricSet* m) {
  const CommunicationResult& r = in.Get(kCommunication);
  const AnalysisWindow& w = in.Get(kWindow);
  PublishCommunication(r, m);
  PublishSlowRankImpact(r, w, m);
  PublishFailedWaitImpact(r, w, m);
}

}  // namespace

const ResultSpec<CommunicationResult> kCommunication{
    "communication", [](AnalysisResults& in) { return ComputeCommunication(in.trace(), &in.Get(kWindow)); }};

const AnalysisSpec kCommunicationAnalysis{"communication", PublishCommunicationAnalysis, nullptr,
                                          kCommunicationMetrics};

}  // namespace aiprof
