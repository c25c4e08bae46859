#include "src/base/quantile.h"

#include <algorithm>
#include <cmath>

namespace aiprof {

double QuantileSorted(const int64_t* sorted, size_t n, double q) {
  if (n == 0) return 0;
  double pos = q * static_cast<double>(n - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  if (lo + 1 >= n) return static_cast<double>(sorted[n - 1]);
  double frac = pos - static_cast<double>(lo);
  return static_cast<double>(sorted[lo]) + (static_cast<double>(sorted[lo + 1] - sorted[lo])) * frac;
}

double QuantileSelect(int64_t* data, size_t n, double q) {
  if (n == 0) return 0;
  double pos = q * static_cast<double>(n - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  if (lo + 1 >= n) return static_cast<double>(*std::max_element(data, data + n));
  std::nth_element(data, data + lo, data + n);
  int64_t a = data[lo];
  int64_t b = *std::min_element(data + lo + 1, data + n);
  double frac = pos - static_cast<double>(lo);
  return static_cast<double>(a) + static_cast<double>(b - a) * frac;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t n = v.size();
  std::nth_element(v.begin(), v.begin() + static_cast<long>(n / 2), v.end());
  const double upper = v[n / 2];
  if (n % 2) return upper;
  return (*std::max_element(v.begin(), v.begin() + static_cast<long>(n / 2)) + upper) / 2;
}

}  // namespace aiprof
