// Is the largest of a few per-rank figures an outlier?
//
// 3 to 10 values: Dixon's Q test, Q = (x₍ₙ₎ − x₍ₙ₋₁₎) / (x₍ₙ₎ − x₍₁₎) against
// the 95% critical values of Rorabacher (Anal. Chem. 1991, 63, 139):
// 0.970, 0.829, 0.710, 0.625, 0.568, 0.526, 0.493, 0.466 for n = 3..10.
// More than 10 values: the 3σ rule with the largest value left out of the
// mean and (sample, n−1) standard deviation, so one straggler cannot mask
// itself: z = (x₍ₙ₎ − mean_others) / sd_others > 3. Fewer than 3 values: no
// test. Equal values are never outliers.
#ifndef AIPROF_SRC_ANALYSIS_COMMUNICATION_RANK_OUTLIER_H_
#define AIPROF_SRC_ANALYSIS_COMMUNICATION_RANK_OUTLIER_H_

#include <cstddef>
#include <span>
#include <vector>

namespace aiprof {

enum class OutlierTest { kNone = 0, kDixonQ, kThreeSigma };
const char* OutlierTestName(OutlierTest test);

// Values of n below this get no test; up to kDixonMaxValues use Dixon's Q.
inline constexpr size_t kOutlierMinValues = 3;
inline constexpr size_t kDixonMaxValues = 10;
inline constexpr double kThreeSigmaLimit = 3.0;

struct OutlierResult {
  OutlierTest test = OutlierTest::kNone;
  size_t index = 0;      // position of the largest value in the input
  bool outlier = false;
  double statistic = 0;  // Q, or z (infinite when the others are all equal)
  double critical = 0;   // Q at 95% for n, or 3
};

// Tests the largest of `values`; index is meaningful when values is non-empty.
OutlierResult TestLargestForOutlier(std::span<const double> values);

// Dixon's Q critical value at 95% for n in [3, 10]; 0 otherwise.
double DixonQCritical95(size_t n);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_COMMUNICATION_RANK_OUTLIER_H_
