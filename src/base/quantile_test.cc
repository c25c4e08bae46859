#include "src/base/quantile.h"

#include <gtest/gtest.h>

#include <vector>

namespace aiprof {
namespace {

TEST(QuantileTest, MedianOddEvenAndEmpty) {
  EXPECT_DOUBLE_EQ(Median({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Median({7}), 7);
  EXPECT_DOUBLE_EQ(Median({}), 0);
}

// numpy.quantile([10, 20, 30, 40], [0, 0.25, 0.5, 1]) = 10, 17.5, 25, 40.
TEST(QuantileTest, SortedAndSelectInterpolateBetweenClosestRanks) {
  const std::vector<int64_t> sorted = {10, 20, 30, 40};
  EXPECT_DOUBLE_EQ(QuantileSorted(sorted.data(), 4, 0), 10);
  EXPECT_DOUBLE_EQ(QuantileSorted(sorted.data(), 4, 0.25), 17.5);
  EXPECT_DOUBLE_EQ(QuantileSorted(sorted.data(), 4, 0.5), 25);
  EXPECT_DOUBLE_EQ(QuantileSorted(sorted.data(), 4, 1), 40);
  std::vector<int64_t> shuffled = {40, 10, 30, 20};
  EXPECT_DOUBLE_EQ(QuantileSelect(shuffled.data(), 4, 0.25), 17.5);
}

}  // namespace
}  // namespace aiprof
