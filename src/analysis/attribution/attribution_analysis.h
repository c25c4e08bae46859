// The attribution analysis (the attribution tree, host regions, the
// compute finding): its results and its spec (src/analysis/analysis_spec.h).
#ifndef AIPROF_SRC_ANALYSIS_ATTRIBUTION_ATTRIBUTION_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_ATTRIBUTION_ATTRIBUTION_ANALYSIS_H_

#include "src/analysis/analysis_spec.h"
#include "src/analysis/attribution/attribution.h"
#include "src/analysis/attribution/compute_finding.h"
#include "src/analysis/results.h"

namespace aiprof {

// The attribution tree over the window's steady steps.
extern const ResultSpec<AttributionResult> kAttribution;
// The same tree plus its ops broken down by input shape
// (AttributionOptions::op_shapes): what `diff` pairs repeated ops by.
extern const ResultSpec<AttributionResult> kAttributionByShape;
// Compute time per step by op class, with the roofline's bounds.
extern const ResultSpec<ComputeResult> kComputeFinding;
extern const AnalysisSpec kAttributionAnalysis;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_ATTRIBUTION_ATTRIBUTION_ANALYSIS_H_
