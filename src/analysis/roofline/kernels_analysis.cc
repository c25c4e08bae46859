#include "src/analysis/roofline/kernels_analysis.h"

namespace aiprof {
namespace {

// It publishes no metrics: its result is computed here so the analysis runs
// (and is timed) with the others, for its section.
void PublishKernelsAnalysis(AnalysisResults& in, MetricSet*) { in.Get(kKernelClasses); }

}  // namespace

const ResultSpec<KernelClassResult> kKernelClasses{
    "kernels", [](AnalysisResults& in) { return ComputeKernelClasses(in.trace()); }};

const AnalysisSpec kKernelsAnalysis{"kernels", PublishKernelsAnalysis, nullptr, {}};

}  // namespace aiprof
