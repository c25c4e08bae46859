// Host CPU stack samples (aiprof trace's perf samples with their Python
// frames, Nsight Systems' sampled call chains) as summary figures: how many,
// how many carry a Python frame, the functions that ran — by self samples
// (the sample's leaf frame) and by total samples (anywhere on its stack,
// counted once per sample however often recursion repeats it) — and the
// samples of each thread.
//
// A function is one (frame, module) pair of the call-site table; times are
// sums of the samples' weights (each sample stands for its sampling period).
#ifndef AIPROF_SRC_ANALYSIS_SUMMARY_HOST_SAMPLES_H_
#define AIPROF_SRC_ANALYSIS_SUMMARY_HOST_SAMPLES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

struct SampledFunction {
  StringId frame, module;
  FrameKind kind = FrameKind::kUnknown;
  uint64_t self_samples = 0, total_samples = 0;
  int64_t self_ns = 0, total_ns = 0;
};

struct SampledThread {
  TrackId track;
  uint64_t samples = 0;
  int64_t weight_ns = 0;
  uint64_t with_python = 0;   // samples with a Python frame on the stack
  int64_t top_function = -1;  // index into HostSampleStats::functions: most self samples here; -1 without stacks
  uint64_t top_function_samples = 0;
};

struct HostSampleStats {
  uint64_t samples = 0;      // rows of Trace::samples
  int64_t weight_ns = 0;     // sum of their weights
  uint64_t with_stack = 0;   // with a call site
  uint64_t with_python = 0;  // with a FrameKind::kPython frame on the stack
  // Stacks cut before the program's entry, as the capture counted them
  // (metadata capture.host_stacks_truncated); unset for other sources.
  std::optional<uint64_t> truncated;
  std::vector<SampledFunction> functions;  // most self samples first, then total, then frame name
  std::vector<SampledThread> threads;      // most samples first, then track
  bool empty() const { return samples == 0; }
};

// One pass over the samples, one walk per distinct leaf call site.
HostSampleStats ComputeHostSamples(const Trace& trace);

// Indices into `stats.functions`, most total samples first (then self, then
// frame name).
std::vector<size_t> FunctionsByTotal(const HostSampleStats& stats);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_SUMMARY_HOST_SAMPLES_H_
