#include "src/capture/permissions.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace aiprof {

PerfEnvironment ReadPerfEnvironment() {
  PerfEnvironment env;
  std::ifstream paranoid("/proc/sys/kernel/perf_event_paranoid");
  if (!(paranoid >> env.paranoid)) env.paranoid = -100;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("CapEff:", 0) == 0) {
      unsigned long long caps = std::stoull(line.substr(7), nullptr, 16);
      env.has_perfmon = (caps >> 38 & 1) || (caps >> 21 & 1);
    } else if (line.rfind("Seccomp:", 0) == 0) {
      env.seccomp = std::stoi(line.substr(8));
    }
  }
  env.in_container = access("/.dockerenv", F_OK) == 0 || access("/run/.containerenv", F_OK) == 0;
  std::ifstream cgroup("/proc/1/cgroup");
  for (std::string line; std::getline(cgroup, line);) {
    if (line.find("docker") != std::string::npos || line.find("kubepods") != std::string::npos ||
        line.find("containerd") != std::string::npos || line.find("libpod") != std::string::npos) {
      env.in_container = true;
    }
  }
  return env;
}

std::string ExplainPerfError(int err, const PerfEnvironment& env) {
  std::string out = std::string("perf_event_open failed: ") + std::strerror(err) + ". ";
  if (err == ENOSYS || err == ENOENT || err == EOPNOTSUPP) {
    return out + "This kernel has no perf events (CONFIG_PERF_EVENTS), or the software cpu-clock event is "
                 "unavailable; host samples cannot be recorded here.";
  }
  if (err != EACCES && err != EPERM) return out + "Host samples were not recorded.";
  bool named = false;
  if (env.seccomp == 2 && !env.has_perfmon) {
    out += "A seccomp filter is active (Seccomp: 2 in /proc/self/status; container runtimes' default profiles "
           "deny perf_event_open): run the container with --cap-add PERFMON (Docker >= 20.10 then allows the "
           "call) or --security-opt seccomp=<profile allowing perf_event_open>. ";
    named = true;
  } else if (env.seccomp == 2) {
    out += "A seccomp filter is active (Seccomp: 2 in /proc/self/status) and denies perf_event_open even with "
           "CAP_PERFMON: run with --security-opt seccomp=<profile allowing perf_event_open>. ";
    named = true;
  }
  if (!env.has_perfmon && env.paranoid > 2) {
    out += "kernel.perf_event_paranoid is " + std::to_string(env.paranoid) +
           " (above 2 blocks every unprivileged use): run `sudo sysctl -w kernel.perf_event_paranoid=2` "
           "(user-space samples of your own processes), or grant CAP_PERFMON: `sudo setcap cap_perfmon+ep "
           "$(which aiprof)`. ";
    named = true;
  } else if (!env.has_perfmon && env.paranoid >= 0 && env.paranoid <= 2) {
    out += "kernel.perf_event_paranoid is " + std::to_string(env.paranoid) +
           ", which allows sampling your own processes; the target may belong to another user or be "
           "non-dumpable (ptrace access is required): run aiprof as that user, or grant CAP_PERFMON "
           "(`sudo setcap cap_perfmon,cap_sys_ptrace+ep $(which aiprof)`). ";
    named = true;
  }
  if (env.in_container && !named) {
    out += "This is a container: its runtime may deny perf_event_open; run it with --cap-add PERFMON, "
           "or --privileged. ";
    named = true;
  }
  if (!named) out += "CAP_PERFMON is present, so the block comes from an LSM (SELinux/AppArmor) policy. ";
  return out + "Host samples were not recorded; the other layers were.";
}

}  // namespace aiprof
