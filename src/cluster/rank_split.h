// One rank's part of a trace that holds several: an `aiprof trace` capture
// of a torch.distributed job (each process's tracks on its rank), or a
// multi-rank folder imported to one file (`aiprof import JOB -o job.aiprof`).
// The cluster map digests each part as it digests a rank's own file
// (cluster_map.h), so a job given as one file reduces as its rank files do.
//
// A part holds the tracks of its rank and what lies on them (slices and
// their args, instants, counters, stack samples, steps), the flows between
// its slices, the op metrics and step breakdowns of its rank, every call
// site, and the metadata the rank's own file had: MergeTraces keeps a part's
// keys as "rank<R>.<key>", which become "<key>" again over the trace's own
// keys ("world_size", "hostname" of a capture); "rank" is R. Tracks of no
// rank (a capture's launcher, aiprof's own samples of other processes) are
// in no part. Import diagnostics are counted over the whole file, not per
// rank: the parts hold none (the map puts them beside the first rank).
#ifndef AIPROF_SRC_CLUSTER_RANK_SPLIT_H_
#define AIPROF_SRC_CLUSTER_RANK_SPLIT_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

// The distinct ranks of the trace's tracks, ascending (kNoRank left out).
std::vector<int32_t> TrackRanks(const Trace& trace);

// Tracks of no rank, and the slices and counter points on them.
struct RanklessPart {
  uint64_t tracks = 0, slices = 0, counter_points = 0;
};
RanklessPart CountRankless(const Trace& trace);

// Rank `rank`'s part of `trace`. Its strings are `trace`'s (the same ids,
// the bytes not copied): `trace` must outlive it. Linear in the trace's rows.
std::unique_ptr<Trace> RankPart(const Trace& trace, int32_t rank);

}  // namespace aiprof

#endif  // AIPROF_SRC_CLUSTER_RANK_SPLIT_H_
