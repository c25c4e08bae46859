// Map: one rank's trace → its digest (digest.h), and inputs → digests.
//
// An input is a trace file, a torch_npu rank folder, an msprof folder, or a
// job folder of those (the multi-rank folder import's discovery,
// ListFolderUnits): each unit is one rank, or several when its trace holds
// several (an `aiprof trace` capture of a whole torch.distributed job, a
// job folder imported to one file): one digest per rank then, each as the
// rank's own file would give (rank_split.h). A unit that cannot be imported
// still yields a digest, holding the reason (and the rank its name gives),
// and so does a trace of several ranks that says it is one of them.
//
// Ops: slices grouped by (category, name), a call nested in a call of the
// same op on its track counted as part of the outer one; the kDigestMaxOps with the
// largest total kept, the rest summed into "(other ops)". Host: the trace's
// "hostname" / "host_name" metadata, else `default_host` (the machine that
// runs the map, which is where the ranks ran when the map runs beside them).
#ifndef AIPROF_SRC_CLUSTER_CLUSTER_MAP_H_
#define AIPROF_SRC_CLUSTER_CLUSTER_MAP_H_

#include <string>
#include <string_view>
#include <vector>

#include "src/cluster/digest.h"
#include "src/model/trace.h"

namespace aiprof {

// Digest of a trace holding one rank (a trace of several: MapUnitToDigests). Linear in slices plus O(n log n) sorts.
RankDigest MapTrace(const Trace& trace, const std::string& source, const std::string& default_host);

// The rank units of `inputs` (files and folders, in the order given; a
// folder's units in path order). A folder with nothing importable becomes
// one unit that maps to an error digest.
struct MapUnit {
  std::string path;
  int kind = -1;  // FolderUnitKind, -1 when the input could not be listed
  std::string error;
};
std::vector<MapUnit> ListMapUnits(const std::vector<std::string>& inputs);

// Imports and maps one unit: one digest per rank it holds, by rank (at
// least one); never fails (an error digest instead).
std::vector<RankDigest> MapUnitToDigests(const MapUnit& unit, const std::string& default_host);

// Maps units[i] for every i with i % stride == offset, on `threads` threads:
// each one's digests (MapUnitToDigests), in unit order.
std::vector<std::vector<RankDigest>> MapUnitGroups(const std::vector<MapUnit>& units, size_t offset, size_t stride,
                                                   size_t threads, const std::string& default_host);

// MapUnitGroups' digests in one list, in unit order.
std::vector<RankDigest> MapUnits(const std::vector<MapUnit>& units, size_t offset, size_t stride, size_t threads,
                                 const std::string& default_host);

// This machine's host name ("" when unknown).
std::string LocalHostName();

// An op's name without the object addresses Python prints (" at 0x7f..."),
// so per-op statistics match across ranks. Visible for testing.
std::string StableOpName(std::string_view name);

}  // namespace aiprof

#endif  // AIPROF_SRC_CLUSTER_CLUSTER_MAP_H_
