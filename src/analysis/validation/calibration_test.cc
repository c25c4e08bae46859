// Calibration of the verdicts (docs/validation.md, "Calibration"):
//   - A/A: two samples from one distribution flag a change at about the
//     alpha rate (the test's false-positive rate), over many seeds;
//   - power: a real 5% latency shift with 30 samples a side is detected most
//     of the time.
// Data come from a seeded mt19937_64 through our own Box-Muller transform
// (std::normal_distribution's algorithm is implementation-defined), so the
// rates printed here are the ones docs/validation.md states.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "src/analysis/validation/compare.h"

namespace aiprof {
namespace {

constexpr int kN = 30;

double Uniform01(std::mt19937_64* rng) { return (static_cast<double>((*rng)() >> 11) + 0.5) * 0x1.0p-53; }

double StandardNormal(std::mt19937_64* rng) {
  double u = Uniform01(rng), v = Uniform01(rng);
  return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v);
}

enum class Shape { kNormal, kLogNormal };

// kN step times around 10 ms with a 5% coefficient of variation; `shift` scales them.
RunSamples Draw(std::mt19937_64* rng, Shape shape, double shift) {
  RunSamples r;
  r.label = "synthetic";
  r.unit = "step";
  for (int i = 0; i < kN; ++i) {
    double z = StandardNormal(rng);
    double x = shape == Shape::kNormal ? 10e6 * (1 + 0.05 * z) : 10e6 * std::exp(0.05 * z - 0.00125);
    r.latency_ns.push_back(x * (1 + shift));
  }
  return r;
}

// Fraction of trials whose `metric` verdict is not "no significant change".
// The bootstrap runs 1000 resamples when it decides (--test bootstrap, p50);
// otherwise it only draws the reported interval, so 100 keep the test fast.
double FlagRate(TestKind test, const std::string& metric, Shape shape, double shift, double min_effect) {
  ValidationOptions o;
  o.metrics = {metric};
  o.test = test;
  o.min_effect = min_effect;
  bool bootstrap_decides = test == TestKind::kBootstrap || metric != "latency";
  o.bootstrap_resamples = bootstrap_decides ? 1000 : 100;
  const int trials = bootstrap_decides ? 2000 : 4000;
  int flagged = 0;
  for (int seed = 0; seed < trials; ++seed) {
    std::mt19937_64 rng(1 + seed);
    RunSamples a = Draw(&rng, shape, 0), b = Draw(&rng, shape, shift);
    o.seed = 77 + seed;
    ValidationResult r = Validate(a, b, o);
    Verdict v = r.metrics[0].verdict;
    EXPECT_NE(v, Verdict::kInsufficientData);
    flagged += v == Verdict::kImproved || v == Verdict::kRegressed;
  }
  double rate = static_cast<double>(flagged) / trials;
  std::printf("[calibration] test=%s metric=%s shape=%s shift=%+.0f%% min_effect=%.0f%% trials=%d: %.4f\n",
              TestKindName(test), metric.c_str(), shape == Shape::kNormal ? "normal" : "lognormal", 100 * shift, 100 * min_effect, trials, rate);
  return rate;
}

// Binomial standard error at 5%: 0.0034 with 4000 trials, 0.0049 with 2000.
// The bounds sit about 4 standard errors out, so a test that never flags, or
// one that flags half again as often as alpha, fails. The percentile
// bootstrap is known to run slightly hot at n = 30 (its interval uses the
// plug-in variance and normal-like tails: about 1.93 instead of 2.00
// standard errors, i.e. ~6%), so its upper bound is 0.08.
constexpr double kAaLow = 0.035, kAaHigh = 0.065, kAaBootstrapHigh = 0.08;

TEST(CalibrationTest, AAFalsePositiveRateIsAboutAlpha) {
  for (TestKind t : {TestKind::kWelch, TestKind::kMannWhitney, TestKind::kBootstrap}) {
    for (Shape s : {Shape::kNormal, Shape::kLogNormal}) {
      double rate = FlagRate(t, "latency", s, 0, 0);
      EXPECT_GE(rate, kAaLow) << TestKindName(t);
      EXPECT_LE(rate, t == TestKind::kBootstrap ? kAaBootstrapHigh : kAaHigh) << TestKindName(t);
    }
  }
  // The default 2% minimum effect only removes flags from the chosen test.
  EXPECT_LE(FlagRate(TestKind::kAuto, "latency", Shape::kNormal, 0, 0.02), kAaHigh);
  // The bootstrap of the median is conservative with 30 samples (resampled medians tie).
  EXPECT_LE(FlagRate(TestKind::kBootstrap, "p50", Shape::kNormal, 0, 0), kAaBootstrapHigh);
}

TEST(CalibrationTest, FivePercentShiftWithThirtySamplesIsDetected) {
  for (TestKind t : {TestKind::kAuto, TestKind::kWelch, TestKind::kMannWhitney, TestKind::kBootstrap}) {
    double rate = FlagRate(t, "latency", Shape::kNormal, 0.05, 0.02);
    EXPECT_GE(rate, 0.9) << TestKindName(t);
  }
  EXPECT_GE(FlagRate(TestKind::kAuto, "latency", Shape::kLogNormal, 0.05, 0.02), 0.9);
  EXPECT_GE(FlagRate(TestKind::kAuto, "p50", Shape::kNormal, 0.05, 0.02), 0.5);
}

}  // namespace
}  // namespace aiprof
