// A Summary as one document (totals, top ops by self time, devices, steps,
// ranks and step breakdowns, events by category, import diagnostics),
// written by the shared renderers. Its machine forms keep their published
// contracts: JSON (schema aiprof.summary/1, docs/summary-schema.md: exact
// decimal microseconds, ops by self time, every op unless --top) is the
// document's `machine_json`; CSV is the op table in those columns. Every
// format lists the same ops in the same order (ListedOps).
#ifndef AIPROF_SRC_REPORT_SUMMARY_SUMMARY_REPORT_H_
#define AIPROF_SRC_REPORT_SUMMARY_SUMMARY_REPORT_H_

#include <optional>
#include <string>
#include <vector>

#include "src/analysis/analyze.h"
#include "src/analysis/summary/summary.h"
#include "src/render/document.h"

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

// The ops a summary lists, as indices into `s.ops`, in every format and
// front end (text, JSON, CSV, MCP, the Python module's summary()): ranked by
// self time (TopOpsBySelf: then total, then name), the profiler's wrapper
// spans left out; the first `top_n` of them, or when `top_n` is 0 all of
// them and, when `with_wrappers` (the machine forms, which list every op),
// the wrappers after them, largest total first.
std::vector<size_t> ListedOps(const Trace& trace, const Summary& s, size_t top_n, bool with_wrappers);

// The document; `o.top_n` limits its op table (ListedOps).
render::Document SummaryToDocument(const Trace& trace, const Summary& s, const SummaryReportOptions& o);
// The published JSON form (aiprof.summary/1): the document's machine form.
std::string SummaryToJson(const Trace& trace, const Summary& s, const SummaryReportOptions& o);
// CSV holds the op table only (one row per op).
std::string SummaryToCsv(const Trace& trace, const Summary& s, const SummaryReportOptions& o);

}  // namespace aiprof

#endif  // AIPROF_SRC_REPORT_SUMMARY_SUMMARY_REPORT_H_
