#include "src/analysis/common/intervals.h"

#include <gtest/gtest.h>

namespace aiprof {
namespace {

TEST(IntervalsTest, MergeIntersectAndLength) {
  Intervals a = MergeIntervals({{10, 20}, {0, 5}, {15, 30}, {30, 31}});
  EXPECT_EQ(a, (Intervals{{0, 5}, {10, 31}}));
  EXPECT_EQ(LengthOf(a), 26);
  Intervals b = MergeIntervals({{3, 12}, {25, 40}});
  EXPECT_EQ(IntersectIntervals(a, b), (Intervals{{3, 5}, {10, 12}, {25, 31}}));
  EXPECT_EQ(IntersectionLength(a, b), 2 + 2 + 6);
  EXPECT_TRUE(IntersectIntervals(a, {}).empty());
}

TEST(IntervalsTest, CoveredTimeWithinWindows) {
  CoveredTime c(Intervals{{0, 5}, {10, 31}});
  EXPECT_EQ(c.Within(-100, 100), 26);
  EXPECT_EQ(c.Within(3, 12), 2 + 2);   // straddles both intervals
  EXPECT_EQ(c.Within(5, 10), 0);       // exactly the hole
  EXPECT_EQ(c.Within(12, 20), 8);      // inside one interval
  EXPECT_EQ(c.Within(31, 40), 0);
  EXPECT_EQ(c.Within(20, 10), 0);      // empty window
  EXPECT_EQ(CoveredTime(Intervals{}).Within(0, 10), 0);
}

}  // namespace
}  // namespace aiprof
