#include "src/analysis/communication/rank_outlier.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace aiprof {
namespace {

TEST(RankOutlierTest, TooFewValuesGetNoTest) {
  EXPECT_EQ(TestLargestForOutlier(std::vector<double>{}).test, OutlierTest::kNone);
  OutlierResult two = TestLargestForOutlier(std::vector<double>{5, 1});
  EXPECT_EQ(two.test, OutlierTest::kNone);
  EXPECT_EQ(two.index, 0u);
  EXPECT_FALSE(two.outlier);
}

// n = 3: Q = (x3 − x2) / (x3 − x1); critical 0.970.
TEST(RankOutlierTest, DixonBothSidesOfTheCriticalValue) {
  OutlierResult below = TestLargestForOutlier(std::vector<double>{1, 30, 2});  // Q = 28/29 = 0.9655
  EXPECT_EQ(below.test, OutlierTest::kDixonQ);
  EXPECT_EQ(below.index, 1u);
  EXPECT_NEAR(below.statistic, 28.0 / 29.0, 1e-12);
  EXPECT_DOUBLE_EQ(below.critical, 0.970);
  EXPECT_FALSE(below.outlier);
  OutlierResult above = TestLargestForOutlier(std::vector<double>{1, 100, 2});  // Q = 98/99 = 0.9899
  EXPECT_NEAR(above.statistic, 98.0 / 99.0, 1e-12);
  EXPECT_TRUE(above.outlier);
}

// n = 10: critical 0.466. Nine values 0..8 and a tenth x: Q = (x − 8) / x.
// Q > 0.466 ⇔ x > 8 / 0.534 = 14.98.
TEST(RankOutlierTest, DixonTenValues) {
  std::vector<double> v = {0, 1, 2, 3, 4, 5, 6, 7, 8, 14.9};
  OutlierResult r = TestLargestForOutlier(v);
  EXPECT_EQ(r.test, OutlierTest::kDixonQ);
  EXPECT_DOUBLE_EQ(r.critical, 0.466);
  EXPECT_FALSE(r.outlier);
  v.back() = 15.1;
  EXPECT_TRUE(TestLargestForOutlier(v).outlier);
}

TEST(RankOutlierTest, EqualValuesAreNeverOutliers) {
  EXPECT_FALSE(TestLargestForOutlier(std::vector<double>{3, 3, 3, 3}).outlier);
  EXPECT_FALSE(TestLargestForOutlier(std::vector<double>(12, 7.0)).outlier);
}

// n = 11: the other ten are five 10s and five 11s: mean 10.5, sample sd =
// sqrt(10 × 0.25 / 9) = 0.52705; limit 10.5 + 3 × 0.52705 = 12.081.
TEST(RankOutlierTest, ThreeSigmaLeavesTheCandidateOut) {
  std::vector<double> v = {10, 10, 10, 10, 10, 11, 11, 11, 11, 11, 12.0};
  OutlierResult below = TestLargestForOutlier(v);
  EXPECT_EQ(below.test, OutlierTest::kThreeSigma);
  EXPECT_EQ(below.index, 10u);
  EXPECT_NEAR(below.statistic, 1.5 / std::sqrt(2.5 / 9), 1e-9);
  EXPECT_FALSE(below.outlier);
  v.back() = 12.2;
  OutlierResult above = TestLargestForOutlier(v);
  EXPECT_NEAR(above.statistic, 1.7 / std::sqrt(2.5 / 9), 1e-9);
  EXPECT_TRUE(above.outlier);
}

TEST(RankOutlierTest, ThreeSigmaWithIdenticalOthers) {
  std::vector<double> v(11, 4.0);
  v[3] = 4.5;
  OutlierResult r = TestLargestForOutlier(v);
  EXPECT_EQ(r.index, 3u);
  EXPECT_TRUE(std::isinf(r.statistic));
  EXPECT_TRUE(r.outlier);
}

}  // namespace
}  // namespace aiprof
