// The host_region rule (rules/host_region.yaml) through the diagnosis over
// the metrics of src/analysis/host_functions/host_regions.h, whose figures
// src/analysis/host_functions/host_regions_test.cc checks.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "src/analysis/analyze.h"
#include "src/analysis/diagnosis/diagnose.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/rules/rule_loader.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

std::unique_ptr<Trace> ImportRegionPair(const std::string& file) {
  return testing::MustImport(std::string(AIPROF_SOURCE_DIR) + "/test/data/pairs/" + file + ".pt.trace.json.gz");
}

// The rule's texts through the shipped rules on the fixed checkpoint pair
// (test/data/pairs checkpoint_every_step_after: torch.save every 10th
// step, one checkpoint in the 12 profiled steps): it fires (1.11 ms per
// step, 12.3% of the mean step), and its evidence says 0.1 instances per
// step. Its description said the region "takes a large share of every
// step" and its cause that it "runs on the step's thread every step",
// which is what this run no longer does; they now speak of the mean step
// and of a region run every step or in some steps.
TEST(HostRegionsTest, RuleTextsHoldForARegionInSomeSteps) {
  auto t = ImportRegionPair("checkpoint_every_step_after");
  const MetricSet m = ComputeAllMetrics(*t, AnalyzeOptions{});
  auto rules = LoadBuiltinRules();
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  const Diagnosis d = Diagnose(*t, m, *rules);
  const Finding* f = nullptr;
  for (const Finding& x : d.findings) {
    if (x.rule->id == "host_region") f = &x;
  }
  ASSERT_NE(f, nullptr);
  ASSERT_FALSE(f->causes.empty());
  ASSERT_FALSE(f->causes[0].evidence.empty());
  EXPECT_NE(f->causes[0].evidence[0].find("0.1 instances"), std::string::npos) << f->causes[0].evidence[0];
  EXPECT_EQ(f->rule->description.find("every step"), std::string::npos) << f->rule->description;
  EXPECT_NE(f->rule->description.find("mean step"), std::string::npos) << f->rule->description;
  for (const RankedCause& c : f->causes) {
    EXPECT_EQ(c.text.find("every step."), std::string::npos) << c.text;
    EXPECT_NE(c.text.find("in some steps"), std::string::npos) << c.text;
  }
}

}  // namespace
}  // namespace aiprof
