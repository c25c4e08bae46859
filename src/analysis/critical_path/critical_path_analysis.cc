#include "src/analysis/critical_path/critical_path_analysis.h"

#include "src/analysis/communication/communication_analysis.h"
#include "src/analysis/window/window_analysis.h"
#include "src/model/trace.h"

namespace aiprof {
namespace {

using U = MetricUnit;

// The metrics it publishes, one a line to read as a table (docs/metrics.md
// documents each).
// clang-format off
constexpr MetricInfo kCriticalPathMetrics[] = {
        {"critical_path_collective_ns", U::kNanoseconds, "collective time on the critical path, per steady step"},
        {"critical_path_compute_ns", U::kNanoseconds, "kernel time on the critical path, per steady step"},
        {"critical_path_copy_hidden_ratio", U::kRatio, "share of the steps' device copy time that is off the critical path"},
        {"critical_path_copy_ns", U::kNanoseconds, "device copy time on the critical path, per steady step"},
        {"critical_path_host_ns", U::kNanoseconds, "host op, runtime and sync-call time on the critical path, per steady step"},
        {"critical_path_idle_ns", U::kNanoseconds, "idle and waiting time on the critical path, per steady step"},
        {"critical_path_ns", U::kNanoseconds, "critical-path length (step start to the end of its last launched work), per steady step"},
};
// clang-format on

CriticalPathResult ComputePath(AnalysisResults& in) {
  const Trace& trace = in.trace();
  // Collectives are joined across ranks only where the communication
  // analysis trusts the ranks' clocks; one rank needs no communication analysis.
  bool ranks = false;
  for (size_t t = 0; t < trace.tracks.size() && !ranks; ++t) ranks = trace.tracks.rank[t] != trace.tracks.rank[0];
  CriticalPathOptions o;
  o.window = &in.Get(kWindow);
  o.cross = ranks ? &in.Get(kCommunication).cross : nullptr;
  return ComputeCriticalPath(trace, o);
}

void PublishCriticalPathAnalysis(AnalysisResults& in, MetricSet* m) { PublishCriticalPath(in.Get(kCriticalPath), m); }

}  // namespace

const ResultSpec<CriticalPathResult> kCriticalPath{"critical_path", ComputePath};

const AnalysisSpec kCriticalPathAnalysis{"critical_path", PublishCriticalPathAnalysis, nullptr, kCriticalPathMetrics};

}  // namespace aiprof
