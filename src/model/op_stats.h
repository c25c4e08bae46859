// Per-(category, name) duration statistics of a trace's slices.
#ifndef AIPROF_SRC_MODEL_OP_STATS_H_
#define AIPROF_SRC_MODEL_OP_STATS_H_

#include "src/model/trace.h"

namespace aiprof {

// One pass over the slices, no sort: names are dense string ids, so a
// per-name chain finds each slice's group; durations are then scattered
// group by group (a counting sort) and quantiles selected per group.
// Graph-capture copies (IsGraphCaptureTrack) are left out: they are captured
// ops re-timed onto replayed kernels, not host work.
OpStatTable ComputeOpStats(const Trace& trace);

// How many slices ComputeOpStats counts (its rows' counts sum to this): all
// but those on graph-capture tracks. What a stored table must cover.
uint64_t OpStatsCountedSlices(const Trace& trace);

// Whether trace.op_stats describes trace.slices (slices are only ever
// changed by TraceBuilder, before op_stats is filled, or appended to).
inline bool OpStatsCurrent(const Trace& trace) {
  return trace.op_stats.size() > 0 && trace.op_stats_slices == trace.slices.size();
}

}  // namespace aiprof

#endif  // AIPROF_SRC_MODEL_OP_STATS_H_
