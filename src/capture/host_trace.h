// Maps what the perf sampler and the counter sampler recorded onto the model:
// one host thread track per (pid, tid), stack samples on it through the
// callsite tree, and counter tracks per process / GPU.
#ifndef AIPROF_SRC_CAPTURE_HOST_TRACE_H_
#define AIPROF_SRC_CAPTURE_HOST_TRACE_H_

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

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

// The Python stacks the capture hook sampled in a Python program
// (python/aiprof/_pysampler.py, run by src/capture/torch_hook.py and by the
// aiprof package for aiprof monitor): interned stack nodes
// and, per thread, (time, leaf node) in time order.
struct PythonSamples {
  struct Node {
    uint32_t parent = 0;  // 0: a root
    uint32_t line = 0;
    std::string function, file;
  };
  std::vector<Node> nodes = {Node{}};  // ids from 1; [0] unused
  std::unordered_map<int32_t, std::vector<std::pair<int64_t, uint32_t>>> by_tid;
  uint64_t malformed_lines = 0;
  // The sampler's own thread ("T native_tid"): its perf samples are aiprof's
  // work in the process (kPythonSamplerFrame), not the program's.
  std::vector<int32_t> sampler_tids;
  // The sampler's own account ("E count first_error"; the last line holds):
  // rounds that raised and were skipped.
  uint64_t sampler_errors = 0;
  std::string sampler_first_error;
  // "X monotonic_ns reason": the sampler stopped before the program did;
  // the process's later perf samples have no Python stack.
  bool sampler_stopped = false;
  int64_t sampler_stopped_ns = 0;
  std::string sampler_stop_reason;
};

// Appends one py-<pid>.txt written by the hook. Node ids are the file's own:
// call once per file into a fresh PythonSamples per process (pid).
Status ReadPythonSamples(const std::string& path, PythonSamples* out);

// Diagnostics for what ReadPythonSamples found in `path` (pid `pid`'s file):
// python_samples_malformed, python_sampler_errors, python_sampler_stopped
// (its time given from `start_ns`, the capture's start). Returns a line for
// aiprof's stderr when the sampler stopped, else "".
std::string DiagnosePythonSamples(const std::string& path, int32_t pid, const PythonSamples& py, int64_t start_ns,
                                  TraceBuilder* builder);

// A perf sample of a thread gets the Python stack last sampled on that
// thread up to kPythonStackHeldNs before it, else the next one up to
// kPythonSampleMatchNs after it (the hook samples at most every 5 ms, and
// not while the thread holds the GIL).
inline constexpr int64_t kPythonStackHeldNs = 1'000'000'000;
inline constexpr int64_t kPythonSampleMatchNs = 20'000'000;

// A perf sample of the Python sampler's own thread (named in its file, or
// by its thread name) has this one frame, in this module, for its stack:
// aiprof's overhead in the target, as the torch hook's chunk exports are
// aiprof::torch_export slices of category aiprof_overhead.
inline constexpr char kPythonSamplerFrame[] = "aiprof::python_sampler";
inline constexpr char kAiprofOverheadModule[] = "aiprof_overhead";
inline constexpr char kPythonSamplerThreadName[] = "aiprof-pysample";

struct HostStats {
  uint64_t samples = 0;
  uint64_t python_samples = 0;    // perf samples given a Python stack
  uint64_t sampler_samples = 0;   // of the Python sampler's own thread (kPythonSamplerFrame)
  uint64_t truncated_stacks = 0;  // the root frame is not a thread's or process's entry
  uint64_t dwarf_stacks = 0;      // samples whose stack came from DWARF unwinding
  uint64_t fp_stacks = 0;         // from the kernel's frame-pointer chain
  // Frames without a name (a module's offset, an address), and frames named
  // after the nearest symbol below them (SymbolisedFrame::nearest).
  uint64_t frames = 0, unsymbolised_frames = 0, nearest_symbol_frames = 0;
  uint64_t processes = 0, threads = 0, modules = 0;
  uint64_t modules_unreadable = 0;  // ProcessImage::unreadable_module_count, summed
};

// Adds the host layer to `builder` (not finalized). `python` (may be null):
// per pid, the Python stacks to put in place of the interpreter's frames.
void BuildHostTrace(const PerfData& perf, UnwindMode mode, TraceBuilder* builder, HostStats* stats,
                    const std::map<int32_t, PythonSamples>* python = nullptr);
void AddCounters(const CounterSampler& counters, TraceBuilder* builder);
// Adds each page-fault record of `faults` (a PerfEvent::kPageFaults
// sampler's data) as an instant on its thread's host track
// (src/model/page_fault_records.h); returns the faults they stand for.
uint64_t AddPageFaults(const PerfData& faults, TraceBuilder* builder);

}  // namespace aiprof

#endif  // AIPROF_SRC_CAPTURE_HOST_TRACE_H_
