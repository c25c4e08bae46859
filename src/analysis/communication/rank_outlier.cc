#include "src/analysis/communication/rank_outlier.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace aiprof {

const char* OutlierTestName(OutlierTest test) {
  switch (test) {
    case OutlierTest::kNone: return "none";
    case OutlierTest::kDixonQ: return "dixon_q";
    case OutlierTest::kThreeSigma: return "three_sigma";
  }
  return "none";
}

double DixonQCritical95(size_t n) {
  static constexpr std::array<double, 8> kQ95 = {0.970, 0.829, 0.710, 0.625, 0.568, 0.526, 0.493, 0.466};
  if (n < kOutlierMinValues || n > kDixonMaxValues) return 0;
  return kQ95[n - kOutlierMinValues];
}

namespace {

void DixonQ(std::span<const double> values, OutlierResult* r) {
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const double range = sorted.back() - sorted.front();
  r->test = OutlierTest::kDixonQ;
  r->critical = DixonQCritical95(sorted.size());
  r->statistic = range > 0 ? (sorted.back() - sorted[sorted.size() - 2]) / range : 0;
  r->outlier = range > 0 && r->statistic > r->critical;
}

void ThreeSigma(std::span<const double> values, OutlierResult* r) {
  const double largest = values[r->index];
  double sum = 0;
  for (size_t i = 0; i < values.size(); ++i) sum += i == r->index ? 0 : values[i];
  const double others = static_cast<double>(values.size() - 1);
  const double mean = sum / others;
  double squares = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i != r->index) squares += (values[i] - mean) * (values[i] - mean);
  }
  const double sd = std::sqrt(squares / (others - 1));
  r->test = OutlierTest::kThreeSigma;
  r->critical = kThreeSigmaLimit;
  if (sd > 0) {
    r->statistic = (largest - mean) / sd;
  } else {
    r->statistic = largest > mean ? std::numeric_limits<double>::infinity() : 0;
  }
  r->outlier = r->statistic > kThreeSigmaLimit;
}

}  // namespace

OutlierResult TestLargestForOutlier(std::span<const double> values) {
  OutlierResult r;
  if (values.empty()) return r;
  r.index = static_cast<size_t>(std::max_element(values.begin(), values.end()) - values.begin());
  if (values.size() < kOutlierMinValues) return r;
  if (values.size() <= kDixonMaxValues) {
    DixonQ(values, &r);
  } else {
    ThreeSigma(values, &r);
  }
  return r;
}

}  // namespace aiprof
