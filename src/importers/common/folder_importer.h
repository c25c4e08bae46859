// Folder inputs: a torch_npu rank folder, an msprof PROF_* folder, or a
// folder holding several ranks' outputs (those folders, Kineto/Chrome trace
// files, nsys SQLite exports) that loads as one model with a rank on every
// track.
//
// Each unit is imported and finalized on its own thread, then the parts are
// merged in path order (src/model/trace_merge.h). A unit's rank comes from its own
// data (profiler_info rank_id, Kineto distributedInfo), else from "rankN" /
// "rank-N" / "rank_N" in its name; two units with one rank, or a unit with
// no rank among several, is an error naming the paths.
#ifndef AIPROF_SRC_IMPORTERS_COMMON_FOLDER_IMPORTER_H_
#define AIPROF_SRC_IMPORTERS_COMMON_FOLDER_IMPORTER_H_

#include <memory>
#include <string>
#include <vector>

#include "src/base/status.h"
#include "src/model/trace.h"

namespace aiprof {

enum class FolderUnitKind { kTorchNpu, kMsprof, kFile };

struct FolderUnit {
  std::string path;
  FolderUnitKind kind;
};

// The importable units of `dir`, in path order; an error when there are none.
// `skipped` (optional) gets, for each file named like a trace (a trace
// extension or rankN in its name) that is not imported, "path: why".
StatusOr<std::vector<FolderUnit>> ListFolderUnits(const std::string& dir, std::vector<std::string>* skipped = nullptr);

// Imports one unit and gives every row of it its rank: the unit's own data
// (profiler_info rank_id, Kineto distributedInfo), else "rankN" in its
// name, else none (kNoRank). For `aiprof cluster map`, which reads ranks
// one by one.
StatusOr<std::unique_ptr<Trace>> ImportRankUnit(const FolderUnit& unit);

// Imports `units` in parallel and merges them (ranks as ImportFolder).
StatusOr<std::unique_ptr<Trace>> ImportUnits(const std::vector<FolderUnit>& units);

// Imports every unit of `dir` in parallel and merges them; each file named
// like a trace that is not one is counted (`folder_member_skipped`).
StatusOr<std::unique_ptr<Trace>> ImportFolder(const std::string& dir);

// Several files given as one input (`aiprof summary traces/aiprof-*`): one
// run's SDK files (src/importers/sdk/sdk_processes.h), merged by process as a
// folder of them is. A path that is not an SDK event or spill file is an error
// naming it (CheckSdkFile, for every path before any import), and so are
// files of two runs; an event file beside its spill file is left out.
StatusOr<std::unique_ptr<Trace>> ImportSdkFiles(const std::vector<std::string>& paths);

// Rank written in a path's last component ("rank1_ascend_pt", "rank-3.pt.trace.json"),
// or kNoRank. Visible for testing.
int32_t RankFromName(const std::string& path);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_COMMON_FOLDER_IMPORTER_H_
