// The pipeline analysis: its result and its spec (src/analysis/analysis_spec.h).
#ifndef AIPROF_SRC_ANALYSIS_PIPELINE_PIPELINE_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_PIPELINE_PIPELINE_ANALYSIS_H_

#include "src/analysis/analysis_spec.h"
#include "src/analysis/pipeline/pipeline_stages.h"
#include "src/analysis/results.h"

namespace aiprof {

extern const ResultSpec<PipelineResult> kPipeline;
extern const AnalysisSpec kPipelineAnalysis;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_PIPELINE_PIPELINE_ANALYSIS_H_
