#include "src/report/pipeline/node_bottleneck_report.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "src/render/renderers.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportJsonText;

// Hand-made trace (labelled: not from a profiler), times in µs: two stages on
// one thread, the second twice as long; a hostile stage name.
constexpr char kNodeTrace[] = R"({"traceEvents":[
 {"ph":"X","cat":"user_annotation","name":"stage:pre","pid":1,"tid":1,"ts":0,"dur":100},
 {"ph":"X","cat":"cpu_op","name":"aten::resize","pid":1,"tid":1,"ts":0,"dur":60},
 {"ph":"X","cat":"user_annotation","name":"stage:<b>gen</b>","pid":1,"tid":1,"ts":100,"dur":200},
 {"ph":"X","cat":"cpu_op","name":"aten::conv2d","pid":1,"tid":1,"ts":100,"dur":200}
]})";

TEST(NodeBottleneckReport, TableHoldsEachStageAndJsonIsThePublishedForm) {
  auto trace = ImportJsonText(kNodeTrace);
  ASSERT_NE(trace, nullptr);
  PipelineResult r = ComputePipelineStages(*trace);
  ASSERT_EQ(r.stages.size(), 2u);
  render::Document doc = NodeBottleneckToDocument(r);
  ASSERT_EQ(doc.sections.size(), 2u);
  const auto& table = std::get<render::Table>(doc.sections[0].blocks[1]);
  ASSERT_EQ(table.rows.size(), 2u);
  double shares = 0;
  for (const auto& row : table.rows) shares += row[1].number();
  EXPECT_NEAR(shares, 1.0, 1e-9);  // 100 + 200 of 300 µs
  // JSON is the machine form, as before: pipeline_ns = 300 µs.
  std::string json = render::RenderJson(doc);
  EXPECT_NE(json.find("\"pipeline_ns\":300000"), std::string::npos) << json;
  // The hostile name is escaped in HTML and Markdown.
  EXPECT_EQ(render::RenderHtmlBody(doc).find("<b>gen"), std::string::npos);
  EXPECT_EQ(render::RenderMarkdown(doc).find("<b>gen"), std::string::npos);
  EXPECT_NE(render::RenderText(doc).find("largest share"), std::string::npos);
  // The page names its trace, escaped (trial_views2 V5: "aiprof node-bottleneck" alone).
  const std::string page = render::RenderHtmlPage(NodeBottleneckToDocument(r, "runs/<a>.json"));
  EXPECT_NE(page.find("<title>aiprof node-bottleneck: runs/&lt;a&gt;.json</title>"), std::string::npos) << page;
  EXPECT_NE(page.find("<h1>aiprof node-bottleneck: runs/&lt;a&gt;.json</h1>"), std::string::npos);
}

TEST(NodeBottleneckReport, NoStagesSaysHowToNameThem) {
  auto trace = ImportJsonText(R"({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":0,"dur":5}]})");
  ASSERT_NE(trace, nullptr);
  render::Document doc = NodeBottleneckToDocument(ComputePipelineStages(*trace));
  std::string text = render::RenderText(doc);
  EXPECT_NE(text.find("stage:<name>"), std::string::npos) << text;
  // An empty table, not a failure: the CSV is the header alone (it was
  // "the node_bottleneck result has no table to write as CSV").
  StatusOr<std::string> csv = render::RenderCsv(doc);
  ASSERT_TRUE(csv.ok()) << csv.status().message();
  EXPECT_EQ(csv->rfind("name,", 0), 0u) << *csv;
  EXPECT_EQ(std::count(csv->begin(), csv->end(), '\n'), 1) << *csv;
}

}  // namespace
}  // namespace aiprof
