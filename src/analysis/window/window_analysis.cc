#include "src/analysis/window/window_analysis.h"

namespace aiprof {

const ResultSpec<AnalysisWindow> kWindow{
    "window", [](AnalysisResults& in) { return ComputeAnalysisWindow(in.trace(), in.options().warmup_steps); }};

}  // namespace aiprof
