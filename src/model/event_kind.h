// What a slice is, derived once from its category (and, for kernels, name).
#ifndef AIPROF_SRC_MODEL_EVENT_KIND_H_
#define AIPROF_SRC_MODEL_EVENT_KIND_H_

#include <cstdint>
#include <string_view>

namespace aiprof {

enum class EventKind : uint8_t {
  kOther = 0,
  kCpuOp,             // cpu_op, Operator
  kPythonFunction,    // python_function
  kUserAnnotation,    // user_annotation (ProfilerStep#N, record_function)
  kGpuUserAnnotation, // gpu_user_annotation: a label on a device track, not activity
  kRuntime,           // cuda_runtime, Runtime, CANN / AscendCL API
  kDriver,            // cuda_driver
  kKernel,            // kernel, Kernel, device task
  kMemcpy,            // gpu_memcpy, Memcpy
  kMemset,            // gpu_memset, Memset
  kCollective,        // a kernel that is a collective (nccl/hccl/rccl)
  kSync,              // cuda_sync and synchronisation runtime calls
  kTraceSpan,         // the profiler's own "Trace" span
};
const char* EventKindName(EventKind kind);

// Classifies by category, refined by name where the category is too coarse.
EventKind ClassifyEvent(std::string_view category, std::string_view name);

// A host call that makes a stream wait for an event is one whose name
// contains this (case-sensitive): cudaStreamWaitEvent, hipStreamWaitEvent,
// cuStreamWaitEvent, aclrtStreamWaitEvent (AscendCL@aclrtStreamWaitEvent).
// The one rule: ClassifyEvent makes such runtime calls kSync, and the
// critical path's dependency graph counts and binds them as stream waits.
inline constexpr std::string_view kStreamWaitCallMark = "StreamWaitEvent";
bool IsStreamWaitCallName(std::string_view name);

// True for kinds that occupy a device: kernels, copies, sets, collectives.
inline bool IsDeviceActivity(EventKind k) {
  return k == EventKind::kKernel || k == EventKind::kMemcpy || k == EventKind::kMemset ||
         k == EventKind::kCollective;
}

}  // namespace aiprof

#endif  // AIPROF_SRC_MODEL_EVENT_KIND_H_
