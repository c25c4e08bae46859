#include "src/analysis/validation/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

namespace aiprof {

double StudentT95(double df) {
  boost::math::students_t dist(std::max(df, 1.0));
  return boost::math::quantile(boost::math::complement(dist, 0.025));
}

MeanInterval MedianWithInterval(std::span<const double> x) {
  MeanInterval m;
  m.n = x.size();
  if (x.empty()) return m;
  std::vector<double> v(x.begin(), x.end());
  std::sort(v.begin(), v.end());
  m.mean = QuantileOfSorted(v, 0.5);
  size_t k = 1;  // 1-based order statistic
  boost::math::binomial dist(static_cast<double>(v.size()), 0.5);
  while (k + 1 <= (v.size() + 1) / 2 && boost::math::cdf(dist, static_cast<double>(k)) <= 0.025) ++k;
  m.lo = v[k - 1];
  m.hi = v[v.size() - k];
  return m;
}

MeanInterval MeanWithInterval(std::span<const double> x) {
  MeanInterval m;
  m.n = x.size();
  if (x.empty()) return m;
  m.mean = m.lo = m.hi = Mean(x);
  if (x.size() < 2) return m;
  const double half = StudentT95(static_cast<double>(x.size() - 1)) *
                      std::sqrt(SampleVariance(x) / static_cast<double>(x.size()));
  m.lo = m.mean - half;
  m.hi = m.mean + half;
  return m;
}

MeanInterval DurationMeanWithInterval(std::span<const double> x) {
  MeanInterval m = MeanWithInterval(x);
  m.lo = std::max(m.lo, 0.0);
  return m;
}
namespace {

// Fractional ranks (average rank for ties) of the concatenation a ++ b;
// also returns the tie term sum(t^3 - t) over tie groups.
std::vector<double> Ranks(std::span<const double> a, std::span<const double> b, double* tie_term) {
  size_t n = a.size() + b.size();
  std::vector<std::pair<double, size_t>> v;
  v.reserve(n);
  for (size_t i = 0; i < a.size(); ++i) v.emplace_back(a[i], i);
  for (size_t i = 0; i < b.size(); ++i) v.emplace_back(b[i], a.size() + i);
  std::sort(v.begin(), v.end());
  std::vector<double> ranks(n);
  *tie_term = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && v[j].first == v[i].first) ++j;
    double avg = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k) ranks[v[k].second] = avg;
    double t = static_cast<double>(j - i);
    *tie_term += t * t * t - t;
    i = j;
  }
  return ranks;
}

// P(U >= u) under H0 for sizes (m, n), no ties, by counting m-subsets of
// ranks 1..N by their sum (U = rank sum - m(m+1)/2).
double ExactUpperTail(double u, size_t m, size_t n) {
  if (m > n) std::swap(m, n);  // U's null distribution is symmetric in (m, n) roles
  size_t total = m + n;
  size_t max_u = m * n;
  // ways[j][s]: subsets of size j of the ranks seen so far with U-offset sum s.
  // Track s' = sum of (rank - position) so that it stays in [0, m*n].
  std::vector<std::vector<double>> ways(m + 1, std::vector<double>(max_u + 1, 0.0));
  ways[0][0] = 1;
  for (size_t r = 1; r <= total; ++r) {
    for (size_t j = std::min(m, r); j >= 1; --j) {
      // Choosing rank r as the j-th smallest adds r - j to the offset sum.
      if (r < j) continue;
      size_t add = r - j;
      if (add > n) continue;
      std::vector<double>& dst = ways[j];
      const std::vector<double>& src = ways[j - 1];
      for (size_t s = max_u; s + 1 > add; --s) {
        dst[s] += src[s - add];
        if (s == 0) break;
      }
    }
  }
  double all = 0, tail = 0;
  size_t from = static_cast<size_t>(std::ceil(u - 1e-9));
  for (size_t s = 0; s <= max_u; ++s) {
    all += ways[m][s];
    if (s >= from) tail += ways[m][s];
  }
  return all > 0 ? tail / all : 1.0;
}

// A uniform in (0, 1) from the top 53 bits.
double Uniform01(std::mt19937_64* rng) { return (static_cast<double>((*rng)() >> 11) + 0.5) * 0x1.0p-53; }

double StandardNormal(std::mt19937_64* rng) {
  double u = Uniform01(rng), v = Uniform01(rng);
  return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v);
}

// Gamma(shape, 1), shape >= 1 (Marsaglia and Tsang 2000).
double Gamma(double shape, std::mt19937_64* rng) {
  double d = shape - 1.0 / 3, c = 1 / std::sqrt(9 * d);
  for (;;) {
    double x = StandardNormal(rng), v = 1 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    double u = Uniform01(rng);
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

// One resample of a sorted sample, in sorted order: the n draws are counted
// per index and written out in index order. That is the multiset, hence the
// sorted sequence, that drawing the values and sorting them gives from the
// same draws, in O(n) instead of O(n log n) (the sort was 47% of a
// bootstrap's time; bench BM_BootstrapResample).
void DrawSortedResample(std::span<const double> sorted, std::mt19937_64* rng, std::vector<uint32_t>* counts,
                        std::vector<double>* out) {
  size_t n = sorted.size();
  counts->assign(n, 0);
  for (size_t i = 0; i < n; ++i) ++(*counts)[BoundedIndex(rng, n)];
  out->resize(n);
  double* w = out->data();
  for (size_t j = 0; j < n; ++j) {
    for (uint32_t c = (*counts)[j]; c > 0; --c) *w++ = sorted[j];
  }
}

// One bootstrap resample's statistic, drawn from its distribution (see
// BootstrapQuantileDifference in the header).
class ResampledStatistic {
 public:
  ResampledStatistic(std::span<const double> sorted, double q, bool mean) : s_(sorted), q_(q), mean_(mean) {
    double n = static_cast<double>(s_.size());
    if (mean_) {
      double m = Mean(s_), ss = 0;
      for (double v : s_) ss += (v - m) * (v - m);
      center_ = m;
      sd_ = std::sqrt(ss / n) / std::sqrt(n);
    }
  }

  double Draw(std::mt19937_64* rng) {
    size_t n = s_.size();
    if (n <= kBootstrapResampleMaxSamples / 2) {  // small: resample it, as BootstrapDifference does
      DrawSortedResample(s_, rng, &counts_, &buffer_);
      return mean_ ? Mean(buffer_) : QuantileOfSorted(buffer_, q_);
    }
    if (mean_) return center_ + sd_ * StandardNormal(rng);
    double pos = q_ * static_cast<double>(n - 1);
    size_t lo = static_cast<size_t>(std::floor(pos));
    size_t k = std::min(lo + 1, n);  // 1-based rank of the lower order statistic
    double g1 = Gamma(static_cast<double>(k), rng), g2 = Gamma(static_cast<double>(n - k + 1), rng);
    double u = g1 / (g1 + g2);
    double x = s_[Index(u)];
    if (lo + 1 >= n) return x;
    // The least of the n - k uniforms above u.
    double u2 = u + (1 - u) * -std::expm1(std::log(Uniform01(rng)) / static_cast<double>(n - k));
    double frac = pos - static_cast<double>(lo);
    return x + (s_[Index(u2)] - x) * frac;
  }

 private:
  size_t Index(double u) const {
    return std::min(s_.size() - 1, static_cast<size_t>(u * static_cast<double>(s_.size())));
  }
  std::span<const double> s_;
  double q_;
  bool mean_;
  double center_ = 0, sd_ = 0;
  std::vector<double> buffer_;
  std::vector<uint32_t> counts_;
};

// Percentile interval and p-value of the R differences (and ratios).
void FinishInterval(std::vector<double> diffs, std::vector<double> rels, const BootstrapOptions& options,
                    BootstrapInterval* out) {
  size_t at_or_below = 0, at_or_above = 0;
  for (double d : diffs) {
    if (d <= 0) ++at_or_below;
    if (d >= 0) ++at_or_above;
  }
  std::sort(diffs.begin(), diffs.end());
  std::sort(rels.begin(), rels.end());
  double tail = (1 - options.confidence) / 2;
  out->low = QuantileOfSorted(diffs, tail);
  out->high = QuantileOfSorted(diffs, 1 - tail);
  out->rel_low = QuantileOfSorted(rels, tail);
  out->rel_high = QuantileOfSorted(rels, 1 - tail);
  double r = static_cast<double>(diffs.size());
  out->p_value = std::min(1.0, 2 * std::min(static_cast<double>(at_or_below), static_cast<double>(at_or_above)) / r);
}

BootstrapInterval LargeSampleBootstrap(std::span<const double> a, std::span<const double> b, double q, bool mean,
                                       const BootstrapOptions& options) {
  BootstrapInterval out;
  if (a.empty() || b.empty()) return out;
  std::vector<double> sa(a.begin(), a.end()), sb(b.begin(), b.end());
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  double stat_a = mean ? Mean(sa) : QuantileOfSorted(sa, q), stat_b = mean ? Mean(sb) : QuantileOfSorted(sb, q);
  out.estimate = stat_b - stat_a;
  out.rel_estimate = stat_a != 0 ? stat_b / stat_a - 1 : 0;
  int resamples = std::max(options.resamples, 1);
  std::mt19937_64 rng(options.seed);
  ResampledStatistic ra(sa, q, mean), rb(sb, q, mean);
  std::vector<double> diffs(resamples), rels(resamples);
  for (int i = 0; i < resamples; ++i) {
    double x = ra.Draw(&rng), y = rb.Draw(&rng);
    diffs[i] = y - x;
    rels[i] = x != 0 ? y / x - 1 : 0;
  }
  FinishInterval(std::move(diffs), std::move(rels), options, &out);
  return out;
}

}  // namespace

double Mean(std::span<const double> x) {
  if (x.empty()) return 0;
  double sum = 0;
  for (double v : x) sum += v;
  return sum / static_cast<double>(x.size());
}

double SampleVariance(std::span<const double> x) {
  if (x.size() < 2) return 0;
  double m = Mean(x), ss = 0;
  for (double v : x) ss += (v - m) * (v - m);
  return ss / static_cast<double>(x.size() - 1);
}

double SampleSkewness(std::span<const double> x) {
  size_t n = x.size();
  if (n < 3) return 0;
  double m = Mean(x), m2 = 0, m3 = 0;
  for (double v : x) {
    double d = v - m;
    m2 += d * d;
    m3 += d * d * d;
  }
  m2 /= static_cast<double>(n);
  m3 /= static_cast<double>(n);
  if (m2 <= 0) return 0;
  double g1 = m3 / std::pow(m2, 1.5);
  double nn = static_cast<double>(n);
  return g1 * std::sqrt(nn * (nn - 1)) / (nn - 2);
}

double QuantileOfSorted(std::span<const double> sorted, double q) {
  size_t n = sorted.size();
  if (n == 0) return 0;
  double pos = q * static_cast<double>(n - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  if (lo + 1 >= n) return sorted[n - 1];
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * frac;
}

double Quantile(std::span<const double> x, double q) {
  std::vector<double> s(x.begin(), x.end());
  std::sort(s.begin(), s.end());
  return QuantileOfSorted(s, q);
}

TestResult WelchTTest(std::span<const double> a, std::span<const double> b) {
  TestResult r;
  double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  if (a.size() < 2 || b.size() < 2) return r;
  double va = SampleVariance(a) / na, vb = SampleVariance(b) / nb;
  double diff = Mean(a) - Mean(b);
  double se2 = va + vb;
  if (se2 <= 0) {
    r.statistic = diff == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), diff);
    r.p_value = diff == 0 ? 1 : 0;
    return r;
  }
  r.statistic = diff / std::sqrt(se2);
  r.df = se2 * se2 / (va * va / (na - 1) + vb * vb / (nb - 1));
  boost::math::students_t dist(r.df);
  r.p_value = std::min(1.0, 2 * boost::math::cdf(boost::math::complement(dist, std::fabs(r.statistic))));
  return r;
}

TestResult MannWhitneyU(std::span<const double> a, std::span<const double> b) {
  TestResult r;
  if (a.empty() || b.empty()) return r;
  double tie_term = 0;
  std::vector<double> ranks = Ranks(a, b, &tie_term);
  double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size());
  double r1 = 0;
  for (size_t i = 0; i < a.size(); ++i) r1 += ranks[i];
  double u1 = r1 - n1 * (n1 + 1) / 2;
  double u = std::max(u1, n1 * n2 - u1);
  r.statistic = u1;
  size_t small = std::min(a.size(), b.size()), large = std::max(a.size(), b.size());
  bool exact_ok = (small <= 8) && tie_term == 0 &&
                  static_cast<double>(small) * static_cast<double>(large) * static_cast<double>(small + large) <= 5e7;
  if (exact_ok) {
    r.exact = true;
    r.p_value = std::min(1.0, 2 * ExactUpperTail(u, a.size(), b.size()));
    return r;
  }
  double n = n1 + n2;
  double s = std::sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))));
  if (!(s > 0)) {  // every value equal
    r.p_value = 1;
    return r;
  }
  double z = (u - n1 * n2 / 2 - 0.5) / s;
  boost::math::normal norm;
  r.p_value = std::clamp(2 * boost::math::cdf(boost::math::complement(norm, z)), 0.0, 1.0);
  return r;
}

double HedgesG(std::span<const double> a, std::span<const double> b) {
  if (a.size() < 2 || b.size() < 2) return 0;
  double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  double pooled = ((na - 1) * SampleVariance(a) + (nb - 1) * SampleVariance(b)) / (na + nb - 2);
  if (pooled <= 0) return 0;
  double d = (Mean(b) - Mean(a)) / std::sqrt(pooled);
  double n = na + nb;
  return n > 2.25 ? d * (1 - 3 / (4 * n - 9)) : d;
}

double CliffsDelta(std::span<const double> a, std::span<const double> b) {
  if (a.empty() || b.empty()) return 0;
  std::vector<double> sa(a.begin(), a.end());
  std::sort(sa.begin(), sa.end());
  double greater = 0, less = 0;
  for (double v : b) {
    auto lo = std::lower_bound(sa.begin(), sa.end(), v);
    auto hi = std::upper_bound(sa.begin(), sa.end(), v);
    greater += static_cast<double>(lo - sa.begin());  // a values below v: b > a
    less += static_cast<double>(sa.end() - hi);        // a values above v: b < a
  }
  return (greater - less) / (static_cast<double>(a.size()) * static_cast<double>(b.size()));
}

uint64_t BoundedIndex(std::mt19937_64* rng, uint64_t n) {
  unsigned __int128 m = static_cast<unsigned __int128>((*rng)()) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>((*rng)()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

BootstrapInterval BootstrapDifference(std::span<const double> a, std::span<const double> b,
                                      const SampleStatistic& stat, const BootstrapOptions& options) {
  BootstrapInterval out;
  if (a.empty() || b.empty()) return out;
  std::vector<double> sa(a.begin(), a.end()), sb(b.begin(), b.end());
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  double stat_a = stat(sa), stat_b = stat(sb);
  out.estimate = stat_b - stat_a;
  out.rel_estimate = stat_a != 0 ? stat_b / stat_a - 1 : 0;
  int resamples = std::max(options.resamples, 1);
  std::mt19937_64 rng(options.seed);
  std::vector<double> diffs(resamples), rels(resamples), ra, rb;
  std::vector<uint32_t> counts;
  for (int i = 0; i < resamples; ++i) {
    DrawSortedResample(sa, &rng, &counts, &ra);
    DrawSortedResample(sb, &rng, &counts, &rb);
    double x = stat(ra), y = stat(rb);
    diffs[i] = y - x;
    rels[i] = x != 0 ? y / x - 1 : 0;
  }
  FinishInterval(std::move(diffs), std::move(rels), options, &out);
  return out;
}

BootstrapInterval BootstrapQuantileDifference(std::span<const double> a, std::span<const double> b, double q,
                                              const BootstrapOptions& options) {
  if (a.size() + b.size() <= kBootstrapResampleMaxSamples) {
    return BootstrapDifference(a, b, [q](std::span<const double> s) { return QuantileOfSorted(s, q); }, options);
  }
  return LargeSampleBootstrap(a, b, q, /*mean=*/false, options);
}

BootstrapInterval BootstrapMeanDifference(std::span<const double> a, std::span<const double> b,
                                          const BootstrapOptions& options) {
  if (a.size() + b.size() <= kBootstrapResampleMaxSamples) {
    return BootstrapDifference(a, b, [](std::span<const double> s) { return Mean(s); }, options);
  }
  return LargeSampleBootstrap(a, b, 0, /*mean=*/true, options);
}

}  // namespace aiprof
