// Maps what the perf sampler and the counter sampler recorded onto the model:
// one host thread track per (pid, tid), stack samples on it through the
// callsite tree, and counter tracks per process / GPU.
#ifndef AIPROF_SRC_CAPTURE_HOST_TRACE_H_
#define AIPROF_SRC_CAPTURE_HOST_TRACE_H_

#include <cstdint>

#include "src/base/status.h"
#include "src/capture/counters.h"
#include "src/capture/perf_sampler.h"

namespace aiprof {

class TraceBuilder;

// kAuto: per sample, of the frame-pointer chain and the DWARF unwind of the
// copied stack, the one with more frames in known code (frame pointers are
// cut short, or follow stack garbage, through code built without them, e.g.
// Debian's glibc and libpython; DWARF stops where CFI is missing).
enum class UnwindMode : uint8_t { kFramePointer, kDwarf, kAuto };

struct HostStats {
  uint64_t samples = 0;
  uint64_t dwarf_stacks = 0;   // samples whose stack came from DWARF unwinding
  uint64_t fp_stacks = 0;      // from the kernel's frame-pointer chain
  uint64_t frames = 0, unsymbolised_frames = 0;
  uint64_t processes = 0, threads = 0, modules = 0;
};

// Adds the host layer to `builder` (not finalized).
void BuildHostTrace(const PerfData& perf, UnwindMode mode, TraceBuilder* builder, HostStats* stats);
void AddCounters(const CounterSampler& counters, TraceBuilder* builder);

}  // namespace aiprof

#endif  // AIPROF_SRC_CAPTURE_HOST_TRACE_H_
