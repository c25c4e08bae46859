// aiprof trace: records a command (or attaches to a running process) and
// writes every layer into one model on one clock, CLOCK_MONOTONIC
// (docs/capture.md):
//   application  the tracing SDK in the child, pointed at the capture folder
//                by AIPROF_OUTPUT; its .aiprof files are read back;
//   framework    torch.profiler started by a sitecustomize.py hook on
//                PYTHONPATH; its JSON is imported and its clock offset,
//                measured from clock-sync marks, removed;
//   host         perf_event cpu-clock samples (perf_sampler.h) with frame
//                pointer / DWARF stacks symbolised by libdw;
//   counters     /proc every 100 ms, NVML when libnvidia-ml loads.
#ifndef AIPROF_SRC_CAPTURE_CAPTURE_H_
#define AIPROF_SRC_CAPTURE_CAPTURE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/base/status.h"
#include "src/capture/host_trace.h"
#include "src/model/trace.h"

namespace aiprof {

enum class CaptureScope : uint8_t { kApp, kFramework, kFullStack };
const char* CaptureScopeName(CaptureScope scope);

struct CaptureOptions {
  std::vector<std::string> command;  // run this ...
  int32_t pid = 0;                   // ... or attach to this process
  CaptureScope scope = CaptureScope::kFullStack;
  int64_t duration_ns = 0;           // 0: until the command exits / Ctrl-C
  double sampling_rate = 1.0;        // share of top-level application spans kept
  int cpu_hz = 999;                  // 0: no host samples
  UnwindMode unwind = UnwindMode::kAuto;
  std::string target;                // service name recorded in metadata
  bool progress = false;             // progress line on stderr
  bool keep_dir = false;             // keep the capture folder (debugging)
  int torch_every = 1;               // the torch op layer on 1 step in N (steps 0, N, 2N, ...)
  // Minor page faults of the traced tasks (perf_event_open
  // PERF_COUNT_SW_PAGE_FAULTS_MIN, one record per fault_period faults), and
  // the machine's cost of one first-touch fault measured at start
  // (docs/capture.md, "Page faults").
  bool page_faults = true;
  uint64_t fault_period = 1;
  // aiprof monitor's seam for the Python SDK's on-demand frame sampler:
  // on_stopped runs once when recording ends (whether or not it went well),
  // before any layer is read, so the monitor can stop the sampler and have
  // its file complete; python_samples_dir is one more folder of
  // py-<pid>.txt files (the hook's format), spliced into the host samples
  // like the hook's own.
  std::function<void()> on_stopped;
  // Runs once the target is attached or launched, before recording (aiprof
  // trace --pid says so: a user, or a test, knows the capture has begun).
  std::function<void()> on_started;
  std::string python_samples_dir;
};

struct CaptureResult {
  std::unique_ptr<Trace> trace;
  int exit_code = 0;                 // the command's, shell-style (128+signal)
  std::string summary;               // one line for stderr
};

// Records until the command exits, the duration ends or SIGINT (or SIGTERM)
// arrives. The command is checked before anything starts (CheckCommand).
StatusOr<CaptureResult> RunCapture(const CaptureOptions& options);

// The command can be run: its first word names an executable file, directly
// (with a '/') or in PATH, as execvp would find it.
Status CheckCommand(const std::vector<std::string>& command);

// Adds `delta_ns` to every timestamp of a finalized trace.
void ShiftTrace(Trace* trace, int64_t delta_ns);
// Keeps the share `rate` of top-level slices (with everything nested in
// them) per (track, name), spread evenly; flows to dropped slices are dropped.
void SampleTopLevelSlices(Trace* trace, double rate);

// The torch hook's clock-sync marks (aiprof::clock_sync#N, one name per
// mark so that MeasureTorchOffset can pair each with its times) become
// kClockSyncName, category kAiprofOverheadCategory: aiprof's work in the
// target, as the chunk exports (aiprof::torch_export) are, one name in
// per-op tables instead of one per mark. Returns how many were marked.
inline constexpr char kClockSyncName[] = "aiprof::clock_sync";
inline constexpr char kAiprofOverheadCategory[] = "aiprof_overhead";
size_t LabelClockSyncMarks(Trace* torch_trace);

// Kineto/legacy torch JSON offset: from the clock-sync marks in `sync_json`
// (the hook's .sync file) and the imported profiler trace; kineto ts =
// monotonic + *offset_ns, within ± *error_ns.
Status MeasureTorchOffset(const Trace& torch_trace, const std::string& sync_path, int64_t* offset_ns,
                          int64_t* error_ns);

// The sitecustomize.py written for the framework layer (src/capture/torch_hook.py).
const char* TorchHookSource();
// python/aiprof/_pysampler.py (the Python-frame sampler the aiprof package
// uses too), written beside the hook as aiprof_pysampler.py.
const char* PythonSamplerSource();

}  // namespace aiprof

#endif  // AIPROF_SRC_CAPTURE_CAPTURE_H_
