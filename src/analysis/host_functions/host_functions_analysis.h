// The host regions the program names, as a result of the session
// (src/analysis/results.h), published by the attribution analysis.
#ifndef AIPROF_SRC_ANALYSIS_HOST_FUNCTIONS_HOST_FUNCTIONS_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_HOST_FUNCTIONS_HOST_FUNCTIONS_ANALYSIS_H_

#include "src/analysis/host_functions/host_regions.h"
#include "src/analysis/results.h"

namespace aiprof {

extern const ResultSpec<HostRegionsResult> kHostRegions;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_HOST_FUNCTIONS_HOST_FUNCTIONS_ANALYSIS_H_
