#include "src/session/session.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "src/analysis/critical_path/critical_path_analysis.h"
#include "src/analysis/gaps/gaps_analysis.h"
#include "src/analysis/llm/llm_analysis.h"
#include "src/analysis/steps/steps_analysis.h"
#include "src/analysis/summary/summary_analysis.h"
#include "src/analysis/whatif/whatif.h"
#include "src/base/phase_log.h"
#include "test/util/temp_file.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

// Counts of each "analysis.<name>" phase logged since the last call.
std::map<std::string, int> AnalysisPhases() {
  std::map<std::string, int> n;
  for (const auto& [name, ms] : TakePhaseLog()) {
    if (name.rfind("analysis.", 0) == 0) ++n[name];
  }
  return n;
}

std::string Convnet() { return testing::FixturesDir() + "/torch-cpu/convnet_bs8_channels_last.kineto.json"; }

TEST(AnalysisSession, ImportsOnceAndKeepsEachResult) {
  SessionOptions options;
  options.input = Convnet();
  auto session = AnalysisSession::Open(options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  AnalysisSession& s = **session;
  EnablePhaseLog(true);
  TakePhaseLog();
  const Summary* summary = &s.results().Get(kSummary);
  const StepStats* steps = &s.results().Get(kAllSteps);
  const AnalysisReport* analyses = &s.analyses();
  auto diagnosis = s.diagnosis();
  ASSERT_TRUE(diagnosis.ok()) << diagnosis.status().message();
  std::map<std::string, int> first = AnalysisPhases();
  // Asked again: the same objects, and nothing computed a second time.
  EXPECT_EQ(summary, &s.results().Get(kSummary));
  EXPECT_EQ(steps, &s.results().Get(kAllSteps));
  EXPECT_EQ(analyses, &s.analyses());
  auto again = s.diagnosis();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*diagnosis, *again);
  EXPECT_TRUE(AnalysisPhases().empty());
  EnablePhaseLog(false);
  EXPECT_EQ(first["analysis.summary"], 1);
  for (const auto& [name, count] : first) EXPECT_EQ(count, 1) << name;
}

// A finding whose rule names a removal (rules/*.yaml `removal`) gets it
// replayed beside its Amdahl bound, with the same figures as the what-if of
// that scenario on the session's critical path. resnet50 num_workers=0
// (data loading; its figures are those of docs/whatif.md: 189.1 -> 130.7 ms).
TEST(AnalysisSession, FindingsCarryTheirRemovalReplayed) {
  SessionOptions options;
  options.input = testing::FixturesDir() +
                  "/kineto/kineto__tb_plugin__samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz";
  auto session = AnalysisSession::Open(options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  auto diagnosis = (*session)->diagnosis();
  ASSERT_TRUE(diagnosis.ok()) << diagnosis.status().message();
  const Finding* loading = nullptr;
  for (const Finding& f : (*diagnosis)->findings) {
    if (f.rule->id == "data_loading") loading = &f;
    // Only rules that name a removal have one.
    if (f.rule->removal.empty()) {
      EXPECT_FALSE(f.impact.replayed) << f.rule->id;
    }
  }
  ASSERT_NE(loading, nullptr);
  ASSERT_TRUE(loading->impact.replayed);
  const SimulatedGain& g = *loading->impact.replayed;
  StatusOr<Scenario> sc = ParseScenario("remove-idle data_loading");
  ASSERT_TRUE(sc.ok());
  WhatIfResult w = PredictWhatIf((*session)->trace(), (*session)->results().Get(kCriticalPath), *sc);
  EXPECT_EQ(g.scenario, "remove-idle data_loading");
  EXPECT_EQ(g.steps, w.steady_steps);
  EXPECT_DOUBLE_EQ(g.measured_ns, w.measured_ns);
  EXPECT_DOUBLE_EQ(g.predicted_ns, w.predicted_ns);
  EXPECT_LT(g.predicted_ns, g.measured_ns);
  const std::string text = ImpactText(*loading);
  EXPECT_NE(text.find("replayed without it x1.45 ('remove-idle data_loading'; step wall time"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("takes its place"), std::string::npos) << text;
}

TEST(AnalysisSession, ConcurrentCallersShareOneComputation) {
  auto trace = testing::ImportFixture("torch-cpu/convnet_bs8_channels_last.kineto.json");
  ASSERT_NE(trace, nullptr);
  auto session = AnalysisSession::ForTrace(*trace);
  EnablePhaseLog(true);
  TakePhaseLog();
  std::vector<const GapsResult*> seen(4, nullptr);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] { seen[i] = &session->results().Get(kGaps); });
  }
  for (auto& t : threads) t.join();
  std::map<std::string, int> phases = AnalysisPhases();
  EnablePhaseLog(false);
  for (const GapsResult* g : seen) EXPECT_EQ(g, seen[0]);
  EXPECT_EQ(phases["analysis.breakdown"], 1);  // gaps() is the breakdown analysis
}

TEST(AnalysisSession, SamplesComeFromItsOwnTrace) {
  auto trace = testing::ImportFixture("torch-cpu/convnet_bs8_channels_last.kineto.json");
  ASSERT_NE(trace, nullptr);
  auto session = AnalysisSession::ForTrace(*trace);
  TraceSampleOptions all;
  all.warmup_steps = 0;
  auto samples = session->samples(all);
  ASSERT_TRUE(samples.ok()) << samples.status().message();
  // One sample per step, each the step's duration (checked against the
  // trace's step table directly).
  ASSERT_EQ(samples->latency_ns.size(), trace->steps.size());
  for (size_t i = 0; i < trace->steps.size(); ++i) {
    EXPECT_DOUBLE_EQ(samples->latency_ns[i], static_cast<double>(trace->steps.dur_ns[i])) << i;
  }
  TraceSampleOptions none;
  none.unit = "no_such_span_anywhere";
  EXPECT_FALSE(session->samples(none).ok());
}

// The SDK's request tokens are one result of the session: the summary, the
// llm analysis and the samples of --unit ttft read it, computed once
// (audit5: ComputeRequestTokens ran three times). Whichever reader comes
// first computes it (its phase is logged then), the others find it. The SDK
// file's 8 requests recorded no tokens, so the ttft samples fall back to
// spans and find none.
TEST(AnalysisSession, RequestTokensAreComputedOnceForEveryReader) {
  auto trace = testing::MustImport(std::string(AIPROF_TEST_DATA_DIR) + "/sdk/requests_native_v5.aiprof");
  ASSERT_NE(trace, nullptr);
  EnablePhaseLog(true);
  TakePhaseLog();
  TraceSampleOptions ttft;
  ttft.unit = "ttft";
  {  // The samples first.
    auto session = AnalysisSession::ForTrace(*trace);
    EXPECT_FALSE(session->samples(ttft).ok());
    EXPECT_EQ(AnalysisPhases(), (std::map<std::string, int>{{"analysis.request_tokens", 1}}));
    const Summary& summary = session->results().Get(kSummary);
    EXPECT_EQ(AnalysisPhases(), (std::map<std::string, int>{{"analysis.summary", 1}}));
    EXPECT_EQ(summary.requests.request_slices, 8u);
  }
  {  // The summary first.
    auto session = AnalysisSession::ForTrace(*trace);
    const Summary& summary = session->results().Get(kSummary);
    EXPECT_EQ(AnalysisPhases(), (std::map<std::string, int>{{"analysis.request_tokens", 1}, {"analysis.summary", 1}}));
    MetricSet llm;
    kLlmAnalysis.publish(session->results(), &llm);
    EXPECT_FALSE(session->samples(ttft).ok());
    EXPECT_EQ(AnalysisPhases(), (std::map<std::string, int>{{"analysis.llm", 1}}));
    EXPECT_EQ(summary.requests.request_slices, session->results().Get(kRequestTokenStats).request_slices);
    EXPECT_TRUE(llm.UnavailableReason("request_ttft_p50_ns").has_value());
  }
  EnablePhaseLog(false);
}

TEST(AnalysisSession, ErrorsNameTheInput) {
  SessionOptions missing;
  missing.input = "/nonexistent/run.json";
  auto s = AnalysisSession::Open(missing);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("/nonexistent/run.json"), std::string::npos) << s.status().message();

  testing::TempDir dir;
  SessionOptions bad_rules;
  bad_rules.input = Convnet();
  bad_rules.rule_paths = {dir.Write("bad.yaml", "rules: [ {id: x, when: \"((\"} ]\n")};
  auto session = AnalysisSession::Open(bad_rules);
  ASSERT_TRUE(session.ok());
  auto rules = (*session)->rules();
  ASSERT_FALSE(rules.ok());
  EXPECT_NE(rules.status().message().find("bad.yaml"), std::string::npos) << rules.status().message();
  // The error is kept: asked again, the same answer without reloading.
  auto again = (*session)->diagnosis();
  EXPECT_FALSE(again.ok());
}

}  // namespace
}  // namespace aiprof
