#include "src/base/http_server.h"

#include <gtest/gtest.h>

namespace aiprof {
namespace {

TEST(HttpServerHelpersTest, QueryParamsAreDecoded) {
  EXPECT_EQ(QueryParam("a=1&sql=SELECT%20x+FROM%20t&b", "sql"), "SELECT x FROM t");
  EXPECT_EQ(QueryParam("a=1&b", "b"), "");
  EXPECT_EQ(QueryParam("a=1", "c"), std::nullopt);
  EXPECT_EQ(QueryParam("q=%3Cscript%3E", "q"), "<script>");
  EXPECT_EQ(QueryParam("q=%zz", "q"), std::nullopt) << "a malformed escape is no value";
  EXPECT_EQ(QueryParam("q=%4", "q"), std::nullopt);
  std::string out;
  EXPECT_FALSE(PercentDecode("%", &out));
  EXPECT_TRUE(PercentDecode("a%2Fb", &out));
  EXPECT_EQ(out, "a/b");
}

TEST(HttpServerHelpersTest, BearerTokensAndSecrets) {
  EXPECT_EQ(BearerToken("Bearer abc"), "abc");
  EXPECT_EQ(BearerToken("bearer   abc  "), "abc");
  EXPECT_EQ(BearerToken("Basic abc"), "");
  EXPECT_EQ(BearerToken("Bearer"), "");
  EXPECT_TRUE(SameSecret("0123456789abcdef", "0123456789abcdef"));
  EXPECT_FALSE(SameSecret("0123456789abcdeg", "0123456789abcdef"));
  EXPECT_FALSE(SameSecret("0123456789abcdef0", "0123456789abcdef"));
  EXPECT_FALSE(SameSecret("", ""));
}

TEST(HttpServerHelpersTest, MethodsAreMatchedAgainstTheAllowList) {
  EXPECT_TRUE(MethodAllowed("GET", "GET, HEAD"));
  EXPECT_TRUE(MethodAllowed("HEAD", "GET, HEAD"));
  EXPECT_TRUE(MethodAllowed("POST", "POST"));
  EXPECT_FALSE(MethodAllowed("get", "GET, HEAD")) << "method names are case-sensitive";
  EXPECT_FALSE(MethodAllowed("GE", "GET, HEAD"));
  EXPECT_FALSE(MethodAllowed("", "GET, HEAD"));
  EXPECT_FALSE(MethodAllowed("", ""));
  EXPECT_FALSE(MethodAllowed("GET, HEAD", "GET, HEAD")) << "one method, not the list";
  HttpResponse body = TextResponse(400, "use POST on /alert\n");
  body.headers.emplace_back("allow", "stale");
  const HttpResponse r = MethodNotAllowed("POST", body);
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.body, "use POST on /alert\n");
  ASSERT_EQ(r.headers.size(), 1u) << "one Allow header, the one given";
  EXPECT_EQ(r.headers[0].first, "Allow");
  EXPECT_EQ(r.headers[0].second, "POST");
}

// What a page of another site can send through the user's browser: a Host
// of its own name (DNS rebinding to 127.0.0.1) to a listener without
// tokens, and simple cross-origin POSTs (no preflight) to any listener.
TEST(HttpServerHelpersTest, RequestsFromOtherSitesAreRefused) {
  auto status = [](const std::string& method, const std::string& host, const std::string& origin,
                   const std::string& fetch_site, bool tokens) {
    HttpRequest r;
    r.method = method;
    r.host = host;
    r.origin = origin;
    r.fetch_site = fetch_site;
    std::optional<HttpResponse> a = RefuseFromOtherSites(r, tokens);
    return a ? a->status : 0;
  };
  // Loopback names pass, with or without a port; a client without Host too.
  for (const char* host : {"127.0.0.1:8080", "localhost:9", "LOCALHOST", "[::1]:8080", "127.0.0.2", ""}) {
    EXPECT_EQ(status("GET", host, "", "", false), 0) << host;
  }
  EXPECT_EQ(status("GET", "attacker.example:8080", "", "", false), 421);
  EXPECT_EQ(status("GET", "[::1", "", "", false), 421);
  EXPECT_EQ(status("GET", "attacker.example", "", "", true), 0) << "with tokens the token decides";
  // POST from the listener's own pages passes; from another origin not.
  EXPECT_EQ(status("POST", "127.0.0.1:8080", "http://127.0.0.1:8080", "same-origin", false), 0);
  EXPECT_EQ(status("POST", "127.0.0.1:8080", "", "", false), 0) << "curl, push: no Origin";
  EXPECT_EQ(status("POST", "127.0.0.1:8080", "http://evil.example", "", false), 403);
  EXPECT_EQ(status("POST", "127.0.0.1:8080", "null", "", false), 403);
  EXPECT_EQ(status("POST", "127.0.0.1:8080", "", "cross-site", true), 403);
  EXPECT_EQ(status("POST", "localhost:8080", "http://localhost:3000", "same-site", false), 403);
  EXPECT_EQ(status("GET", "127.0.0.1:8080", "http://evil.example", "cross-site", false), 0)
      << "a cross-site GET reads nothing: no CORS header lets the page see the answer";
}

// The whole origin counts: another web app on another port of the same
// host, or another scheme, is another site (D5 of the serve trial).
TEST(HttpServerHelpersTest, OriginMustMatchSchemeHostAndPort) {
  auto status = [](const std::string& host, const std::string& origin) {
    HttpRequest r;
    r.method = "POST";
    r.host = host;
    r.origin = origin;
    std::optional<HttpResponse> a = RefuseFromOtherSites(r, false);
    return a ? a->status : 0;
  };
  EXPECT_EQ(status("127.0.0.1:8080", "http://127.0.0.1:8080"), 0);
  EXPECT_EQ(status("LOCALHOST:8080", "http://localhost:8080"), 0);
  EXPECT_EQ(status("[::1]:8080", "http://[::1]:8080"), 0);
  EXPECT_EQ(status("127.0.0.1", "http://127.0.0.1:80"), 0) << "port 80 is http's default";
  EXPECT_EQ(status("127.0.0.1:8080", "http://127.0.0.1:1"), 403);
  EXPECT_EQ(status("127.0.0.1:8080", "http://127.0.0.1"), 403);
  EXPECT_EQ(status("127.0.0.1:8080", "https://127.0.0.1:8080"), 403);
  EXPECT_EQ(status("127.0.0.1:8080", "http://localhost:8080"), 403) << "another host name is another origin";
  EXPECT_EQ(status("127.0.0.1:8080", "http://127.0.0.1:8080x"), 403);
}

}  // namespace
}  // namespace aiprof
