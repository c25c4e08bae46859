// Why perf_event_open failed, in words a user can act on: which of
// kernel.perf_event_paranoid, missing capabilities (CAP_PERFMON /
// CAP_SYS_ADMIN), a seccomp filter (containers' default profiles) or a
// kernel without perf events blocked it, and how to allow it.
#ifndef AIPROF_SRC_CAPTURE_PERMISSIONS_H_
#define AIPROF_SRC_CAPTURE_PERMISSIONS_H_

#include <string>

namespace aiprof {

struct PerfEnvironment {
  int paranoid = -100;          // /proc/sys/kernel/perf_event_paranoid; -100 when unreadable
  bool has_perfmon = false;     // CAP_PERFMON (38) or CAP_SYS_ADMIN (21) effective
  int seccomp = 0;              // /proc/self/status "Seccomp:" (2: filter)
  bool in_container = false;    // /.dockerenv, /run/.containerenv or a container cgroup
};

PerfEnvironment ReadPerfEnvironment();

// One paragraph naming what blocked perf_event_open (errno `err`) and how to allow it.
std::string ExplainPerfError(int err, const PerfEnvironment& env);

}  // namespace aiprof

#endif  // AIPROF_SRC_CAPTURE_PERMISSIONS_H_
