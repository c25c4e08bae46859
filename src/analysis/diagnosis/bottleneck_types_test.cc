#include "src/analysis/diagnosis/bottleneck_types.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "src/analysis/diagnosis/diagnose.h"
#include "src/analysis/gaps/idle_gaps.h"
#include "src/analysis/rules/rule_loader.h"

namespace aiprof {
namespace {

// A shipped rule's bottleneck type is in the table, so what it implies is
// stated once (a rule with a type the table lacks would silently lose its
// traits: ordering, additivity, the timeline's gap markers).
TEST(BottleneckTypesTest, EveryShippedRulesTypeIsInTheTable) {
  auto rules = LoadBuiltinRules();
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  for (const Rule& r : *rules) EXPECT_NE(FindBottleneckType(r.bottleneck), nullptr) << r.id << ": " << r.bottleneck;
  EXPECT_NE(FindBottleneckType(UnexplainedTimeRule().bottleneck), nullptr);
  std::set<std::string_view> names;
  for (const BottleneckType& t : BottleneckTypes()) EXPECT_TRUE(names.insert(t.name).second) << t.name;
  EXPECT_EQ(FindBottleneckType("my_own_type"), nullptr);
  EXPECT_FALSE(ExclusiveImpact("my_own_type"));
}

// docs/rules.md: the first six shipped impacts are disjoint parts of the
// step; compute is descriptive, attribution a caveat, long_tail a spread.
TEST(BottleneckTypesTest, TraitsAreTheDocumentedOnes) {
  std::set<std::string> exclusive;
  for (const BottleneckType& t : BottleneckTypes()) {
    if (t.exclusive_impact) exclusive.insert(std::string(t.name));
  }
  EXPECT_EQ(exclusive, (std::set<std::string>{"host_bound", "sync_bound", "data_loading", "memcpy",
                                              "communication_bound", "layout_conversion"}));
  EXPECT_TRUE(DescriptiveFinding("compute"));
  EXPECT_TRUE(CaveatFinding("attribution"));
  EXPECT_TRUE(SpreadFinding("long_tail"));
  EXPECT_FALSE(SpreadFinding("host_bound"));
}

// Each gap cause named in the table is a cause the gaps analysis gives.
TEST(BottleneckTypesTest, GapCausesAreTheGapsAnalysissNames) {
  std::set<std::string_view> causes;
  for (GapCause c : {GapCause::kDataLoading, GapCause::kSync, GapCause::kHostBound, GapCause::kOther,
                     GapCause::kStartup}) {
    causes.insert(GapCauseName(c));
  }
  size_t with_cause = 0;
  for (const BottleneckType& t : BottleneckTypes()) {
    if (t.gap_cause.empty()) continue;
    ++with_cause;
    EXPECT_TRUE(causes.count(t.gap_cause)) << t.name << ": " << t.gap_cause;
  }
  EXPECT_EQ(with_cause, 5u);  // host_bound, sync_bound, data_loading, startup, graph_capture
}

}  // namespace
}  // namespace aiprof
