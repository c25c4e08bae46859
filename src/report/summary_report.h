// Renders a Summary as text, JSON (schema: docs/summary-schema.md) or CSV.
#ifndef AIPROF_SRC_REPORT_SUMMARY_REPORT_H_
#define AIPROF_SRC_REPORT_SUMMARY_REPORT_H_

#include <optional>
#include <string>

#include "src/analysis/analyze.h"
#include "src/analysis/summary/summary.h"

namespace aiprof {

struct SummaryReportOptions {
  size_t top_n = 0;  // ops listed; 0 = all (the text report defaults to 20 in the CLI)
  // Share of device-activity time attributed to a host op (LaunchStats,
  // src/analysis/launches); printed when set.
  std::optional<double> op_coverage;
};

// Fills the options' figures that come from other results than the summary
// (op_coverage from the launches), so every front end (CLI, Python, MCP)
// writes the same summary.
void AddResultFigures(AnalysisResults& results, SummaryReportOptions* o);

std::string SummaryToText(const Trace& trace, const Summary& s, const SummaryReportOptions& o);
std::string SummaryToJson(const Trace& trace, const Summary& s, const SummaryReportOptions& o);
// CSV holds the op table only (one row per op).
std::string SummaryToCsv(const Trace& trace, const Summary& s, const SummaryReportOptions& o);

}  // namespace aiprof

#endif  // AIPROF_SRC_REPORT_SUMMARY_REPORT_H_
