#include <gtest/gtest.h>

#include <algorithm>

#include "src/render/page.h"
#include "src/report/page/report_data.h"

namespace aiprof {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// The report shows views in <iframe srcdoc>, which inherits the report's
// CSP: the report must allow the views' scripts, or they do not run.
TEST(ReportHtmlTest, EmbeddedViewsScriptsAreAllowedByTheReportsPolicy) {
  Diagnosis diagnosis;
  ReportData data;
  data.diagnosis = &diagnosis;
  data.source = "<script>alert(1)</script>";
  render::PageSpec view;
  view.scripts = {"drawView();", "drawLegend();"};
  data.embedded_views.emplace_back("A view", render::RenderPage(view, "<canvas></canvas>"));
  std::string html = ReportToHtml(data);
  std::vector<std::string> allowed = render::ScriptHashesOfPage(html);
  EXPECT_TRUE(Has(allowed, render::CspHash("drawView();")));
  EXPECT_TRUE(Has(allowed, render::CspHash("drawLegend();")));
  EXPECT_EQ(allowed.size(), 3u);  // the report's own script and the view's two
  EXPECT_EQ(html.find("<script>alert(1)"), std::string::npos);
}

}  // namespace
}  // namespace aiprof
