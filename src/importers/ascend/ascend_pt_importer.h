// A torch_npu profiler folder (`*_ascend_pt/`, or its ASCEND_PROFILER_OUTPUT/).
//
//   profiler_info_<rank>.json     rank_id, profiler config      → metadata, rank
//   profiler_metadata.json        ENV_VARIABLES and other keys  → metadata
//   ASCEND_PROFILER_OUTPUT/
//     trace_view.json             the timeline                  → tracks, slices, flows
//     kernel_details.csv          per-task PMU columns          → op metrics joined to device slices
//                                 (the device slices themselves when there is no trace_view.json)
//     op_statistic.csv            per-op-type totals            → aggregate op metrics
//     api_statistic.csv           per-API totals                → aggregate op metrics
//     step_trace_time.csv         step breakdown                → step breakdown table
//     communication(_matrix).json per-op comm times, links      → aggregate op metrics
//     memory_record.csv, npu_module_mem.csv                     → counters
//     operator_memory.csv         per-op allocations            → instants, one per allocation
//     l2_cache.csv                per-task L2 hit rates         → op metrics joined to device slices
// Everything else (operator_details.csv, ...) is not read. Each file may be
// there gzip'd or zstd'd instead (`gzip -r`: kernel_details.csv.gz;
// folder_member.h).
#ifndef AIPROF_SRC_IMPORTERS_ASCEND_ASCEND_PT_IMPORTER_H_
#define AIPROF_SRC_IMPORTERS_ASCEND_ASCEND_PT_IMPORTER_H_

#include <memory>
#include <string>

#include "src/base/status.h"
#include "src/model/trace.h"

namespace aiprof {

// True if `dir` is a torch_npu rank folder or its ASCEND_PROFILER_OUTPUT/.
bool IsAscendPtFolder(const std::string& dir);

// Imports and finalizes one torch_npu rank folder.
StatusOr<std::unique_ptr<Trace>> ImportAscendPtFolder(const std::string& dir);

// Rank from profiler_info_<rank>.json ("rank_id"), else from the file name;
// kNoRank when neither is present. Visible for testing.
int32_t ReadAscendRank(const std::string& root, Trace* trace_metadata);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_ASCEND_ASCEND_PT_IMPORTER_H_
