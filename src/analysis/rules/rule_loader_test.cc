#include "src/analysis/rules/rule_loader.h"

#include <gtest/gtest.h>

namespace aiprof {
namespace {

constexpr char kGood[] = R"(rules:
  - id: test_rule
    bottleneck: layout_conversion
    title: Conversions
    when: "layout_conversion_ratio > 5%"
    confidence:
      high: "layout_conversion_ratio > 20%"
    impact: layout_conversion_ns
    root_causes:
      - id: mismatch
        text: formats differ
        evidence: layout_conversion
    suggestions:
      - id: fix
        title: Fix it
        platform: pytorch
        action: do the thing
        efficacy: [0.5, 0.9]
        targets: [latency]
        risk: {precision_loss: 0.4%, memory_increase: 0.1, effort: medium}
)";

TEST(RuleLoaderTest, ParsesAWellFormedRule) {
  auto rules = ParseRules(kGood, "good.yaml");
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  ASSERT_EQ(rules->size(), 1u);
  const Rule& r = (*rules)[0];
  EXPECT_EQ(r.id, "test_rule");
  EXPECT_EQ(r.source, "good.yaml:2");
  ASSERT_TRUE(r.high_when.has_value());
  EXPECT_FALSE(r.medium_when.has_value());
  ASSERT_EQ(r.suggestions.size(), 1u);
  EXPECT_DOUBLE_EQ(r.suggestions[0].risk.precision_loss, 0.004);
  EXPECT_DOUBLE_EQ(r.suggestions[0].risk.memory_increase, 0.1);
  EXPECT_EQ(r.suggestions[0].risk.effort, "medium");
}

std::string LoadError(std::string yaml) {
  auto rules = ParseRules(yaml, "bad.yaml");
  EXPECT_FALSE(rules.ok());
  return rules.ok() ? "" : rules.status().message();
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  size_t pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}

// A list of platform tags: all must hold (Platform::Matches); each is checked.
TEST(RuleLoaderTest, PlatformListJoinsItsTags) {
  auto rules = ParseRules(Replace(kGood, "platform: pytorch", "platform: [pytorch, gpu]"), "good.yaml");
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  EXPECT_EQ((*rules)[0].suggestions[0].platform, "pytorch, gpu");
  EXPECT_TRUE(ParseRules(Replace(kGood, "platform: pytorch", "platform: rocm"), "good.yaml").ok());
  EXPECT_TRUE(ParseRules(Replace(kGood, "platform: pytorch", "platform: native"), "good.yaml").ok());
  EXPECT_NE(
      LoadError(Replace(kGood, "platform: pytorch", "platform: [pytorch, tpu]")).find("unknown platform value 'tpu'"),
      std::string::npos);
  EXPECT_NE(LoadError(Replace(kGood, "platform: pytorch", "platform: []")).find("at least one platform"),
            std::string::npos);
}

TEST(RuleLoaderTest, ErrorsNameFileAndLine) {
  EXPECT_EQ(LoadError(Replace(kGood, "layout_conversion_ratio > 5%", "layout_conversion_rate > 5%")),
            "bad.yaml:5: in 'when': expression \"layout_conversion_rate > 5%\", column 1: unknown metric "
            "'layout_conversion_rate' (see docs/metrics.md)");
  EXPECT_NE(LoadError(Replace(kGood, "platform: pytorch", "platform: tpu")).find("bad.yaml:16: unknown platform"),
            std::string::npos);
  EXPECT_NE(LoadError(Replace(kGood, "[0.5, 0.9]", "[0.9, 0.5]")).find("bad.yaml:18:"), std::string::npos);
  EXPECT_NE(LoadError(Replace(kGood, "    title: Conversions\n", "")).find("missing field 'title'"), std::string::npos);
  EXPECT_NE(LoadError(Replace(kGood, "impact: layout_conversion_ns", "impact: layout_conversion_ratio")).find("time metric in ns"),
            std::string::npos);
  EXPECT_NE(LoadError(Replace(kGood, "targets: [latency]", "targets: [speed]")).find("unknown targets value 'speed'"),
            std::string::npos);
  EXPECT_NE(LoadError("rules:\n  - id: [unclosed\n").find("bad.yaml:"), std::string::npos);
  EXPECT_NE(LoadError("just: text\n").find("a 'rules' list"), std::string::npos);
  std::string twice = std::string(kGood) + std::string(kGood).substr(std::string("rules:\n").size());
  EXPECT_NE(LoadError(twice).find("duplicate rule id 'test_rule'"), std::string::npos);
}

TEST(RuleLoaderTest, ShippedRulesLoadAndUserRulesOverrideById) {
  auto shipped = LoadBuiltinRules();
  ASSERT_TRUE(shipped.ok()) << shipped.status().message();
  EXPECT_GE(shipped->size(), 10u);
  size_t before = shipped->size();
  auto user = ParseRules(Replace(kGood, "id: test_rule", "id: layout_conversion"), "user.yaml");
  ASSERT_TRUE(user.ok());
  std::vector<Rule> all = std::move(shipped).value();
  MergeRules(&all, std::move(user).value());
  EXPECT_EQ(all.size(), before);
  auto it = std::find_if(all.begin(), all.end(), [](const Rule& r) { return r.id == "layout_conversion"; });
  ASSERT_NE(it, all.end());
  EXPECT_EQ(it->source, "user.yaml:2");
}

}  // namespace
}  // namespace aiprof

namespace aiprof {
namespace {

// docs/rules.md's worked example must load as written.
TEST(RuleLoaderTest, DocumentedExampleLoads) {
  auto rules = LoadRules(AIPROF_TEST_DATA_DIR "/rules/python_overhead.yaml");
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  ASSERT_EQ(rules->size(), 1u);
  EXPECT_EQ((*rules)[0].id, "python_overhead");
  EXPECT_EQ((*rules)[0].suggestions.size(), 1u);
}

}  // namespace
}  // namespace aiprof

namespace aiprof {
namespace {

// applies_if_computed names a catalogue metric (a typo fails at load).
TEST(RuleLoaderTest, AppliesIfComputedIsAKnownMetric) {
  const std::string with = std::string(kGood).insert(std::string(kGood).find("    when:"),
                                                     "    applies_if_computed: page_faults_per_step\n");
  auto rules = ParseRules(with, "a.yaml");
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  EXPECT_EQ((*rules)[0].applies_if_computed, "page_faults_per_step");
  const std::string typo = std::string(kGood).insert(std::string(kGood).find("    when:"),
                                                     "    applies_if_computed: page_faults_per_stepp\n");
  auto bad = ParseRules(typo, "b.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown metric 'page_faults_per_stepp' in 'applies_if_computed'"),
            std::string::npos);
}

// A root cause's applies_if_computed is checked the same way.
TEST(RuleLoaderTest, RootCauseAppliesIfComputedIsAKnownMetric) {
  const std::string good = R"(rules:
  - id: r
    bottleneck: long_tail
    title: T
    description: D
    when: "step_time_cv > 15%"
    impact: step_time_excess_ns
    root_causes:
      - id: faults
        text: F
        evidence: page_faults
        applies_if_computed: page_fault_ratio
        when: "page_fault_ratio > 10%"
)";
  auto rules = ParseRules(good, "a.yaml");
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  EXPECT_EQ((*rules)[0].root_causes.at(0).applies_if_computed, "page_fault_ratio");
  std::string typo = good;
  typo.replace(typo.find("applies_if_computed: page_fault_ratio"), 37, "applies_if_computed: page_fault_ration");
  auto bad = ParseRules(typo, "b.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown metric 'page_fault_ration' in 'applies_if_computed'"), std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace aiprof
