#include "src/analysis/host_functions/host_functions_analysis.h"

#include "src/analysis/attribution/attribution_analysis.h"

namespace aiprof {

const ResultSpec<HostRegionsResult> kHostRegions{
    "host_regions", [](AnalysisResults& in) { return ComputeHostRegions(in.trace(), in.Get(kAttribution)); }};

}  // namespace aiprof
