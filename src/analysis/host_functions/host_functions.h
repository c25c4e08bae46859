// The host functions that CPU stack samples land in (aiprof trace, aiprof
// monitor's deep trace): which function to name when a host is busy.
#ifndef AIPROF_SRC_ANALYSIS_HOST_FUNCTIONS_HOST_FUNCTIONS_H_
#define AIPROF_SRC_ANALYSIS_HOST_FUNCTIONS_HOST_FUNCTIONS_H_

#include <cstdint>
#include <string>

namespace aiprof {

// A host function in the trace's CPU samples: self = samples whose leaf it
// is; total = samples with it anywhere on the stack (counted once per
// sample). Shares are of all samples with a stack. The summary's host
// samples (HostSampleStats, src/analysis/summary/summary.h) count them; the
// report and the monitor's incident list them (HostFunctionsOf).
struct HostFunction {
  std::string name, module;
  uint64_t self_samples = 0, total_samples = 0;
  double self_share = 0, total_share = 0;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_HOST_FUNCTIONS_HOST_FUNCTIONS_H_
