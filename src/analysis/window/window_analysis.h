// The steady-state window every impact is measured over, as a result of
// the session (src/analysis/results.h).
#ifndef AIPROF_SRC_ANALYSIS_WINDOW_WINDOW_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_WINDOW_WINDOW_ANALYSIS_H_

#include "src/analysis/results.h"
#include "src/analysis/window/analysis_window.h"

namespace aiprof {

// The window of AnalyzeOptions::warmup_steps.
extern const ResultSpec<AnalysisWindow> kWindow;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_WINDOW_WINDOW_ANALYSIS_H_
