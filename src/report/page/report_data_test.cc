#include "src/report/page/report_data.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "src/analysis/analyze.h"
#include "src/analysis/diagnosis/suggest.h"
#include "src/analysis/rules/rule_loader.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

struct Run {
  std::unique_ptr<AnalysisSession> session;
  ReportData data;
};

std::unique_ptr<Run> Build(std::unique_ptr<Trace> trace, const std::string& source) {
  auto run = std::make_unique<Run>();
  SessionOptions options;
  options.input = source;
  run->session = std::make_unique<AnalysisSession>(std::shared_ptr<const Trace>(std::move(trace)), options);
  ReportInputs in;
  in.session = run->session.get();
  auto data = BuildReport(in);
  EXPECT_TRUE(data.ok()) << data.status().message();
  if (data.ok()) run->data = std::move(data).value();
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
  auto trace = testing::ImportFixture(
      "kineto/kineto__tb_plugin__samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz");
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
  // Device busy time inside the six (steady) steps / their wall time (one
  // GPU here): device activity clipped to each ProfilerStep span.
  std::vector<std::pair<int64_t, int64_t>> iv;
  int64_t wall = 0;
  for (size_t k = 0; k < t.steps.size(); ++k) {
    const int64_t a = t.steps.ts_ns[k], b = a + t.steps.dur_ns[k];
    wall += b - a;
    for (size_t i = 0; i < t.slices.size(); ++i) {
      if (!IsDeviceActivity(t.slices.kind[i])) continue;
      int64_t s = std::max(a, t.slices.ts_ns[i]), e = std::min(b, t.slices.ts_ns[i] + t.slices.dur_ns[i]);
      if (e > s) iv.push_back({s, e});
    }
  }
  double util = static_cast<double>(Union(iv)) / static_cast<double>(wall);

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
  // Top ops sorted by self time (total beside it, never below self), no profiler wrapper among them.
  ASSERT_FALSE(r.top_ops.empty());
  for (size_t i = 1; i < r.top_ops.size(); ++i) EXPECT_GE(r.top_ops[i - 1].self_ms, r.top_ops[i].self_ms);
  for (const auto& op : r.top_ops) {
    EXPECT_GE(op.total_ms + 1e-9, op.self_ms);
    EXPECT_EQ(op.name.rfind("ProfilerStep#", 0), std::string::npos) << op.name;
  }
  // Shares are of self time within a category: proportional to self, and
  // the listed ones sum to at most 1 (shares of total time double-counted
  // nested ops: on this trace the cpu_op shares summed past 1).
  std::map<std::string, double> share_sum, self_per_share;
  for (const auto& op : r.top_ops) {
    share_sum[op.category] += op.share;
    if (op.share <= 0) continue;
    auto [it, first] = self_per_share.try_emplace(op.category, op.self_ms / op.share);
    if (!first) {
      EXPECT_NEAR(op.self_ms / op.share, it->second, 1e-6 * it->second) << op.name;
    }
  }
  for (const auto& [category, sum] : share_sum) EXPECT_LE(sum, 1 + 1e-9) << category;

  std::string html = ReportToHtml(r);
  EXPECT_NE(html.find("<svg class=\"chart\""), std::string::npos);
  EXPECT_NE(html.find("<table data-key=\"top_ops\" class=\"sortable\">"), std::string::npos);
  EXPECT_NE(html.find("The step waits for input data"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no link out but the SVG namespace
  EXPECT_EQ(html.find("https://"), std::string::npos);
  std::string md = ReportToMarkdown(r);
  EXPECT_NE(md.find("## Headline"), std::string::npos);
  EXPECT_NE(md.find("Load data in parallel"), std::string::npos);
}

// The headline's step time is over the steady steps, as analyze's and the
// impacts' base: resnet50 num_workers=4 has a 181.6 ms warm-up step, which
// made it 139.69 ms over 6 steps beside an impact "of 131.317 ms".
TEST(ReportDataTest, HeadlineStepTimeLeavesTheWarmupStepOut) {
  auto run =
      Build(testing::ImportFixture(
                "kineto/kineto__tb_plugin__samples__resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz"),
            "resnet50_nw4");
  const ReportData& r = run->data;
  EXPECT_EQ(r.steps_stats.count, 6u);  // the step chart keeps every step
  EXPECT_EQ(r.steady_stats.count, 5u);
  EXPECT_EQ(r.warmup_steps, 1u);
  const MetricValue* mean = r.metrics->Get("step_time_mean_ns");
  ASSERT_NE(mean, nullptr);
  EXPECT_NEAR(r.steady_stats.mean_ns, mean->value, 1);
  std::string md = ReportToMarkdown(r);
  EXPECT_NE(md.find(R"(over 5 steady-state steps \(timeline; 1 warm-up step left out\))"), std::string::npos)
      << md.substr(0, 1500);
  EXPECT_NE(md.find(fmt::format("**Step time:** {:.2f} ms", mean->value / 1e6)), std::string::npos)
      << md.substr(0, 1500);
}

// With a before run the headline leads with the change's verdict; the
// bottleneck and fix cards name the time base their shares are of.
TEST(ReportDataTest, HeadlineLeadsWithTheChangeAndNamesItsBases) {
  auto run =
      Build(testing::ImportFixture(
                "kineto/kineto__tb_plugin__samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz"),
            "resnet50_nw0");
  RunSamples before, after;
  before.label = "b.json", after.label = "a.json";
  for (int i = 0; i < 8; ++i) {
    before.latency_ns.push_back(2e8 + 1e6 * i);
    after.latency_ns.push_back(1e8 + 1e6 * i);
  }
  ValidationOptions o;
  o.bootstrap_resamples = 200;
  ValidationResult v = Validate(before, after, o);
  run->data.validation = &v;
  std::string md = ReportToMarkdown(run->data);
  size_t change = md.find("- **Change:** Improved: latency -"), step = md.find("- **Step time:**");
  ASSERT_NE(change, std::string::npos) << md.substr(0, 2000);
  EXPECT_LT(change, step);
  const Finding& f = *run->data.top_finding;
  EXPECT_NE(md.find(fmt::format("impact {:.3f} ms per step = {:.1f}% of {:.3f} ms", f.impact.time_ns / 1e6,
                                100 * f.impact.share, f.impact.basis_ns / 1e6)),
            std::string::npos)
      << md.substr(0, 3000);
  EXPECT_NE(md.find("expected gain "), std::string::npos);
  EXPECT_EQ(md.find("of per step"), std::string::npos);
  run->data.validation = nullptr;
  EXPECT_EQ(ReportToMarkdown(run->data).find("**Change:**"), std::string::npos);
}

// Hand-made, as PyTorch 1.8 writes it: ProfilerStep#1 (a profiler wrapper) is
// in category Operator like the ops it holds. Self times: the step 100 - 30 -
// 10 = 60 us, aten::conv2d 30 us, aten::relu 10 us. The wrapper is left out
// of the table and of the base: shares 30/40 = 0.75 and 10/40 = 0.25, so the
// listed Operator rows sum to 1. Before, the base took the wrapper's 60 us
// too (30/100 = 0.3, 10/100 = 0.1).
TEST(ReportDataTest, TopOpShareBaseLeavesProfilerWrappersOut) {
  auto run = Build(testing::ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"Operator","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","cat":"Operator","name":"aten::conv2d","pid":1,"tid":1,"ts":10,"dur":30},
    {"ph":"X","cat":"Operator","name":"aten::relu","pid":1,"tid":1,"ts":50,"dur":10}]})"),
                   "hand-made");
  const ReportData& r = run->data;
  std::map<std::string, double> share;
  for (const auto& op : r.top_ops) share[op.name] = op.share;
  ASSERT_EQ(share.size(), 2u);  // the wrapper is not listed
  EXPECT_NEAR(share["aten::conv2d"], 0.75, 1e-12);
  EXPECT_NEAR(share["aten::relu"], 0.25, 1e-12);
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

TEST(ReportDataTest, HostFunctionsBySelfThenTotalSamples) {
  Trace t;
  // Stacks (leaf first): main <- work <- hot; main <- work; main <- other.
  auto frame = [&](const char* name, uint32_t parent) {
    t.callsites.parent.push_back(CallsiteId{parent});
    t.callsites.depth.push_back(parent == kNoCallsite ? 0 : t.callsites.depth[parent] + 1);
    t.callsites.frame.push_back(t.strings.Intern(name));
    t.callsites.module.push_back(t.strings.Intern("/bin/svc"));
    t.callsites.kind.push_back(FrameKind{});
    return static_cast<uint32_t>(t.callsites.size() - 1);
  };
  const uint32_t main_fn = frame("main", kNoCallsite), work = frame("work", main_fn), hot = frame("hot", work);
  const uint32_t other = frame("other", main_fn);
  auto sample = [&](uint32_t leaf) {
    t.samples.ts_ns.push_back(static_cast<int64_t>(t.samples.size()));
    t.samples.track.push_back(TrackId{0});
    t.samples.callsite.push_back(CallsiteId{leaf});
    t.samples.weight_ns.push_back(1000);
  };
  for (int i = 0; i < 6; ++i) sample(hot);
  for (int i = 0; i < 3; ++i) sample(work);
  sample(other);
  sample(kNoCallsite);  // no stack: not counted
  // The report reads them from the session's summary (its host samples).
  const HostSampleStats stats = ComputeHostSamples(t);
  EXPECT_EQ(stats.with_stack, 10u);
  std::vector<ReportHostFunction> f = HostFunctionsOf(t, stats, 3);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].name, "hot");
  EXPECT_EQ(f[0].self_samples, 6u);
  EXPECT_NEAR(f[0].self_share, 0.6, 1e-12);  // of the 10 samples with a stack
  EXPECT_EQ(f[1].name, "work");
  EXPECT_EQ(f[1].self_samples, 3u);
  EXPECT_EQ(f[1].total_samples, 9u);
  EXPECT_NEAR(f[1].total_share, 0.9, 1e-12);
  EXPECT_EQ(f[2].name, "other");  // 1 self sample; main has 0 self and comes last
  const std::vector<ReportHostFunction> all = HostFunctionsOf(t, stats, 10);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all.back().name, "main");
  EXPECT_EQ(all.back().self_samples, 0u);
  EXPECT_NEAR(all.back().total_share, 1.0, 1e-12);
}

TEST(ReportDataTest, IncidentContextAndHostFunctionsAreEscaped) {
  auto trace = testing::ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":0,"dur":100}]})");
  ASSERT_NE(trace, nullptr);
  auto run = Build(std::move(trace), "t.json");
  const std::string evil = "<img src=x onerror=alert(1)>|x|";
  run->data.context_title = "Incident";
  run->data.context = {{"trigger", evil}};
  run->data.host_functions = {ReportHostFunction{evil, "/bin/" + evil, 3, 4, 0.75, 1.0}};
  run->data.host_stacks = 4;
  const std::string html = ReportToHtml(run->data);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_NE(html.find("Hottest host function"), std::string::npos);
  EXPECT_NE(html.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  EXPECT_LT(html.find("id=\"context\""), html.find("id=\"headline\""));  // the incident comes first
  const std::string md = ReportToMarkdown(run->data);
  EXPECT_EQ(md.find("<img"), std::string::npos);
  EXPECT_EQ(md.find("|x|"), std::string::npos);  // the table's separator is escaped
  EXPECT_LT(md.find("## Incident"), md.find("## Headline"));
  EXPECT_NE(md.find("## Host functions in the CPU samples"), std::string::npos);
}

}  // namespace
}  // namespace aiprof

namespace aiprof {
namespace {

// The headline's best fix (ChooseBestFix), on hand-made outcomes in the order
// RankSuggestions leaves them: a measured gain from another finding beats the
// top finding's prior unless the prior is larger even at its low end.
TEST(ReportDataTest, BestFixPrefersAMeasuredGainUnlessThePriorIsLargerAtItsLowEnd) {
  Rule top_rule, other_rule;
  Finding top, other;
  top.rule = &top_rule, other.rule = &other_rule;
  Suggestion warm_up{}, retain{}, graph{};
  auto make = [](const Finding* f, const Suggestion* s, double lo, double hi, const char* source) {
    SuggestionOutcome o;
    o.finding = f, o.suggestion = s;
    o.gain_min = lo, o.gain_max = hi;
    o.gain_source = source;
    return o;
  };
  // A capture under jemalloc's defaults: the top finding's prior 5-14%, the
  // page-fault finding's simulated 32-37%.
  std::vector<SuggestionOutcome> kept = {make(&other, &retain, 0.32, 0.37, kGainFromSimulation),
                                         make(&top, &warm_up, 0.05, 0.14, kGainFromPrior)};
  BestFix b = ChooseBestFix(&top, kept);
  EXPECT_EQ(b.best, &kept[0]);
  EXPECT_EQ(b.measured, &kept[0]);
  // A measured 1.5% against a prior of 21-48%: the prior, the measured one named.
  kept = {make(&other, &retain, 0.015, 0.015, kGainFromSimulation), make(&top, &graph, 0.21, 0.48, kGainFromPrior),
          make(&top, &warm_up, 0.05, 0.60, kGainFromPrior)};
  b = ChooseBestFix(&top, kept);
  EXPECT_EQ(b.best, &kept[2]);  // the top finding's largest prior, by its high end
  EXPECT_EQ(b.measured, &kept[0]);
  // The prior's low end decides: a measured 10-25% reaches above 21%, so it wins.
  kept[0].gain_min = 0.10, kept[0].gain_max = 0.25;
  kept.pop_back();
  EXPECT_EQ(ChooseBestFix(&top, kept).best, &kept[0]);
  // Only priors: the top finding's, never another finding's larger prior.
  kept = {make(&other, &retain, 0.30, 0.60, kGainFromPrior), make(&top, &warm_up, 0.05, 0.14, kGainFromPrior)};
  b = ChooseBestFix(&top, kept);
  EXPECT_EQ(b.best, &kept[1]);
  EXPECT_EQ(b.measured, nullptr);
  // The top finding's simulated gain whose interval reaches zero is not its
  // prior, even with the larger high end (a capture where the simulated
  // allocator fix read -2.6% to 22.3% beside the rule's 1.1-3.2%).
  Suggestion tcmalloc{};
  kept = {make(&top, &tcmalloc, -0.026, 0.223, kGainFromSimulation),
          make(&top, &warm_up, 0.011, 0.032, kGainFromPrior)};
  b = ChooseBestFix(&top, kept);
  EXPECT_EQ(b.best, &kept[1]);
  EXPECT_EQ(b.measured, nullptr);
  // Without any prior, the top finding's largest gain of any source.
  kept.pop_back();
  EXPECT_EQ(ChooseBestFix(&top, kept).best, &kept[0]);
  // Nothing kept, or no finding.
  EXPECT_EQ(ChooseBestFix(&top, {}).best, nullptr);
  kept = {make(&other, &retain, 0.30, 0.60, kGainFromPrior)};
  EXPECT_EQ(ChooseBestFix(nullptr, kept).best, nullptr);
}

// Among equal gains (a caveat's measurement fixes, efficacy 0) the lower
// effort, then the suggestions' order: the old code kept the first of any
// equal gain.
TEST(ReportDataTest, BestFixAmongEqualGainsIsTheCheapest) {
  Rule rule;
  Finding top;
  top.rule = &rule;
  Suggestion rerun{}, merge{}, other{};
  rerun.risk.effort = "medium";
  merge.risk.effort = "low";
  other.risk.effort = "low";
  auto make = [&](const Suggestion* s) {
    SuggestionOutcome o;
    o.finding = &top, o.suggestion = s;
    return o;
  };
  std::vector<SuggestionOutcome> kept = {make(&rerun), make(&merge), make(&other)};
  EXPECT_EQ(ChooseBestFix(&top, kept).best, &kept[1]);
  kept[0].gain_max = 0.01;  // a larger gain still wins over a lower effort
  EXPECT_EQ(ChooseBestFix(&top, kept).best, &kept[0]);
}

// TraceLens's vLLM decode replay (MI300X, graph-replayed, no steps): the
// headline is the compute finding (10.72 ms = 56.1% of the 19.11 ms trace),
// not the op-coverage caveat (3.1%, no time impact), which the old code led
// with, and with its "Profile one step without graphs" as the best fix. No
// compute suggestion applies under the latency target (the GEMMs are bf16
// already, no convolution, Inductor's code in the compute), so there is no
// best fix; the caveat is named beside the headline with its cheapest fix,
// the capture merge.
TEST(ReportDataTest, VllmHeadlineIsTheComputeNotTheCoverageCaveat) {
  auto run =
      Build(testing::ImportFixture("tracelens/inference__vllm_decode_full__graph_execution.json.gz"), "vllm.json.gz");
  const ReportData& r = run->data;
  ASSERT_NE(r.top_finding, nullptr);
  EXPECT_EQ(r.top_finding->rule->id, "compute_time");
  EXPECT_NEAR(r.top_finding->impact.share, 10717708.0 / 19114059.0, 1e-6);
  EXPECT_EQ(r.best_fix, nullptr);
  ASSERT_NE(r.caveat, nullptr);
  EXPECT_EQ(r.caveat->rule->id, "low_op_coverage");
  ASSERT_NE(r.caveat_fix, nullptr);
  EXPECT_EQ(r.caveat_fix->suggestion->id, "merge_capture_trace");
}

// A trace of many steps draws at most kReportStepBars bars, each a run of
// consecutive steps by its longest (hand-made data: 1,200 steps of 1 ms, one
// of 9 ms); the table holds the same bars, and the page says so.
TEST(ReportDataTest, StepChartOfManyStepsIsBounded) {
  ReportData r;
  for (int i = 0; i < 1200; ++i)
    r.steps.push_back({"ProfilerStep#" + std::to_string(i), i == 700 ? 9.0 : 1.0, i == 700});
  r.median_step_ms = 1;
  render::Document doc = ReportToDocument(r);
  const render::Table* table = nullptr;
  std::string text;
  std::function<void(const render::Section&)> walk = [&](const render::Section& s) {
    for (const render::Block& b : s.blocks) {
      if (const auto* c = std::get_if<render::Chart>(&b); c && c->data.key == "steps") table = &c->data;
      if (const auto* p = std::get_if<render::Paragraph>(&b)) text += p->text + "\n";
    }
    for (const render::Section& c : s.sections) walk(c);
  };
  for (const render::Section& s : doc.sections) walk(s);
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->rows.size(), 400u);  // 1,200 / ceil(1,200 / 500) = 3 steps a bar
  EXPECT_EQ(table->rows[233][0].str(), "ProfilerStep#699 to ProfilerStep#701");
  EXPECT_DOUBLE_EQ(table->rows[233][1].number(), 9.0);
  EXPECT_TRUE(table->rows[233][2].boolean());
  EXPECT_FALSE(table->rows[0][2].boolean());
  EXPECT_NE(text.find("1200 steps, drawn as 400 bars of 3 consecutive steps"), std::string::npos) << text;
}

}  // namespace
}  // namespace aiprof
