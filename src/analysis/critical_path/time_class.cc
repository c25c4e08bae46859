#include "src/analysis/critical_path/time_class.h"

#include "src/analysis/common/trace_index.h"

namespace aiprof {

const char* TimeClassName(TimeClass c) {
  switch (c) {
    case TimeClass::kCompute: return "compute";
    case TimeClass::kCopy: return "copy";
    case TimeClass::kCollective: return "collective";
    case TimeClass::kHostOp: return "host_op";
    case TimeClass::kRuntime: return "runtime";
    case TimeClass::kSync: return "sync_call";
    case TimeClass::kIdleDataLoading: return "idle_data_loading";
    case TimeClass::kIdleSync: return "idle_sync";
    case TimeClass::kIdleHostBound: return "idle_host_bound";
    case TimeClass::kIdleOther: return "idle_other";
  }
  return "?";
}

bool IsProfilerWrapperName(std::string_view name) {
  return name.starts_with("ProfilerStep#") || name.starts_with("PyTorch Profiler") ||
         name.starts_with("## step") || name == "Trace";
}

TimeClass ClassOfSlice(EventKind kind, std::string_view name) {
  switch (kind) {
    case EventKind::kKernel: return TimeClass::kCompute;
    case EventKind::kMemcpy:
    case EventKind::kMemset: return TimeClass::kCopy;
    case EventKind::kCollective: return TimeClass::kCollective;
    case EventKind::kRuntime:
    case EventKind::kDriver: return TimeClass::kRuntime;
    case EventKind::kSync: return TimeClass::kSync;
    case EventKind::kTraceSpan: return TimeClass::kIdleOther;
    default: break;
  }
  if (IsProfilerWrapperName(name)) return TimeClass::kIdleOther;
  if (IsDataLoaderName(name)) return TimeClass::kIdleDataLoading;
  return TimeClass::kHostOp;
}

TimeClass IdleClassOf(GapCause cause) {
  switch (cause) {
    case GapCause::kDataLoading: return TimeClass::kIdleDataLoading;
    case GapCause::kSync: return TimeClass::kIdleSync;
    case GapCause::kHostBound: return TimeClass::kIdleHostBound;
    case GapCause::kOther: return TimeClass::kIdleOther;
  }
  return TimeClass::kIdleOther;
}

}  // namespace aiprof
