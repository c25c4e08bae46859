#include "src/monitor/monitor_metrics.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "src/render/escape.h"

namespace aiprof {

const std::vector<MetricInfo>& MonitorMetricCatalogue() {
  static const std::vector<MetricInfo> kCatalogue = [] {
    std::vector<MetricInfo> v = {
        {"cpu_util", MetricUnit::kRatio,
         "CPU time of the process over wall time in the last interval (100% = one core)"},
        {"error_count", MetricUnit::kCount, "requests ended with aiprof_request_end_error in the window"},
        {"error_rate", MetricUnit::kRatio, "error_count / request_count"},
        {"lost_records", MetricUnit::kCount, "live records overwritten before the monitor read them (since start)"},
        {"max_latency", MetricUnit::kNanoseconds, "longest request latency in the window"},
        {"mean_latency", MetricUnit::kNanoseconds, "mean request latency in the window"},
        {"p50_latency", MetricUnit::kNanoseconds, "median request latency in the window (exact, nearest rank)"},
        {"p90_latency", MetricUnit::kNanoseconds,
         "90th percentile request latency in the window (exact, nearest rank)"},
        {"p99_latency", MetricUnit::kNanoseconds,
         "99th percentile request latency in the window (exact, nearest rank)"},
        {"request_count", MetricUnit::kCount, "requests that ended in the window"},
        {"rss", MetricUnit::kBytes, "resident set size of the process (VmRSS)"},
        {"step_rate", MetricUnit::kPerSecond, "steps per second over the window"},
        {"step_time_max", MetricUnit::kNanoseconds, "longest step in the window"},
        {"step_time_p50", MetricUnit::kNanoseconds, "median step time in the window"},
        {"step_time_p99", MetricUnit::kNanoseconds, "99th percentile step time in the window"},
        {"throughput", MetricUnit::kPerSecond, "requests per second over the window"},
    };
    std::sort(v.begin(), v.end(), [](const MetricInfo& a, const MetricInfo& b) { return a.name < b.name; });
    return v;
  }();
  return kCatalogue;
}

const MetricInfo* FindMonitorMetric(std::string_view name) {
  static const MetricInfo kCounter{"counter", MetricUnit::kNumber, "newest value of an SDK counter in the window"};
  if (name.starts_with("counter.") && name.size() > 8) return &kCounter;
  const auto& all = MonitorMetricCatalogue();
  auto it = std::lower_bound(all.begin(), all.end(), name,
                             [](const MetricInfo& m, std::string_view n) { return m.name < n; });
  return it != all.end() && it->name == name ? &*it : nullptr;
}

std::map<std::string, MetricValue, std::less<>> MonitorMetricValues(const WindowStats& s) {
  std::map<std::string, MetricValue, std::less<>> m;
  auto set = [&](const char* name, double v) { m[name] = MetricValue{v, true, "aiprof monitor window"}; };
  // A count or rate over the window is known once the monitor has observed
  // the whole window: over a part of it (the first evaluation, right at
  // attach, covers microseconds) `throughput < 50/s` or `request_count < 10`
  // would hold for want of time, not of requests. Errors seen are errors in
  // the window whatever the coverage, so error_count is known at once.
  if (WindowCovered(s)) {
    set("request_count", static_cast<double>(s.requests));
    set("throughput", s.throughput_per_s);
    set("step_rate", s.step_rate_per_s);
  }
  set("error_count", static_cast<double>(s.errors));
  set("lost_records", static_cast<double>(s.lost_records));
  if (s.requests > 0) {
    set("p50_latency", s.p50_ns);
    set("p90_latency", s.p90_ns);
    set("p99_latency", s.p99_ns);
    set("max_latency", s.max_ns);
    set("mean_latency", s.mean_ns);
    set("error_rate", static_cast<double>(s.errors) / static_cast<double>(s.requests));
  }
  if (s.steps > 0) {
    set("step_time_p50", s.step_p50_ns);
    set("step_time_p99", s.step_p99_ns);
    set("step_time_max", s.step_max_ns);
  }
  if (s.cpu_util >= 0) set("cpu_util", s.cpu_util);
  if (s.rss_bytes >= 0) set("rss", s.rss_bytes);
  for (const auto& [name, v] : s.counters) m["counter." + name] = MetricValue{v, true, "SDK counter"};
  return m;
}

std::string PrometheusLabelValue(std::string_view value) {
  // Control characters other than newline and tab, invisible ones, and
  // bytes that are not UTF-8 as the text \xNN (EscapeControls, as on the
  // terminal): Prometheus refuses the whole scrape over one label value that
  // is not UTF-8, and a name cut mid-character is common (/proc's 15-byte
  // comm of a service named in Chinese, the live channel's 59-byte counter
  // names). Tab is shown too, as before.
  const std::string shown = EscapeControls(value, /*keep_line_breaks=*/true);
  std::string out;
  out.reserve(shown.size());
  for (char c : shown) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\\\x09";
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

// The shortest text that reads back as `v`.
std::string Number(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

}  // namespace

std::vector<double> DefaultLatencyBuckets() {
  return std::vector<double>(std::begin(kDefaultLatencyBucketsS), std::end(kDefaultLatencyBucketsS));
}

StatusOr<std::vector<double>> ParseLatencyBuckets(const std::string& text) {
  std::vector<double> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    char* stop = nullptr;
    const double v = std::strtod(item.c_str(), &stop);
    if (item.empty() || *stop != '\0' || !(v > 0) || v > 1e9) {
      return UsageStatus("--latency-buckets " + text + ": \"" + item + "\" is not a positive number of seconds");
    }
    if (!out.empty() && v <= out.back()) return UsageStatus("--latency-buckets " + text + ": bounds must increase");
    out.push_back(v);
    start = end + 1;
  }
  if (out.size() > 64) return UsageStatus("--latency-buckets " + text + ": at most 64 bounds");
  return out;
}

CumulativeHistogram::CumulativeHistogram(std::vector<double> bounds_s)
    : bounds_(std::move(bounds_s)), per_bucket_(bounds_.size() + 1, 0) {}

void CumulativeHistogram::Add(double seconds) {
  const size_t i = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), seconds) - bounds_.begin());
  ++per_bucket_[i];
  ++count_;
  sum_ += seconds;
}

uint64_t CumulativeHistogram::CountAtMost(size_t i) const {
  uint64_t n = 0;
  for (size_t k = 0; k <= i && k < per_bucket_.size(); ++k) n += per_bucket_[k];
  return n;
}

std::string PrometheusExposition(const WindowStats& s, const MonitorTotals& totals, const ExpositionLabels& labels,
                                 const MonitorCounts& counts) {
  const std::string base = "service=\"" + PrometheusLabelValue(labels.service) + "\"";
  std::string out;
  auto metric = [&](const char* name, const char* type, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  };
  auto sample = [&](const std::string& name, const std::string& extra, double v) {
    out += name + "{" + base + extra + "} " + Number(v) + "\n";
  };
  auto histogram = [&](const char* name, const char* help, const CumulativeHistogram& h) {
    metric(name, "histogram", help);
    for (size_t i = 0; i < h.bounds().size(); ++i) {
      sample(std::string(name) + "_bucket", ",le=\"" + Number(h.bounds()[i]) + "\"",
             static_cast<double>(h.CountAtMost(i)));
    }
    sample(std::string(name) + "_bucket", ",le=\"+Inf\"", static_cast<double>(h.count()));
    sample(std::string(name) + "_sum", "", h.sum());
    sample(std::string(name) + "_count", "", static_cast<double>(h.count()));
  };
  auto counter = [&](const char* name, const char* help, double v) {
    metric(name, "counter", help);
    sample(name, "", v);
  };
  auto gauge = [&](const char* name, const char* help, double v) {
    metric(name, "gauge", help);
    sample(name, "", v);
  };
  counter("aiprof_monitor_requests_total", "Requests the service ended since the monitor started.",
          static_cast<double>(totals.requests));
  counter("aiprof_monitor_request_errors_total",
          "Requests ended as errors (aiprof_request_end_error) since the monitor started.",
          static_cast<double>(totals.errors));
  histogram("aiprof_monitor_request_latency_seconds", "Request latency since the monitor started (--latency-buckets).",
            totals.latency);
  counter("aiprof_monitor_steps_total", "Steps (aiprof_iteration_end) since the monitor started.",
          static_cast<double>(totals.steps));
  histogram("aiprof_monitor_step_duration_seconds", "Step time since the monitor started (--latency-buckets).",
            totals.step_time);
  if (s.requests > 0) {
    gauge("aiprof_monitor_window_request_latency_p50_seconds",
          "Median request latency over the rolling window (what alerts read).", s.p50_ns / 1e9);
    gauge("aiprof_monitor_window_request_latency_p90_seconds",
          "90th percentile request latency over the rolling window.", s.p90_ns / 1e9);
    gauge("aiprof_monitor_window_request_latency_p99_seconds",
          "99th percentile request latency over the rolling window.", s.p99_ns / 1e9);
    gauge("aiprof_monitor_window_request_latency_max_seconds", "Longest request latency in the rolling window.",
          s.max_ns / 1e9);
  }
  gauge("aiprof_monitor_window_requests", "Requests that ended in the rolling window.",
        static_cast<double>(s.requests));
  gauge("aiprof_monitor_window_request_errors", "Requests ended as errors in the rolling window.",
        static_cast<double>(s.errors));
  if (s.steps > 0) {
    gauge("aiprof_monitor_window_step_duration_p50_seconds", "Median step time over the rolling window.",
          s.step_p50_ns / 1e9);
    gauge("aiprof_monitor_window_step_duration_p99_seconds", "99th percentile step time over the rolling window.",
          s.step_p99_ns / 1e9);
    gauge("aiprof_monitor_window_step_duration_max_seconds", "Longest step in the rolling window.",
          s.step_max_ns / 1e9);
  }
  if (s.cpu_seconds_total >= 0) {
    counter("aiprof_monitor_process_cpu_seconds_total",
            "User and system CPU time of the watched process since the process started (not the monitor).",
            s.cpu_seconds_total);
  }
  if (s.rss_bytes >= 0)
    gauge("aiprof_monitor_resident_memory_bytes", "Resident set size of the watched process.", s.rss_bytes);
  if (!s.counters.empty()) {
    // Not "..._counter": Prometheus' lint rejects a type in a name (and these are gauges).
    metric("aiprof_monitor_sdk_value", "gauge", "Newest value of each SDK counter (aiprof_counter) in the window.");
    for (const auto& [name, v] : s.counters)
      sample("aiprof_monitor_sdk_value", ",name=\"" + PrometheusLabelValue(name) + "\"", v);
  }
  metric("aiprof_monitor_window_seconds", "gauge", "Length of the rolling window, and the part of it observed so far.");
  sample("aiprof_monitor_window_seconds", ",part=\"configured\"", static_cast<double>(s.window_ns) / 1e9);
  sample("aiprof_monitor_window_seconds", ",part=\"covered\"", static_cast<double>(s.covered_ns) / 1e9);
  counter("aiprof_monitor_lost_records_total", "Live records overwritten before the monitor read them.",
          static_cast<double>(s.lost_records));
  if (counts.alert_series.empty()) {
    counter("aiprof_monitor_alerts_total", "Alerts that fired: expressions that started to hold, and webhook alerts.",
            static_cast<double>(counts.alerts));
  } else {
    metric("aiprof_monitor_alerts_total", "counter",
           "Alerts that fired, per --alert (times it started to hold) and alert=\"webhook\" (webhook alerts).");
    for (const AlertSeries& a : counts.alert_series)
      sample("aiprof_monitor_alerts_total", ",alert=\"" + PrometheusLabelValue(a.alert) + "\"",
             static_cast<double>(a.fired));
    metric("aiprof_monitor_alert_active", "gauge", "1 while an --alert holds (at the last evaluation), else 0.");
    for (const AlertSeries& a : counts.alert_series) {
      if (a.alert != "webhook")
        sample("aiprof_monitor_alert_active", ",alert=\"" + PrometheusLabelValue(a.alert) + "\"", a.active ? 1 : 0);
    }
  }
  counter("aiprof_monitor_incidents_total", "Incident folders written (complete, under their final name).",
          static_cast<double>(counts.incidents));
  gauge("aiprof_monitor_sdk_value_names_cut",
        "SDK counter names longer than the live channel keeps (59 bytes): shown cut, with ~<slot>.",
        static_cast<double>(counts.counter_names_cut));
  counter("aiprof_monitor_sdk_value_samples_dropped_total",
          "SDK counter samples lost: their name came past the live channel's 64 names.",
          static_cast<double>(counts.counter_samples_dropped));
  // The monitor process itself, under the names client libraries use.
  if (counts.self.cpu_seconds >= 0)
    counter("process_cpu_seconds_total", "User and system CPU time of the monitor itself.", counts.self.cpu_seconds);
  if (counts.self.rss_bytes >= 0)
    gauge("process_resident_memory_bytes", "Resident set size of the monitor itself.", counts.self.rss_bytes);
  if (counts.self.open_fds >= 0)
    gauge("process_open_fds", "Open file descriptors of the monitor itself.", counts.self.open_fds);
  metric("aiprof_monitor_build_info", "gauge", "The aiprof version the monitor runs (value 1).");
  sample("aiprof_monitor_build_info", ",version=\"" + PrometheusLabelValue(AIPROF_VERSION) + "\"", 1);
  counter("aiprof_monitor_incident_write_failures_total",
          "Incidents whose folder could not be written (disk full, read-only, removed folder).",
          static_cast<double>(counts.incident_write_failures));
  // What would grow with time, requests, names, incidents or restarts, and
  // what its bound removed or dropped (docs/monitor.md, "Limits").
  counter("aiprof_monitor_incidents_pruned_total",
          "Oldest incident folders removed to keep INCIDENTS_DIR within its count and size limits.",
          static_cast<double>(counts.incidents_pruned));
  gauge("aiprof_monitor_incident_folders", "Complete incident folders INCIDENTS_DIR holds (after the last pruning).",
        static_cast<double>(counts.incident_folders));
  gauge("aiprof_monitor_incident_folder_bytes", "Bytes of the incident folders INCIDENTS_DIR holds.",
        static_cast<double>(counts.incident_folder_bytes));
  counter("aiprof_monitor_service_files_pruned_total",
          "Exit files of earlier service runs removed from INCIDENTS_DIR/.service (the newest 5 are kept).",
          static_cast<double>(counts.service_files_pruned));
  counter("aiprof_monitor_incident_triggers_dropped_total",
          "Alerts and webhook alerts counted but not recorded: past 100 in one incident, or past 1000 webhook alerts "
          "between two evaluations.",
          static_cast<double>(counts.triggers_dropped));
  counter("aiprof_monitor_live_channel_restored_total",
          "Times the live segment was removed under the monitor (/dev/shm cleaned) and created again.",
          static_cast<double>(counts.live_channel_restored));
  counter("aiprof_monitor_records_clamped_total",
          "Live records whose end time was after the monitor read them, taken as ending then.",
          static_cast<double>(counts.records_clamped));
  return out;
}

}  // namespace aiprof
