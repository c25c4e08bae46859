// Each analysis's section of `aiprof analyze` as document blocks, built
// from its structured result (the analyses return numbers, not prose): one
// function per analysis and one line in the registry (analysis_sections.cc).
#ifndef AIPROF_SRC_REPORT_ANALYSIS_ANALYSIS_SECTIONS_H_
#define AIPROF_SRC_REPORT_ANALYSIS_ANALYSIS_SECTIONS_H_

#include <string_view>

#include "src/analysis/analyze.h"
#include "src/render/document.h"

namespace aiprof {

// Fills `section` with the result of the analysis named `name` (one of
// AnalysisNames(), or "window"); the results are the session's, computed
// once. False for a name without a section function.
bool AddAnalysisSection(std::string_view name, AnalysisResults& results, render::Section* section);

}  // namespace aiprof

#endif  // AIPROF_SRC_REPORT_ANALYSIS_ANALYSIS_SECTIONS_H_
