#include "src/report/suggestions/suggestions_doc.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>

#include "src/analysis/analyze.h"
#include "src/analysis/diagnosis/suggest.h"
#include "src/analysis/rules/rule_loader.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

struct SuggestRun {
  std::unique_ptr<Trace> trace;
  std::vector<Rule> rules;
  MetricSet metrics;
  Diagnosis diagnosis;
  SuggestResult result;
  SuggestOptions options;
};

std::unique_ptr<SuggestRun> RunSuggest(const std::string& path, const std::string& constraints) {
  auto run = std::make_unique<SuggestRun>();
  auto rules = LoadBuiltinRules();
  EXPECT_TRUE(rules.ok()) << rules.status().message();
  run->rules = std::move(rules).value();
  auto trace = testing::ImportPath(path);
  EXPECT_TRUE(trace.ok()) << trace.status().message();
  run->trace = std::move(trace).value();
  run->metrics = ComputeAllMetrics(*run->trace, AnalyzeOptions{});
  run->diagnosis = Diagnose(*run->trace, run->metrics, run->rules);
  auto parsed = ParseConstraints(constraints);
  EXPECT_TRUE(parsed.ok());
  run->options.constraints = parsed.value();
  run->result = Suggest(run->diagnosis, run->metrics, run->options);
  return run;
}

// The YAML file reads back (yaml-cpp) with every kept and excluded
// suggestion of the run, its changes, gains and the finding it answers.
TEST(SuggestionsDocTest, YamlReadsBackWithEverySuggestion) {
  auto run = RunSuggest(std::string(AIPROF_TEST_DATA_DIR) + "/resnet50_num_workers_0.pt.trace.json.gz", "effort<=medium");
  ASSERT_FALSE(run->result.kept.empty());
  DiagnosisReport report{"resnet50.json", &run->metrics, &run->diagnosis, &run->result, &run->options};
  YAML::Node doc = YAML::Load(SuggestionsToYaml(report));
  EXPECT_EQ(doc["schema"].as<std::string>(), "aiprof.suggestions/1");
  EXPECT_EQ(doc["target"].as<std::string>(), "latency");
  ASSERT_EQ(doc["constraints"].size(), 1u);
  EXPECT_EQ(doc["constraints"][0].as<std::string>(), "effort<=medium");
  ASSERT_EQ(doc["suggestions"].size(), run->result.kept.size());
  for (size_t i = 0; i < run->result.kept.size(); ++i) {
    const SuggestionOutcome& o = run->result.kept[i];
    YAML::Node s = doc["suggestions"][i];
    EXPECT_EQ(s["id"].as<std::string>(), o.suggestion->id);
    EXPECT_EQ(s["answers"]["finding"].as<std::string>(), o.finding->rule->id);
    EXPECT_EQ(s["answers"]["confidence"].as<std::string>(), ConfidenceName(o.finding->confidence));
    EXPECT_NEAR(s["expected_gain"]["min"].as<double>(), o.gain_min, 1e-12);
    EXPECT_NEAR(s["expected_gain"]["max"].as<double>(), o.gain_max, 1e-12);
    EXPECT_EQ(s["expected_gain"]["of"].as<std::string>(), o.finding->impact.basis);
    ASSERT_EQ(s["changes"].size(), o.suggestion->changes.size());
    for (size_t c = 0; c < o.suggestion->changes.size(); ++c) {
      EXPECT_EQ(s["changes"][c]["setting"].as<std::string>(), o.suggestion->changes[c].setting);
      EXPECT_EQ(s["changes"][c]["value"].as<std::string>(), o.suggestion->changes[c].value);
    }
  }
  ASSERT_EQ(doc["excluded"].size(), run->result.excluded.size());
  // The data-loading fix of this real num_workers=0 run names DataLoader(num_workers).
  bool names_workers = false;
  for (const auto& s : doc["suggestions"]) {
    for (const auto& c : s["changes"]) {
      names_workers |= c["setting"].as<std::string>() == "torch.utils.data.DataLoader(num_workers)";
    }
  }
  EXPECT_TRUE(names_workers);
}

// A prior bounded by its finding's replayed removal carries the bound as
// data (expected_gain.cap), not only in the origin's prose: the removal
// replayed from 10 to 9 ms bounds every prior of that finding at 10%.
TEST(SuggestionsDocTest, APriorsCapIsInTheDocument) {
  auto run = RunSuggest(std::string(AIPROF_TEST_DATA_DIR) + "/resnet50_num_workers_0.pt.trace.json.gz", "");
  ASSERT_FALSE(run->diagnosis.findings.empty());
  SimulatedGain replay;
  replay.scenario = "remove-comm";
  replay.steps = 5;
  replay.measured_ns = 10e6;
  replay.predicted_ns = replay.predicted_lo_ns = replay.predicted_hi_ns = 9e6;
  for (Finding& f : run->diagnosis.findings) f.impact.replayed = replay;
  run->result = Suggest(run->diagnosis, run->metrics, run->options);
  DiagnosisReport report{"resnet50.json", &run->metrics, &run->diagnosis, &run->result, &run->options};
  YAML::Node doc = YAML::Load(SuggestionsToYaml(report));
  size_t priors = 0;
  for (size_t i = 0; i < run->result.kept.size(); ++i) {
    const SuggestionOutcome& o = run->result.kept[i];
    YAML::Node cap = doc["suggestions"][i]["expected_gain"]["cap"];
    if (o.gain_source != kGainFromPrior) {
      EXPECT_FALSE(cap.IsDefined()) << o.suggestion->id;
      continue;
    }
    ++priors;
    ASSERT_TRUE(cap.IsMap()) << o.suggestion->id;
    EXPECT_NEAR(cap["max"].as<double>(), 0.1, 1e-12);
    EXPECT_EQ(cap["scenario"].as<std::string>(), "remove-comm");
    EXPECT_EQ(cap["applied"].as<bool>(), o.prior_capped);
    EXPECT_LE(doc["suggestions"][i]["expected_gain"]["max"].as<double>(), 0.1 + 1e-12);
  }
  EXPECT_GT(priors, 0u);
}

// What the constraints exclude is listed with the reason.
TEST(SuggestionsDocTest, ExcludedSuggestionsSayWhy) {
  auto run = RunSuggest(std::string(AIPROF_TEST_DATA_DIR) + "/resnet50_num_workers_0.pt.trace.json.gz",
                        "memory_increase<1%");
  DiagnosisReport report{"resnet50.json", &run->metrics, &run->diagnosis, &run->result, &run->options};
  YAML::Node doc = YAML::Load(SuggestionsToYaml(report));
  bool found = false;
  for (const auto& e : doc["excluded"]) {
    if (e["id"].as<std::string>() != "dataloader_workers") continue;
    found = true;
    EXPECT_NE(e["reason"].as<std::string>().find("memory_increase<1%"), std::string::npos) << e["reason"];
  }
  EXPECT_TRUE(found);
  for (const auto& s : doc["suggestions"]) EXPECT_NE(s["id"].as<std::string>(), "dataloader_workers");
}

// Hostile text (YAML indicators, quotes, newlines, a fake key) stays one
// string value in YAML and JSON.
TEST(SuggestionsDocTest, HostileStringsStayStrings) {
  auto run = RunSuggest(std::string(AIPROF_TEST_DATA_DIR) + "/resnet50_num_workers_0.pt.trace.json.gz", "");
  const std::string hostile = "x\": 1\n- evil: true\n</script><img src=x onerror=alert(1)> 'q' #c &a *b";
  DiagnosisReport report{hostile, &run->metrics, &run->diagnosis, &run->result, &run->options};
  YAML::Node doc = YAML::Load(SuggestionsToYaml(report));
  EXPECT_EQ(doc["source"].as<std::string>(), hostile);
  EXPECT_FALSE(doc["evil"]);
  YAML::Node json = YAML::Load(SuggestionsToJson(report));  // JSON is YAML 1.2 flow
  EXPECT_EQ(json["source"].as<std::string>(), hostile);
  EXPECT_EQ(json["suggestions"].size(), doc["suggestions"].size());
}

TEST(TreeTest, NumbersAndNonFinite) {
  Tree t = Tree::Map();
  t.Set("a", Tree::Number(0.1));
  t.Set("b", Tree::Number(std::nan("")));
  t.Set("c", Tree::Number(3));
  t.Set("d", Tree::Bool(true));
  EXPECT_EQ(TreeToJson(t), "{\n  \"a\": 0.1,\n  \"b\": null,\n  \"c\": 3,\n  \"d\": true\n}\n");
  YAML::Node y = YAML::Load(TreeToYaml(t));
  EXPECT_DOUBLE_EQ(y["a"].as<double>(), 0.1);
  EXPECT_TRUE(y["b"].IsNull());
  EXPECT_EQ(y["c"].as<int>(), 3);
  EXPECT_TRUE(y["d"].as<bool>());
}

}  // namespace
}  // namespace aiprof
