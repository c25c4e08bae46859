#include "src/monitor/monitor_metrics.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace aiprof {

const std::vector<MetricInfo>& MonitorMetricCatalogue() {
  static const std::vector<MetricInfo> kCatalogue = [] {
    std::vector<MetricInfo> v = {
        {"cpu_util", MetricUnit::kRatio, "CPU time of the process over wall time in the last interval (100% = one core)"},
        {"error_count", MetricUnit::kCount, "requests ended with aiprof_request_end_error in the window"},
        {"error_rate", MetricUnit::kRatio, "error_count / request_count"},
        {"lost_records", MetricUnit::kCount, "live records overwritten before the monitor read them (since start)"},
        {"max_latency", MetricUnit::kNanoseconds, "longest request latency in the window"},
        {"mean_latency", MetricUnit::kNanoseconds, "mean request latency in the window"},
        {"p50_latency", MetricUnit::kNanoseconds, "median request latency in the window (exact, nearest rank)"},
        {"p90_latency", MetricUnit::kNanoseconds, "90th percentile request latency in the window (exact, nearest rank)"},
        {"p99_latency", MetricUnit::kNanoseconds, "99th percentile request latency in the window (exact, nearest rank)"},
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
  auto it = std::lower_bound(all.begin(), all.end(), name, [](const MetricInfo& m, std::string_view n) { return m.name < n; });
  return it != all.end() && it->name == name ? &*it : nullptr;
}

std::map<std::string, MetricValue, std::less<>> MonitorMetricValues(const WindowStats& s) {
  std::map<std::string, MetricValue, std::less<>> m;
  auto set = [&](const char* name, double v) { m[name] = MetricValue{v, true, "aiprof monitor window"}; };
  set("request_count", static_cast<double>(s.requests));
  set("error_count", static_cast<double>(s.errors));
  set("lost_records", static_cast<double>(s.lost_records));
  if (s.covered_ns > 0) {
    set("throughput", s.throughput_per_s);
    set("step_rate", s.step_rate_per_s);
  }
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
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
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

std::string PrometheusExposition(const WindowStats& s, const ExpositionLabels& labels, uint64_t incidents,
                                 uint64_t alerts) {
  const std::string base = "service=\"" + PrometheusLabelValue(labels.service) + "\",pid=\"" + std::to_string(labels.pid) + "\"";
  std::string out;
  auto metric = [&](const char* name, const char* type, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  };
  auto sample = [&](const char* name, const std::string& extra, double v) {
    out += std::string(name) + "{" + base + extra + "} " + Number(v) + "\n";
  };
  metric("aiprof_monitor_request_latency_seconds", "summary",
         "Request latency over the rolling window (exact nearest-rank quantiles; a 1% DDSketch past 200k requests).");
  if (s.requests > 0) {
    sample("aiprof_monitor_request_latency_seconds", ",quantile=\"0.5\"", s.p50_ns / 1e9);
    sample("aiprof_monitor_request_latency_seconds", ",quantile=\"0.9\"", s.p90_ns / 1e9);
    sample("aiprof_monitor_request_latency_seconds", ",quantile=\"0.99\"", s.p99_ns / 1e9);
    sample("aiprof_monitor_request_latency_seconds", ",quantile=\"1\"", s.max_ns / 1e9);
  }
  out += "aiprof_monitor_request_latency_seconds_sum{" + base + "} " +
         Number(s.mean_ns * static_cast<double>(s.requests) / 1e9) + "\n";
  out += "aiprof_monitor_request_latency_seconds_count{" + base + "} " + Number(static_cast<double>(s.requests)) + "\n";
  metric("aiprof_monitor_throughput_per_second", "gauge", "Requests per second over the rolling window.");
  sample("aiprof_monitor_throughput_per_second", "", s.throughput_per_s);
  metric("aiprof_monitor_errors", "gauge", "Requests ended as errors in the rolling window.");
  sample("aiprof_monitor_errors", "", static_cast<double>(s.errors));
  metric("aiprof_monitor_step_time_seconds", "summary", "Step time over the rolling window (as the request latency's quantiles).");
  if (s.steps > 0) {
    sample("aiprof_monitor_step_time_seconds", ",quantile=\"0.5\"", s.step_p50_ns / 1e9);
    sample("aiprof_monitor_step_time_seconds", ",quantile=\"0.99\"", s.step_p99_ns / 1e9);
    sample("aiprof_monitor_step_time_seconds", ",quantile=\"1\"", s.step_max_ns / 1e9);
  }
  out += "aiprof_monitor_step_time_seconds_count{" + base + "} " + Number(static_cast<double>(s.steps)) + "\n";
  if (s.cpu_util >= 0) {
    metric("aiprof_monitor_cpu_utilisation_ratio", "gauge", "CPU time over wall time in the last interval (1 = one core).");
    sample("aiprof_monitor_cpu_utilisation_ratio", "", s.cpu_util);
  }
  if (s.rss_bytes >= 0) {
    metric("aiprof_monitor_resident_memory_bytes", "gauge", "Resident set size of the watched process.");
    sample("aiprof_monitor_resident_memory_bytes", "", s.rss_bytes);
  }
  if (!s.counters.empty()) {
    metric("aiprof_monitor_counter", "gauge", "Newest value of each SDK counter in the window.");
    for (const auto& [name, v] : s.counters) sample("aiprof_monitor_counter", ",name=\"" + PrometheusLabelValue(name) + "\"", v);
  }
  metric("aiprof_monitor_window_seconds", "gauge", "Length of the rolling window, and the part of it observed so far.");
  sample("aiprof_monitor_window_seconds", ",part=\"configured\"", static_cast<double>(s.window_ns) / 1e9);
  sample("aiprof_monitor_window_seconds", ",part=\"covered\"", static_cast<double>(s.covered_ns) / 1e9);
  metric("aiprof_monitor_lost_records_total", "counter", "Live records overwritten before the monitor read them.");
  sample("aiprof_monitor_lost_records_total", "", static_cast<double>(s.lost_records));
  metric("aiprof_monitor_alerts_total", "counter", "Alert expressions that held (each counted once per firing).");
  sample("aiprof_monitor_alerts_total", "", static_cast<double>(alerts));
  metric("aiprof_monitor_incidents_total", "counter", "Incident folders written.");
  sample("aiprof_monitor_incidents_total", "", static_cast<double>(incidents));
  return out;
}

}  // namespace aiprof
