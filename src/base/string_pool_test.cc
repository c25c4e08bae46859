#include "src/base/string_pool.h"

#include <gtest/gtest.h>

#include <string>

namespace aiprof {
namespace {

TEST(StringPoolTest, InternsOnce) {
  StringPool pool;
  StringId a = pool.Intern("aten::conv2d");
  StringId b = pool.Intern(std::string("aten::") + "conv2d");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, pool.Intern("aten::relu"));
  EXPECT_EQ(pool.Get(a), "aten::conv2d");
  EXPECT_TRUE(pool.Intern("").empty());
  EXPECT_EQ(pool.Find("aten::relu"), pool.Intern("aten::relu"));
  EXPECT_EQ(pool.Find("missing"), std::nullopt);
}

TEST(StringPoolTest, LargeStringsStayValidAcrossBlocks) {
  StringPool pool;
  std::string big(3 << 20, 'x');
  StringId small1 = pool.Intern("before");
  StringId huge = pool.Intern(big);
  std::vector<StringId> ids;
  for (int i = 0; i < 100000; ++i) ids.push_back(pool.Intern("name" + std::to_string(i)));
  EXPECT_EQ(pool.Get(small1), "before");
  EXPECT_EQ(pool.Get(huge), big);
  EXPECT_EQ(pool.Get(ids[54321]), "name54321");
  EXPECT_EQ(pool.Intern("name99999"), ids.back());
}

}  // namespace
}  // namespace aiprof
