// Merges finalized per-rank traces into one Trace.
//
// Each part keeps its tables; ids are remapped (strings re-interned, track,
// slice and arg indices offset). Parts are appended in order, and each part's
// slices are sorted by (track, start) with track ids above the previous
// part's, so the merged slices keep Finalize()'s ordering and depths.
// Metadata keys of part i are kept as "rank<R>.<key>" (or "part<i>.<key>"
// when the rank is unknown); diagnostics are summed by kind.
#ifndef AIPROF_SRC_MODEL_TRACE_MERGE_H_
#define AIPROF_SRC_MODEL_TRACE_MERGE_H_

#include <memory>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

std::unique_ptr<Trace> MergeTraces(std::vector<std::unique_ptr<Trace>> parts);

}  // namespace aiprof

#endif  // AIPROF_SRC_MODEL_TRACE_MERGE_H_
