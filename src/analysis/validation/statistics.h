// Two-sample statistics for before/after validation (docs/validation.md).
//
// Conventions: `a` is the before sample, `b` the after sample. Differences
// are b - a; relative changes are stat(b) / stat(a) - 1. Every p-value is
// two-sided. Distributions come from Boost.Math; p-values are checked against
// SciPy 1.10 (test/data/validation/scipy_pvalues.json) to 1e-6 relative.
#ifndef AIPROF_SRC_ANALYSIS_VALIDATION_STATISTICS_H_
#define AIPROF_SRC_ANALYSIS_VALIDATION_STATISTICS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <vector>

namespace aiprof {

struct TestResult {
  double statistic = 0;  // Welch: t of (mean a - mean b); Mann-Whitney: U of a
  double p_value = 1;    // two-sided
  double df = 0;         // Welch-Satterthwaite degrees of freedom (Welch only)
  bool exact = false;    // Mann-Whitney: exact null distribution (not normal approximation)
};

double Mean(std::span<const double> x);
// The two-sided 95% quantile of Student's t with `df` degrees of freedom
// (df ≥ 1): the half-width of a mean's 95% interval in standard errors.
double StudentT95(double df);
// A mean and its 95% t interval (lo = hi = mean for one value).
struct MeanInterval {
  double mean = 0, lo = 0, hi = 0;
  size_t n = 0;
};
MeanInterval MeanWithInterval(std::span<const double> x);
// The same for durations (step times): the interval's lower end held at 0.
// A t interval of a few spread values reaches below zero (2 steps of 42 and
// 92 µs: t(1) = 12.7 gives [-250, 384] µs), which no duration can.
MeanInterval DurationMeanWithInterval(std::span<const double> x);
// The median and its distribution-free interval from order statistics: the
// k-th smallest and k-th largest values, k the largest with
// P(Binomial(n, 1/2) < k) ≤ 2.5% (coverage ≥ 95%); below 6 values no such
// k exists and the interval is [min, max] (coverage 1 - 2^(1-n)).
MeanInterval MedianWithInterval(std::span<const double> x);
// Sample variance (n - 1 denominator); 0 when n < 2.
double SampleVariance(std::span<const double> x);
// Adjusted Fisher-Pearson sample skewness (SciPy's skew(bias=False)); 0 when n < 3 or no spread.
double SampleSkewness(std::span<const double> x);
// Linear-interpolated quantile (numpy's default) of sorted values; q in [0, 1]; 0 when empty.
double QuantileOfSorted(std::span<const double> sorted, double q);
double Quantile(std::span<const double> x, double q);  // sorts a copy

// Welch's unequal-variance t-test (SciPy ttest_ind(a, b, equal_var=False)).
// Needs n >= 2 on each side. When both variances are 0 the difference is
// certain: p = 1 if the means are equal, else 0.
TestResult WelchTTest(std::span<const double> a, std::span<const double> b);

// Mann-Whitney U (SciPy mannwhitneyu(a, b, alternative="two-sided"),
// method="auto"): exact null distribution when either side has at most 8
// values and there are no ties, else the normal approximation with tie and
// continuity correction. The exact path is also left for the normal one when
// the counting table would exceed ~5e7 cells (n_small * n_large * N).
TestResult MannWhitneyU(std::span<const double> a, std::span<const double> b);

// Hedges' g of (b - a): difference in means over the pooled standard
// deviation, with the small-sample correction 1 - 3 / (4 (na + nb) - 9).
// 0 when the pooled deviation is 0.
double HedgesG(std::span<const double> a, std::span<const double> b);
// Cliff's delta P(b > a) - P(b < a), in [-1, 1].
double CliffsDelta(std::span<const double> a, std::span<const double> b);

// Percentile bootstrap of stat(b*) - stat(a*), each side resampled with
// replacement independently. Reproducible: the generator is mt19937_64 with
// `seed`, and indices are drawn by Lemire's unbiased multiply-shift, not by
// std::uniform_int_distribution (whose algorithm is implementation-defined).
struct BootstrapOptions {
  int resamples = 10000;
  double confidence = 0.95;  // two-sided interval level
  uint64_t seed = 0x5eed;
};
struct BootstrapInterval {
  double estimate = 0;  // stat(b) - stat(a) on the original samples
  double low = 0, high = 0;  // percentile interval of the difference
  double rel_estimate = 0;   // stat(b) / stat(a) - 1 (0 when stat(a) is 0)
  double rel_low = 0, rel_high = 0;
  // Two-sided bootstrap p-value: 2 min(P*(diff <= 0), P*(diff >= 0)), capped at 1.
  double p_value = 1;
};
using SampleStatistic = std::function<double(std::span<const double> sorted)>;
BootstrapInterval BootstrapDifference(std::span<const double> a, std::span<const double> b,
                                      const SampleStatistic& stat, const BootstrapOptions& options);

// The bootstrap of the two statistics `validate` uses, fast at any size.
// While the two samples hold at most kBootstrapResampleMaxSamples values in
// all, they are BootstrapDifference with QuantileOfSorted / Mean (the same
// draws, so the same figures). Beyond that, a side of at most half that many
// is still resampled, and for a larger side resampling n values R times
// (R n log n) is replaced by drawing each resample's statistic from its
// distribution under resampling, O(R) after one sort:
//   - quantile q: the resample's order statistics k and k+1 are the sorted
//     values at floor(n U(k)) and floor(n U(k+1)), U(k) ~ Beta(k, n-k+1) the
//     k-th order statistic of n uniforms and U(k+1) the least of the n-k
//     uniforms above it — exact in distribution;
//   - mean: normal with the plug-in variance sum((x - mean)^2) / n^2 — the
//     bootstrap's asymptotic distribution (n > 500 on that side).
// Reproducible for a seed; the generator is mt19937_64 throughout and the
// gamma/normal draws are our own (Marsaglia–Tsang, Box–Muller).
inline constexpr size_t kBootstrapResampleMaxSamples = 1000;
BootstrapInterval BootstrapQuantileDifference(std::span<const double> a, std::span<const double> b, double q,
                                              const BootstrapOptions& options);
BootstrapInterval BootstrapMeanDifference(std::span<const double> a, std::span<const double> b,
                                          const BootstrapOptions& options);

// An index in [0, n), n > 0, unbiased (Lemire 2019 multiply-shift with rejection). Visible for testing.
uint64_t BoundedIndex(std::mt19937_64* rng, uint64_t n);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_VALIDATION_STATISTICS_H_
