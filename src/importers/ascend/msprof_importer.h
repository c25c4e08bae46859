// An msprof (CANN) PROF_* folder.
//
// Current layout: PROF_*/mindstudio_profiler_output/ with
//   msprof_*.json (and msprof_slice_N_*.json splits)   timeline (trace_view_importer.h)
//   op_summary_*.csv      per-task table: Op Name, OP Type, Task Type, Task Start Time(us),
//                         Task Duration(us), Task Wait Time(us), Block Num, ..., PMU columns
//                         → op metrics joined to the device slices (or the slices themselves)
//   task_time_*.csv       per-task times: kernel_name, kernel_type, stream_id, task_id,
//                         task_time(us), task_start(us), task_stop(us) → joined op metrics
//   op_statistic_*.csv    by OP Type → aggregate op metrics
//   api_statistic_*.csv   by API Name → aggregate op metrics
//   step_trace_*.csv      by Iteration ID → step breakdown table
// Older layout: PROF_*/device_N/summary/*.csv and device_N/timeline/*.json,
// the same files per device (device N taken from the folder name). Each
// file may be there gzip'd or zstd'd instead (op_summary_*.csv.gz of a
// `gzip -r`'d folder; folder_member.h).
#ifndef AIPROF_SRC_IMPORTERS_ASCEND_MSPROF_IMPORTER_H_
#define AIPROF_SRC_IMPORTERS_ASCEND_MSPROF_IMPORTER_H_

#include <memory>
#include <string>

#include "src/base/status.h"
#include "src/model/trace.h"

namespace aiprof {

// True for a PROF_* folder (either layout) or its mindstudio_profiler_output/.
bool IsMsprofFolder(const std::string& dir);
// Imports and finalizes one msprof folder.
StatusOr<std::unique_ptr<Trace>> ImportMsprofFolder(const std::string& dir);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_ASCEND_MSPROF_IMPORTER_H_
