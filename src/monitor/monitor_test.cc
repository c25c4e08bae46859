// Unit tests of aiprof monitor's parts: the window's statistics, the
// metrics and their exposition, alerts and baselines, the webhook, /proc
// parsing and the live channel's ring. The whole program is tested by
// test/monitor/monitor_e2e.py.
#include "src/monitor/monitor.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "src/analysis/validation/baseline_store.h"
#include "src/model/trace_builder.h"
#include "src/monitor/alert.h"
#include "src/monitor/incident.h"
#include "src/monitor/live_client.h"
#include "src/monitor/metrics_server.h"
#include "src/monitor/monitor_metrics.h"
#include "src/monitor/proc_stats.h"
#include "src/monitor/slowest_request.h"
#include "src/monitor/window.h"
#include "src/render/tree.h"
#include "src/sdk/live_channel.h"

namespace aiprof {
namespace {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kMs = 1'000'000;

TEST(MonitorWindowTest, NearestRankQuantilesOnBothSidesOfARank) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  EXPECT_EQ(NearestRankQuantile(&v, 0.99), 99);
  EXPECT_EQ(NearestRankQuantile(&v, 0.991), 100);  // ceil(99.1) = 100
  EXPECT_EQ(NearestRankQuantile(&v, 0.5), 50);
  EXPECT_EQ(NearestRankQuantile(&v, 0.0), 1);
  EXPECT_EQ(NearestRankQuantile(&v, 1.0), 100);
  std::vector<double> empty;
  EXPECT_EQ(NearestRankQuantile(&empty, 0.5), 0);
}

TEST(MonitorWindowTest, OldRecordsLeaveTheWindow) {
  RollingWindow w(2 * kSec, 0);
  for (int i = 0; i < 10; ++i) w.AddRequest(i * 100 * kMs, (i + 1) * kMs, i == 3);  // 0..0.9 s
  w.AddRequest(2500 * kMs, 500 * kMs, false);                                       // 2.5 s
  w.AddStep(2400 * kMs, 30 * kMs);
  w.AddCounter("queue", 2450 * kMs, 7);
  w.Advance(2 * kSec);
  WindowStats s = w.Stats(2 * kSec);
  EXPECT_EQ(s.requests, 11u);
  EXPECT_EQ(s.errors, 1u);
  EXPECT_EQ(s.max_ns, 500 * kMs);
  EXPECT_NEAR(s.throughput_per_s, 11 / 2.0, 1e-9);
  // At 2.35 s the window starts at 0.35 s: requests ending at 0..0.3 s are gone.
  w.Advance(2350 * kMs);
  s = w.Stats(2350 * kMs);
  EXPECT_EQ(s.requests, 7u);     // 0.4 .. 0.9 s and 2.5 s
  EXPECT_EQ(s.errors, 0u);       // the error ended at 0.3 s
  EXPECT_EQ(s.p50_ns, 8 * kMs);  // 5, 6, 7, 8, 9, 10, 500 ms: rank ceil(3.5) = 4
  EXPECT_EQ(s.steps, 1u);
  EXPECT_EQ(s.step_p99_ns, 30 * kMs);
  EXPECT_EQ(s.counters.at("queue"), 7);
}

TEST(MonitorWindowTest, ThroughputUsesTheObservedPartOfTheWindow) {
  RollingWindow w(60 * kSec, 10 * kSec);  // attached at 10 s
  for (int i = 0; i < 20; ++i) w.AddRequest(10 * kSec + i * 100 * kMs, kMs, false);
  WindowStats s = w.Stats(12 * kSec);
  EXPECT_EQ(s.covered_ns, 2 * kSec);
  EXPECT_NEAR(s.throughput_per_s, 10.0, 1e-9);  // not 20 / 60
}

TEST(MonitorWindowTest, PastTheExactLimitQuantilesComeFromTheSketchesWithin1Percent) {
  // 64 parts of 1 s; at most 1,000 exact samples.
  RollingWindow w(64 * kSec, 0, /*exact_limit=*/1000);
  for (int i = 0; i < 500; ++i) w.AddRequest(i * kMs, (i % 100 + 1) * kMs, i % 50 == 0);  // 0..0.5 s
  WindowStats s = w.Stats(kSec);
  EXPECT_TRUE(s.quantiles_exact);
  EXPECT_EQ(s.p99_ns, 99 * kMs);
  for (int i = 0; i < 1500; ++i) w.AddRequest(kSec + i * kMs, (i % 100 + 1) * kMs, false);  // 1..2.5 s
  s = w.Stats(3 * kSec);
  EXPECT_FALSE(s.quantiles_exact);
  EXPECT_EQ(s.requests, 2000u);  // counts, errors, max stay exact
  EXPECT_EQ(s.errors, 10u);
  EXPECT_EQ(s.max_ns, 100 * kMs);
  EXPECT_NEAR(s.p99_ns, 99 * kMs, 0.01 * 99 * kMs);
  EXPECT_NEAR(s.p50_ns, 50 * kMs, 0.01 * 51 * kMs);  // the sketch's rank is floor(q (n - 1))
  // Once what was left out has left the window, the quantiles are exact again.
  w.Advance(67 * kSec);
  for (int i = 0; i < 10; ++i) w.AddRequest(67 * kSec + i, 5 * kMs, false);
  s = w.Stats(67 * kSec);
  EXPECT_TRUE(s.quantiles_exact);
  EXPECT_EQ(s.requests, 10u);
  EXPECT_EQ(s.p99_ns, 5 * kMs);
}

TEST(MonitorMetricsTest, MetricsWithoutDataAreAbsentNotZero) {
  WindowStats s;
  s.window_ns = kSec;
  s.covered_ns = kSec;
  auto m = MonitorMetricValues(s);
  EXPECT_EQ(m.count("p99_latency"), 0u);
  EXPECT_EQ(m.count("cpu_util"), 0u);
  EXPECT_EQ(m.count("step_time_p99"), 0u);
  EXPECT_EQ(m.at("request_count").value, 0);
  EXPECT_EQ(m.at("throughput").value, 0);
  s.requests = 4;
  s.errors = 1;
  s.p99_ns = 3 * kMs;
  s.cpu_util = 0.5;
  s.counters["queue depth"] = 3;
  m = MonitorMetricValues(s);
  EXPECT_EQ(m.at("p99_latency").value, 3 * kMs);
  EXPECT_EQ(m.at("error_rate").value, 0.25);
  EXPECT_EQ(m.at("cpu_util").value, 0.5);
  EXPECT_EQ(m.at("counter.queue depth").value, 3);
}

// trial_monitor D1: the first evaluation, right at attach, covers
// microseconds of the window; `throughput < 5/s` held there for want of time.
TEST(MonitorMetricsTest, CountsAndRatesAreUnknownUntilTheWindowIsCovered) {
  RollingWindow w(5 * kSec, 10 * kSec);  // attached at 10 s
  auto rules =
      ParseAlertRules({"throughput < 5/s", "request_count < 10", "step_rate < 1/s", "error_count > 0"}, nullptr);
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  for (int64_t now : {10 * kSec, 10 * kSec + 523 * 1000, 14 * kSec}) {
    w.AddRequest(now, kMs, /*error=*/now == 14 * kSec);
    WindowStats s = w.Stats(now);
    auto m = MonitorMetricValues(s);
    EXPECT_EQ(m.count("throughput"), 0u) << now;
    EXPECT_EQ(m.count("request_count"), 0u) << now;
    EXPECT_EQ(m.count("step_rate"), 0u) << now;
    EXPECT_EQ(m.count("error_count"), 1u) << now;  // errors seen are in the window whatever the coverage
    for (size_t i = 0; i < 3; ++i) EXPECT_FALSE(EvaluateAlert((*rules)[i], s, nullptr).holds) << (*rules)[i].text;
  }
  EXPECT_TRUE(EvaluateAlert((*rules)[3], w.Stats(14 * kSec), nullptr).holds);
  // Once the window is covered (5 s after attach) they are known, and hold.
  WindowStats s = w.Stats(15 * kSec);
  auto m = MonitorMetricValues(s);
  EXPECT_EQ(m.at("request_count").value, 3);
  EXPECT_NEAR(m.at("throughput").value, 3 / 5.0, 1e-9);
  EXPECT_EQ(m.at("step_rate").value, 0);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(EvaluateAlert((*rules)[i], s, nullptr).holds) << (*rules)[i].text;
}

TEST(MonitorMetricsTest, CatalogueIsSortedAndCountersAreNumbers) {
  const auto& c = MonitorMetricCatalogue();
  for (size_t i = 1; i < c.size(); ++i) EXPECT_LT(c[i - 1].name, c[i].name);
  ASSERT_NE(FindMonitorMetric("p99_latency"), nullptr);
  EXPECT_EQ(FindMonitorMetric("p99_latency")->unit, MetricUnit::kNanoseconds);
  EXPECT_EQ(FindMonitorMetric("throughput")->unit, MetricUnit::kPerSecond);
  ASSERT_NE(FindMonitorMetric("counter.queue_depth"), nullptr);
  EXPECT_EQ(FindMonitorMetric("counter."), nullptr);
  EXPECT_EQ(FindMonitorMetric("device_util"), nullptr);  // a trace metric, not a window one
}

TEST(MonitorMetricsTest, ExpositionEscapesHostileLabelValues) {
  EXPECT_EQ(PrometheusLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  WindowStats s;
  s.requests = 2;
  s.p50_ns = 1 * kMs;
  s.p99_ns = 2 * kMs;
  s.max_ns = 2 * kMs;
  s.mean_ns = 1.5 * kMs;
  s.counters["evil\"}\n{x"] = 1;
  MonitorTotals totals(DefaultLatencyBuckets());
  const std::string text = PrometheusExposition(s, totals, ExpositionLabels{"svc\"}\nfake_metric 1"}, MonitorCounts{});
  EXPECT_NE(text.find("service=\"svc\\\"}\\nfake_metric 1\""), std::string::npos) << text;
  EXPECT_EQ(text.find("pid="), std::string::npos) << "a pid label makes new series at every restart";
  EXPECT_NE(text.find("name=\"evil\\\"}\\n{x\""), std::string::npos);
  EXPECT_NE(text.find("aiprof_monitor_window_request_latency_p99_seconds{service=\"svc"), std::string::npos);
  EXPECT_NE(text.find("} 0.002\n"), std::string::npos);
  EXPECT_EQ(text.find("per_second"), std::string::npos) << "no rate metrics";
  // Prometheus' lint (promtool check metrics): no type in a metric's name.
  EXPECT_NE(text.find("aiprof_monitor_sdk_value{service="), std::string::npos) << text;
  for (const char* type : {"_counter", "_gauge", "_histogram", "_summary"}) {
    for (size_t at = text.find(type); at != std::string::npos; at = text.find(type, at + 1)) {
      const char next = at + std::strlen(type) < text.size() ? text[at + std::strlen(type)] : ' ';
      EXPECT_FALSE(next == '_' || next == '{' || next == ' ') << type << " in a name: " << text.substr(at - 20, 60);
    }
  }
  // Every line is a comment or one sample: no label value broke a line.
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    EXPECT_TRUE(line.rfind("# ", 0) == 0 || line.rfind("aiprof_monitor_", 0) == 0) << line;
    start = end + 1;
  }
}

// Whether `s` is UTF-8 (what Prometheus requires of every label value).
bool IsUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    i += len;
  }
  return true;
}

// A name cut mid-character (/proc's 15-byte comm of a program named
// "x推理服务器" is "x推理服务" and two of 器's three bytes; the live
// channel's 59-byte counter names) made every
// scrape fail: Prometheus 2.42 refuses the whole exposition ("invalid label
// value"), so up == 0 and no series at all. Shown as \xNN text instead.
TEST(MonitorMetricsTest, LabelValuesThatAreNotUtf8AreShownAsTextNotPassedOn) {
  const std::string comm = "x\xe6\x8e\xa8\xe7\x90\x86\xe6\x9c\x8d\xe5\x8a\xa1\xe5\x99";  // x推理服务 + 2 bytes
  EXPECT_EQ(PrometheusLabelValue(comm), "x\xe6\x8e\xa8\xe7\x90\x86\xe6\x9c\x8d\xe5\x8a\xa1\\\\xe5\\\\x99");
  EXPECT_EQ(PrometheusLabelValue("\xe6\x8e\xa8\xe7\x90\x86 ok\tx"), "\xe6\x8e\xa8\xe7\x90\x86 ok\\\\x09x")
      << "valid UTF-8 is kept, tab shown as before";
  EXPECT_EQ(PrometheusLabelValue("a\xff"
                                 "b\xc0"),
            "a\\\\xffb\\\\xc0");
  WindowStats s;
  s.counters[std::string("queue\xe9\x98~3")] = 2;
  MonitorTotals totals(DefaultLatencyBuckets());
  MonitorCounts counts;
  counts.alert_series = {{"p99_latency > 2s", 0, false}, {"webhook", 0, false}};
  const std::string text = PrometheusExposition(s, totals, ExpositionLabels{comm}, counts);
  EXPECT_TRUE(IsUtf8(text));
  EXPECT_NE(text.find("name=\"queue\\\\xe9\\\\x98~3\""), std::string::npos) << text;
}

// The value of the sample whose line starts with `prefix` (-1 when absent).
double SampleValue(const std::string& text, const std::string& prefix) {
  const size_t at = text.find("\n" + prefix);
  if (at == std::string::npos) return -1;
  const size_t end = text.find('\n', at + 1);
  const std::string line = text.substr(at + 1, end - at - 1);
  return std::stod(line.substr(line.rfind(' ') + 1));
}

MonitorCounts Counts(uint64_t incidents, uint64_t failures, uint64_t alerts, uint64_t cut, uint64_t dropped) {
  MonitorCounts c;
  c.incidents = incidents;
  c.incident_write_failures = failures;
  c.alerts = alerts;
  c.counter_names_cut = cut;
  c.counter_samples_dropped = dropped;
  return c;
}

// Counters and histograms count since the monitor started: when the window
// empties (its gauges drop), they keep their values, so Prometheus never
// sees a reset; buckets are cumulative and end with +Inf = _count.
TEST(MonitorMetricsTest, CountersAndHistogramAreCumulative) {
  MonitorTotals totals({0.001, 0.01, 0.1});
  for (double v : {0.0005, 0.001, 0.005, 0.05, 0.5}) totals.latency.Add(v);
  totals.requests = 5;
  totals.errors = 1;
  WindowStats busy;
  busy.requests = 5;
  busy.errors = 1;
  const std::string first = PrometheusExposition(busy, totals, ExpositionLabels{"svc"}, Counts(3, 0, 2, 0, 0));
  const std::string base = "{service=\"svc\"";
  EXPECT_EQ(SampleValue(first, "aiprof_monitor_request_latency_seconds_bucket" + base + ",le=\"0.001\"}"), 2);
  EXPECT_EQ(SampleValue(first, "aiprof_monitor_request_latency_seconds_bucket" + base + ",le=\"0.01\"}"), 3);
  EXPECT_EQ(SampleValue(first, "aiprof_monitor_request_latency_seconds_bucket" + base + ",le=\"0.1\"}"), 4);
  EXPECT_EQ(SampleValue(first, "aiprof_monitor_request_latency_seconds_bucket" + base + ",le=\"+Inf\"}"), 5);
  EXPECT_EQ(SampleValue(first, "aiprof_monitor_request_latency_seconds_count" + base + "}"), 5);
  EXPECT_NEAR(SampleValue(first, "aiprof_monitor_request_latency_seconds_sum" + base + "}"), 0.5565, 1e-12);
  EXPECT_EQ(SampleValue(first, "aiprof_monitor_requests_total" + base + "}"), 5);
  EXPECT_EQ(SampleValue(first, "aiprof_monitor_request_errors_total" + base + "}"), 1);
  EXPECT_EQ(SampleValue(first, "aiprof_monitor_alerts_total" + base + "}"), 2);
  EXPECT_EQ(SampleValue(first, "aiprof_monitor_incidents_total" + base + "}"), 3);
  EXPECT_EQ(SampleValue(first, "aiprof_monitor_incident_write_failures_total" + base + "}"), 0);
  EXPECT_NE(first.find("# TYPE aiprof_monitor_request_latency_seconds histogram\n"), std::string::npos);
  EXPECT_NE(first.find("# TYPE aiprof_monitor_requests_total counter\n"), std::string::npos);
  WindowStats idle;  // the window emptied
  const std::string second = PrometheusExposition(idle, totals, ExpositionLabels{"svc"}, Counts(0, 1, 0, 0, 0));
  EXPECT_EQ(SampleValue(second, "aiprof_monitor_requests_total" + base + "}"), 5);
  EXPECT_EQ(SampleValue(second, "aiprof_monitor_request_latency_seconds_count" + base + "}"), 5);
  EXPECT_EQ(SampleValue(second, "aiprof_monitor_window_requests" + base + "}"), 0);
  EXPECT_EQ(SampleValue(second, "aiprof_monitor_incident_write_failures_total" + base + "}"), 1);
  EXPECT_EQ(SampleValue(second, "aiprof_monitor_sdk_value_names_cut" + base + "}"), 0);
  const std::string third = PrometheusExposition(idle, totals, ExpositionLabels{"svc"}, Counts(0, 0, 0, 2, 9));
  EXPECT_EQ(SampleValue(third, "aiprof_monitor_sdk_value_names_cut" + base + "}"), 2);
  EXPECT_EQ(SampleValue(third, "aiprof_monitor_sdk_value_samples_dropped_total" + base + "}"), 9);
  EXPECT_EQ(SampleValue(second, "aiprof_monitor_window_request_latency_p99_seconds" + base + "}"), -1);
}

// trial_monitor D13: which alert fired or holds, the monitor's own process
// metrics, and no terminal escapes from a service's names in the text.
TEST(MonitorMetricsTest, ExpositionHasPerAlertSeriesSelfMetricsAndNoControlCharacters) {
  WindowStats s;
  s.counters["\x1b[2J\x1b[31mRED"] = 1;
  MonitorTotals totals(DefaultLatencyBuckets());
  MonitorCounts counts;
  counts.alert_series = {{"p99_latency > 2s", 3, true}, {"error_rate > 1%", 0, false}, {"webhook", 1, false}};
  counts.self = SelfStats{1.5, 12e6, 9};
  const std::string text = PrometheusExposition(s, totals, ExpositionLabels{"svc\x07"}, counts);
  const std::string base = "{service=\"svc\\\\x07\"";
  EXPECT_EQ(SampleValue(text, "aiprof_monitor_alerts_total" + base + ",alert=\"p99_latency > 2s\"}"), 3) << text;
  EXPECT_EQ(SampleValue(text, "aiprof_monitor_alerts_total" + base + ",alert=\"webhook\"}"), 1);
  EXPECT_EQ(SampleValue(text, "aiprof_monitor_alert_active" + base + ",alert=\"p99_latency > 2s\"}"), 1);
  EXPECT_EQ(SampleValue(text, "aiprof_monitor_alert_active" + base + ",alert=\"error_rate > 1%\"}"), 0);
  EXPECT_EQ(SampleValue(text, "aiprof_monitor_alert_active" + base + ",alert=\"webhook\"}"), -1);
  EXPECT_EQ(SampleValue(text, "process_cpu_seconds_total" + base + "}"), 1.5);
  EXPECT_EQ(SampleValue(text, "process_resident_memory_bytes" + base + "}"), 12e6);
  EXPECT_EQ(SampleValue(text, "process_open_fds" + base + "}"), 9);
  EXPECT_NE(text.find("aiprof_monitor_build_info" + base + ",version=\""), std::string::npos);
  EXPECT_NE(text.find("name=\"\\\\x1b[2J\\\\x1b[31mRED\""), std::string::npos) << text;
  for (char c : text) EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << static_cast<int>(c);
}

// What the bounds removed or dropped is on /metrics (docs/monitor.md, "Limits").
TEST(MonitorMetricsTest, ExpositionCountsWhatTheBoundsRemoved) {
  MonitorCounts counts;
  counts.incidents_pruned = 3;
  counts.incident_folders = 100;
  counts.incident_folder_bytes = 5e6;
  counts.service_files_pruned = 2;
  counts.triggers_dropped = 150;
  counts.live_channel_restored = 1;
  counts.records_clamped = 7;
  const std::string text =
      PrometheusExposition(WindowStats{}, MonitorTotals(DefaultLatencyBuckets()), ExpositionLabels{"s"}, counts);
  const std::string l = "{service=\"s\"}";
  EXPECT_EQ(SampleValue(text, "aiprof_monitor_incidents_pruned_total" + l), 3) << text;
  EXPECT_EQ(SampleValue(text, "aiprof_monitor_incident_folders" + l), 100);
  EXPECT_EQ(SampleValue(text, "aiprof_monitor_incident_folder_bytes" + l), 5e6);
  EXPECT_EQ(SampleValue(text, "aiprof_monitor_service_files_pruned_total" + l), 2);
  EXPECT_EQ(SampleValue(text, "aiprof_monitor_incident_triggers_dropped_total" + l), 150);
  EXPECT_EQ(SampleValue(text, "aiprof_monitor_live_channel_restored_total" + l), 1);
  EXPECT_EQ(SampleValue(text, "aiprof_monitor_records_clamped_total" + l), 7);
}

TEST(MonitorMetricsTest, LatencyBucketsParse) {
  StatusOr<std::vector<double>> b = ParseLatencyBuckets("0.005,0.01,2.5");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(*b, (std::vector<double>{0.005, 0.01, 2.5}));
  EXPECT_FALSE(ParseLatencyBuckets("0.01,0.005").ok());
  EXPECT_FALSE(ParseLatencyBuckets("0.01,,0.5").ok());
  EXPECT_FALSE(ParseLatencyBuckets("-1").ok());
  EXPECT_FALSE(ParseLatencyBuckets("1ms").ok());
  EXPECT_NE(ParseLatencyBuckets("0.1,abc").status().message().find("\"abc\""), std::string::npos);
  // A flag value that does not parse is a bad command line (exit 2), as
  // --window's (audit2 item 8: these exited 1).
  for (const char* bad : {"1,0.5", "0.01,,0.5", "-1", "1ms", ""}) {
    EXPECT_TRUE(ParseLatencyBuckets(bad).status().usage()) << bad;
  }
}

// The log's durations: "in --cooldown for another 3.6e+03 s" (audit2 item
// 10) beside "window 3 s, every 0.5 s" and "after 3.01 s".
TEST(MonitorLogTest, DurationsReadAsTheRestOfTheLog) {
  EXPECT_EQ(DurationText(500 * kMs), "0.5 s");
  EXPECT_EQ(DurationText(3 * kSec), "3 s");
  EXPECT_EQ(DurationText(3010 * kMs), "3.01 s");
  EXPECT_EQ(DurationText(60 * kSec), "60 s");
  EXPECT_EQ(DurationText(99 * kSec), "99 s");
  EXPECT_EQ(DurationText(100 * kSec), "100 s");
  EXPECT_EQ(DurationText(119 * kSec), "119 s");
  EXPECT_EQ(DurationText(120 * kSec), "120 s (2 min)");
  EXPECT_EQ(DurationText(3597 * kSec + 400 * kMs), "3597 s (59 min 57 s)");
  EXPECT_EQ(DurationText(3600 * kSec), "3600 s (1 h)");
  EXPECT_EQ(DurationText(86400 * kSec + 90 * kSec), "86490 s (24 h 1 min)");
  EXPECT_EQ(DurationText(0), "0 s");
  EXPECT_EQ(DurationText(-3600 * kSec), "-3600 s (1 h)");
  for (int64_t ns : {kSec, 600 * kSec, 3599 * kSec, 7 * 24 * 3600 * kSec}) {
    EXPECT_EQ(DurationText(ns).find('e'), std::string::npos) << DurationText(ns);
  }
}

TEST(MonitorAlertTest, AlertsHoldOnBothSidesOfTheThreshold) {
  auto rules = ParseAlertRules({"p99_latency > 2.0s", "throughput < 50/s and error_rate > 1%"}, nullptr);
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  WindowStats s;
  s.window_ns = kSec;  // covered: throughput is known
  s.covered_ns = kSec;
  s.requests = 100;
  s.throughput_per_s = 100;
  s.p99_ns = 2.0e9;
  EXPECT_FALSE(EvaluateAlert((*rules)[0], s, nullptr).holds);  // 2.0 s is not > 2.0 s
  s.p99_ns = 2.001e9;
  EXPECT_TRUE(EvaluateAlert((*rules)[0], s, nullptr).holds);
  s.errors = 2;
  EXPECT_FALSE(EvaluateAlert((*rules)[1], s, nullptr).holds);
  s.throughput_per_s = 49;
  EXPECT_TRUE(EvaluateAlert((*rules)[1], s, nullptr).holds);
  s.errors = 1;  // 1% is not > 1%
  EXPECT_FALSE(EvaluateAlert((*rules)[1], s, nullptr).holds);
  // No requests: p99 is unknown, never an alert.
  WindowStats idle;
  idle.covered_ns = kSec;
  EXPECT_EQ(EvaluateAlert((*rules)[0], idle, nullptr).result.truth, Truth::kUnknown);
}

// trial_monitor D6: the live channel cuts counter names to 59 bytes, so an
// alert on a longer name never fired, without a word.
TEST(MonitorAlertTest, CounterNamesTheChannelCannotCarryAreErrors) {
  const std::string long_name = "queue_depth_of_the_very_long_named_inference_pipeline_stage_one";  // 63 bytes
  auto bad = ParseAlertRules({"counter." + long_name + " > 0"}, nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("at most 59 bytes (this one has 63)"), std::string::npos)
      << bad.status().message();
  EXPECT_TRUE(ParseAlertRules({"counter." + std::string(59, 'q') + " > 0"}, nullptr).ok());
}

// The SDK cut a long counter name at 59 bytes wherever that fell, leaving
// the first bytes of a split character at its end (a name of "é"s, 2 bytes
// each, kept half of the 30th). The cut now drops a split character whole.
TEST(LiveChannelTest, CutNamesEndOnACharacterBoundary) {
  auto cut = [](const std::string& s, size_t n) { return s.substr(0, live::Utf8CutLength(s.data(), n)); };
  std::string e;
  for (int i = 0; i < 30; ++i) e += "\xC3\xA9";  // 30 × "é", 60 bytes
  EXPECT_EQ(cut(e, 59).size(), 58u);
  EXPECT_EQ(cut(e, 58).size(), 58u);
  const std::string three = "ab\xE6\x97\xA5";  // "ab日"
  EXPECT_EQ(cut(three, 5), three);
  EXPECT_EQ(cut(three, 4), "ab");
  EXPECT_EQ(cut(three, 3), "ab");
  const std::string four = "a\xF0\x9F\x98\x80";  // "a😀"
  EXPECT_EQ(cut(four, 5), four);
  EXPECT_EQ(cut(four, 4), "a");
  EXPECT_EQ(cut(four, 2), "a");
  EXPECT_EQ(cut(std::string(59, 'q'), 59).size(), 59u);
  // Not UTF-8: stray continuation bytes are kept; a lead byte cut from its
  // character goes with it.
  EXPECT_EQ(cut("\x80\x80\x80\x80", 4).size(), 4u);
  EXPECT_EQ(cut("\xC3", 1).size(), 0u);
}

TEST(MonitorAlertTest, BadExpressionsAreErrorsAtStartUp) {
  EXPECT_FALSE(ParseAlertRules({}, nullptr).ok());
  auto err = [](const std::string& e) {
    auto r = ParseAlertRules({e}, nullptr);
    // What the text alone decides is a bad command line (exit 2), and
    // CheckAlertTexts says the same before anything is read (audit2 item 8:
    // "p99_latency >> 2s" exited 1).
    EXPECT_TRUE(r.ok() || r.status().usage()) << e;
    EXPECT_EQ(CheckAlertTexts({e}, false).message(), r.ok() ? "" : r.status().message()) << e;
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_NE(err("p99_latency >> 2s").find("column"), std::string::npos);
  EXPECT_TRUE(CheckAlertTexts({}, false).usage());
  EXPECT_TRUE(CheckAlertTexts({"step_time_p99 > 1.2 * baseline"}, true).ok()) << "its values are read later";
  EXPECT_NE(err("p99_latency > 2").find("needs a unit"), std::string::npos);
  EXPECT_NE(err("p99_latency >").find("column"), std::string::npos);
  EXPECT_NE(err("device_util < 50%").find("unknown metric"), std::string::npos);
  EXPECT_NE(err("step_time_p99 > 1.2 * baseline").find("--service"), std::string::npos);
  MonitorBaseline steps{"baseline svc #1 (t.json)", {{"baseline.step_time_p99", 100 * kMs}}};
  auto r = ParseAlertRules({"p99_latency > 1.2 * baseline"}, &steps);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("has no value for p99_latency"), std::string::npos) << r.status().message();
  EXPECT_FALSE(r.status().usage()) << "the stored baseline's content, not the command line: exit 1";
  // trial_monitor2 M4: the same --alert twice gave two samples of one series
  // on /metrics (aiprof_monitor_alerts_total{alert="p99_latency > 1s"} twice).
  auto twice = ParseAlertRules({"p99_latency > 1s", "error_rate > 1%", "p99_latency > 1s"}, nullptr);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("\"p99_latency > 1s\" is given twice"), std::string::npos)
      << twice.status().message();
  EXPECT_TRUE(ParseAlertRules({"p99_latency > 1s", "p99_latency >= 1s"}, nullptr).ok());
}

TEST(MonitorAlertTest, BaselineFromTheStoreScalesTheThreshold) {
  char dir[] = "/tmp/aiprof-monitor-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string db = std::string(dir) + "/baselines.db";
  {
    auto store = BaselineStore::Open(db);
    ASSERT_TRUE(store.ok()) << store.status().message();
    RunSamples samples;
    samples.label = "t.json";
    samples.source_kind = "trace";
    samples.unit = "step";
    for (int i = 1; i <= 100; ++i) samples.latency_ns.push_back(i * kMs);  // p99 = 99 ms
    ASSERT_TRUE((*store)->SaveBaseline("svc", samples, "{}").ok());
  }
  auto b = LoadMonitorBaseline(db, "svc");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->values.at("baseline.step_time_p99"), 99 * kMs);
  EXPECT_EQ(b->values.count("baseline.p99_latency"), 0u);
  EXPECT_FALSE(LoadMonitorBaseline(db, "other").ok());
  auto rules = ParseAlertRules({"step_time_p99 > 1.2 * baseline"}, &*b);
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  WindowStats s;
  s.covered_ns = kSec;
  s.steps = 10;
  s.step_p99_ns = 118 * kMs;  // 1.2 × 99 ms = 118.8 ms
  EXPECT_FALSE(EvaluateAlert((*rules)[0], s, &*b).holds);
  s.step_p99_ns = 119 * kMs;
  AlertOutcome a = EvaluateAlert((*rules)[0], s, &*b);
  EXPECT_TRUE(a.holds);
  ASSERT_EQ(a.result.comparisons.size(), 1u);
  EXPECT_NEAR(a.result.comparisons[0].threshold, 118.8 * kMs, 1);
  unlink(db.c_str());
  std::system(("rm -rf " + std::string(dir)).c_str());
}

TEST(MonitorServerTest, ListenAddressesDefaultToLoopback) {
  std::string host;
  int port = 0;
  ASSERT_TRUE(ParseListenAddress("9464", &host, &port).ok());
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 9464);
  ASSERT_TRUE(ParseListenAddress("0.0.0.0:80", &host, &port).ok());
  EXPECT_EQ(host, "0.0.0.0");
  ASSERT_TRUE(ParseListenAddress("[::1]:9000", &host, &port).ok());
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 9000);
  // Each a flag value that does not parse or is out of range: a bad
  // command line (exit 2; audit2 item 8: these exited 1).
  for (const char* bad : {"host:", "127.0.0.1:70000", "127.0.0.1:99999", "[::1]9000", "nonsense", "", "-1", ":80"}) {
    const Status st = ParseListenAddress(bad, &host, &port, "--listen");
    EXPECT_FALSE(st.ok()) << bad;
    EXPECT_TRUE(st.usage()) << bad;
    EXPECT_EQ(st.message().rfind(std::string("--listen ") + bad + ": ", 0), 0u) << st.message();
  }
}

TEST(MonitorServerTest, WebhookPayloadIsValidated) {
  auto names = ParseAlertmanagerWebhook(R"({"version":"4","status":"firing","alerts":[
      {"status":"firing","labels":{"alertname":"HighLatency"}},
      {"status":"resolved","labels":{"alertname":"Old"}}]})");
  ASSERT_TRUE(names.ok()) << names.status().message();
  EXPECT_EQ(*names, (std::vector<std::string>{"HighLatency"}));
  // No labels: an error naming the alert, never a trigger named "external".
  auto no_labels = ParseAlertmanagerWebhook(R"({"alerts":[{"status":"firing","labels":{"alertname":"A"}},
      {"status":"firing"}]})");
  ASSERT_FALSE(no_labels.ok());
  EXPECT_NE(no_labels.status().message().find("alerts[1]: no labels.alertname"), std::string::npos);
  EXPECT_FALSE(ParseAlertmanagerWebhook(R"({"alerts":[{"status":"firing","labels":{"alertname":""}}]})").ok());
  EXPECT_FALSE(ParseAlertmanagerWebhook(R"({"alerts":[{"labels":{"alertname":"A"}}]})").ok());
  EXPECT_FALSE(ParseAlertmanagerWebhook(R"({"alerts":[{"status":"pending","labels":{"alertname":"A"}}]})").ok());
  EXPECT_FALSE(ParseAlertmanagerWebhook("{\"alerts\": 5}").ok());
  EXPECT_FALSE(ParseAlertmanagerWebhook("not json").ok());
}

// A loopback connection to `port`.
int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

// Sends `request` (as far as the server reads it) and returns the whole answer.
std::string Exchange(int port, const std::string& request) {
  int fd = Connect(port);
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string answer;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) answer.append(buf, static_cast<size_t>(n));
  close(fd);
  return answer;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MetricsServer::Options o;
    o.host = "127.0.0.1";
    o.webhook_token = "t0ken";
    o.limits.header_timeout_ns = 300'000'000;
    o.limits.max_body_bytes = 1024;
    o.limits.max_connections = 4;
    auto s = MetricsServer::Start(
        o, [] { return std::string("m 1\n"); },
        [this](const std::vector<std::string>& names, const std::string& peer) {
          std::lock_guard<std::mutex> lock(mu_);
          for (const std::string& n : names) triggers_.push_back(n + " from " + peer);
        });
    ASSERT_TRUE(s.ok()) << s.status().message();
    server_ = std::move(s).value();
  }
  std::vector<std::string> Triggers() {
    std::lock_guard<std::mutex> lock(mu_);
    return triggers_;
  }
  std::unique_ptr<MetricsServer> server_;
  std::mutex mu_;
  std::vector<std::string> triggers_;
};

const char kHook[] = R"({"alerts":[{"status":"firing","labels":{"alertname":"Hi"}}]})";

std::string Post(const std::string& extra_headers, const std::string& body) {
  return "POST /alert HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra_headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

TEST_F(HttpServerTest, MetricsAndAuthorisedWebhook) {
  std::string a = Exchange(server_->port(), "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(a.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << a;
  EXPECT_NE(a.find("\r\n\r\nm 1\n"), std::string::npos) << a;
  EXPECT_EQ(Exchange(server_->port(), Post("", kHook)).rfind("HTTP/1.1 401", 0), 0u);
  EXPECT_EQ(Exchange(server_->port(), Post("Authorization: Bearer wrong\r\n", kHook)).rfind("HTTP/1.1 401", 0), 0u);
  EXPECT_EQ(Exchange(server_->port(), Post("Authorization: Bearer t0ken-longer\r\n", kHook)).rfind("HTTP/1.1 401", 0),
            0u);
  EXPECT_TRUE(Triggers().empty());
  a = Exchange(server_->port(), Post("Authorization: Bearer t0ken\r\n", kHook));
  EXPECT_EQ(a.rfind("HTTP/1.1 200", 0), 0u) << a;
  a = Exchange(server_->port(), Post("Authorization: Bearer t0ken\r\n", R"({"alerts":[{"status":"firing"}]})"));
  EXPECT_EQ(a.rfind("HTTP/1.1 400", 0), 0u) << a;
  ASSERT_EQ(Triggers().size(), 1u);
  EXPECT_EQ(Triggers()[0].rfind("Hi from 127.0.0.1:", 0), 0u) << Triggers()[0];
  // A web page of another site posting through the user's browser, token or not.
  a = Exchange(server_->port(), Post("Authorization: Bearer t0ken\r\nOrigin: http://evil.example\r\n", kHook));
  EXPECT_EQ(a.rfind("HTTP/1.1 403", 0), 0u) << a;
  a = Exchange(server_->port(), Post("Sec-Fetch-Site: cross-site\r\n", kHook));
  EXPECT_EQ(a.rfind("HTTP/1.1 403", 0), 0u) << a;
  ASSERT_EQ(Triggers().size(), 1u);
  EXPECT_EQ(Exchange(server_->port(), "GET /other HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(Exchange(server_->port(), "POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
                .rfind("HTTP/1.1 405", 0),
            0u);
}

// Health checkers use HEAD: the headers of GET, no body.
TEST_F(HttpServerTest, HeadMetricsAnswersWithoutBody) {
  const std::string a = Exchange(server_->port(), "HEAD /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(a.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << a;
  EXPECT_NE(a.find("Content-Length: 4\r\n"), std::string::npos) << a;
  EXPECT_EQ(a.substr(a.find("\r\n\r\n") + 4), "") << a;
  EXPECT_EQ(Exchange(server_->port(), "HEAD /alert HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").rfind("HTTP/1.1 405", 0), 0u);
}

// A 405 says in Allow what its path answers (RFC 9110 15.5.6), as serve's
// do: GET /alert and DELETE /metrics answered 405 with none (audit2 item 9).
TEST_F(HttpServerTest, MethodNotAllowedSaysWhatThePathAllows) {
  const std::pair<const char*, const char*> cases[] = {
      {"GET /alert HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "Allow: POST\r\n"},
      {"HEAD /alert HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "Allow: POST\r\n"},
      {"DELETE /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "Allow: GET, HEAD\r\n"},
      {"POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n", "Allow: GET, HEAD\r\n"},
      {"get /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "Allow: GET, HEAD\r\n"}};
  for (const auto& [request, allow] : cases) {
    const std::string a = Exchange(server_->port(), request);
    EXPECT_EQ(a.rfind("HTTP/1.1 405 Method Not Allowed\r\n", 0), 0u) << a;
    EXPECT_NE(a.find(allow), std::string::npos) << a;
  }
  EXPECT_EQ(Exchange(server_->port(), "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").find("Allow:"),
            std::string::npos)
      << "an answer that is not a 405 has no Allow";
}

// Bound before the watched process attached: 503, not an empty exposition.
TEST(MetricsServerTest, NoExpositionYetIs503) {
  MetricsServer::Options o;
  o.host = "127.0.0.1";
  auto s = MetricsServer::Start(
      o, []() -> std::optional<std::string> { return std::nullopt; },
      [](const std::vector<std::string>&, const std::string&) {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  const std::string a = Exchange((*s)->port(), "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(a.rfind("HTTP/1.1 503", 0), 0u) << a;
}

// Content-Length over the limit is refused before the body is read; a
// chunked body is decoded as it arrives and refused once past the limit.
TEST_F(HttpServerTest, BodyLimitHoldsForChunkedBodiesToo) {
  const std::string auth = "Authorization: Bearer t0ken\r\n";
  EXPECT_EQ(Exchange(server_->port(), Post(auth, std::string(2000, 'x'))).rfind("HTTP/1.1 413", 0), 0u);
  std::string chunked = "POST /alert HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + "Transfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 8; ++i) chunked += "200\r\n" + std::string(512, 'x') + "\r\n";
  chunked += "0\r\n\r\n";
  std::string a = Exchange(server_->port(), chunked);
  EXPECT_EQ(a.rfind("HTTP/1.1 413", 0), 0u) << a;
  // A chunked body within the limit is read whole (split across chunks).
  const std::string hook = kHook;
  std::string ok = "POST /alert HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + "Transfer-Encoding: chunked\r\n\r\n";
  ok += "a\r\n" + hook.substr(0, 10) + "\r\n";
  char size[16];
  std::snprintf(size, sizeof(size), "%zx", hook.size() - 10);
  ok += std::string(size) + ";ext=1\r\n" + hook.substr(10) + "\r\n0\r\n\r\n";
  a = Exchange(server_->port(), ok);
  EXPECT_EQ(a.rfind("HTTP/1.1 200", 0), 0u) << a;
  EXPECT_EQ(Exchange(server_->port(), "POST /alert HTTP/1.1\r\n" + auth + "Transfer-Encoding: chunked\r\n\r\nzz\r\n")
                .rfind("HTTP/1.1 400", 0),
            0u);
}

// A client that never finishes its headers is closed at the deadline; when
// every slot is taken, a new client still gets /metrics.
TEST_F(HttpServerTest, SlowClientsLoseTheirSlotNotTheServer) {
  int slow = Connect(server_->port());
  ASSERT_EQ(send(slow, "GET /metrics HTTP/1.1\r\n", 23, 0), 23);
  char c;
  EXPECT_EQ(recv(slow, &c, 1, 0), 0) << "closed at the 300 ms header deadline";
  close(slow);
  EXPECT_GE(server_->counts().timed_out.load(), 1u);
  std::vector<int> idle;
  for (int i = 0; i < 10; ++i) idle.push_back(Connect(server_->port()));
  std::string a = Exchange(server_->port(), "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(a.rfind("HTTP/1.1 200", 0), 0u) << a;
  EXPECT_GE(server_->counts().evicted.load(), 7u);
  for (int fd : idle) close(fd);
  EXPECT_EQ(
      Exchange(server_->port(), std::string("GET /metrics HTTP/1.1\r\nX: ") + std::string(20000, 'a') + "\r\n\r\n")
          .rfind("HTTP/1.1 431", 0),
      0u);
}

TEST(MonitorServerTest, NonLoopbackNeedsAToken) {
  MetricsServer::Options o;
  o.host = "0.0.0.0";
  auto s = MetricsServer::Start(
      o, [] { return std::string(); }, [](const std::vector<std::string>&, const std::string&) {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("--webhook-token-file"), std::string::npos);
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
}

TEST(MonitorProcTest, StatLineWithParenthesesInTheName) {
  uint64_t ticks = 0;
  const std::string line =
      "1234 (we(ird) name)) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 4 0 12345 1000 10";
  ASSERT_TRUE(ParseStatCpuTicks(line, &ticks));
  EXPECT_EQ(ticks, 300u);
  EXPECT_FALSE(ParseStatCpuTicks("garbage", &ticks));
  EXPECT_FALSE(ParseStatCpuTicks("1 (x) S 1 2", &ticks));
  EXPECT_EQ(ParseStatusRssBytes("Name:\tx\nVmRSS:\t  2048 kB\n"), 2048.0 * 1024);
  EXPECT_EQ(ParseStatusRssBytes("Name:\tx\n"), -1);
}

// The leader's /proc/<pid>/stat state, as the monitor's check used to read it.
char LeaderStateForZombieTest(pid_t pid) {
  std::string line;
  std::getline(std::ifstream("/proc/" + std::to_string(pid) + "/stat"), line);
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() ? line[close + 2] : 0;
}

void* ZombieTestThreadWaits(void* fd) {
  char c;
  while (read(*static_cast<int*>(fd), &c, 1) < 0 && errno == EINTR) {
  }
  _exit(0);
}

// trial_races D: a process whose leader reads Z while another of its
// threads lives is alive (the same state as while a non-leader thread
// execs, for good here: the main thread exited alone). The check
// believed the Z, and `monitor --pid` ended with "exited". Once the last
// thread is gone too, the unreaped process is a zombie.
TEST(MonitorProcTest, ZombieLeaderWithALiveThreadIsNotAnExit) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[1]);
    static int read_fd;
    read_fd = fds[0];
    pthread_t thread;
    if (pthread_create(&thread, nullptr, &ZombieTestThreadWaits, &read_fd) != 0) _exit(3);
    // The main thread alone ends, as pthread_exit() would (which unwinds
    // through gtest's catch-all here): the leader becomes a zombie.
    syscall(SYS_exit, 0);
  }
  close(fds[0]);
  // Until the leader is a zombie (its pthread_exit done): no time limit
  // of its own (ctest's), a child that died instead is a failure.
  char state = 0;
  while ((state = LeaderStateForZombieTest(pid)) != 'Z') {
    int status = 0;
    ASSERT_NE(waitpid(pid, &status, WNOHANG), pid) << "the child ended early: " << status;
    usleep(1000);
  }
  EXPECT_FALSE(IsZombieProcess(pid)) << "leader Z, its other thread alive: not an exit";
  // The thread ends the process (_exit); unreaped, it is a zombie.
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  close(fds[1]);
  siginfo_t info = {};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT), 0);  // exited, not reaped
  EXPECT_TRUE(IsZombieProcess(pid));
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_FALSE(IsZombieProcess(pid)) << "a reaped pid has no /proc entry";
}

// INCIDENTS_DIR's retention (docs/monitor.md, "Limits"): the oldest
// folders go first, others' by name (time, then n and k as numbers), then
// this monitor's in publishing order whatever their names say (a wall
// clock that jumped back), and nothing else in the folder is touched.
TEST(MonitorIncidentTest, RetentionKeepsTheNewestFoldersWithinCountAndBytes) {
  const std::string out = ::testing::TempDir() + "/aiprof_incident_keep_" + std::to_string(getpid());
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(out);
  auto folder = [&](const std::string& name, size_t bytes) {
    std::filesystem::create_directory(out + "/" + name);
    std::ofstream(out + "/" + name + "/alert.json") << std::string(bytes, 'x');
  };
  std::vector<std::string> others;
  for (int i = 0; i < 10; ++i) others.push_back("20261201T00000" + std::to_string(i) + "Z-1");
  others.push_back("20261201T000010Z-2");
  others.push_back("20261201T000010Z-10");  // after -2 (numbers, not text)
  for (const std::string& n : others) folder(n, 1000);
  // This monitor's two, named a month earlier: the clock jumped back.
  std::deque<std::string> own = {"20261101T000000Z-1", "20261101T000000Z-2"};
  for (const std::string& n : own) folder(n, 1000);
  for (const char* keep : {".service", ".incident-1-1.tmp", "notes", "2026-bogus", "20261201T000000Z-x"})
    std::filesystem::create_directory(out + "/" + keep);
  EXPECT_TRUE(IsIncidentDirName("20261201T105601Z-1") && IsIncidentDirName("20261201T105601Z-1-2"));
  EXPECT_FALSE(IsIncidentDirName("20261201T105601Z-") || IsIncidentDirName("20261201T105601Z-1-2-3") ||
               IsIncidentDirName(".incident-1-1.tmp") || IsIncidentDirName("20261201T000000Z-x"));

  // 5 at most, room for one about to be published: 4 stay.
  PruneResult r = PruneIncidentDirs(out, IncidentRetention{5, 0}, &own, /*room=*/1, /*room_bytes=*/0);
  EXPECT_EQ(r.removed, std::vector<std::string>(others.begin(), others.begin() + 10));
  EXPECT_EQ(r.kept, 4u);
  EXPECT_EQ(r.kept_bytes, 4000u);
  for (const std::string& n : {others[10], others[11], own[0], own[1]})
    EXPECT_TRUE(std::filesystem::exists(out + "/" + n)) << n;
  for (const char* keep : {".service", ".incident-1-1.tmp", "notes", "2026-bogus", "20261201T000000Z-x"})
    EXPECT_TRUE(std::filesystem::exists(out + "/" + keep)) << keep;
  // 2,500 bytes: the two others go, ours (the newest) stay.
  r = PruneIncidentDirs(out, IncidentRetention{0, 2500}, &own, 0, 0);
  EXPECT_EQ(r.removed, (std::vector<std::string>{others[10], others[11]}));
  EXPECT_EQ(r.kept_bytes, 2000u);
  ASSERT_EQ(own.size(), 2u);
  // Then our older one, by publishing order.
  r = PruneIncidentDirs(out, IncidentRetention{0, 2500}, &own, 1, 1000);
  EXPECT_EQ(r.removed, std::vector<std::string>{"20261101T000000Z-1"});
  EXPECT_EQ(own, std::deque<std::string>{"20261101T000000Z-2"});
  // A folder larger than the limit is still published: everything else goes.
  r = PruneIncidentDirs(out, IncidentRetention{3, 2500}, &own, 1, 9000);
  EXPECT_EQ(r.kept, 0u);
  EXPECT_TRUE(own.empty());
  // No limit: nothing is removed.
  folder("20261201T000020Z-1", 10);
  r = PruneIncidentDirs(out, IncidentRetention{0, 0}, &own, 1, 1u << 30);
  EXPECT_TRUE(r.removed.empty());
  EXPECT_EQ(r.kept, 1u);
  std::filesystem::remove_all(out);
}

// A folder that cannot be removed (immutable, another user's) is said and
// kept, the next oldest goes instead, and the newest stays.
TEST(MonitorIncidentTest, RetentionSkipsAFolderItCannotRemove) {
  const std::string out = ::testing::TempDir() + "/aiprof_incident_stuck_" + std::to_string(getpid());
  std::filesystem::remove_all(out);
  for (const char* n : {"20261201T000001Z-1", "20261201T000002Z-2", "20261201T000003Z-3"}) {
    std::filesystem::create_directories(out + "/" + n);
    std::ofstream(out + "/" + n + "/alert.json") << "{}";
  }
  const std::string stuck = out + "/20261201T000001Z-1/alert.json";
  const int fd = open(stuck.c_str(), O_RDONLY);
  int flags = 0;
  const bool immutable = fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 &&
                         ioctl(fd, FS_IOC_SETFLAGS, &(flags = flags | FS_IMMUTABLE_FL)) == 0;
  if (!immutable) {
    if (fd >= 0) close(fd);
    std::filesystem::remove_all(out);
    GTEST_SKIP() << "no immutable files here (needs CAP_LINUX_IMMUTABLE and ext4/xfs)";
  }
  std::deque<std::string> own;
  const PruneResult r = PruneIncidentDirs(out, IncidentRetention{1, 0}, &own, /*room=*/0, 0);
  flags &= ~FS_IMMUTABLE_FL;
  ioctl(fd, FS_IOC_SETFLAGS, &flags);
  close(fd);
  ASSERT_EQ(r.failed.size(), 1u);
  EXPECT_EQ(r.failed[0].rfind("20261201T000001Z-1: ", 0), 0u) << r.failed[0];
  EXPECT_EQ(r.removed, std::vector<std::string>{"20261201T000002Z-2"});
  EXPECT_TRUE(std::filesystem::exists(out + "/20261201T000003Z-3")) << "the newest stays";
  EXPECT_EQ(r.kept, 2u);
  std::filesystem::remove_all(out);
}

TEST(MonitorIncidentTest, ServiceExitFilesKeepTheNewest) {
  const std::string dir = ::testing::TempDir() + "/aiprof_service_keep_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (int i = 0; i < 8; ++i) {
    const std::string f = dir + "/aiprof-" + std::to_string(1000 - i) + ".aiprof";  // pids not in time order
    std::ofstream(f) << "x";
    const timespec times[2] = {{1'700'000'000 + i, 0}, {1'700'000'000 + i, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, f.c_str(), times, 0), 0);
  }
  std::ofstream(dir + "/notes.txt") << "x";
  const std::vector<std::string> removed = PruneServiceFiles(dir, kKeepServiceFiles);
  EXPECT_EQ(removed, (std::vector<std::string>{"aiprof-1000.aiprof", "aiprof-999.aiprof", "aiprof-998.aiprof"}));
  EXPECT_TRUE(std::filesystem::exists(dir + "/aiprof-993.aiprof"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/notes.txt"));
  EXPECT_TRUE(PruneServiceFiles(dir, kKeepServiceFiles).empty());
  std::filesystem::remove_all(dir);
}

TEST(MonitorIncidentTest, TriggersAndWebhookAlertsAreBoundedAndCounted) {
  std::vector<IncidentTrigger> triggers;
  uint64_t dropped = 0;
  for (int i = 0; i < 250; ++i) {
    IncidentTrigger t;
    t.kind = "webhook";
    t.expression = "churn-" + std::to_string(i);
    AppendBounded(&triggers, kMaxIncidentTriggers, std::move(t), &dropped);
  }
  EXPECT_EQ(triggers.size(), kMaxIncidentTriggers);
  EXPECT_EQ(dropped, 250 - kMaxIncidentTriggers);
  EXPECT_EQ(triggers.back().expression, "churn-" + std::to_string(kMaxIncidentTriggers - 1)) << "the first are kept";
  std::vector<std::pair<std::string, std::string>> pending;
  dropped = 0;
  for (int i = 0; i < 3000; ++i)
    AppendBounded(&pending, kMaxPendingWebhookAlerts, std::make_pair(std::to_string(i), std::string("peer")), &dropped);
  EXPECT_EQ(pending.size(), kMaxPendingWebhookAlerts);
  EXPECT_EQ(dropped, 3000 - kMaxPendingWebhookAlerts);
}

// A service writing end times in the future (a wrong clock, a hostile
// process) made one sketch part per record that never left the window.
TEST(MonitorWindowTest, RecordsDatedAfterTheyAreReadAreClampedSoTheWindowStaysBounded) {
  const int64_t window = kSec, interval = 250 * kMs, part = window / kWindowParts;
  RollingWindow w(window, 0);
  int64_t now = 10 * kSec;
  uint64_t future = 0;
  for (int tick = 0; tick < 20; ++tick, now += interval) {
    w.SetLatest(now + interval);
    for (int k = 1; k <= 1000; ++k) {
      future += 2 * (k * part > interval) + 1;
      w.AddRequest(now + k * part, kMs, false);
      w.AddStep(now + k * part, kMs);
      w.AddCounter("c" + std::to_string(k % 10), now + k * kSec, 1);
    }
    w.Advance(now);
    EXPECT_LE(w.parts(), 2 * static_cast<size_t>((window + interval) / part + 2)) << tick;
  }
  EXPECT_EQ(w.clamped(), future);
  EXPECT_GT(future, 20u * 2000);
  EXPECT_EQ(w.counters(), 10u);
  // Once the window has passed, nothing of them is left.
  w.Advance(now + 2 * window);
  EXPECT_EQ(w.parts(), 0u);
  EXPECT_EQ(w.counters(), 0u);
  EXPECT_EQ(w.Stats(now + 2 * window).requests, 0u);
}

// The segment removed under the monitor (a /dev/shm cleaner, systemd's
// RemoveIPC=) is noticed, and a client never removes a segment that is
// not its own.
TEST(MonitorLiveChannelTest, ASegmentRemovedUnderTheClientIsNoticedAndAnotherIsLeftAlone) {
  StatusOr<std::unique_ptr<LiveClient>> c = LiveClient::Create(getpid());
  ASSERT_TRUE(c.ok()) << c.status().message();
  const std::string path = (*c)->segment_path();
  EXPECT_FALSE((*c)->SegmentGone());
  ASSERT_EQ(unlink(path.c_str()), 0);
  EXPECT_TRUE((*c)->SegmentGone());
  std::ofstream(path) << "another's";
  EXPECT_TRUE((*c)->SegmentGone());
  c->reset();
  EXPECT_TRUE(std::filesystem::exists(path)) << "not its own: left alone";
  unlink(path.c_str());
  // Its own is removed.
  StatusOr<std::unique_ptr<LiveClient>> d = LiveClient::Create(getpid());
  ASSERT_TRUE(d.ok());
  d->reset();
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(MonitorLiveChannelTest, RecordsArriveInOrderAndOverwritesAreCounted) {
  std::vector<char> mem(live::kSegmentBytes + 64);
  auto* h = reinterpret_cast<live::Header*>((reinterpret_cast<uintptr_t>(mem.data()) + 63) & ~uintptr_t{63});
  live::ReaderState st;
  for (int i = 0; i < 10; ++i) live::Push(h, live::kRecRequest, i, i * 10, i == 4 ? uint32_t{live::kFlagError} : 0u);
  std::vector<int64_t> got;
  uint32_t errors = 0;
  EXPECT_EQ(live::Drain(h, &st,
                        [&](const live::Record& r) {
                          got.push_back(r.value);
                          errors += r.aux;
                        }),
            10u);
  EXPECT_EQ(got.size(), 10u);
  EXPECT_EQ(got[9], 90);
  EXPECT_EQ(errors, 1u);
  EXPECT_EQ(st.lost, 0u);
  // The reader falls a ring and 5 records behind: the oldest are lost, counted.
  for (uint64_t i = 0; i < live::kCapacity + 5; ++i) live::Push(h, live::kRecStep, 0, static_cast<int64_t>(i), 0);
  got.clear();
  live::Drain(h, &st, [&](const live::Record& r) { got.push_back(r.value); });
  EXPECT_EQ(st.lost, 5u);
  ASSERT_EQ(got.size(), live::kCapacity);
  EXPECT_EQ(got.front(), 5);
  // A record being written (seq 0) is read on a later pass, not skipped.
  const uint64_t idx = __atomic_fetch_add(&h->write_index, 1, __ATOMIC_RELAXED);
  live::Record* slot = live::Records(h) + (idx & (live::kCapacity - 1));
  slot->seq = 0;
  got.clear();
  EXPECT_EQ(live::Drain(h, &st, [&](const live::Record& r) { got.push_back(r.value); }), 0u);
  slot->value = 77;
  slot->type = live::kRecRequest;
  __atomic_store_n(&slot->seq, idx + 1, __ATOMIC_RELEASE);
  EXPECT_EQ(live::Drain(h, &st, [&](const live::Record& r) { got.push_back(r.value); }), 1u);
  EXPECT_EQ(got, std::vector<int64_t>{77});
  EXPECT_EQ(st.lost, 5u);
}

TEST(MonitorIncidentTest, TriggerJsonHoldsExpressionValuesAndWindow) {
  auto rules = ParseAlertRules({"p99_latency > 20ms"}, nullptr);
  ASSERT_TRUE(rules.ok());
  WindowStats s;
  s.covered_ns = 2 * kSec;
  s.window_ns = 2 * kSec;
  s.requests = 50;
  s.p99_ns = 25 * kMs;
  IncidentTrigger t{"alert", "p99_latency > 20ms", 5, 1764585600123, EvaluateAlert((*rules)[0], s, nullptr).result, s,
                    ""};
  const std::string json = TreeToJson(TriggerTree(t));
  // JSON text escapes < and > too (\u003e), so it is safe inside HTML.
  EXPECT_NE(json.find("\"expression\": \"p99_latency \\u003e 20ms\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"value\": 25000000"), std::string::npos) << json;
  EXPECT_NE(json.find("\"time_utc\": \"2025-12-01T10:40:00.123Z\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"p99\": 0.025"), std::string::npos) << json;
  EXPECT_EQ(DescribeTrigger(t), "p99_latency = 25 ms (> 20 ms)");
  // A value that rounds to its threshold is shown with the digits that tell
  // them apart (it read "error_rate = 2.0% (> 2.0%)" for 1.994% > 1.99%).
  auto rate_rules = ParseAlertRules({"error_rate > 1.99%", "rss >= 40MB"}, nullptr);
  ASSERT_TRUE(rate_rules.ok());
  s.errors = 997;
  s.requests = 50000;  // 1.994%: "1.99%" at two digits too
  s.rss_bytes = 40e6;
  IncidentTrigger r{"alert", "error_rate > 1.99%", 5, 0, EvaluateAlert((*rate_rules)[0], s, nullptr).result, s, ""};
  EXPECT_EQ(DescribeTrigger(r), "error_rate = 1.994% (> 1.990%)");
  IncidentTrigger m{"alert", "rss >= 40MB", 5, 0, EvaluateAlert((*rate_rules)[1], s, nullptr).result, s, ""};
  EXPECT_EQ(DescribeTrigger(m), "rss = 40.0 MB (>= 40.0 MB)") << "equal values stay short";
  IncidentTrigger hostile{"webhook", "x\"}\n<script>", 0, 0, EvalResult{}, s, "127.0.0.1:4242"};
  const std::string j2 = TreeToJson(TriggerTree(hostile));
  EXPECT_NE(j2.find("\"expression\": \"x\\\"}\\n\\u003cscript\\u003e\""), std::string::npos) << j2;
  EXPECT_NE(j2.find("\"requested_by\": \"127.0.0.1:4242\""), std::string::npos) << j2;
  EXPECT_EQ(UtcStamp(1764585600123), "20251201T104000Z");
}

// A 100 ms request (1..101 ms) on a spans track and a worker thread named
// `worker_name` whose stack samples the tests add; returns the worker track.
uint32_t RequestAndWorker(TraceBuilder& b, const char* worker_name) {
  const uint32_t requests = b.ThreadTrack(IdValue::Num(1), IdValue::Num(900));
  b.SetTrackRole(requests, TrackKind::kSpans, Layer::kApplication, kHostDevice);
  b.SetThreadName(requests, b.Intern("requests"));
  b.AddSlice(requests, 1'000'000, 100'000'000, b.Intern("request"), b.Intern("user_annotation"), -1, 0, 0);
  const uint32_t worker = b.ThreadTrack(IdValue::Num(1), IdValue::Num(10));
  b.SetTrackRole(worker, TrackKind::kThread, Layer::kHost, kHostDevice);
  b.SetThreadName(worker, b.Intern(worker_name));
  return worker;
}

// Hand-made: one 100 ms request (no flows, so every thread counts but
// aiprof's own) on a Python worker whose samples fall on three lines of
// slow(): 4 + 3 + 3 of 11, none alone on half the stacks; one stack was cut
// short (its Python frames at the root). The sampler thread's 30 samples in
// the same time would outnumber the worker's.
// Sets `path`'s modification time 25 hours back.
void AgeByADay(const std::string& path) {
  const struct timespec t[2] = {{time(nullptr) - 25 * 3600, 0}, {time(nullptr) - 25 * 3600, 0}};
  utimensat(AT_FDCWD, path.c_str(), t, 0);
}

// trial_monitor D2/D11: two monitors writing to one INCIDENTS_DIR named
// their folders alike (<UTC second>-<n>) and one overwrote the other; a
// folder appeared under its final name long before it was complete.
TEST(MonitorIncidentTest, FoldersAreWrittenUnderAWorkingNameAndNeverShared) {
  const std::string out = ::testing::TempDir() + "/aiprof_incident_dirs_" + std::to_string(getpid());
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(out);
  // Two writers with the same tag get two working folders.
  StatusOr<std::string> a = CreateIncidentWorkDir(out, "7-1");
  StatusOr<std::string> b = CreateIncidentWorkDir(out, "7-1");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  EXPECT_EQ(std::filesystem::path(*a).filename().string()[0], '.') << "hidden until complete";
  std::ofstream(*a + "/alert.json") << "a";
  std::ofstream(*b + "/alert.json") << "b";
  // Both complete in the same second with the same number: two folders.
  StatusOr<std::string> fa = PublishIncidentDir(*a, out, "20261205T001620Z-1");
  StatusOr<std::string> fb = PublishIncidentDir(*b, out, "20261205T001620Z-1");
  ASSERT_TRUE(fa.ok() && fb.ok()) << fa.status().message() << fb.status().message();
  EXPECT_EQ(*fa, out + "/20261205T001620Z-1");
  EXPECT_EQ(*fb, out + "/20261205T001620Z-1-2");
  auto read = [](const std::string& p) {
    std::ifstream in(p);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(read(*fa + "/alert.json"), "a");
  EXPECT_EQ(read(*fb + "/alert.json"), "b");
  EXPECT_FALSE(std::filesystem::exists(*a));
  // An empty folder of that name (another writer's claim) is not replaced either.
  std::filesystem::create_directory(out + "/20261205T001621Z-1");
  StatusOr<std::string> c = CreateIncidentWorkDir(out, "7-2");
  ASSERT_TRUE(c.ok());
  StatusOr<std::string> fc = PublishIncidentDir(*c, out, "20261205T001621Z-1");
  ASSERT_TRUE(fc.ok());
  EXPECT_EQ(*fc, out + "/20261205T001621Z-1-2");
  // A working folder that cannot be made is an error, not a folder that "exists".
  std::ofstream(out + "/file") << "x";
  EXPECT_FALSE(CreateIncidentWorkDir(out + "/file", "7-3").ok());
  // Working folders of a monitor that is gone are removed at the next start
  // (an earlier version's name, which names no boot: when a day old); ours stay.
  std::filesystem::create_directory(out + "/.incident-999999999-1.tmp");
  AgeByADay(out + "/.incident-999999999-1.tmp");
  StatusOr<std::string> mine = CreateIncidentWorkDir(out, std::to_string(getpid()) + "-1");
  ASSERT_TRUE(mine.ok());
  RemoveStaleIncidentWorkDirs(out);
  EXPECT_FALSE(std::filesystem::exists(out + "/.incident-999999999-1.tmp"));
  EXPECT_TRUE(std::filesystem::exists(*mine));
  std::filesystem::remove_all(out);
}

// --- Working folders of killed monitors (ops2 item 1) -----------------------

// Runs `fn` in the first process of a new pid namespace (another container
// of this host): its exit status, or 77 where no namespace can be made.
int InNewPidNamespace(int (*fn)(const std::string&), const std::string& arg) {
  const pid_t child = fork();
  if (child == 0) {
    if (unshare(CLONE_NEWPID) != 0) _exit(77);
    const pid_t inner = fork();
    if (inner == 0) _exit(fn(arg));
    int status = 0;
    waitpid(inner, &status, 0);
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 4);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return 5;
  return WEXITSTATUS(status);
}

std::string IncidentTestDir(const char* what) {
  const std::string out = ::testing::TempDir() + "/aiprof_incident_" + what + "_" + std::to_string(getpid());
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(out);
  return out;
}

std::vector<std::string> WorkDirs(const std::string& out) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(out)) {
    const std::string n = e.path().filename().string();
    if (n.starts_with(".incident-")) names.push_back(n);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A monitor SIGKILLed while writing an incident: the next monitor's start
// removes its working folder, with what it holds, and says so once.
TEST(MonitorIncidentTest, AKilledMonitorsWorkingFolderIsRemovedAtTheNextStart) {
  const std::string out = IncidentTestDir("killed");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t writer = fork();
  if (writer == 0) {
    StatusOr<std::string> dir = CreateIncidentWorkDir(out, std::to_string(getpid()) + "-1");
    if (!dir.ok()) _exit(1);
    std::ofstream(*dir + "/flight_recorder.aiprof") << "half";
    char b = 1;
    if (write(ready[1], &b, 1) != 1) _exit(1);
    for (;;) pause();
  }
  char b = 0;
  ASSERT_EQ(read(ready[0], &b, 1), 1);
  close(ready[0]);
  close(ready[1]);
  kill(writer, SIGKILL);
  waitpid(writer, nullptr, 0);
  ASSERT_EQ(WorkDirs(out).size(), 1u);
  ::testing::internal::CaptureStderr();
  RemoveStaleIncidentWorkDirs(out);
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(WorkDirs(out).empty());
  EXPECT_NE(said.find("removed " + out + "/.incident-" + std::to_string(writer) + "-1.tmp."), std::string::npos)
      << said;
  EXPECT_NE(said.find("pid " + std::to_string(writer) + " on this boot, is gone"), std::string::npos) << said;
  EXPECT_EQ(said.find("removed", said.find("removed") + 1), std::string::npos) << "said once: " << said;
  std::filesystem::remove_all(out);
}

int SweepIncidents(const std::string& out) {
  RemoveStaleIncidentWorkDirs(out);
  return 0;
}

// The working folder of a monitor alive in another container (another pid
// namespace, same INCIDENTS_DIR): its pid is nobody's in the sweeping
// monitor's namespace, and the pid test alone removed the folder it was
// writing into. Its lock keeps it now.
TEST(MonitorIncidentTest, ALiveMonitorsWorkingFolderIsKeptFromAnotherPidNamespace) {
  const std::string out = IncidentTestDir("pidns");
  StatusOr<std::string> live = CreateIncidentWorkDir(out, std::to_string(getpid()) + "-1");
  ASSERT_TRUE(live.ok());
  std::ofstream(*live + "/alert.json") << "{}";
  const int rc = InNewPidNamespace(&SweepIncidents, out);
  if (rc == 77) GTEST_SKIP() << "no pid namespace here (unshare needs CAP_SYS_ADMIN)";
  ASSERT_EQ(rc, 0);
  EXPECT_TRUE(std::filesystem::exists(*live + "/alert.json")) << "the live monitor's working folder was removed";
  StatusOr<std::string> published = PublishIncidentDir(*live, out, "20261206T000000Z-1");
  ASSERT_TRUE(published.ok());
  // Once published it is no working folder; an unpublished one that is no
  // longer locked (its monitor gone) goes.
  StatusOr<std::string> abandoned = CreateIncidentWorkDir(out, std::to_string(getpid()) + "-2");
  ASSERT_TRUE(abandoned.ok());
  RemoveIncidentWorkDir(*abandoned);
  EXPECT_EQ(WorkDirs(out), std::vector<std::string>{});
  std::filesystem::remove_all(out);
}

// An earlier monitor's `.incident-<pid>-<n>.tmp` names no boot: its pid may
// be another container's or from before a reboot, so it goes only when a
// day old (it went at once when the pid was free here), and its name,
// whatever it holds, is escaped on stderr.
TEST(MonitorIncidentTest, AnEarlierMonitorsWorkingFolderGoesOnlyWhenADayOld) {
  const std::string out = IncidentTestDir("old");
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  const std::string recent = ".incident-" + std::to_string(dead) + "-1.tmp";
  const std::string hostile = ".incident-\x1b]0;owned\x07\x1b[31m-1.tmp";
  std::filesystem::create_directory(out + "/" + recent);
  std::filesystem::create_directory(out + "/" + hostile);
  std::ofstream(out + "/" + hostile + "/trace.aiprof") << "x";
  AgeByADay(out + "/" + hostile);
  ::testing::internal::CaptureStderr();
  RemoveStaleIncidentWorkDirs(out);
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(WorkDirs(out), std::vector<std::string>{recent});
  EXPECT_NE(said.find(".incident-\\x1b]0;owned\\x07\\x1b[31m-1.tmp"), std::string::npos) << said;
  EXPECT_EQ(said.find('\x1b'), std::string::npos) << "a terminal control reached stderr";
  EXPECT_NE(said.find("untouched for 2"), std::string::npos) << said;
  std::filesystem::remove_all(out);
}

TEST(MonitorSlowestRequestTest, PythonFunctionNamedOnceWithItsHottestLineOwnThreadsLeftOut) {
  Trace trace;
  TraceBuilder b(&trace);
  const uint32_t worker = RequestAndWorker(b, "python3");
  const uint32_t sampler = b.ThreadTrack(IdValue::Num(1), IdValue::Num(11));
  b.SetTrackRole(sampler, TrackKind::kThread, Layer::kHost, kHostDevice);
  b.SetThreadName(sampler, b.Intern("aiprof-pysample"));
  const StringId py = b.Intern("svc.py"), native = b.Intern("python3.11");
  const uint32_t root = b.InternCallsite(kNoCallsite, b.Intern("start_thread"), native, FrameKind::kNative);
  const uint32_t handle = b.InternCallsite(root, b.Intern("handle (svc.py:10)"), py, FrameKind::kPython);
  const uint32_t l20 = b.InternCallsite(handle, b.Intern("slow (svc.py:20)"), py, FrameKind::kPython);
  const uint32_t l21 = b.InternCallsite(handle, b.Intern("slow (svc.py:21)"), py, FrameKind::kPython);
  const uint32_t l22 = b.InternCallsite(handle, b.Intern("slow (svc.py:22)"), py, FrameKind::kPython);
  const uint32_t cut_handle = b.InternCallsite(kNoCallsite, b.Intern("handle (svc.py:10)"), py, FrameKind::kPython);
  const uint32_t cut_slow = b.InternCallsite(cut_handle, b.Intern("slow (svc.py:21)"), py, FrameKind::kPython);
  const uint32_t cut =
      b.InternCallsite(cut_slow, b.Intern("[native stack truncated]"), b.Intern("[unknown]"), FrameKind::kUnknown);
  const uint32_t own =
      b.InternCallsite(root, b.Intern("run (_framework.py:90)"), b.Intern("_framework.py"), FrameKind::kPython);
  const uint32_t worker_stacks[] = {l21, l21, l21, l20, l20, l20, l22, l22, l22, l21, cut};
  int64_t ts = 2'000'000;
  for (uint32_t c : worker_stacks) b.AddStackSample(worker, ts += 5'000'000, c, 1'000'000);
  for (int i = 0; i < 30; ++i) b.AddStackSample(sampler, 2'000'000 + i * 3'000'000, own, 1'000'000);
  ASSERT_TRUE(b.Finalize().ok());

  const SlowestRequest r = FindSlowestRequest(trace, 0, 200'000'000);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.samples, 11u);
  ASSERT_EQ(r.path.size(), 3u);
  EXPECT_EQ(r.path[0].first, "start_thread");
  EXPECT_EQ(r.path[1].first, "handle (svc.py:10)");
  EXPECT_EQ(r.path[2].first, "slow (svc.py:21)");  // 5 of its 11 samples at line 21
  EXPECT_DOUBLE_EQ(r.path[2].second, 1.0);
  EXPECT_NE(DescribeSlowest(r).find(": slow (svc.py:21) (on the stack in 100% of its 11 samples)"), std::string::npos)
      << DescribeSlowest(r);
}

// The tester's service (D13): busy() calls time.perf_counter() in a loop, so
// the interpreter's C-call frames under it are on 6 and 5 of its 10 stacks.
// The headline names busy(), the innermost Python frame, and shows those
// frames as its native tail; without a Python frame, the innermost frame
// with a real symbol (not lib!sym+0x…).
TEST(MonitorSlowestRequestTest, InnermostPythonFrameNamedNativeTailApart) {
  Trace trace;
  TraceBuilder b(&trace);
  const uint32_t worker = RequestAndWorker(b, "python3");
  const StringId py = b.Intern("svc.py"), native = b.Intern("python3.11");
  const uint32_t root = b.InternCallsite(kNoCallsite, b.Intern("start_thread"), native, FrameKind::kNative);
  const uint32_t get = b.InternCallsite(root, b.Intern("do_GET (svc.py:26)"), py, FrameKind::kPython);
  const uint32_t busy = b.InternCallsite(get, b.Intern("busy (svc.py:17)"), py, FrameKind::kPython);
  const uint32_t call = b.InternCallsite(busy, b.Intern("PyObject_Vectorcall"), native, FrameKind::kNative);
  const uint32_t fast =
      b.InternCallsite(call, b.Intern("python3.11!_PyObject_FastCallDictTstate+0x6ca"), native, FrameKind::kNative);
  const uint32_t stacks[] = {fast, fast, fast, fast, fast, call, busy, busy, busy, busy};
  int64_t ts = 2'000'000;
  for (uint32_t c : stacks) b.AddStackSample(worker, ts += 5'000'000, c, 1'000'000);
  ASSERT_TRUE(b.Finalize().ok());

  const SlowestRequest r = FindSlowestRequest(trace, 0, 200'000'000);
  ASSERT_TRUE(r.found);
  ASSERT_EQ(r.path.size(), 5u);
  EXPECT_EQ(r.path[4].first, "python3.11!_PyObject_FastCallDictTstate+0x6ca");  // on 5 of 10: in the chain
  EXPECT_EQ(r.named, 2u);
  EXPECT_EQ(SlowestFunction(r), "busy (svc.py:17)");
  const std::string line = DescribeSlowest(r);
  EXPECT_NE(line.find(": busy (svc.py:17) (on the stack in 100% of its 10 samples); path: start_thread > "
                      "do_GET (svc.py:26) > busy (svc.py:17); native tail below it: PyObject_Vectorcall (60%) > "
                      "python3.11!_PyObject_FastCallDictTstate+0x6ca (50%)"),
            std::string::npos)
      << line;
}

// trial_monitor D7: `hottest:` named aiprof::python_sampler (aiprof's own
// sampler thread) when the deep trace had no slowest request with samples.
TEST(MonitorSlowestRequestTest, HottestServiceFunctionLeavesAiprofsOwnOut) {
  std::vector<HostFunction> fns = {{"aiprof::python_sampler", "aiprof_overhead", 62, 62, 0.886, 0.886},
                                   {"planted_busy", "python", 5, 5, 0.07, 0.07}};
  ASSERT_NE(HottestServiceFunction(fns), nullptr);
  EXPECT_EQ(HottestServiceFunction(fns)->name, "planted_busy");
  fns.pop_back();
  EXPECT_EQ(HottestServiceFunction(fns), nullptr);
}

TEST(MonitorSlowestRequestTest, NativeServiceNamesInnermostRealSymbol) {
  Trace trace;
  TraceBuilder b(&trace);
  const uint32_t worker = RequestAndWorker(b, "service");
  const StringId exe = b.Intern("service"), libc = b.Intern("libc.so.6");
  const uint32_t root = b.InternCallsite(kNoCallsite, b.Intern("main"), exe, FrameKind::kNative);
  const uint32_t slow = b.InternCallsite(root, b.Intern("planted_slow_path"), exe, FrameKind::kNative);
  const uint32_t near = b.InternCallsite(slow, b.Intern("libc.so.6!memcpy+0x1f"), libc, FrameKind::kNative);
  const uint32_t addr = b.InternCallsite(near, b.Intern("0x7f0012345678"), b.Intern("[unknown]"), FrameKind::kUnknown);
  int64_t ts = 2'000'000;
  for (int i = 0; i < 8; ++i) b.AddStackSample(worker, ts += 5'000'000, i < 6 ? addr : slow, 1'000'000);
  ASSERT_TRUE(b.Finalize().ok());

  const SlowestRequest r = FindSlowestRequest(trace, 0, 200'000'000);
  ASSERT_EQ(r.path.size(), 4u);
  EXPECT_EQ(SlowestFunction(r), "planted_slow_path");
  EXPECT_NE(DescribeSlowest(r).find(": planted_slow_path (on the stack in 100% of its 8 samples); path: main > "
                                    "planted_slow_path; native tail below it: libc.so.6!memcpy+0x1f (75%) > "
                                    "0x7f0012345678 (75%)"),
            std::string::npos)
      << DescribeSlowest(r);
}

}  // namespace
}  // namespace aiprof
