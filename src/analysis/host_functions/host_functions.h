// The host functions that CPU stack samples land in (aiprof trace, aiprof
// monitor's deep trace): which function to name when a host is busy.
#ifndef AIPROF_SRC_ANALYSIS_HOST_FUNCTIONS_HOST_FUNCTIONS_H_
#define AIPROF_SRC_ANALYSIS_HOST_FUNCTIONS_HOST_FUNCTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

// A host function in the trace's CPU samples: self = samples whose leaf it
// is; total = samples with it anywhere on the stack (counted once per
// sample). Shares are of all samples with a stack.
struct HostFunction {
  std::string name, module;
  uint64_t self_samples = 0, total_samples = 0;
  double self_share = 0, total_share = 0;
};

// The `limit` host functions with the most samples (by self, then total,
// then name).
std::vector<HostFunction> TopHostFunctions(const Trace& trace, size_t limit);

// Samples that carry a call stack (the base of the shares above).
uint64_t SamplesWithStack(const Trace& trace);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_HOST_FUNCTIONS_HOST_FUNCTIONS_H_
