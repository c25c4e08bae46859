// The metrics of `aiprof monitor`'s window: their catalogue (names, units,
// meaning) for alert expressions, their values from WindowStats, and the
// Prometheus text exposition of /metrics (docs/monitor.md, "Metrics").
#ifndef AIPROF_SRC_MONITOR_MONITOR_METRICS_H_
#define AIPROF_SRC_MONITOR_MONITOR_METRICS_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "src/analysis/metrics/metric_set.h"
#include "src/monitor/window.h"

namespace aiprof {

// Every metric an alert can name, sorted by name; counters are
// "counter.<name>" (a number) on top of these.
const std::vector<MetricInfo>& MonitorMetricCatalogue();
// Catalogue lookup for Expression::Parse (accepts any "counter.<name>").
const MetricInfo* FindMonitorMetric(std::string_view name);

// Metric values of `stats` by name; a metric without data (no requests in
// the window, /proc unreadable) is absent, so a comparison on it is Unknown.
std::map<std::string, MetricValue, std::less<>> MonitorMetricValues(const WindowStats& stats);

// Labels on every /metrics sample.
struct ExpositionLabels {
  std::string service;  // --service, or the watched program's name
  int pid = 0;
};

// The window as Prometheus text exposition format 0.0.4 (aiprof_monitor_*),
// label values escaped (backslash, double quote, newline).
std::string PrometheusExposition(const WindowStats& stats, const ExpositionLabels& labels, uint64_t incidents,
                                 uint64_t alerts);

// A label value in the exposition format: \ " and newline escaped.
std::string PrometheusLabelValue(std::string_view value);

}  // namespace aiprof

#endif  // AIPROF_SRC_MONITOR_MONITOR_METRICS_H_
