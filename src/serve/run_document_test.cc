#include "src/serve/run_document.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "src/render/renderers.h"

namespace aiprof {
namespace {

// The runs list's utilisation says its base (audit2 item 10: "56.0%" alone,
// while the summary's 60.6% is of the device span).
TEST(RunDocument, DeviceUtilisationIsShownWithItsBase) {
  RunRow r;
  r.state = RunState::kReady;
  r.device_util = 0.56;
  r.device_util_basis = "device busy time / the steady steps' wall time";
  EXPECT_EQ(DeviceUtilText(r), "56.0% of device busy time / the steady steps' wall time");
  r.device_util_basis = "";
  EXPECT_EQ(DeviceUtilText(r), "56.0% of a base not recorded (converted by an earlier aiprof serve)");
  r.device_util = -1;
  EXPECT_EQ(DeviceUtilText(r), "");
  r.device_util = 0.56;
  r.state = RunState::kQueued;
  EXPECT_EQ(DeviceUtilText(r), "") << "only a ready run's figures are shown";
  r.state = RunState::kReady;
  r.device_util_basis = "device busy time / device span (first to last activity)";
  const std::string json = render::RenderJson(RunsToDocument({r}, ""));
  EXPECT_NE(json.find("\"device_util_basis\": \"device busy time / device span (first to last activity)\""),
            std::string::npos)
      << json;
}

// A stored run page: the title is put back exactly as the renderers write a
// document's title (hostile names escaped), and the file format refuses
// anything it did not write.
TEST(StoredRunPage, TitleIsPutBackAsTheRenderersWriteIt) {
  render::Document doc;
  doc.key = "run";
  doc.title = "";
  doc.AddSection("headline", "Headline");
  StoredRunPage page;
  page.json = render::RenderJson(doc);
  page.html_body = render::RenderHtmlBody(doc);
  const std::string name = "<script>\"x\" & y</script>";
  doc.title = name;
  EXPECT_EQ(page.JsonWithTitle(name), render::RenderJson(doc));
  EXPECT_EQ(page.HtmlWithTitle(name), render::RenderHtmlBody(doc));
}

TEST(StoredRunPage, RoundTripsAndRefusesDamagedFiles) {
  StoredRunPage page{"7 1700000000000", "{\"document\": \"run\"}", "<p>a\nb</p>", "<!doctype html>"};
  const std::string text = SerializeStoredRunPage(page);
  std::optional<StoredRunPage> back = ParseStoredRunPage(text);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->cards, page.cards);
  EXPECT_EQ(back->json, page.json);
  EXPECT_EQ(back->html_body, page.html_body);
  EXPECT_EQ(back->report_html, page.report_html);
  EXPECT_FALSE(ParseStoredRunPage(text.substr(0, text.size() - 1)).has_value());  // truncated
  EXPECT_FALSE(ParseStoredRunPage(text + "x").has_value());                       // trailing bytes
  EXPECT_FALSE(ParseStoredRunPage("").has_value());
  EXPECT_FALSE(ParseStoredRunPage("aiprof-serve-run-page 2\n99999999999999999999\n").has_value());
  EXPECT_FALSE(ParseStoredRunPage("something else").has_value());
}

// Hand-made: 200 000 steps of 1 ms with one spike, 1000 timelines. The
// run's page stays small: the chart's points are bucketed (min/max, the
// spike kept), the table cut with a note (the serve trial's 1.5 M-step run
// gave a 107 MB /api/runs/N).
TEST(RunDocument, PageSizeIsBoundedWhateverTheTrace) {
  ReportData report;
  report.steps.resize(200'000);
  for (size_t i = 0; i < report.steps.size(); ++i) report.steps[i].dur_ms = 1.0 + 0.001 * static_cast<double>(i % 7);
  report.steps[123'457].dur_ms = 50;
  report.steps[4].dur_ms = 0.5;
  report.steps_stats.count = report.steps.size();
  for (int i = 0; i < 1000; ++i) report.breakdown.push_back({.label = "device " + std::to_string(i)});
  RunRow run;
  run.id = 1;
  run.name = "big";
  const render::Document doc = RunToDocument(run, report);
  const render::Series* series = nullptr;
  const render::Table* breakdown = nullptr;
  for (const render::Section& s : doc.sections) {
    for (const render::Block& b : s.blocks) {
      if (const auto* x = std::get_if<render::Series>(&b)) series = x;
      if (const auto* t = std::get_if<render::Table>(&b); t && t->key == "breakdown") breakdown = t;
    }
  }
  ASSERT_NE(series, nullptr);
  EXPECT_LE(series->points.size(), kServeMaxChartPoints);
  EXPECT_GE(series->points.size(), kServeMaxChartPoints / 2);
  auto has = [&](double x, double y) {
    return std::any_of(series->points.begin(), series->points.end(),
                       [&](const auto& p) { return p.first == x && p.second == y; });
  };
  EXPECT_TRUE(has(123'457, 50));  // the spike, at its own step index
  EXPECT_TRUE(has(4, 0.5));       // the dip
  for (size_t i = 1; i < series->points.size(); ++i) EXPECT_LT(series->points[i - 1].first, series->points[i].first);
  ASSERT_NE(breakdown, nullptr);
  EXPECT_EQ(breakdown->rows.size(), kServeMaxTableRows);
  EXPECT_NE(breakdown->note.find("800 more rows"), std::string::npos) << breakdown->note;
  EXPECT_LT(render::RenderJson(doc).size(), size_t{300'000});
  EXPECT_LT(render::RenderHtmlBody(doc).size(), size_t{300'000});
}

// The query page (trial_serve2): one heading (the page's "Query NAME"; the
// document added a second, "Query on NAME"), and the Rows line says when
// the result was cut at the row limit (it said "1,000" for 44,666 slices,
// the cut named only under the table's last row).
TEST(RunDocument, QueryPageSaysWhenRowsWereCut) {
  QueryResult r;
  r.columns = {"id"};
  r.rows = {{QueryValue(int64_t{0})}, {QueryValue(int64_t{1})}};
  r.max_rows = 2;
  r.truncated = true;
  const std::string cut = render::RenderHtmlBody(QueryToDocument("select id from slices", r));
  EXPECT_EQ(cut.find("Query on"), std::string::npos) << cut;
  EXPECT_NE(cut.find("2 (the first 2; the query has more)"), std::string::npos) << cut;
  r.truncated = false;
  const std::string whole = render::RenderHtmlBody(QueryToDocument("select id from slices", r));
  EXPECT_EQ(whole.find("the query has more"), std::string::npos) << whole;
}

TEST(RunDocument, MinMaxDownsampleKeepsEveryPointThatFits) {
  EXPECT_EQ(MinMaxDownsample({3, 1, 2}, 10), (std::vector<std::pair<double, double>>{{0, 3}, {1, 1}, {2, 2}}));
  // 8 values into 4 points: 2 buckets of 4, each its min and max in order.
  EXPECT_EQ(MinMaxDownsample({5, 1, 9, 2, 3, 3, 0, 4}, 4),
            (std::vector<std::pair<double, double>>{{1, 1}, {2, 9}, {6, 0}, {7, 4}}));
}

}  // namespace
}  // namespace aiprof
