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
#include <map>
#include <memory>
#include <string>
#include <string_view>
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

// At most this many ranks are split from one trace: each part also costs
// the trace's string ids and top-level metadata, so a hostile file of a
// million tiny ranks would take hours. MapUnitToDigests refuses more.
inline constexpr size_t kMaxRanksPerTrace = 4096;

// The parts of a trace, one per rank of its tracks (TrackRanks). The
// constructor reads every table once; Part(i) copies rank i's rows, so all
// parts together cost the trace's rows once, not once per rank, plus per
// part its string ids and top-level metadata.
class RankSplitter {
 public:
  // `trace` must outlive the splitter and its parts: their strings are
  // `trace`'s (the same ids, the bytes not copied).
  explicit RankSplitter(const Trace& trace);
  ~RankSplitter();
  const std::vector<int32_t>& ranks() const { return ranks_; }
  // ranks()[i]'s part.
  std::unique_ptr<Trace> Part(size_t i) const;

 private:
  struct Rows;
  const Trace& trace_;
  std::vector<int32_t> ranks_;
  std::vector<uint32_t> part_of_track_;                 // kNoPart: a track of no rank
  std::vector<uint32_t> local_track_;                   // a track's id in its part
  std::vector<uint32_t> local_slice_;                   // a slice's id in its part
  std::vector<Rows> rows_;                              // per part, its rows of each table
  std::vector<std::string_view> strings_;               // the trace's, by id
  std::map<std::string, std::string> shared_metadata_;  // keys of no part
};

}  // namespace aiprof

#endif  // AIPROF_SRC_CLUSTER_RANK_SPLIT_H_
