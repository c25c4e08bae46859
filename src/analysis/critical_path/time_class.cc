#include "src/analysis/critical_path/time_class.h"

#include "src/analysis/common/trace_index.h"

namespace aiprof {

const char* PathClassName(PathClass c) {
  switch (c) {
    case PathClass::kCompute: return "compute";
    case PathClass::kCopy: return "copy";
    case PathClass::kCollective: return "collective";
    case PathClass::kHostOp: return "host_op";
    case PathClass::kRuntime: return "runtime";
    case PathClass::kSync: return "sync_call";
    case PathClass::kIdleDataLoading: return "idle_data_loading";
    case PathClass::kIdleSync: return "idle_sync";
    case PathClass::kIdleHostBound: return "idle_host_bound";
    case PathClass::kIdleOther: return "idle_other";
    case PathClass::kIdleStartup: return "idle_startup";
  }
  return "?";
}

PathClass ClassOfSlice(EventKind kind, std::string_view name) {
  switch (kind) {
    case EventKind::kKernel: return PathClass::kCompute;
    case EventKind::kMemcpy:
    case EventKind::kMemset: return PathClass::kCopy;
    case EventKind::kCollective: return PathClass::kCollective;
    case EventKind::kRuntime:
    case EventKind::kDriver:
      // A blocking sync or synchronous copy call waits, as the attribution
      // counts it (synchronisation): the same two predicates.
      return IsBlockingSyncName(name) || IsSyncCopyName(name) ? PathClass::kSync : PathClass::kRuntime;
    case EventKind::kSync: return PathClass::kSync;
    case EventKind::kTraceSpan: return PathClass::kIdleOther;
    default: break;
  }
  if (IsProfilerWrapperName(name)) return PathClass::kIdleOther;
  if (IsDataLoaderName(name)) return PathClass::kIdleDataLoading;
  return PathClass::kHostOp;
}

PathClass IdleClassOf(GapCause cause) {
  switch (cause) {
    case GapCause::kDataLoading: return PathClass::kIdleDataLoading;
    case GapCause::kSync: return PathClass::kIdleSync;
    case GapCause::kHostBound: return PathClass::kIdleHostBound;
    case GapCause::kOther: return PathClass::kIdleOther;
    case GapCause::kStartup: return PathClass::kIdleStartup;
  }
  return PathClass::kIdleOther;
}

}  // namespace aiprof
