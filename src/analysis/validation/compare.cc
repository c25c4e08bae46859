#include "src/analysis/validation/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <boost/math/distributions/students_t.hpp>

namespace aiprof {
namespace {

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

double RelChange(double before, double after) { return before != 0 ? after / before - 1 : 0; }

// The quantile a metric name asks for ("p50" -> 0.5, "p99.9" -> 0.999), or -1.
double QuantileOfMetric(std::string_view name) {
  if (name.size() < 2 || name[0] != 'p') return -1;
  std::string digits(name.substr(1));
  char* end = nullptr;
  double pct = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || !(pct > 0 && pct < 100)) return -1;
  return pct / 100;
}

bool IsQualityMetric(std::string_view name, std::string* quality_name) {
  if (name.rfind("quality:", 0) == 0 && name.size() > 8) {
    *quality_name = std::string(name.substr(8));
    return true;
  }
  for (std::string_view k : {"accuracy", "precision", "recall", "f1", "top1", "top5"}) {
    if (name == k) {
      *quality_name = std::string(name);
      return true;
    }
  }
  return false;
}

// Applies the verdict rule once p and the relative change are known.
void Decide(const ValidationOptions& o, MetricComparison* m) {
  bool significant = m->p_value < o.alpha;
  bool large = std::fabs(m->change_rel) >= o.min_effect;
  if (significant && large) {
    bool better = m->higher_is_better ? m->change_rel > 0 : m->change_rel < 0;
    m->verdict = better ? Verdict::kImproved : Verdict::kRegressed;
    m->reason = "p = " + Fmt("%.3g", m->p_value) + " < alpha " + Fmt("%g", o.alpha) + ", change " +
                Fmt("%+.2f", 100 * m->change_rel) + "% beyond min-effect " + Fmt("%g", 100 * o.min_effect) + "%";
  } else {
    m->verdict = Verdict::kNoChange;
    m->reason = !significant ? "p = " + Fmt("%.3g", m->p_value) + " >= alpha " + Fmt("%g", o.alpha)
                             : "significant (p = " + Fmt("%.3g", m->p_value) + ") but change " +
                                   Fmt("%+.2f", 100 * m->change_rel) + "% is below min-effect " +
                                   Fmt("%g", 100 * o.min_effect) + "%";
  }
}

BootstrapOptions BootOptions(const ValidationOptions& o, uint64_t salt) {
  BootstrapOptions b;
  b.resamples = o.bootstrap_resamples;
  b.confidence = 1 - o.alpha;
  b.seed = o.seed ^ (salt * 0x9E3779B97F4A7C15ull);  // a distinct stream per metric, still seeded
  return b;
}

bool HasEnough(const std::vector<double>& a, const std::vector<double>& b, size_t need, MetricComparison* m) {
  m->n_before = a.size();
  m->n_after = b.size();
  if (a.size() >= need && b.size() >= need) return true;
  m->verdict = Verdict::kInsufficientData;
  m->reason = "needs at least " + std::to_string(need) + " samples per side, has " + std::to_string(a.size()) +
              " before and " + std::to_string(b.size()) + " after";
  m->before = Mean(a);
  m->after = Mean(b);
  m->statistic_name = "mean";
  m->change_rel = RelChange(m->before, m->after);
  return false;
}

// A location comparison (mean or median) with the chosen test.
void CompareLocation(const std::vector<double>& a, const std::vector<double>& b, const ValidationOptions& o,
                     uint64_t salt, MetricComparison* m) {
  if (!HasEnough(a, b, kMinSamplesForTest, m)) return;
  TestKind test = o.test;
  if (test == TestKind::kAuto) {
    bool normalish = std::fabs(SampleSkewness(a)) <= kAutoMaxAbsSkewness && std::fabs(SampleSkewness(b)) <= kAutoMaxAbsSkewness;
    test = normalish ? TestKind::kWelch : TestKind::kMannWhitney;
  }
  m->test = TestKindName(test);
  m->hedges_g = HedgesG(a, b);
  m->cliffs_delta = CliffsDelta(a, b);
  bool median = test == TestKind::kMannWhitney;  // a rank test pairs with the median shift
  m->statistic_name = median ? "median" : "mean";
  m->before = median ? Quantile(a, 0.5) : Mean(a);
  m->after = median ? Quantile(b, 0.5) : Mean(b);
  m->change_rel = RelChange(m->before, m->after);
  m->ci = median ? BootstrapQuantileDifference(a, b, 0.5, BootOptions(o, salt))
                 : BootstrapMeanDifference(a, b, BootOptions(o, salt));
  m->ci_available = true;
  m->confidence = 1 - o.alpha;
  if (test == TestKind::kWelch) {
    TestResult r = WelchTTest(a, b);
    m->test_statistic = r.statistic;
    m->p_value = r.p_value;
    m->df = r.df;
  } else if (test == TestKind::kMannWhitney) {
    TestResult r = MannWhitneyU(a, b);
    m->test_statistic = r.statistic;
    m->p_value = r.p_value;
  } else {
    m->p_value = m->ci.p_value;
  }
  Decide(o, m);
}

void CompareQuantile(const std::vector<double>& a, const std::vector<double>& b, double q, const ValidationOptions& o,
                     uint64_t salt, MetricComparison* m) {
  if (!HasEnough(a, b, MinSamplesForQuantile(q), m)) {
    m->statistic_name = m->metric;
    m->before = Quantile(a, q);
    m->after = Quantile(b, q);
    m->change_rel = RelChange(m->before, m->after);
    return;
  }
  m->statistic_name = m->metric;
  m->before = Quantile(a, q);
  m->after = Quantile(b, q);
  m->change_rel = RelChange(m->before, m->after);
  m->test = "bootstrap";
  m->ci = BootstrapQuantileDifference(a, b, q, BootOptions(o, salt));
  m->ci_available = true;
  m->confidence = 1 - o.alpha;
  m->p_value = m->ci.p_value;
  Decide(o, m);
}

std::string ThroughputUnit(const RunSamples& r) {
  return !r.throughput.empty() || r.items_per_sample > 0 ? "items/s" : "samples/s";
}

std::vector<double> Throughput(const RunSamples& r, std::string* unit) {
  *unit = ThroughputUnit(r);
  if (!r.throughput.empty()) return r.throughput;
  double items = r.items_per_sample > 0 ? r.items_per_sample : 1;
  std::vector<double> out;
  for (double ns : r.latency_ns) {
    if (ns > 0) out.push_back(items * 1e9 / ns);
  }
  return out;
}

MetricComparison CompareOne(const std::string& name, const RunSamples& before, const RunSamples& after,
                            const ValidationOptions& o, uint64_t salt) {
  MetricComparison m;
  m.metric = name;
  std::string quality;
  if (name == "latency") {
    m.unit = "ns";
    CompareLocation(before.latency_ns, after.latency_ns, o, salt, &m);
  } else if (double q = QuantileOfMetric(name); q > 0) {
    m.unit = "ns";
    CompareQuantile(before.latency_ns, after.latency_ns, q, o, salt, &m);
  } else if (name == "throughput") {
    m.higher_is_better = true;
    std::string unit_a, unit_b;
    std::vector<double> a = Throughput(before, &unit_a), b = Throughput(after, &unit_b);
    m.unit = unit_a == unit_b ? unit_a : unit_a + " vs " + unit_b;
    if (unit_a != unit_b) {
      m.reason = "before is in " + unit_a + " and after in " + unit_b + "; give both --batch-size";
      return m;
    }
    CompareLocation(a, b, o, salt, &m);
  } else if (name == "device_util") {
    m.unit = "fraction";
    m.higher_is_better = true;
    if (before.device_util.empty() || after.device_util.empty()) {
      const RunSamples& missing = before.device_util.empty() ? before : after;
      m.reason = missing.label + ": " + (missing.device_util_missing.empty() ? "no device utilization in this input"
                                                                                 : missing.device_util_missing);
      return m;
    }
    CompareLocation(before.device_util, after.device_util, o, salt, &m);
  } else if (IsQualityMetric(name, &quality)) {
    m.unit = "value";
    m.higher_is_better = true;
    auto a = before.quality.find(quality), b = after.quality.find(quality);
    if (a == before.quality.end() || b == after.quality.end()) {
      m.reason = "'" + quality + "' is not in " + (a == before.quality.end() ? before.label : after.label);
      return m;
    }
    if (!HasEnough(a->second, b->second, kMinSamplesForTest, &m)) {
      m.statistic_name = "value";
      m.reason += " (a single figure per run cannot be tested; the values are shown)";
      return m;
    }
    CompareLocation(a->second, b->second, o, salt, &m);
  }
  return m;
}

// The metric's figure for one run, or nullopt with the reason.
std::optional<double> RunFigure(const std::string& name, const RunSamples& r, std::string* why) {
  std::string quality, unit;
  if (name == "latency") {
    if (!r.latency_ns.empty()) return Mean(r.latency_ns);
  } else if (double q = QuantileOfMetric(name); q > 0) {
    if (r.latency_ns.size() >= MinSamplesForQuantile(q)) return Quantile(r.latency_ns, q);
    *why = r.label + ": " + std::to_string(r.latency_ns.size()) + " samples, a " + name + " of one run needs " +
           std::to_string(MinSamplesForQuantile(q));
    return std::nullopt;
  } else if (name == "throughput") {
    std::vector<double> t = Throughput(r, &unit);
    if (!t.empty()) return Mean(t);
  } else if (name == "device_util") {
    if (!r.device_util.empty()) return Mean(r.device_util);
  } else if (IsQualityMetric(name, &quality)) {
    auto it = r.quality.find(quality);
    if (it != r.quality.end() && !it->second.empty()) return Mean(it->second);
  }
  *why = r.label + ": no " + name + " in this run";
  return std::nullopt;
}

// The runs of one side: those MergeRuns kept, or the side itself.
std::vector<const RunSamples*> RunsOf(const RunSamples& side) {
  std::vector<const RunSamples*> out;
  for (const RunSamples& r : side.runs) out.push_back(&r);
  if (out.empty()) out.push_back(&side);
  return out;
}

// Several runs a side: one figure per run (the mean of its samples; its pNN
// for a quantile), Welch's t-test over the runs' figures, and the Welch
// t-interval of the difference of their means (equal weight per run).
MetricComparison CompareRuns(const std::string& name, const RunSamples& before, const RunSamples& after,
                             const ValidationOptions& o) {
  MetricComparison m;
  m.metric = name;
  std::string quality;
  const std::string unit_a = ThroughputUnit(before), unit_b = ThroughputUnit(after);
  const bool throughput = name == "throughput";
  m.unit = throughput                        ? (unit_a == unit_b ? unit_a : unit_a + " vs " + unit_b)
           : name == "device_util"           ? "fraction"
           : IsQualityMetric(name, &quality) ? "value"
                                             : "ns";
  m.higher_is_better = throughput || name == "device_util" || !quality.empty();
  const bool quantile = QuantileOfMetric(name) > 0;
  m.statistic_name = std::string("mean of the runs' ") + (quantile ? name : "means");
  auto figures = [&](const RunSamples& side, std::vector<double>* out) {
    for (const RunSamples* r : RunsOf(side)) {
      std::string why;
      std::optional<double> f = RunFigure(name, *r, &why);
      if (!f) return why;
      out->push_back(*f);
    }
    return std::string();
  };
  std::vector<double> a, b;
  std::string why = figures(before, &a);
  if (why.empty()) why = figures(after, &b);
  m.n_before = a.size();
  m.n_after = b.size();
  m.before = Mean(a);
  m.after = Mean(b);
  m.change_rel = RelChange(m.before, m.after);
  if (!why.empty()) {
    m.reason = why;
    return m;
  }
  if (throughput && unit_a != unit_b) {
    m.reason = "before is in " + unit_a + " and after in " + unit_b + "; give both --batch-size";
    return m;
  }
  if (a.size() < kMinRunsForTest || b.size() < kMinRunsForTest) {
    m.reason = "runs are the unit: needs at least " + std::to_string(kMinRunsForTest) + " runs per side, has " +
               std::to_string(a.size()) + " before and " + std::to_string(b.size()) + " after";
    return m;
  }
  if (SampleVariance(a) <= 0 && SampleVariance(b) <= 0) {
    // Runs that agree to the last digit on both sides leave the between-run
    // spread unmeasured (a t-test would read it as zero and give p = 0):
    // the same measurement given several times, most likely.
    m.reason =
        "the runs of each side have identical figures (no between-run spread to test against); is one file "
        "given several times?";
    return m;
  }
  TestResult t = WelchTTest(a, b);
  m.test = "welch";
  m.test_statistic = t.statistic;
  m.p_value = t.p_value;
  m.df = t.df;
  m.hedges_g = HedgesG(a, b);
  m.cliffs_delta = CliffsDelta(a, b);
  m.confidence = 1 - o.alpha;
  const double diff = m.after - m.before;
  const double se = std::sqrt(SampleVariance(a) / static_cast<double>(a.size()) + SampleVariance(b) / static_cast<double>(b.size()));
  double half = 0;
  if (se > 0 && t.df > 0) {
    half = se * boost::math::quantile(boost::math::students_t(t.df), 1 - o.alpha / 2);
  }
  m.ci.estimate = diff;
  m.ci.low = diff - half;
  m.ci.high = diff + half;
  m.ci.rel_estimate = m.change_rel;
  m.ci.rel_low = m.before != 0 ? m.ci.low / m.before : 0;
  m.ci.rel_high = m.before != 0 ? m.ci.high / m.before : 0;
  m.ci.p_value = t.p_value;
  m.ci_available = true;
  Decide(o, &m);
  return m;
}

void DiagnoseValidation(ValidationResult* r) {
  bool latency_regressed = false;
  for (const MetricComparison& m : r->metrics) {
    if (m.verdict == Verdict::kRegressed && (m.unit == "ns" || m.metric == "throughput")) latency_regressed = true;
  }
  if (!latency_regressed || !r->op_shift.available) return;
  const OpShiftAnalysis& s = r->op_shift;
  char buf[512];
  if (s.broad) {
    r->diagnosis = "environmental";
    std::snprintf(buf, sizeof(buf),
                  "The slowdown is spread across the ops, not in one op: %zu of %zu compared ops are at least %.0f%% "
                  "slower (%.0f%% of their time), median op slowdown x%.2f%s. A change this broad points at the "
                  "environment (memory allocator, page faults, CPU frequency, other load on the machine) rather "
                  "than at any op.",
                  s.slowed, s.compared, 100 * (kOpSlowedRatio - 1), 100 * s.slowed_time_share, s.median_ratio,
                  s.same_op_mix ? "; the op mix (names and call counts) is unchanged" : "");
  } else {
    r->diagnosis = "localized";
    std::vector<const OpShift*> top;
    for (const OpShift& op : s.ops) top.push_back(&op);
    std::sort(top.begin(), top.end(), [](const OpShift* a, const OpShift* b) { return a->added_per_sample_ns > b->added_per_sample_ns; });
    std::string names;
    for (size_t i = 0; i < top.size() && i < 3 && top[i]->added_per_sample_ns > 0; ++i) {
      if (!names.empty()) names += ", ";
      names += top[i]->name;
    }
    std::snprintf(buf, sizeof(buf),
                  "The slowdown is not spread across the ops (%zu of %zu compared ops are at least %.0f%% slower, "
                  "%.0f%% of their time); look at the ops that gained the most time per sample%s%s.",
                  s.slowed, s.compared, 100 * (kOpSlowedRatio - 1), 100 * s.slowed_time_share,
                  names.empty() ? "" : ": ", names.c_str());
  }
  r->diagnosis_text = buf;
}

}  // namespace

const char* VerdictId(Verdict v) {
  switch (v) {
    case Verdict::kImproved: return "improved";
    case Verdict::kRegressed: return "regressed";
    case Verdict::kNoChange: return "no_change";
    case Verdict::kInsufficientData: return "insufficient_data";
  }
  return "insufficient_data";
}

const char* VerdictText(Verdict v) {
  switch (v) {
    case Verdict::kImproved: return "improved";
    case Verdict::kRegressed: return "regressed";
    case Verdict::kNoChange: return "no significant change";
    case Verdict::kInsufficientData: return "insufficient data";
  }
  return "insufficient data";
}

const char* TestKindName(TestKind t) {
  switch (t) {
    case TestKind::kAuto: return "auto";
    case TestKind::kWelch: return "welch";
    case TestKind::kMannWhitney: return "mannwhitney";
    case TestKind::kBootstrap: return "bootstrap";
  }
  return "auto";
}

StatusOr<TestKind> ParseTestKind(std::string_view s) {
  for (TestKind t : {TestKind::kAuto, TestKind::kWelch, TestKind::kMannWhitney, TestKind::kBootstrap}) {
    if (s == TestKindName(t)) return t;
  }
  return ErrStatus("unknown test '" + std::string(s) + "' (expected welch, mannwhitney, bootstrap or auto)");
}

size_t MinSamplesForQuantile(double q) {
  double thin = std::min(q, 1 - q);
  if (!(thin > 0)) return SIZE_MAX;
  return std::max(kMinSamplesForTest, static_cast<size_t>(std::ceil(kQuantileTailSamples / thin - 1e-9)));
}

Status CheckMetricNames(const std::vector<std::string>& metrics) {
  if (metrics.empty()) return ErrStatus("no metric given (--metrics)");
  for (const std::string& m : metrics) {
    std::string quality;
    if (m == "latency" || m == "throughput" || m == "device_util" || QuantileOfMetric(m) > 0 || IsQualityMetric(m, &quality)) continue;
    return ErrStatus("unknown metric '" + m +
                     "' (expected latency, p50, p90, p99 or another pNN, throughput, device_util, accuracy, or quality:NAME)");
  }
  return OkStatus();
}

MetricComparison CompareSamples(const std::string& metric, const std::string& unit, const std::vector<double>& before,
                                const std::vector<double>& after, const ValidationOptions& options, uint64_t salt) {
  MetricComparison m;
  m.metric = metric;
  m.unit = unit;
  CompareLocation(before, after, options, salt, &m);
  return m;
}

OpShiftAnalysis CompareOps(const RunSamples& before, const RunSamples& after) {
  OpShiftAnalysis s;
  if (before.op_dur_ns.empty() || after.op_dur_ns.empty()) return s;
  s.available = true;
  s.same_op_mix = before.op_dur_ns.size() == after.op_dur_ns.size();
  for (const auto& [name, a] : before.op_dur_ns) {
    auto it = after.op_dur_ns.find(name);
    if (it == after.op_dur_ns.end() || it->second.size() != a.size()) s.same_op_mix = false;
  }
  double na = std::max<double>(1, static_cast<double>(before.latency_ns.size()));
  double nb = std::max<double>(1, static_cast<double>(after.latency_ns.size()));
  double total_time = 0, slowed_time = 0;
  std::vector<double> ratios;
  for (const auto& [name, a] : before.op_dur_ns) {
    auto it = after.op_dur_ns.find(name);
    if (it == after.op_dur_ns.end() || a.size() < kOpMinCount || it->second.size() < kOpMinCount) continue;
    const std::vector<double>& b = it->second;
    OpShift op;
    op.name = name;
    op.count_before = a.size();
    op.count_after = b.size();
    op.mean_before_ns = Mean(a);
    op.mean_after_ns = Mean(b);
    op.total_before_ns = op.mean_before_ns * static_cast<double>(a.size());
    op.total_after_ns = op.mean_after_ns * static_cast<double>(b.size());
    op.ratio = op.mean_before_ns > 0 ? op.mean_after_ns / op.mean_before_ns : 0;
    op.added_per_sample_ns = op.total_after_ns / nb - op.total_before_ns / na;
    total_time += op.total_before_ns;
    if (op.ratio >= kOpSlowedRatio) {
      ++s.slowed;
      slowed_time += op.total_before_ns;
    } else if (op.ratio > 0 && op.ratio <= 1 / kOpSlowedRatio) {
      ++s.faster;
    }
    ratios.push_back(op.ratio);
    s.ops.push_back(op);
  }
  std::sort(s.ops.begin(), s.ops.end(), [](const OpShift& x, const OpShift& y) {
    return x.total_before_ns != y.total_before_ns ? x.total_before_ns > y.total_before_ns : x.name < y.name;
  });
  s.compared = s.ops.size();
  s.slowed_time_share = total_time > 0 ? slowed_time / total_time : 0;
  s.median_ratio = Quantile(ratios, 0.5);
  s.broad = s.compared >= kBroadMinOps &&
            static_cast<double>(s.slowed) >= kBroadOpFraction * static_cast<double>(s.compared) &&
            s.slowed_time_share >= kBroadTimeShare;
  return s;
}

RunSamples MergeRuns(std::vector<RunSamples> runs) {
  if (runs.size() == 1) return std::move(runs.front());
  RunSamples m;
  if (runs.empty()) return m;
  m.source_kind = runs.front().source_kind;
  m.unit = runs.front().unit;
  m.items_per_sample = runs.front().items_per_sample;
  bool throughput_everywhere = true;
  for (const RunSamples& r : runs) throughput_everywhere = throughput_everywhere && !r.throughput.empty();
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunSamples& r = runs[i];
    m.label += (i ? ", " : "") + r.label;
    if (r.source_kind != m.source_kind) m.source_kind = "mixed";
    if (r.unit != m.unit) m.unit = m.unit + " / " + r.unit;
    m.latency_ns.insert(m.latency_ns.end(), r.latency_ns.begin(), r.latency_ns.end());
    if (throughput_everywhere) m.throughput.insert(m.throughput.end(), r.throughput.begin(), r.throughput.end());
    m.device_util.insert(m.device_util.end(), r.device_util.begin(), r.device_util.end());
    if (r.device_util.empty() && m.device_util_missing.empty()) m.device_util_missing = r.label + ": " + r.device_util_missing;
    for (const auto& [k, v] : r.quality) m.quality[k].insert(m.quality[k].end(), v.begin(), v.end());
    for (const auto& [k, v] : r.op_dur_ns) m.op_dur_ns[k].insert(m.op_dur_ns[k].end(), v.begin(), v.end());
    for (const std::string& n : r.notes) m.notes.push_back(r.label + ": " + n);
    m.warmup_left_out_ns.insert(m.warmup_left_out_ns.end(), r.warmup_left_out_ns.begin(), r.warmup_left_out_ns.end());
  }
  m.runs = std::move(runs);
  return m;
}

ValidationResult Validate(const RunSamples& before, const RunSamples& after, const ValidationOptions& options) {
  ValidationResult r;
  r.before_label = before.label;
  r.after_label = after.label;
  r.before_kind = before.source_kind;
  r.after_kind = after.source_kind;
  r.unit = before.unit == after.unit ? before.unit : before.unit + " vs " + after.unit;
  for (const std::string& n : before.notes) r.sample_notes.push_back("before: " + n);
  for (const std::string& n : after.notes) r.sample_notes.push_back("after: " + n);
  r.options = options;
  std::vector<std::string> names = options.metrics;
  for (const auto& [q, values] : before.quality) {
    std::string id = "quality:" + q;
    bool listed = false;
    for (const std::string& n : names) {
      std::string k;
      listed = listed || (IsQualityMetric(n, &k) && k == q);
    }
    if (!listed && after.quality.count(q)) names.push_back(id);
  }
  const bool by_runs = !before.runs.empty() || !after.runs.empty();
  for (size_t i = 0; i < names.size(); ++i) {
    r.metrics.push_back(by_runs ? CompareRuns(names[i], before, after, options)
                                : CompareOne(names[i], before, after, options, i + 1));
  }
  if (by_runs) {
    r.unit = "run (" + r.unit + "s within a run are not independent)";
    auto list = [&](const char* side, const RunSamples& s) {
      const std::vector<const RunSamples*> runs = RunsOf(s);
      std::string line = std::string(side) + ": " + std::to_string(runs.size()) + (runs.size() == 1 ? " run" : " runs") +
                         ", latency mean per run";
      for (const RunSamples* x : runs) {
        line += (x == runs.front() ? " " : ", ") + Fmt("%.4g ms", Mean(x->latency_ns) / 1e6) + " (" +
                std::to_string(x->latency_ns.size()) + " " + x->unit + "s, " + x->label + ")";
      }
      r.sample_notes.push_back(line);
    };
    list("before", before);
    list("after", after);
  } else if (before.source_kind == "trace" && after.source_kind == "trace") {
    r.sample_notes.push_back(
        "one run a side: its steps are the samples, so the interval leaves out how much runs of one program differ "
        "(on this project's CPU pairs, fresh processes of one program differed by up to 1.8x in their median step: "
        "docs/validation.md); "
        "pass --before and --after once per run, at least " + std::to_string(kMinRunsForTest) +
        " each, to make the run the unit");
  }
  // p50 short of samples beside latency compared on its median: the same
  // medians, decided by a rank test that needs fewer samples than the
  // quantile's bootstrap interval. Said beside the p50 row, where two
  // verdicts for one pair of figures read as a contradiction (trial sceptic,
  // finding 10: latency "improved", p50 "insufficient data", both 176.27 ->
  // 126.27 ms).
  const MetricComparison* by_median = nullptr;
  for (const MetricComparison& m : r.metrics) {
    if (m.metric == "latency" && m.statistic_name == "median" && m.verdict != Verdict::kInsufficientData) by_median = &m;
  }
  for (MetricComparison& m : r.metrics) {
    if (by_median == nullptr || m.metric != "p50" || m.verdict != Verdict::kInsufficientData) continue;
    m.reason += "; the latency row compares the same medians with " +
                (by_median->test.empty() ? std::string("its test") : by_median->test) +
                ", a rank test that needs fewer samples than this quantile's bootstrap interval";
  }
  r.op_shift = CompareOps(before, after);
  bool any_decided = false, any_improved = false, any_regressed = false;
  for (const MetricComparison& m : r.metrics) {
    any_decided = any_decided || m.verdict != Verdict::kInsufficientData;
    any_improved = any_improved || m.verdict == Verdict::kImproved;
    any_regressed = any_regressed || m.verdict == Verdict::kRegressed;
  }
  r.overall = any_regressed ? Verdict::kRegressed
              : any_improved ? Verdict::kImproved
              : any_decided  ? Verdict::kNoChange
                             : Verdict::kInsufficientData;
  DiagnoseValidation(&r);
  return r;
}

}  // namespace aiprof
