// What a stretch of time is, in the words every "where does the step go"
// figure shares: the critical path's composition (critical_path.h) and,
// later, the attribution tree. Device activity by kind, host work, and idle
// or waiting by the causes of the gap analysis (src/analysis/gaps/).
#ifndef AIPROF_SRC_ANALYSIS_CRITICAL_PATH_TIME_CLASS_H_
#define AIPROF_SRC_ANALYSIS_CRITICAL_PATH_TIME_CLASS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "src/analysis/common/trace_index.h"
#include "src/analysis/gaps/idle_gaps.h"
#include "src/model/event_kind.h"

namespace aiprof {

enum class PathClass : uint8_t {
  kCompute = 0,      // a device kernel
  kCopy,             // a device copy or set (memcpy, memset)
  kCollective,       // a collective (NCCL/HCCL kernel, gloo span)
  kHostOp,           // a host op's own time (cpu_op, python_function, record_function)
  kRuntime,          // a runtime/driver call's own time (launches, allocations)
  kSync,             // a synchronisation or synchronous copy call's own time (IsBlockingSyncName,
                     // IsSyncCopyName: the attribution's synchronisation), less the device work it
                     // waited for that the path shows
  kIdleDataLoading,  // waiting on data loading (inside a data-loader span)
  kIdleSync,         // a device stream waiting for another stream (stream wait event)
  kIdleHostBound,    // the device waiting for the host to launch (launch delay: the call's start to
                     // the activity's start, unless it started kMinLaunchHoldNs or more after the
                     // call returned: then kIdleOther, unexplained, critical_path.h)
  kIdleOther,        // no recorded work: host time outside any op (a wrapper's self time), device gaps
  kIdleStartup,      // the device waiting while the host does one-off start-up work (StartupWork,
                     // src/analysis/window/startup_work.h: a start-up call, a stream capture window)
                     // that covers at least half of the wait: GapCause::kStartup's rule
};
inline constexpr size_t kPathClassCount = 11;

// Stable lower-case names ("compute", "copy", ..., "idle_other").
const char* PathClassName(PathClass c);

// The class of a slice's own time, from its kind and name: profiler wrapper
// spans (ProfilerStep#N, "PyTorch Profiler (N)", the "Trace" span) are
// structure, their own time kIdleOther; data-loader spans kIdleDataLoading;
// runtime/driver calls that block (a sync call, a synchronous copy such as
// hipMemcpyWithStream) kSync, like the attribution's synchronisation.
PathClass ClassOfSlice(EventKind kind, std::string_view name);

// The idle class of a gap cause.
PathClass IdleClassOf(GapCause cause);

inline bool IsIdleClass(PathClass c) { return c >= PathClass::kIdleDataLoading; }
// Device work: compute, copy, collective.
inline bool IsDeviceClass(PathClass c) { return c <= PathClass::kCollective; }

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_CRITICAL_PATH_TIME_CLASS_H_
