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
#include "src/base/status.h"
#include "src/monitor/window.h"

namespace aiprof {

// Every metric an alert can name, sorted by name; counters are
// "counter.<name>" (a number) on top of these.
const std::vector<MetricInfo>& MonitorMetricCatalogue();
// Catalogue lookup for Expression::Parse (accepts any "counter.<name>").
const MetricInfo* FindMonitorMetric(std::string_view name);

// Whether the monitor has observed the whole window (covered_ns reached
// window_ns): request_count, throughput and step_rate are unknown before.
inline bool WindowCovered(const WindowStats& s) { return s.window_ns > 0 && s.covered_ns >= s.window_ns; }

// Metric values of `stats` by name; a metric without data (no requests in
// the window, a window not yet covered for counts and rates, /proc
// unreadable) is absent, so a comparison on it is Unknown.
std::map<std::string, MetricValue, std::less<>> MonitorMetricValues(const WindowStats& stats);

// Default upper bounds (seconds) of the latency and step-time histograms:
// 0.5 ms to 30 s, about 2.5x apart (--latency-buckets replaces them).
inline constexpr double kDefaultLatencyBucketsS[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                     0.25,   0.5,   1,      2.5,   5,    10,   30};
std::vector<double> DefaultLatencyBuckets();
// "0.005,0.01,0.1" -> bounds in seconds: positive, strictly increasing, at
// most 64; a usage error (exit 2) naming the bad item otherwise.
StatusOr<std::vector<double>> ParseLatencyBuckets(const std::string& text);

// A cumulative histogram (Prometheus semantics): counts since the monitor
// started, never reset, so rate() and histogram_quantile() work across scrapes.
class CumulativeHistogram {
 public:
  explicit CumulativeHistogram(std::vector<double> bounds_s);
  void Add(double seconds);
  const std::vector<double>& bounds() const { return bounds_; }
  // Observations <= bounds()[i] (cumulative, as `le` buckets are).
  uint64_t CountAtMost(size_t i) const;
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> per_bucket_;  // bounds_.size() + 1 (the last: above every bound)
  uint64_t count_ = 0;
  double sum_ = 0;
};

// What the monitor has seen since it started (Prometheus counters).
struct MonitorTotals {
  explicit MonitorTotals(std::vector<double> buckets_s) : latency(buckets_s), step_time(buckets_s) {}
  uint64_t requests = 0, errors = 0, steps = 0;
  CumulativeHistogram latency, step_time;
};

// Labels on every /metrics sample: only the service, so that a restarted
// service (a new pid) continues the same series.
struct ExpositionLabels {
  std::string service;  // --service, or the watched program's name
};

// One --alert (or "webhook" for all webhook alerts) on /metrics.
struct AlertSeries {
  std::string alert;    // the expression's text, or "webhook"
  uint64_t fired = 0;   // times it started to hold (webhooks: alerts received)
  bool active = false;  // holds at the last evaluation (webhooks: never)
};

// The monitor process itself (standard process_* names); < 0 unknown.
struct SelfStats {
  double cpu_seconds = -1, rss_bytes = -1, open_fds = -1;
};

// What the monitor itself counted since it started.
struct MonitorCounts {
  uint64_t incidents = 0;                // incident folders written
  uint64_t incident_write_failures = 0;  // incidents whose folder could not be written
  uint64_t alerts = 0;                   // alerts that fired (expressions that started to hold, webhooks)
  uint64_t counter_names_cut = 0;        // SDK counter names longer than the live channel keeps
  uint64_t counter_samples_dropped = 0;  // SDK counter samples of names past the live channel's table
  // The bounds of what grows with time (docs/monitor.md, "Limits").
  uint64_t incidents_pruned = 0;          // oldest incident folders removed (retention)
  uint64_t incident_folders = 0;          // incident folders INCIDENTS_DIR keeps
  uint64_t incident_folder_bytes = 0;     // what they hold
  uint64_t service_files_pruned = 0;      // the SDK's exit files of earlier service runs removed
  uint64_t triggers_dropped = 0;          // triggers past kMaxIncidentTriggers / kMaxPendingWebhookAlerts
  uint64_t live_channel_restored = 0;     // the live segment vanished under the monitor and was created again
  uint64_t records_clamped = 0;           // live records dated after the monitor read them (end time clamped)
  std::vector<AlertSeries> alert_series;  // per alert; empty: one unlabelled alerts_total
  SelfStats self;
};

// Prometheus text exposition format 0.0.4 (aiprof_monitor_*; docs/monitor.md
// lists them): cumulative _total counters and histograms from `totals`,
// gauges of the window from `stats` (quantile gauges named window_*), label
// values escaped (backslash, double quote, newline). No rates: Prometheus
// computes them from the counters.
std::string PrometheusExposition(const WindowStats& stats, const MonitorTotals& totals, const ExpositionLabels& labels,
                                 const MonitorCounts& counts);

// A label value in the exposition format: \ " and newline escaped, and
// other control characters (ANSI escapes from a service's names) and bytes
// that are not UTF-8 written as the text \xNN, so that `curl /metrics` in a
// terminal is safe and Prometheus never refuses the scrape.
std::string PrometheusLabelValue(std::string_view value);

}  // namespace aiprof

#endif  // AIPROF_SRC_MONITOR_MONITOR_METRICS_H_
