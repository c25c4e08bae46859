// Which malloc the traced process runs with, and the environment settings
// that change how it returns memory to the kernel, for the page-fault
// analysis (metadata kMallocMeta, kMallocLibraryMeta, kMallocSettingsMeta of
// src/model/page_fault_records.h; docs/capture.md, "Page faults").
#ifndef AIPROF_SRC_CAPTURE_ALLOCATOR_PROBE_H_
#define AIPROF_SRC_CAPTURE_ALLOCATOR_PROBE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aiprof {

// The environment variables read (and only these: a process's environment
// holds secrets): LD_PRELOAD, jemalloc's MALLOC_CONF, glibc's GLIBC_TUNABLES
// and MALLOC_*_ variables, tcmalloc's release settings.
bool IsAllocatorSetting(std::string_view name);

// "NAME=value; NAME=value" of the allocator settings among `env` (NAME=value
// strings), in the order given; values longer than 512 bytes are cut.
std::string AllocatorSettings(const std::vector<std::string>& env);

// The settings of this process's environment (what a command it starts
// inherits) and of process `pid` (/proc/PID/environ: its environment at
// exec; "" when unreadable).
std::string AllocatorSettingsOfSelf();
std::string AllocatorSettingsOfProcess(int32_t pid);

// From the lines of a /proc/PID/maps: the path of a replacement malloc the
// process has mapped (jemalloc, tcmalloc, mimalloc), "" for glibc's; false
// until the C library is mapped (the dynamic loader has not finished: a
// preloaded library is mapped before it).
bool AllocatorFromMaps(std::string_view maps, std::string* library);

// The same from /proc/PID/maps; false when unreadable or not yet ready.
bool ProbeAllocatorLibrary(int32_t pid, std::string* library);

// True once process `pid` runs another executable than this one: a child
// forked by this process has exec'd (before, /proc/PID/maps is a copy of
// this process's). False when unreadable.
bool RunsAnotherExecutable(int32_t pid);
// The executable process `pid` runs (/proc/PID/exe), "" when unreadable.
std::string ExecutableOf(int32_t pid);

// "jemalloc", "tcmalloc", "mimalloc" or "glibc" for a library path from
// AllocatorFromMaps.
std::string AllocatorName(std::string_view library);

}  // namespace aiprof

#endif  // AIPROF_SRC_CAPTURE_ALLOCATOR_PROBE_H_
