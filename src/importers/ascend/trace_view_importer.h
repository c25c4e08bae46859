// Ascend timelines: torch_npu's trace_view.json and msprof's msprof_*.json.
//
// Both are Chrome trace events (a bare array, ts as a string of µs with ns
// decimals) read by the Chrome JSON tokenizer and parser. What differs is
// meaning: pids are bit-packed ((pid<<10)|(sort<<5)|device) or, in older
// files, concatenated digits, so tracks are identified by their
// process_name metadata instead:
//   Python                      host threads (roles inferred as for Kineto)
//   CANN / AscendCL / Runtime   host runtime threads, category "cann"
//   Ascend Hardware             device streams ("Stream N"); category from the
//                               Task Type arg: kernel, Memcpy, npu_sync, hccl;
//                               HCCL's own tasks (found by the collective's
//                               connection_id or a Plane task's stream and
//                               task id) → "hccl_task", not copies
//   HCCL / Communication        "Group N Communication" → category "hccl"
//                               (collectives); "Plane N" → "hccl_task"
//   Overlap Analysis            spans Computing / Communication / Free ...
//   anything else with C events device counters (HBM, LLC, AI Core Freq...)
#ifndef AIPROF_SRC_IMPORTERS_ASCEND_TRACE_VIEW_IMPORTER_H_
#define AIPROF_SRC_IMPORTERS_ASCEND_TRACE_VIEW_IMPORTER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "src/base/status.h"

namespace aiprof {

class TraceBuilder;

// Imports one Ascend timeline file; every track gets `rank` (kNoRank when
// unknown). `fallback_device` is used where the pid does not encode one.
Status ImportAscendTimeline(const std::string& path, int32_t rank, int32_t fallback_device,
                            TraceBuilder* builder);

// Registry entry for a lone trace_view.json / msprof_*.json file: a bare
// JSON array whose first bytes name an Ascend process or flow.
bool DetectAscendTimeline(std::string_view prefix);
Status ImportAscendTimelineFile(const std::string& path, TraceBuilder* builder);

// Device index encoded in a bit-packed pid, given the host (Python) pid it
// packs; `fallback` when the pid is not packed. Visible for testing.
int32_t AscendDeviceFromPid(int64_t pid, int64_t host_pid, int32_t fallback);
// Category for a device task from its Task Type arg and name. Visible for testing.
std::string_view AscendTaskCategory(std::string_view task_type, std::string_view name);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_ASCEND_TRACE_VIEW_IMPORTER_H_
