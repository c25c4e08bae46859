// Nsight Systems reports exported with `nsys export --type sqlite`.
//
// Tables read (each optional; a database with none of them is an error):
//   StringIds(id, value)                         names by id
//   CUPTI_ACTIVITY_KIND_RUNTIME                  CUDA API calls → host thread slices, "cuda_runtime"
//   CUPTI_ACTIVITY_KIND_KERNEL                   kernels → device stream slices, "kernel"
//   CUPTI_ACTIVITY_KIND_MEMCPY / _MEMSET         copies / sets → "gpu_memcpy" / "gpu_memset"
//   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION          syncs → device stream slices, "cuda_sync"
//   NVTX_EVENTS                                  push/pop and start/end ranges → "user_annotation"
//                                                slices; marks → instants; text or textId
//   TARGET_INFO_GPU(id, name, ...)               metadata "gpu.<id>.name"
// Timestamps are integer ns. globalTid packs pid in bits 24..47 and tid in
// bits 0..23; device activity goes to track ("GPU <deviceId>", streamId).
// correlationId is kept on runtime calls and device activity, so Finalize()
// links them as flows.
#ifndef AIPROF_SRC_IMPORTERS_NSYS_NSYS_SQLITE_IMPORTER_H_
#define AIPROF_SRC_IMPORTERS_NSYS_NSYS_SQLITE_IMPORTER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "src/base/status.h"

namespace aiprof {

class TraceBuilder;

bool DetectNsysSqlite(std::string_view prefix);
Status ImportNsysSqlite(const std::string& path, TraceBuilder* builder);

// pid and tid of an Nsight Systems globalTid. Visible for testing.
inline int64_t NsysPid(int64_t global_tid) { return (global_tid >> 24) & 0xFFFFFF; }
inline int64_t NsysTid(int64_t global_tid) { return global_tid & 0xFFFFFF; }

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_NSYS_NSYS_SQLITE_IMPORTER_H_
