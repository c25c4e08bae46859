// The documents `aiprof serve` shows: the runs list, a run (from the
// report's data: the session's results, diagnosis and suggestions) and a
// query's rows. Pages render them through the page shell (HTML) and the
// API writes the same documents as JSON (render::RenderJson).
#ifndef AIPROF_SRC_SERVE_RUN_DOCUMENT_H_
#define AIPROF_SRC_SERVE_RUN_DOCUMENT_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/analysis/validation/knowledge_card.h"
#include "src/query/query_engine.h"
#include "src/base/status.h"
#include "src/render/document.h"
#include "src/report/page/report_data.h"
#include "src/serve/run_index.h"

namespace aiprof {

// Top ops listed on a run's page.
inline constexpr size_t kServeTopOps = 25;
// What a run's page holds at most, whatever the trace (docs/serve.md,
// "Page sizes"): the step chart draws at most kServeMaxChartPoints points
// (more steps: kServeMaxChartPoints / 2 buckets of consecutive steps, each
// drawn by its shortest and its longest step, in step order, so spikes
// stay); a table lists at most kServeMaxTableRows rows and says how many more.
inline constexpr size_t kServeMaxChartPoints = 1000;
inline constexpr size_t kServeMaxTableRows = 200;
// `values` as at most `max_points` (x, y) points, x the index: all of them
// when they fit, else the min and max of max_points / 2 equal buckets.
std::vector<std::pair<double, double>> MinMaxDownsample(const std::vector<double>& values, size_t max_points);

// The service a run belongs to: the one it was uploaded with (aiprof push
// --service), else the top folder of its path in the logdir ("" for a file at
// the top of the logdir or an upload without one).
std::string ServiceOf(const RunRow& run);
// The run's date: its file's modification time, YYYY-MM-DD in UTC.
std::string DateOf(const RunRow& run);

enum class RunGrouping { kNone, kService, kTag, kDate };
// "none", "service", "tag", "date"; nullopt for anything else.
std::optional<RunGrouping> ParseRunGrouping(std::string_view text);
struct RunGroup {
  std::string key;  // the service, tag or date ("" = none given)
  std::vector<const RunRow*> runs;  // in the list's order (newest first)
};
// The runs split into groups: services and tags by name with the empty one
// last, dates newest first; kNone: one group of all.
std::vector<RunGroup> GroupRuns(const std::vector<RunRow>& runs, RunGrouping grouping);

// A ready run's device utilisation with its base, as the runs list shows
// it: "56.0% of device busy time / the steady steps' wall time" (the run's
// own page and report say the same base); "" when unknown. The share alone
// read as the summary's of the device span.
std::string DeviceUtilText(const RunRow& run);

// The runs list: section "runs" (one row per run, with its service and
// date); with a grouping, also section "groups" (one row per group: runs,
// ready, failed, newest date).
render::Document RunsToDocument(const std::vector<RunRow>& runs, const std::string& search,
                                RunGrouping grouping = RunGrouping::kNone);
// A run: headline, breakdown, findings with their suggestions, top ops, steps.
render::Document RunToDocument(const RunRow& run, const ReportData& report);
// Knowledge cards (`aiprof card`): what each fix measurably did, newest
// first; the gain is the change of the card's metric statistic, after /
// before - 1, with its bootstrap interval; and, where the card kept one, the
// prediction made for the fix against the step time measured after it.
render::Document CardsToDocument(const std::vector<KnowledgeCard>& cards);

// A run's pages as stored beside its native file at conversion
// (cache/<id>.run), so serving them runs no analysis: the run document
// rendered as JSON and as an HTML body, without its title (the run's name,
// which a rename changes; WithTitle puts it back), the full report page
// (ReportToHtml), and the knowledge cards they were built with
// (CardsFingerprint): when those changed, the pages are computed again.
struct StoredRunPage {
  std::string cards;
  std::string json;       // title ""
  std::string html_body;  // no title heading
  std::string report_html;  // the whole report page
  // The JSON and the HTML body with the run's name as title (as
  // RenderJson / RenderHtmlBody write the document with that title).
  std::string JsonWithTitle(const std::string& name) const;
  std::string HtmlWithTitle(const std::string& name) const;
};
StoredRunPage StoreRunPage(const RunRow& run, const ReportData& report, std::string cards);
std::string SerializeStoredRunPage(const StoredRunPage& page);
// nullopt for anything SerializeStoredRunPage did not write.
std::optional<StoredRunPage> ParseStoredRunPage(std::string_view text);
// The newest knowledge card of the baseline database (its id and date), ""
// without a database or a card; cards are only added, so a new one changes it.
std::string CardsFingerprint(const std::string& baselines_db);
// The query page's result: the SQL, the row count (saying when the row limit cut
// it) and the rows.
render::Document QueryToDocument(const std::string& sql, const QueryResult& result);

}  // namespace aiprof

#endif  // AIPROF_SRC_SERVE_RUN_DOCUMENT_H_
