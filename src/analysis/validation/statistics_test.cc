#include "src/analysis/validation/statistics.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "src/analysis/validation/validation_test_util.h"

namespace aiprof {
namespace {

struct ScipyCase {
  std::string name;
  std::vector<double> a, b;
  double welch_t, welch_df, welch_p, mwu_u, mwu_p, skew_a, p50_a, p99_a;
};

std::vector<ScipyCase> LoadScipyCases() {
  std::string path = (testing::RepoRoot() / "test/data/validation/scipy_pvalues.json").string();
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.load(path);
  std::vector<ScipyCase> out;
  for (simdjson::dom::element c : doc["cases"].get_array()) {
    ScipyCase k;
    k.name = std::string(std::string_view(c["name"]));
    for (simdjson::dom::element v : c["a"].get_array()) k.a.push_back(double(v));
    for (simdjson::dom::element v : c["b"].get_array()) k.b.push_back(double(v));
    k.welch_t = double(c["welch_t"]);
    k.welch_df = double(c["welch_df"]);
    k.welch_p = double(c["welch_p"]);
    k.mwu_u = double(c["mwu_u"]);
    k.mwu_p = double(c["mwu_p"]);
    k.skew_a = double(c["skew_a"]);
    k.p50_a = double(c["p50_a"]);
    k.p99_a = double(c["p99_a"]);
    out.push_back(std::move(k));
  }
  return out;
}

void ExpectRelNear(double got, double want, double rel, const std::string& what) {
  EXPECT_LE(std::fabs(got - want), rel * std::fabs(want) + 1e-300) << what << ": got " << got << " want " << want;
}

// The fixture holds SciPy 1.10's values (gen_scipy_pvalues.py); 1e-6 relative.
TEST(StatisticsTest, PValuesMatchScipyFixtures) {
  std::vector<ScipyCase> cases = LoadScipyCases();
  ASSERT_GE(cases.size(), 10u);
  size_t exact_cases = 0, tie_cases = 0;
  for (const ScipyCase& c : cases) {
    TestResult w = WelchTTest(c.a, c.b);
    ExpectRelNear(w.statistic, c.welch_t, 1e-9, c.name + " welch t");
    ExpectRelNear(w.df, c.welch_df, 1e-9, c.name + " welch df");
    ExpectRelNear(w.p_value, c.welch_p, 1e-6, c.name + " welch p");
    TestResult m = MannWhitneyU(c.a, c.b);
    EXPECT_EQ(m.statistic, c.mwu_u) << c.name;
    ExpectRelNear(m.p_value, c.mwu_p, 1e-6, c.name + " mann-whitney p");
    exact_cases += m.exact;
    tie_cases += c.name.find("ties") != std::string::npos;
    ExpectRelNear(SampleSkewness(c.a), c.skew_a, 1e-9, c.name + " skew");
    ExpectRelNear(Quantile(c.a, 0.5), c.p50_a, 1e-12, c.name + " p50");
    ExpectRelNear(Quantile(c.a, 0.99), c.p99_a, 1e-12, c.name + " p99");
  }
  EXPECT_EQ(exact_cases, 3u);  // 5/6, 8/8 and 3/20 have no ties: SciPy's exact path
  EXPECT_EQ(tie_cases, 2u);
}

TEST(StatisticsTest, WelchDegenerateInputs) {
  std::vector<double> one = {1.0}, same = {2, 2, 2}, other = {3, 3, 3};
  EXPECT_EQ(WelchTTest(one, same).p_value, 1);  // too few values: no evidence
  EXPECT_EQ(WelchTTest(same, same).p_value, 1);
  EXPECT_EQ(WelchTTest(same, other).p_value, 0);
  EXPECT_TRUE(std::isinf(WelchTTest(same, other).statistic));
}

TEST(StatisticsTest, MannWhitneyAllEqualIsNoEvidence) {
  std::vector<double> a(20, 5.0), b(25, 5.0);
  EXPECT_EQ(MannWhitneyU(a, b).p_value, 1);
  EXPECT_EQ(MannWhitneyU({}, b).p_value, 1);
}

// Hand-worked: a = {1,2,3,4}, b = {3,4,5,6}. Means 2.5 and 4.5, both
// variances 5/3, pooled sd 1.29099; d = 1.54919; J = 1 - 3/(4*8-9) = 0.869565.
TEST(StatisticsTest, EffectSizesHandWorked) {
  std::vector<double> a = {1, 2, 3, 4}, b = {3, 4, 5, 6};
  EXPECT_NEAR(HedgesG(a, b), 1.549193 * (1 - 3.0 / 23), 1e-6);
  // Pairs b>a: 3:{1,2}=2, 4:{1,2,3}=3, 5:4, 6:4 -> 13; b<a: 3<4 -> 1; ties 2. (13-1)/16.
  EXPECT_NEAR(CliffsDelta(a, b), 12.0 / 16, 1e-12);
  EXPECT_EQ(HedgesG(std::vector<double>{1, 1}, std::vector<double>{1, 1}), 0);  // zero spread guarded
}

TEST(StatisticsTest, BoundedIndexIsInRangeAndCoversIt) {
  std::mt19937_64 rng(7);
  std::vector<int> seen(7, 0);
  for (int i = 0; i < 7000; ++i) {
    uint64_t k = BoundedIndex(&rng, 7);
    ASSERT_LT(k, 7u);
    ++seen[k];
  }
  for (int c : seen) EXPECT_NEAR(c, 1000, 150);
}

TEST(StatisticsTest, BootstrapIsReproducibleAndBracketsTheShift) {
  std::mt19937_64 gen(11);
  std::normal_distribution<double> noise(0, 1);  // only to make data; results read from the seeded bootstrap
  std::vector<double> a, b;
  for (int i = 0; i < 40; ++i) a.push_back(100 + noise(gen));
  for (int i = 0; i < 40; ++i) b.push_back(110 + noise(gen));
  BootstrapOptions o;
  o.resamples = 2000;
  o.seed = 123;
  auto mean = [](std::span<const double> s) { return Mean(s); };
  BootstrapInterval x = BootstrapDifference(a, b, mean, o);
  BootstrapInterval y = BootstrapDifference(a, b, mean, o);
  EXPECT_EQ(x.low, y.low);
  EXPECT_EQ(x.high, y.high);
  EXPECT_NEAR(x.estimate, Mean(b) - Mean(a), 1e-12);
  EXPECT_LT(x.low, x.estimate);
  EXPECT_GT(x.high, x.estimate);
  EXPECT_GT(x.low, 9);  // shift 10, sd 1, n 40: the interval is about +-0.45 wide
  EXPECT_LT(x.high, 11);
  EXPECT_NEAR(x.rel_estimate, Mean(b) / Mean(a) - 1, 1e-12);
  EXPECT_EQ(x.p_value, 0);
  o.seed = 124;
  BootstrapInterval z = BootstrapDifference(a, b, mean, o);
  EXPECT_NE(z.low, x.low);  // the seed matters
  BootstrapInterval same = BootstrapDifference(a, a, mean, o);
  EXPECT_LT(same.low, 0);
  EXPECT_GT(same.high, 0);
  EXPECT_GT(same.p_value, 0.5);
}

// Log-normal data from our own Box-Muller draws (reproducible everywhere).
std::vector<double> LogNormal(size_t n, double scale, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> x;
  for (size_t i = 0; i < n; ++i) {
    double u = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
    double v = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
    x.push_back(scale * std::exp(0.3 * std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v)));
  }
  return x;
}

// The resample is drawn as counts per index of the sorted sample; here each
// resample is drawn the plain way (values by index, then sorted) from the
// same generator: every figure must be the same, ties included.
TEST(StatisticsTest, ResampleByCountsIsTheSortedDraw) {
  std::mt19937_64 gen(5);
  for (size_t n : {1, 2, 7, 30, 333}) {
    std::vector<double> a, b;
    for (size_t i = 0; i < n; ++i) {
      a.push_back(static_cast<double>(gen() % 13));  // many ties
      b.push_back(static_cast<double>(gen() % 1000) / 7);
    }
    BootstrapOptions o;
    o.resamples = 500;
    o.seed = 99 + n;
    for (double q : {0.5, 0.9}) {
      auto stat = [q](std::span<const double> s) { return QuantileOfSorted(s, q); };
      BootstrapInterval got = BootstrapDifference(a, b, stat, o);
      // The plain draw, with the same generator and order of draws.
      std::vector<double> sa(a), sb(b), diffs, rels;
      std::sort(sa.begin(), sa.end());
      std::sort(sb.begin(), sb.end());
      std::mt19937_64 rng(o.seed);
      for (int r = 0; r < o.resamples; ++r) {
        std::vector<double> ra(n), rb(n);
        for (double& v : ra) v = sa[BoundedIndex(&rng, n)];
        for (double& v : rb) v = sb[BoundedIndex(&rng, n)];
        std::sort(ra.begin(), ra.end());
        std::sort(rb.begin(), rb.end());
        double x = stat(ra), y = stat(rb);
        diffs.push_back(y - x);
        rels.push_back(x != 0 ? y / x - 1 : 0);
      }
      size_t below = 0, above = 0;
      for (double d : diffs) {
        below += d <= 0;
        above += d >= 0;
      }
      std::sort(diffs.begin(), diffs.end());
      std::sort(rels.begin(), rels.end());
      double tail = (1 - o.confidence) / 2;
      EXPECT_EQ(got.low, QuantileOfSorted(diffs, tail)) << n << " " << q;
      EXPECT_EQ(got.high, QuantileOfSorted(diffs, 1 - tail)) << n << " " << q;
      EXPECT_EQ(got.rel_low, QuantileOfSorted(rels, tail)) << n << " " << q;
      EXPECT_EQ(got.rel_high, QuantileOfSorted(rels, 1 - tail)) << n << " " << q;
      EXPECT_EQ(got.p_value, std::min(1.0, 2.0 * static_cast<double>(std::min(below, above)) / o.resamples));
    }
  }
}

TEST(StatisticsTest, SmallSamplesBootstrapAsBefore) {
  // Up to kBootstrapResampleMaxSamples values in all: the very same draws.
  std::vector<double> a = LogNormal(400, 100, 1), b = LogNormal(600, 101, 2);
  BootstrapOptions o;
  o.resamples = 500;
  BootstrapInterval q = BootstrapQuantileDifference(a, b, 0.9, o);
  BootstrapInterval q_ref = BootstrapDifference(a, b, [](std::span<const double> s) { return QuantileOfSorted(s, 0.9); }, o);
  EXPECT_EQ(q.low, q_ref.low);
  EXPECT_EQ(q.high, q_ref.high);
  EXPECT_EQ(q.p_value, q_ref.p_value);
  BootstrapInterval m = BootstrapMeanDifference(a, b, o);
  BootstrapInterval m_ref = BootstrapDifference(a, b, [](std::span<const double> s) { return Mean(s); }, o);
  EXPECT_EQ(m.low, m_ref.low);
  EXPECT_EQ(m.rel_high, m_ref.rel_high);
}

// Past the threshold each resample's statistic is drawn from its
// distribution; the intervals must agree with explicit resampling (within
// Monte Carlo error: a tenth of the interval's width at R = 4000).
TEST(StatisticsTest, LargeSampleBootstrapMatchesResampling) {
  std::vector<double> a = LogNormal(2000, 100, 3), b = LogNormal(2500, 102, 4);
  BootstrapOptions o;
  o.resamples = 4000;
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    BootstrapInterval fast = BootstrapQuantileDifference(a, b, q, o);
    BootstrapInterval ref =
        BootstrapDifference(a, b, [q](std::span<const double> s) { return QuantileOfSorted(s, q); }, o);
    double width = ref.high - ref.low;
    ASSERT_GT(width, 0) << q;
    EXPECT_EQ(fast.estimate, ref.estimate) << q;
    EXPECT_NEAR(fast.low, ref.low, 0.1 * width) << q;
    EXPECT_NEAR(fast.high, ref.high, 0.1 * width) << q;
    EXPECT_NEAR(fast.rel_low, ref.rel_low, 0.1 * (ref.rel_high - ref.rel_low)) << q;
    EXPECT_NEAR(fast.p_value, ref.p_value, 0.03 + 0.2 * ref.p_value) << q;
  }
  BootstrapInterval fast = BootstrapMeanDifference(a, b, o);
  BootstrapInterval ref = BootstrapDifference(a, b, [](std::span<const double> s) { return Mean(s); }, o);
  double width = ref.high - ref.low;
  EXPECT_NEAR(fast.low, ref.low, 0.1 * width);
  EXPECT_NEAR(fast.high, ref.high, 0.1 * width);
  // One small side (resampled) with one large side (drawn).
  std::vector<double> small = LogNormal(300, 100, 5);
  BootstrapInterval mixed = BootstrapQuantileDifference(small, b, 0.5, o);
  BootstrapInterval mixed_ref =
      BootstrapDifference(small, b, [](std::span<const double> s) { return QuantileOfSorted(s, 0.5); }, o);
  EXPECT_NEAR(mixed.low, mixed_ref.low, 0.1 * (mixed_ref.high - mixed_ref.low));
  EXPECT_NEAR(mixed.high, mixed_ref.high, 0.1 * (mixed_ref.high - mixed_ref.low));
}

// By hand: 42 and 92 µs have mean 67, standard error 25 (sd 35.36 / √2),
// t(1, 97.5%) = 12.706: [67 - 317.65, 67 + 317.65]. A duration's interval
// stops at 0 (the what-if harness's graph-launch replay printed -250.655 µs).
TEST(StatisticsTest, DurationMeanIntervalStopsAtZero) {
  const std::vector<double> x = {42'000, 92'000};
  const MeanInterval plain = MeanWithInterval(x);
  EXPECT_NEAR(plain.lo, 67'000 - 12.7062 * 25'000, 5);
  EXPECT_NEAR(plain.hi, 67'000 + 12.7062 * 25'000, 5);
  const MeanInterval d = DurationMeanWithInterval(x);
  EXPECT_EQ(d.mean, 67'000);
  EXPECT_EQ(d.lo, 0);
  EXPECT_EQ(d.hi, plain.hi);
  EXPECT_EQ(d.n, 2u);
  // A tight interval is not touched.
  const std::vector<double> tight = {100, 101, 102};
  EXPECT_EQ(DurationMeanWithInterval(tight).lo, MeanWithInterval(tight).lo);
}

}  // namespace
}  // namespace aiprof
