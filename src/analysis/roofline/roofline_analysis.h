// The roofline analysis: its result and its spec (src/analysis/analysis_spec.h).
#ifndef AIPROF_SRC_ANALYSIS_ROOFLINE_ROOFLINE_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_ROOFLINE_ROOFLINE_ANALYSIS_H_

#include <optional>
#include <string>

#include "src/analysis/analysis_spec.h"
#include "src/analysis/results.h"
#include "src/analysis/roofline/ops_to_roofline.h"

namespace aiprof {

// The roofline with the device of AnalyzeOptions (or the trace's), the
// device, and why none could be used.
struct RooflineRun {
  std::optional<DevicePeaks> device;
  std::string problem;  // why there is no device (empty with one)
  RooflineResult result;
};
extern const ResultSpec<RooflineRun> kRoofline;
extern const AnalysisSpec kRooflineAnalysis;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_ROOFLINE_ROOFLINE_ANALYSIS_H_
