// The documents `aiprof serve` shows: the runs list, a run (from the
// report's data: the session's results, diagnosis and suggestions) and a
// query's rows. Pages render them through the page shell (HTML) and the
// API writes the same documents as JSON (render::RenderJson).
#ifndef AIPROF_SRC_SERVE_RUN_DOCUMENT_H_
#define AIPROF_SRC_SERVE_RUN_DOCUMENT_H_

#include <vector>

#include "src/query/query_engine.h"
#include "src/render/document.h"
#include "src/report/page/report_data.h"
#include "src/serve/run_index.h"

namespace aiprof {

// Top ops listed on a run's page.
inline constexpr size_t kServeTopOps = 25;

render::Document RunsToDocument(const std::vector<RunRow>& runs, const std::string& search);
// A run: headline, breakdown, findings with their suggestions, top ops, steps.
render::Document RunToDocument(const RunRow& run, const ReportData& report);
render::Document QueryToDocument(const RunRow& run, const std::string& sql, const QueryResult& result);

}  // namespace aiprof

#endif  // AIPROF_SRC_SERVE_RUN_DOCUMENT_H_
