#include "src/model/event_kind.h"

#include <algorithm>

#include "src/base/ascii.h"

namespace aiprof {
namespace {

bool IsCollectiveKernelName(std::string_view name) {
  return Contains(name, "nccl") || Contains(name, "rccl") || Contains(name, "hccl") ||
         Contains(name, "Nccl") || Contains(name, "Hccl") || Contains(name, "hcom_");
}

}  // namespace

const char* EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kOther: return "other";
    case EventKind::kCpuOp: return "cpu_op";
    case EventKind::kPythonFunction: return "python_function";
    case EventKind::kUserAnnotation: return "user_annotation";
    case EventKind::kGpuUserAnnotation: return "gpu_user_annotation";
    case EventKind::kRuntime: return "runtime";
    case EventKind::kDriver: return "driver";
    case EventKind::kKernel: return "kernel";
    case EventKind::kMemcpy: return "memcpy";
    case EventKind::kMemset: return "memset";
    case EventKind::kCollective: return "collective";
    case EventKind::kSync: return "sync";
    case EventKind::kTraceSpan: return "trace_span";
  }
  return "other";
}

bool IsStreamWaitCallName(std::string_view name) { return Contains(name, kStreamWaitCallMark); }

EventKind ClassifyEvent(std::string_view category, std::string_view name) {
  // torch.distributed's gloo backend times each collective it runs on the
  // host with record_function("gloo:<op>"): a user annotation in Kineto's
  // and the legacy exports, but a cpu_op where the export has no categories
  // (torch's autograd profiler read directly, as aiprof trace's hook does
  // without Kineto). One rule for both: such a span is a user annotation,
  // which is what host collectives are found among
  // (src/analysis/communication/collectives.cc).
  if (category == "cpu_op" || EqualsIgnoreCase(category, "operator")) {
    return name.starts_with("gloo:") ? EventKind::kUserAnnotation : EventKind::kCpuOp;
  }
  if (category == "python_function") return EventKind::kPythonFunction;
  if (category == "user_annotation") return EventKind::kUserAnnotation;
  if (category == "gpu_user_annotation") return EventKind::kGpuUserAnnotation;
  if (category == "cuda_runtime" || category == "Runtime" || category == "cuda_profiler_range" ||
      category == "cann") {
    if (Contains(name, "Synchronize") || IsStreamWaitCallName(name)) return EventKind::kSync;
    return EventKind::kRuntime;
  }
  if (category == "cuda_driver") return EventKind::kDriver;
  if (category == "cuda_sync") return EventKind::kSync;
  if (EqualsIgnoreCase(category, "kernel")) {
    return IsCollectiveKernelName(name) ? EventKind::kCollective : EventKind::kKernel;
  }
  if (category == "hccl") return EventKind::kCollective;  // Ascend collective (HCCL group track)
  if (category == "gpu_memcpy" || category == "Memcpy") return EventKind::kMemcpy;
  if (category == "gpu_memset" || category == "Memset") return EventKind::kMemset;
  if (category == "Trace") return EventKind::kTraceSpan;
  // Meta MTIA (Kineto's MTIA profiler): device-side command-processor events
  // on the device's stream tracks; runtime calls on host threads.
  if (category == "mtia_ccp_events") {
    if (name == "dma_request") return EventKind::kMemcpy;
    if (name == "event_record" || name == "event_wait") return EventKind::kOther;
    return EventKind::kKernel;
  }
  if (category == "mtia_runtime") {
    if (Contains(name, "ynchronize") || Contains(name, "waitOnEvent")) return EventKind::kSync;
    return EventKind::kRuntime;
  }
  return EventKind::kOther;
}

}  // namespace aiprof
