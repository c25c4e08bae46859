// Alert expressions of `aiprof monitor` (the rules' expression language over
// the window's metrics, src/monitor/monitor_metrics.h) and the stored
// baseline that `* baseline` compares with.
#ifndef AIPROF_SRC_MONITOR_ALERT_H_
#define AIPROF_SRC_MONITOR_ALERT_H_

#include <map>
#include <string>
#include <vector>

#include "src/analysis/rules/expression.h"
#include "src/base/status.h"
#include "src/monitor/window.h"

namespace aiprof {

// The longest SDK counter name the live channel carries whole
// (live::CounterName::name less its NUL).
inline constexpr size_t kMaxCounterNameBytes = 59;

// The baseline's value of each window metric it can speak for.
struct MonitorBaseline {
  std::string label;  // "baseline NAME #ID (source)"
  std::map<std::string, double, std::less<>> values;
};

// From the newest baseline of `service` in the SQLite database `db_path`
// (aiprof set-baseline): a baseline of steps gives step_time_p50/p99/max, one
// of request spans gives p50/p90/p99/max/mean_latency (nearest-rank over its
// samples, as the window's).
StatusOr<MonitorBaseline> LoadMonitorBaseline(const std::string& db_path, const std::string& service);

struct AlertRule {
  std::string text;
  Expression expression;
};

// The checks of every --alert that its text decides, before anything is
// read or started: none given, one given twice, a syntax error, an unknown
// metric, a misfit unit, a counter name the live channel cannot carry, or
// `* baseline` without `baseline_named` (--service). A usage error (exit 2)
// naming the expression and column.
Status CheckAlertTexts(const std::vector<std::string>& texts, bool baseline_named);
// Parses every --alert: CheckAlertTexts's errors, and an expression whose
// metric the stored `baseline` lacks (an error of its content: exit 1).
StatusOr<std::vector<AlertRule>> ParseAlertRules(const std::vector<std::string>& texts, const MonitorBaseline* baseline);

struct AlertOutcome {
  bool holds = false;
  EvalResult result;
};

// Evaluates `rule` on the window statistics (and the baseline, if any).
AlertOutcome EvaluateAlert(const AlertRule& rule, const WindowStats& stats, const MonitorBaseline* baseline);

}  // namespace aiprof

#endif  // AIPROF_SRC_MONITOR_ALERT_H_
