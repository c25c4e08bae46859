#include "src/render/page.h"

#include <gtest/gtest.h>

#include <regex>

namespace aiprof::render {
namespace {

// The text of every executable inline <script> of `html` (data blocks with a
// type attribute are skipped, as browsers skip them).
std::vector<std::string> InlineScripts(const std::string& html) {
  std::vector<std::string> out;
  std::regex re("<script>([\\s\\S]*?)</script>");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back((*it)[1].str());
  }
  return out;
}

TEST(PageTest, HashesAreCspSha256) {
  // Values from `printf 'alert(1)' | openssl dgst -sha256 -binary | base64`.
  EXPECT_EQ(CspHash("alert(1)"), "sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI=");
  EXPECT_EQ(CspHash(""), "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
}

TEST(PageTest, EveryInlineScriptIsAllowedByItsHashAndNothingElse) {
  PageSpec spec;
  spec.title = "t";
  spec.scripts = {"var a = 1;\n", "console.log('two');"};
  std::string html = RenderPage(spec, "<p>body</p><script type=\"application/json\">{\"x\":1}</script>");
  std::vector<std::string> scripts = InlineScripts(html);
  ASSERT_EQ(scripts.size(), 2u);
  std::vector<std::string> allowed = ScriptHashesOfPage(html);
  ASSERT_EQ(allowed.size(), 2u);
  EXPECT_EQ(allowed[0], CspHash(scripts[0]));
  EXPECT_EQ(allowed[1], CspHash(scripts[1]));
  std::string policy = ContentSecurityPolicy(spec);
  EXPECT_EQ(policy.find("unsafe-inline"), policy.find("style-src 'unsafe-inline'") + 11);  // styles only
  EXPECT_EQ(policy.find("'unsafe-eval'"), std::string::npos);
}

TEST(PageTest, PolicyIsStrict) {
  PageSpec spec;
  std::string policy = ContentSecurityPolicy(spec);
  EXPECT_EQ(policy,
            "default-src 'none'; script-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
            "form-action 'none'");
  std::string html = RenderPage(spec, "");
  // The meta comes first in <head>, before the title (trace text).
  EXPECT_LT(html.find("Content-Security-Policy"), html.find("<title>"));
  EXPECT_NE(html.find("content=\"default-src &#39;none&#39;; script-src &#39;none&#39;;"), std::string::npos);
}

TEST(PageTest, TitleIsEscaped) {
  PageSpec spec;
  spec.title = "</title><script>alert(1)</script>";
  spec.generator = "\"><script>x</script>";
  std::string html = RenderPage(spec, "");
  EXPECT_EQ(html.find("<script>"), std::string::npos) << html;
  EXPECT_NE(html.find("&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

TEST(PageTest, EmbeddedPagesScriptsAreAllowedByTheParent) {
  PageSpec child;
  child.scripts = {"drawTimeline();"};
  std::string child_html = RenderPage(child, "<canvas></canvas>");
  PageSpec parent;
  parent.scripts = {"report();"};
  parent.embedded_pages = {child_html, child_html};
  std::string policy = ContentSecurityPolicy(parent);
  EXPECT_NE(policy.find("'" + CspHash("report();") + "'"), std::string::npos);
  EXPECT_NE(policy.find("'" + CspHash("drawTimeline();") + "'"), std::string::npos);
  // Listed once although embedded twice.
  EXPECT_EQ(policy.find(CspHash("drawTimeline();")), policy.rfind(CspHash("drawTimeline();")));
}

TEST(PageTest, HashesOfAForeignPageAreNotTrusted) {
  // A CSP meta deep in a page (e.g. inside trace text) is not read.
  std::string html = std::string(600, ' ') +
                     "<meta http-equiv=\"Content-Security-Policy\" content=\"script-src &#39;sha256-AAAA&#39;\">";
  EXPECT_TRUE(ScriptHashesOfPage(html).empty());
  EXPECT_TRUE(ScriptHashesOfPage("<p>no meta</p>").empty());
}

TEST(PageDeathTest, ScriptThatClosesItselfIsABug) {
  PageSpec spec;
  spec.scripts = {"x = '</SCRIPT><b>';"};
  EXPECT_DEATH(RenderPage(spec, ""), "");
}

}  // namespace
}  // namespace aiprof::render
