// The communication analysis: time per collective type, exposed
// communication per step (collective_stats.h), and across ranks wait versus
// transfer time, the slow rank and slow links (cross_rank.h).
#ifndef AIPROF_SRC_ANALYSIS_COMMUNICATION_COMMUNICATION_H_
#define AIPROF_SRC_ANALYSIS_COMMUNICATION_COMMUNICATION_H_

#include <string>
#include <vector>

#include "src/analysis/communication/collective_stats.h"
#include "src/analysis/communication/cross_rank.h"
#include "src/model/trace.h"

namespace aiprof {

class MetricSet;
struct AnalysisWindow;

// A per-step exposure above this share of the step is listed as evidence.
inline constexpr double kExposedStepEvidenceShare = 0.10;
// How many per-step lines the text report shows per rank.
inline constexpr size_t kStepLinesPerRank = 5;

struct CommunicationResult {
  size_t collective_slices = 0;
  // The trace's collectives (CollectCollectives, slice order) and the step
  // that issued each (CollectiveSteps, same order): read once here, for the
  // users that need the instances themselves (the cluster map's digest).
  std::vector<CollectiveSlice> collectives;
  std::vector<int64_t> collective_steps;
  CollectiveStats stats;
  CrossRankResult cross;
};

// O(n log n) in slices.
// `window` (may be null): the per-step table on device periods where the
// device runs behind the host (ComputeCollectiveStats).
CommunicationResult ComputeCommunication(const Trace& trace, const AnalysisWindow* window = nullptr);

// Publishes comm_wait_ratio, slow_rank_excess_ratio, slow_ranks and
// slow_link_count (each unavailable, with the reason, when the trace cannot
// support it), and communication_bound / slow_rank / slow_link evidence.
// comm_ratio, comm_overlap_ratio and comm_exposed_ratio come from the
// breakdown.
void PublishCommunication(const CommunicationResult& result, MetricSet* metrics);


}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_COMMUNICATION_COMMUNICATION_H_
