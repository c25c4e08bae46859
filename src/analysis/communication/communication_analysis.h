// The communication analysis: its result and its spec
// (src/analysis/analysis_spec.h).
#ifndef AIPROF_SRC_ANALYSIS_COMMUNICATION_COMMUNICATION_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_COMMUNICATION_COMMUNICATION_ANALYSIS_H_

#include "src/analysis/analysis_spec.h"
#include "src/analysis/communication/communication.h"
#include "src/analysis/results.h"

namespace aiprof {

// Collectives, within and across ranks, over the window.
extern const ResultSpec<CommunicationResult> kCommunication;
extern const AnalysisSpec kCommunicationAnalysis;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_COMMUNICATION_COMMUNICATION_ANALYSIS_H_
