#include "src/session/prediction_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace aiprof {
namespace {

PredictionCheck RunCheck(double before, double predicted, double lo, double hi, size_t steps) {
  PredictionCheck c;
  c.fix_id = "fix";
  c.source = kGainFromSimulation;
  c.before_ns = before;
  c.predicted_ns = predicted;
  c.predicted_lo_ns = lo;
  c.predicted_hi_ns = hi;
  c.uncorrected_ns = predicted;
  c.before_steps = steps;
  return c;
}

// Two runs a side (under kMinRunsForTest): the means of the runs, and the
// span of their own intervals. By hand: predicted (90 + 110) / 2 = 100, span
// [85, 118]; measured (95 + 105) / 2 = 100, span [90, 111].
TEST(PoolPredictionRuns, FewRunsTakeTheSpanOfTheirIntervals) {
  std::vector<PredictionCheck> before = {RunCheck(120, 90, 85, 96, 10), RunCheck(130, 110, 104, 118, 12)};
  std::vector<MeanInterval> after = {{95, 90, 99, 8}, {105, 100, 111, 9}};
  PredictionCheck c = PoolPredictionRuns(before, after);
  EXPECT_EQ(c.before_runs, 2u);
  EXPECT_EQ(c.after_runs, 2u);
  EXPECT_EQ(c.before_steps, 22u);
  EXPECT_EQ(c.after_steps, 17u);
  EXPECT_DOUBLE_EQ(c.before_ns, 125);
  EXPECT_DOUBLE_EQ(c.predicted_ns, 100);
  EXPECT_DOUBLE_EQ(c.predicted_lo_ns, 85);
  EXPECT_DOUBLE_EQ(c.predicted_hi_ns, 118);
  EXPECT_DOUBLE_EQ(c.measured_ns, 100);
  EXPECT_DOUBLE_EQ(c.measured_lo_ns, 90);
  EXPECT_DOUBLE_EQ(c.measured_hi_ns, 111);
  EXPECT_DOUBLE_EQ(c.error, 0);
  EXPECT_TRUE(c.within);
  EXPECT_TRUE(c.agrees);
  EXPECT_NE(c.time_base.find("the span of 2 run(s)' own intervals"), std::string::npos) << c.time_base;
}

// Three runs a side: Student's t over the runs. Predicted 90, 100, 110: mean
// 100, s = 10, half = t(0.975, 2) 4.302653 x 10 / sqrt(3) = 24.8414;
// measured 120, 121, 125: mean 122, s = sqrt(7) = 2.645751, half = 4.302653
// x 2.645751 / sqrt(3) = 6.5724. The intervals overlap; 122 lies inside
// [75.16, 124.84]; error 100 / 122 - 1.
TEST(PoolPredictionRuns, ThreeRunsTakeTheTIntervalOverRuns) {
  std::vector<PredictionCheck> before = {RunCheck(130, 90, 89, 91, 10), RunCheck(130, 100, 99, 101, 10),
                                         RunCheck(130, 110, 109, 111, 10)};
  std::vector<MeanInterval> after = {{120, 119, 121, 10}, {121, 120, 122, 10}, {125, 124, 126, 10}};
  PredictionCheck c = PoolPredictionRuns(before, after);
  const double t = 4.302652729749464;
  EXPECT_NEAR(c.predicted_ns, 100, 1e-9);
  EXPECT_NEAR(c.predicted_lo_ns, 100 - t * 10 / std::sqrt(3.0), 1e-6);
  EXPECT_NEAR(c.predicted_hi_ns, 100 + t * 10 / std::sqrt(3.0), 1e-6);
  EXPECT_NEAR(c.measured_ns, 122, 1e-9);
  EXPECT_NEAR(c.measured_lo_ns, 122 - t * std::sqrt(7.0) / std::sqrt(3.0), 1e-6);
  EXPECT_NEAR(c.measured_hi_ns, 122 + t * std::sqrt(7.0) / std::sqrt(3.0), 1e-6);
  EXPECT_NEAR(c.error, 100.0 / 122 - 1, 1e-12);
  EXPECT_TRUE(c.within);
  EXPECT_TRUE(c.agrees);
  EXPECT_NE(c.time_base.find("Student's t over 3 runs"), std::string::npos) << c.time_base;
}

}  // namespace
}  // namespace aiprof
