// The kernels analysis (device time by kernel class and torch.compile
// region): its result and its spec (src/analysis/analysis_spec.h).
#ifndef AIPROF_SRC_ANALYSIS_ROOFLINE_KERNELS_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_ROOFLINE_KERNELS_ANALYSIS_H_

#include "src/analysis/analysis_spec.h"
#include "src/analysis/results.h"
#include "src/analysis/roofline/kernel_class.h"

namespace aiprof {

extern const ResultSpec<KernelClassResult> kKernelClasses;
extern const AnalysisSpec kKernelsAnalysis;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_ROOFLINE_KERNELS_ANALYSIS_H_
