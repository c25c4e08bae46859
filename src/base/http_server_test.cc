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

}  // namespace
}  // namespace aiprof
