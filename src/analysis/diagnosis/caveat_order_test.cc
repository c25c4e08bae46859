// A caveat about what the trace lets aiprof see (bottleneck "attribution":
// op coverage, CaveatFinding) never leads over a finding about the program:
// on TraceLens's vLLM decode replay (MI300X, one hipGraphLaunch replaying
// 421 of 425 kernels, op coverage 3.1%) the old order put "Most device time
// is not attributed to an op" (no time impact, priority low) first and the
// compute finding (10.72 ms = 56.1% of the 19.11 ms trace, priority high)
// second, because every finding but compute was ordered before compute.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "src/analysis/analyze.h"
#include "src/analysis/diagnosis/diagnose.h"
#include "src/analysis/diagnosis/suggest.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/rules/rule_loader.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

std::vector<std::string> Order(const Diagnosis& d) {
  std::vector<std::string> ids;
  for (const Finding& f : d.findings) ids.push_back(f.rule->id);
  return ids;
}

TEST(CaveatOrderTest, VllmDecodeLeadsWithComputeAndKeepsTheCoverageCaveat) {
  auto trace = testing::ImportFixture("tracelens/inference__vllm_decode_full__graph_execution.json.gz");
  ASSERT_NE(trace, nullptr);
  const MetricSet metrics = ComputeAllMetrics(*trace, AnalyzeOptions{});
  auto rules = LoadBuiltinRules();
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  const Diagnosis d = Diagnose(*trace, metrics, *rules);
  const std::vector<std::string> ids = Order(d);
  ASSERT_EQ(ids, (std::vector<std::string>{"compute_time", "low_op_coverage"}));
  const Finding& top = d.findings[0];
  EXPECT_TRUE(top.impact.quantified);
  EXPECT_NEAR(top.impact.time_ns, 10717708, 1);  // the device activity (test/e2e/compute_graph_replay_test.py)
  EXPECT_TRUE(CaveatFinding(d.findings[1].rule->bottleneck));
  EXPECT_FALSE(d.findings[1].impact.quantified);
  // The caveat's cheapest fix leads its suggestions: the capture merge
  // (graph_kernel_ratio 99.1%) before a second, eager profile.
  const SuggestResult s = Suggest(d, metrics, SuggestOptions{});
  std::vector<std::string> fixes;
  for (const SuggestionOutcome& o : s.kept) {
    if (o.finding == &d.findings[1]) fixes.push_back(o.suggestion->id);
  }
  EXPECT_EQ(fixes, (std::vector<std::string>{"merge_capture_trace", "profile_eager_step"}));
}

// Hand-made rules over set metrics: a caveat goes after every finding about
// the program, a low-priority removable cause and the compute finding
// alike, and before the unexplained time; alone with the unexplained time,
// it leads.
TEST(CaveatOrderTest, CaveatsFollowTheFindingsAboutTheProgram) {
  auto rules = ParseRules(R"(rules:
  - id: coverage
    bottleneck: attribution
    title: Coverage
    when: "op_coverage < 50%"
    confidence:
      high: "op_coverage < 20%"
  - id: compute
    bottleneck: compute
    title: Compute
    when: "compute_op_ratio > 30%"
    impact: compute_op_ns
  - id: copies
    bottleneck: memcpy
    title: Copies
    when: "memcpy_exposed_ns > 0ms"
    impact: memcpy_exposed_ns
)",
                          "test.yaml");
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  Trace trace;
  MetricSet m;
  m.Set("impact_base_ns", 100e6, "window");
  m.Set("op_coverage", 0.03, "launches");
  m.Set("compute_op_ratio", 0.6, "attribution");
  m.Set("compute_op_ns", 60e6, "attribution");
  m.Set("memcpy_exposed_ns", 2e6, "memcpy");  // 2%: priority low, still before the caveat
  Diagnosis d = Diagnose(trace, m, *rules);
  EXPECT_EQ(Order(d), (std::vector<std::string>{"copies", "compute", "coverage"}));
  // Nothing about the program fired but the unexplained time: the caveat leads.
  m.Set("compute_op_ratio", 0.1, "attribution");
  m.Set("compute_op_ns", 10e6, "attribution");
  m.Set("memcpy_exposed_ns", 0, "memcpy");
  m.Set("untraced_host_ns", 80e6, "attribution");
  d = Diagnose(trace, m, *rules);
  EXPECT_EQ(Order(d), (std::vector<std::string>{"coverage", "unexplained_time"}));
}

}  // namespace
}  // namespace aiprof
