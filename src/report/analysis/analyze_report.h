// Renders `aiprof analyze` results (AnalysisReport) as text or JSON. All
// trace-derived text is escaped for the target format.
#ifndef AIPROF_SRC_REPORT_ANALYSIS_ANALYZE_REPORT_H_
#define AIPROF_SRC_REPORT_ANALYSIS_ANALYZE_REPORT_H_

#include <string>
#include <string_view>
#include <vector>

#include "src/analysis/analyze.h"

namespace aiprof {

std::string AnalysisToText(const AnalysisReport& report);
// {"metrics": {name: {"value", "unit", "source", "measured"}},
//  "unavailable": {name: reason}, "evidence": {topic: [lines]},
//  "sections": {name: [lines]}}
std::string AnalysisToJson(const AnalysisReport& report);

}  // namespace aiprof

#endif  // AIPROF_SRC_REPORT_ANALYSIS_ANALYZE_REPORT_H_
