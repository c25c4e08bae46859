// The page-faults analysis (traces of aiprof trace with page-fault
// records): its result and its spec (src/analysis/analysis_spec.h).
#ifndef AIPROF_SRC_ANALYSIS_PAGE_FAULTS_PAGE_FAULTS_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_PAGE_FAULTS_PAGE_FAULTS_ANALYSIS_H_

#include "src/analysis/analysis_spec.h"
#include "src/analysis/page_faults/page_faults.h"
#include "src/analysis/results.h"

namespace aiprof {

extern const ResultSpec<PageFaultsResult> kPageFaults;
extern const AnalysisSpec kPageFaultsAnalysis;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_PAGE_FAULTS_PAGE_FAULTS_ANALYSIS_H_
