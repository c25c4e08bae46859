// Before/after validation: per metric, a test, an effect size, a bootstrap
// confidence interval and a verdict; plus a per-op comparison that tells a
// broad (environmental) slowdown from one localized in a few ops.
//
// Verdict rules (docs/validation.md):
//   - insufficient data: fewer than kMinSamplesForTest samples on a side, or,
//     for a quantile q, fewer than MinSamplesForQuantile(q) (a p99 from 20
//     samples is not a p99), or the metric is not in the input;
//   - improved / regressed: p < alpha AND |relative change| >= min_effect,
//     in the metric's good / bad direction;
//   - no significant change: otherwise (the reason says which condition failed).
// The overall verdict is "regressed" if any metric regressed, else "improved"
// if any improved, else "no significant change" (or "insufficient data" if
// no metric could be decided).
#ifndef AIPROF_SRC_ANALYSIS_VALIDATION_COMPARE_H_
#define AIPROF_SRC_ANALYSIS_VALIDATION_COMPARE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/analysis/validation/prediction.h"
#include "src/analysis/validation/run_samples.h"
#include "src/analysis/validation/statistics.h"
#include "src/base/status.h"

namespace aiprof {

// Fewest samples per side for any test.
inline constexpr size_t kMinSamplesForTest = 5;
// Several runs on a side make the run the unit (MergeRuns): each metric's
// figure per run, Welch's t-test over them; at least this many runs a side.
inline constexpr size_t kMinRunsForTest = 3;
// A quantile q needs this many samples beyond it on the thin side:
// n >= kQuantileTailSamples / min(q, 1 - q) (p50: 10, p90: 50, p99: 500).
inline constexpr double kQuantileTailSamples = 5;
// --test auto picks Welch when both sides have |skewness| <= this, else Mann-Whitney.
inline constexpr double kAutoMaxAbsSkewness = 1.0;
// Per-op comparison: ops with at least kOpMinCount calls on both sides are
// compared; an op "slowed" when its mean duration grew by kOpSlowedRatio or
// more. A slowdown is broad when at least kBroadMinOps ops are compared, at
// least kBroadOpFraction of them slowed, and they hold at least
// kBroadTimeShare of the compared ops' before time.
inline constexpr size_t kOpMinCount = 3;
inline constexpr double kOpSlowedRatio = 1.10;
inline constexpr size_t kBroadMinOps = 5;
inline constexpr double kBroadOpFraction = 0.75;
inline constexpr double kBroadTimeShare = 0.80;

enum class Verdict { kImproved, kRegressed, kNoChange, kInsufficientData };
const char* VerdictId(Verdict v);    // "improved", "regressed", "no_change", "insufficient_data"
const char* VerdictText(Verdict v);  // "improved", "regressed", "no significant change", "insufficient data"

enum class TestKind { kAuto, kWelch, kMannWhitney, kBootstrap };
const char* TestKindName(TestKind t);  // "auto", "welch", "mannwhitney", "bootstrap"
StatusOr<TestKind> ParseTestKind(std::string_view s);

// Samples needed for quantile q (see kQuantileTailSamples).
size_t MinSamplesForQuantile(double q);

struct ValidationOptions {
  // latency, pNN (p50, p90, p99, p99.9 ...), throughput, device_util, and
  // quality figures by name (accuracy) or as quality:NAME. Quality figures
  // present in both inputs are added even when not listed.
  std::vector<std::string> metrics = {"latency", "p50", "p99", "throughput", "device_util"};
  TestKind test = TestKind::kAuto;
  double alpha = 0.05;
  double min_effect = 0.02;  // relative: 0.02 = 2%
  int bootstrap_resamples = 10000;
  uint64_t seed = 0x5eed;
};

// Checks a metric list; fails naming the first unknown metric.
Status CheckMetricNames(const std::vector<std::string>& metrics);

struct MetricComparison {
  std::string metric;
  std::string unit;  // "ns", "items/s", "samples/s", "fraction", "value"
  bool higher_is_better = false;
  size_t n_before = 0, n_after = 0;
  std::string statistic_name;  // what before/after are: "mean", "median", "p99", "value"
  double before = 0, after = 0;
  double change_rel = 0;  // after / before - 1 (0 when before is 0)
  std::string test;       // "welch", "mannwhitney", "bootstrap", or "" (not tested)
  double test_statistic = 0, p_value = 1, df = 0;
  double hedges_g = 0, cliffs_delta = 0;  // of after vs before
  BootstrapInterval ci;                   // of after - before, at level `confidence`
  double confidence = 0.95;
  bool ci_available = false;
  Verdict verdict = Verdict::kInsufficientData;
  std::string reason;
};

struct OpShift {
  std::string name;
  size_t count_before = 0, count_after = 0;
  double mean_before_ns = 0, mean_after_ns = 0;
  double total_before_ns = 0, total_after_ns = 0;
  double ratio = 0;               // mean_after / mean_before (0 when before is 0)
  double added_per_sample_ns = 0;  // total_after / n_after - total_before / n_before
};

struct OpShiftAnalysis {
  bool available = false;  // both inputs are traces with ops
  std::vector<OpShift> ops;  // compared ops, largest before total first
  size_t compared = 0, slowed = 0, faster = 0;  // faster: ratio <= 1 / kOpSlowedRatio
  double slowed_time_share = 0;  // of compared ops' before time, in slowed ops
  double median_ratio = 0;
  bool same_op_mix = false;  // every op name has the same call count on both sides
  bool broad = false;
};

struct ValidationResult {
  std::string before_label, after_label, before_kind, after_kind, unit;
  // What was done to the samples, e.g. warm-up steps left out (from RunSamples::notes).
  std::vector<std::string> sample_notes;
  ValidationOptions options;
  std::vector<MetricComparison> metrics;
  OpShiftAnalysis op_shift;
  // Set when something regressed: "environmental" (broad: spread across the
  // ops) or "localized" (in a few ops), with one plain-text explanation.
  std::string diagnosis;
  std::string diagnosis_text;
  Verdict overall = Verdict::kInsufficientData;
  // The prediction made for the before run, for the fix the after run
  // applied, against the after run's measurement (traces only).
  std::optional<PredictionCheck> prediction;
};

// One side measured in several runs (separate processes): their samples
// concatenated, the runs kept in `runs`, labels joined. One run is returned
// as it is.
RunSamples MergeRuns(std::vector<RunSamples> runs);

// Compares `after` with `before`. Deterministic for fixed options (seeded bootstrap).
// When either side holds several runs (MergeRuns), the run is the unit of
// every metric: steps of one run share its process, heap and machine state,
// so they are not independent samples of the change (docs/validation.md).
ValidationResult Validate(const RunSamples& before, const RunSamples& after, const ValidationOptions& options);

// One location comparison of two samples, made exactly as `validate` makes
// it for a metric (the test of options.test, effect sizes, bootstrap
// interval, verdict); lower is better. `aiprof diff` uses it per node.
// `salt` picks a distinct bootstrap stream.
MetricComparison CompareSamples(const std::string& metric, const std::string& unit, const std::vector<double>& before,
                                const std::vector<double>& after, const ValidationOptions& options, uint64_t salt);

// Per-op comparison alone. Visible for testing.
OpShiftAnalysis CompareOps(const RunSamples& before, const RunSamples& after);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_VALIDATION_COMPARE_H_
