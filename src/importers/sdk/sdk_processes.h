// One run's SDK files, one per process (a program that forks: DataLoader
// workers, a server's children): AIPROF_OUTPUT=dir/ leaves
// dir/aiprof-<pid>.aiprof for each process, or its spill file
// aiprof-<pid>.aiprof.part when the process died before writing it
// (docs/sdk.md). A folder of them loads as one trace, each process on its
// own tracks (src/importers/common/folder_importer.h).
//
// The files carry no run identity: a pid, a rank, and the clock base of the
// runtime (CLOCK_MONOTONIC at its start, which a forked child inherits). So
// what tells two runs apart is: the same pid twice, or clock bases whose
// processes' recorded times [clock base, last event] do not overlap (a run
// that ended before the other began). Two runs at the same time pass.
#ifndef AIPROF_SRC_IMPORTERS_SDK_SDK_PROCESSES_H_
#define AIPROF_SRC_IMPORTERS_SDK_SDK_PROCESSES_H_

#include <string>
#include <vector>

#include "src/base/status.h"
#include "src/model/trace.h"

namespace aiprof {

// True for a trace imported from an SDK file (event or spill file).
bool IsSdkProcessTrace(const Trace& t);

// True when `path` is an event file whose spill file (path + ".part") is
// among `paths`: the spill file holds everything the process recorded (an
// event file beside it is an earlier aiprof_flush()), as `aiprof trace`
// reads them (src/capture).
bool SupersededBySpillFile(const std::string& path, const std::vector<std::string>& paths);

// OkStatus when `path` is an SDK event or spill file, told by its first
// bytes as the importer tells them; else an error naming it. Several inputs
// of one command line must each be one (ImportSdkFiles).
Status CheckSdkFile(const std::string& path);

// An error naming the files when `parts` (imported from `paths`, every one
// IsSdkProcessTrace) cannot be one run's processes, as above.
Status CheckSdkFilesOfOneRun(const std::vector<std::string>& paths, const std::vector<const Trace*>& parts);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_SDK_SDK_PROCESSES_H_
