#include "src/report/page/report_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "src/analysis/analyze.h"
#include "src/analysis/diagnosis/suggest.h"
#include "src/analysis/rules/rule_loader.h"
#include "src/analysis/testing/analysis_test_util.h"

namespace aiprof {
namespace {

struct Run {
  std::unique_ptr<Trace> trace;
  std::vector<Rule> rules;
  MetricSet metrics;
  Diagnosis diagnosis;
  SuggestResult suggestions;
  SuggestOptions options;
  ReportData data;
};

std::unique_ptr<Run> Build(std::unique_ptr<Trace> trace, const std::string& source) {
  auto run = std::make_unique<Run>();
  run->trace = std::move(trace);
  auto rules = LoadBuiltinRules();
  EXPECT_TRUE(rules.ok());
  run->rules = std::move(rules).value();
  run->metrics = ComputeAllMetrics(*run->trace, AnalyzeOptions{});
  run->diagnosis = Diagnose(*run->trace, run->metrics, run->rules);
  run->suggestions = Suggest(run->diagnosis, run->metrics, run->options);
  ReportInputs in;
  in.source = source;
  in.trace = run->trace.get();
  in.metrics = &run->metrics;
  in.diagnosis = &run->diagnosis;
  in.suggestions = &run->suggestions;
  in.options = &run->options;
  run->data = BuildReport(in);
  return run;
}

// Union length of [start, end) intervals, computed here for the check.
int64_t Union(std::vector<std::pair<int64_t, int64_t>> v) {
  std::sort(v.begin(), v.end());
  int64_t total = 0, cur_s = 0, cur_e = INT64_MIN;
  for (auto [s, e] : v) {
    if (s > cur_e) {
      if (cur_e != INT64_MIN) total += cur_e - cur_s;
      cur_s = s, cur_e = e;
    } else {
      cur_e = std::max(cur_e, e);
    }
  }
  if (cur_e != INT64_MIN) total += cur_e - cur_s;
  return total;
}

// The real ResNet50 num_workers=0 run: the headline figures against
// computations made here from the model's columns, and the diagnosis the
// report leads with.
TEST(ReportDataTest, Resnet50HeadlineMatchesIndependentFigures) {
  auto trace = testing::ImportFixture("kineto/kineto__tb_plugin__samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz");
  ASSERT_NE(trace, nullptr);
  const Trace& t = *trace;
  // Step mean and sample sd of ProfilerStep durations.
  std::vector<double> d;
  for (size_t i = 0; i < t.steps.size(); ++i) d.push_back(static_cast<double>(t.steps.dur_ns[i]));
  ASSERT_EQ(d.size(), 6u);
  double mean = 0;
  for (double x : d) mean += x;
  mean /= static_cast<double>(d.size());
  double var = 0;
  for (double x : d) var += (x - mean) * (x - mean);
  double sd = std::sqrt(var / static_cast<double>(d.size()));  // population sd, as docs/analyses.md defines it
  // Device busy / span over all device activity (one GPU here).
  std::vector<std::pair<int64_t, int64_t>> iv;
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (size_t i = 0; i < t.slices.size(); ++i) {
    if (!IsDeviceActivity(t.slices.kind[i])) continue;
    int64_t s = t.slices.ts_ns[i], e = s + t.slices.dur_ns[i];
    iv.push_back({s, e});
    first = std::min(first, s), last = std::max(last, e);
  }
  double util = static_cast<double>(Union(iv)) / static_cast<double>(last - first);

  auto run = Build(std::move(trace), "resnet50_nw0");
  const ReportData& r = run->data;
  EXPECT_EQ(r.steps_stats.count, 6u);
  EXPECT_NEAR(r.steps_stats.mean_ns, mean, 1);
  EXPECT_NEAR(r.steps_stats.stddev_ns, sd, 1);
  EXPECT_NEAR(r.device_util, util, 1e-9);
  ASSERT_NE(r.top_finding, nullptr);
  EXPECT_EQ(r.top_finding->rule->bottleneck, "data_loading");
  ASSERT_NE(r.best_fix, nullptr);
  EXPECT_EQ(r.best_fix->suggestion->id, "dataloader_workers");
  ASSERT_EQ(r.steps.size(), 6u);
  // Idle gaps: the histogram by (length, cause) adds up to the idle time by cause.
  ASSERT_EQ(r.breakdown.size(), 1u);
  for (size_t c = 0; c < kGapCauseCount; ++c) {
    double hist = 0;
    for (size_t b = 0; b < kGapBucketCount; ++b) hist += r.gap_hist_ms[b][c];
    EXPECT_NEAR(hist, r.breakdown[0].idle_by_cause_ms[c], 1e-6) << GapCauseName(static_cast<GapCause>(c));
  }
  EXPECT_GT(r.breakdown[0].idle_by_cause_ms[static_cast<size_t>(GapCause::kDataLoading)], 0);
  // Memory over time from the [memory] events: the peak is the largest Total Allocated.
  ASSERT_FALSE(r.memory.empty());
  EXPECT_GT(r.memory[0].peak_bytes, 0);
  EXPECT_LE(r.memory[0].ts_ns.size(), kReportMemoryPoints);
  EXPECT_EQ(*std::max_element(r.memory[0].bytes.begin(), r.memory[0].bytes.end()), r.memory[0].peak_bytes);
  // Top ops sorted by total time.
  ASSERT_FALSE(r.top_ops.empty());
  for (size_t i = 1; i < r.top_ops.size(); ++i) EXPECT_GE(r.top_ops[i - 1].total_ms, r.top_ops[i].total_ms);

  std::string html = ReportToHtml(r);
  EXPECT_NE(html.find("<svg class=\"chart\""), std::string::npos);
  EXPECT_NE(html.find("id=\"top-ops\""), std::string::npos);
  EXPECT_NE(html.find("The device waits for input data"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no link out but the SVG namespace
  EXPECT_EQ(html.find("https://"), std::string::npos);
  std::string md = ReportToMarkdown(r);
  EXPECT_NE(md.find("## Headline"), std::string::npos);
  EXPECT_NE(md.find("Load data in parallel"), std::string::npos);
}

// Hostile names (hand-made trace): an op, a thread and the source path that
// try to close the script, inject markup or break Markdown stay text.
TEST(ReportDataTest, HostileNamesStayText) {
  const std::string evil = R"(</script><img src=x onerror=alert(1)>)";
  auto trace = testing::ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"</script><img src=x onerror=alert(1)>","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","cat":"cpu_op","name":"| md | table |","pid":1,"tid":1,"ts":200,"dur":50},
    {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"<b onmouseover=x>"}}]})");
  ASSERT_NE(trace, nullptr);
  auto run = Build(std::move(trace), evil);
  std::string html = ReportToHtml(run->data);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b onmouseover"), std::string::npos);
  // Exactly one closing script tag: the page's own.
  size_t count = 0;
  for (size_t p = html.find("</script>"); p != std::string::npos; p = html.find("</script>", p + 1)) ++count;
  EXPECT_EQ(count, 1u);
  EXPECT_NE(html.find("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  std::string md = ReportToMarkdown(run->data);
  EXPECT_EQ(md.find("| md | table |"), std::string::npos);
  EXPECT_EQ(md.find("<img"), std::string::npos);
}

}  // namespace
}  // namespace aiprof
