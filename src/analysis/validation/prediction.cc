#include "src/analysis/validation/prediction.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "src/analysis/common/text_format.h"
#include "src/analysis/validation/statistics.h"

namespace aiprof {

IntervalLabel MedianIntervalLabel(size_t n, const std::string& what) {
  IntervalLabel out;
  if (n < 2) {
    out.kind = "one " + what + ": no interval (zero width)";
    return out;
  }
  // The ranks MedianWithInterval takes (run on 1..n, so the rule lives in
  // one place), then 1 - 2·P(Binomial(n, 1/2) <= k - 1).
  std::vector<double> ranks(n);
  for (size_t i = 0; i < n; ++i) ranks[i] = static_cast<double>(i + 1);
  const size_t k = static_cast<size_t>(MedianWithInterval(ranks).lo);
  double below = 0;
  for (size_t i = 0; i < k; ++i) {
    below += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) -
                      static_cast<double>(n) * std::log(2.0));
  }
  out.level = std::max(0.0, 1 - 2 * below);
  const std::string values = std::to_string(n) + " " + what + "s";
  out.kind = k > 1 ? "order statistics " + std::to_string(k) + " and " + std::to_string(n + 1 - k) + " of the " + values
                   : "[min, max] of the " + values;
  if (out.level < 0.95) out.kind += ": below 6 " + what + "s no interval of the " + what + "s reaches 95%";
  return out;
}

IntervalLabel MeanIntervalLabel(size_t n, const std::string& what) {
  IntervalLabel out;
  if (n < 2) {
    out.kind = "one " + what + ": no interval (zero width)";
    return out;
  }
  out.level = 0.95;
  out.kind = "Student's t over the " + std::to_string(n) + " " + what + "s";
  return out;
}

IntervalLabel HistoryIntervalLabel(size_t cases) {
  return {0.95, "corrected by " + std::to_string(cases) +
                    " past case(s): the replay's interval widened by the predictive spread of a new case's error "
                    "(normal model, sigma plugged in: nominal; docs/whatif.md \"Predictions corrected by history\")"};
}

std::string DescribeIntervalLabel(double level, const std::string& kind) {
  if (level <= 0) return "no stated level: " + (kind.empty() ? std::string("unknown") : kind);
  char pct[16];
  std::snprintf(pct, sizeof pct, "%.1f%%", level * 100);
  return std::string(pct) + ": " + kind;
}

void JudgePrediction(PredictionCheck* c) {
  c->error = c->measured_ns > 0 ? c->predicted_ns / c->measured_ns - 1 : 0;
  c->within = c->measured_ns >= c->predicted_lo_ns && c->measured_ns <= c->predicted_hi_ns;
  c->agrees = c->measured_lo_ns <= c->predicted_hi_ns && c->measured_hi_ns >= c->predicted_lo_ns;
  c->hit = c->measured_ns > 0 && std::fabs(c->error) <= kPredictionAccuracyBar;
  c->too_wide = c->predicted_ns > 0 && (c->predicted_lo_ns < (1 - kTooWideInterval) * c->predicted_ns ||
                                        c->predicted_hi_ns > (1 + kTooWideInterval) * c->predicted_ns);
}

std::string PredictionBaseName(const PredictionCheck& c) { return c.time_base.substr(0, c.time_base.find("; ")); }

namespace {

std::string Percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", v * 100);
  return buf;
}

}  // namespace

std::string BriefPredictionCheck(const PredictionCheck& c) {
  // The verdict first, by the accuracy bar: a wide interval holds a miss.
  char bar[16];
  std::snprintf(bar, sizeof bar, "%.0f%%", kPredictionAccuracyBar * 100);
  std::string out = "prediction for " + (c.fix_id.empty() ? std::string("the scenario") : c.fix_id) + " (" + c.source +
                    (c.scenario.empty() ? "" : ": '" + c.scenario + "'") + "): " + (c.hit ? "hit, " : "MISSED, ") +
                    Percent(c.error) + " against the measured after run (" + (c.hit ? "within" : "outside") + " the " +
                    bar + " accuracy bar)";
  // Every figure on the prediction's own base, before it too.
  auto change = [&](double v) { return c.before_ns > 0 ? " (" + Percent(v / c.before_ns - 1) + ")" : std::string(); };
  out += "; on its base, the " + PredictionBaseName(c) +
         (c.before_runs > 1 || c.after_runs > 1 ? " (means over " + std::to_string(c.before_runs) + " before and " +
                                                      std::to_string(c.after_runs) + " after runs)"
                                                : std::string()) +
         ": before " + FormatDurationNs(c.before_ns) + " -> predicted " + FormatDurationNs(c.predicted_ns) +
         change(c.predicted_ns) + " -> measured " + FormatDurationNs(c.measured_ns) + change(c.measured_ns) +
         " per step" + (c.mean ? " (steady steps' mean)" : "");
  return out;
}

std::string DescribePredictionCheck(const PredictionCheck& c) {
  std::string out = BriefPredictionCheck(c);
  out += "; predicted interval " + FormatDurationNs(c.predicted_lo_ns) + " .. " + FormatDurationNs(c.predicted_hi_ns) +
         " (" + DescribeIntervalLabel(c.predicted_interval_level, c.predicted_interval_kind) + ")";
  if (c.too_wide && (c.within || c.agrees)) {
    char wide[16];
    std::snprintf(wide, sizeof wide, "%.0f%%", kTooWideInterval * 100);
    out += std::string(" is too wide to tell (it reaches beyond +-") + wide + " of the prediction): that " +
           (c.within ? "the measurement lies inside it" : "the intervals overlap") + " confirms nothing";
  } else if (!c.hit && (c.within || c.agrees)) {
    // A miss stays a miss: the verdict is the bar's, on the central figures.
    // The measurement inside the interval says it reaches further than the
    // bar; an overlap, only that the after run's steps spread into the
    // predicted range (docs/validation.md, "A miss is a miss").
    char bar[16];
    std::snprintf(bar, sizeof bar, "%.0f%%", kPredictionAccuracyBar * 100);
    out += c.within ? std::string(
                          ", the measurement inside it, but the verdict is a miss: the interval reaches further "
                          "from the prediction than the ") +
                          bar + " bar"
                    : std::string(
                          ", the verdict is a miss: the intervals overlap, which says only that the measured "
                          "interval reaches into the predicted one, not that the prediction came within the ") +
                          bar + " bar";
  } else {
    out += c.within   ? ", the measurement inside it"
           : c.agrees ? ", the intervals overlap"
                      : ", the measurement outside it and the intervals apart";
  }
  out += "; measured interval " + FormatDurationNs(c.measured_lo_ns) + " .. " + FormatDurationNs(c.measured_hi_ns) +
         (c.measured_interval_kind.empty()
              ? std::string()
              : " (" + DescribeIntervalLabel(c.measured_interval_level, c.measured_interval_kind) + ")");
  if (c.history_cases > 0) {
    out += "; corrected from " + FormatDurationNs(c.uncorrected_ns) + " by " +
           (c.history_from.empty() ? std::to_string(c.history_cases) + " past case(s)" : c.history_from);
  } else if (!c.history_from.empty()) {
    out += "; not corrected by history: " + c.history_from;
  }
  return out;
}

}  // namespace aiprof
