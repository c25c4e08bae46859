// Which accelerator a trace's device tracks belong to, from what the trace
// says about them: the runtime's call names (cuda*/cu*, hip*, acl*, MTIA's
// runtime, Level Zero / SYCL, Synapse), the device processes' names ("GPU 0",
// "MTIA 17", "HPU", "XPU", "NPU"), the event categories (mtia_*, hpu_*) and
// the profiler's own keys (hip_runtime_version, roctracer_version,
// cuda_runtime_version, cupti_version). Never from the file name.
//
// Sets Trace::metadata["accelerator"] to one of cuda, rocm, mtia, hpu,
// ascend, xpu, or "unknown" (device processes or categories that name no
// family aiprof knows), and metadata["accelerator_evidence"] to the first fact
// that decided it. A trace whose device tracks hold no activity aiprof
// models (kernels, copies, sets, collectives) while its processes name an
// accelerator also gets metadata["accelerator_unmodelled"] = the process or
// category name, so analyses say "an accelerator aiprof has no model for",
// never "CPU-only". Nothing is set for a trace with no accelerator at all.
#ifndef AIPROF_SRC_IMPORTERS_COMMON_ACCELERATOR_H_
#define AIPROF_SRC_IMPORTERS_COMMON_ACCELERATOR_H_

#include <string>
#include <string_view>

#include "src/model/trace.h"

namespace aiprof {

// The family a device process name names ("MTIA 17" → "mtia", "GPU 0" → ""
// (a GPU of either vendor), "HPU" → "hpu"), "" when none or not decidable.
std::string_view AcceleratorOfProcessName(std::string_view name);

// True if a process name names a device of any kind (GPU, MTIA, HPU, XPU,
// NPU, TPU followed by nothing or a number).
bool IsDeviceProcessName(std::string_view name);

// Fills the metadata above from a finalized trace. Linear in slices and tracks.
void RecognizeAccelerator(Trace* trace);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_COMMON_ACCELERATOR_H_
