#include "src/serve/run_document.h"

#include <gtest/gtest.h>

#include "src/render/renderers.h"

namespace aiprof {
namespace {

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

}  // namespace
}  // namespace aiprof
