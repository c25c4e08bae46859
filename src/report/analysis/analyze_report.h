// `aiprof analyze` as one document: one section per analysis that ran (its
// document function, analysis_sections.h), then the metrics the rules read
// (each in its unit), the unavailable ones with the reason, and every
// evidence topic the analyses published. Written by the shared renderers.
#ifndef AIPROF_SRC_REPORT_ANALYSIS_ANALYZE_REPORT_H_
#define AIPROF_SRC_REPORT_ANALYSIS_ANALYZE_REPORT_H_

#include "src/analysis/analyze.h"
#include "src/render/document.h"

namespace aiprof {

// `report` lists the analyses that ran; their results come from `results`
// (the same session's, computed once). Machine form:
// {"metrics": {name: {"value", "unit", "source", "measured"}},
//  "unavailable": {name: reason}, "evidence": {topic: [lines]},
//  "sections": {name: {"blocks": [...]}}}  (sections as DocumentToTree writes them)
render::Document AnalyzeToDocument(const AnalysisReport& report, AnalysisResults& results);

}  // namespace aiprof

#endif  // AIPROF_SRC_REPORT_ANALYSIS_ANALYZE_REPORT_H_
