// The recipe of an analysis (docs/ARCHITECTURE.md, "How to add an
// analysis"): its folder's AnalysisSpec lists every metric it publishes,
// those lists and the window's make the catalogue, and each metric belongs
// to one of them.
#include "src/analysis/analysis_spec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "src/analysis/analyze.h"
#include "src/analysis/metrics/metric_set.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

TEST(AnalysisSpecTest, EachMetricIsCataloguedOnceByOneOwner) {
  std::map<std::string_view, std::string_view> owner;
  size_t owned = 0;
  for (const AnalysisSpec* a : AllAnalyses()) {
    for (const MetricInfo& m : a->metrics) {
      ++owned;
      auto [it, added] = owner.emplace(m.name, a->name);
      EXPECT_TRUE(added) << m.name << " is listed by " << it->second << " and " << a->name;
      EXPECT_NE(FindMetricInfo(m.name), nullptr) << m.name;
    }
  }
  const std::vector<MetricInfo>& all = MetricCatalogue();
  std::set<std::string_view> names;
  for (const MetricInfo& m : all) EXPECT_TRUE(names.insert(m.name).second) << m.name << " catalogued twice";
  EXPECT_GT(owned, 90u);         // most metrics are an analysis's own
  EXPECT_LT(owned, all.size());  // the window's are no analysis's
  EXPECT_TRUE(
      std::is_sorted(all.begin(), all.end(), [](const MetricInfo& a, const MetricInfo& b) { return a.name < b.name; }));
}

TEST(AnalysisSpecTest, RegistryOrderIsAnalysisNames) {
  std::vector<std::string_view> names;
  for (const AnalysisSpec* a : AllAnalyses()) names.push_back(a->name);
  EXPECT_EQ(names, AnalysisNames());
}

// On real traces (a GPU training step, three ranks' collectives with a
// failure, LLM serving on CPU, the SDK's requests; page faults' traces are
// not among them), what each analysis publishes, values and unavailable
// alike, is in its own spec's list.
TEST(AnalysisSpecTest, AnAnalysisPublishesOnlyItsOwnMetrics) {
  const std::string data = AIPROF_TEST_DATA_DIR;
  size_t published = 0;
  for (const std::string& path :
       {data + "/resnet50_num_workers_0.pt.trace.json.gz", data + "/crash_gloo/late_past_timeout",
        data + "/llm_cpu/vllm_batched.pt.trace.json.gz", data + "/sdk/requests_native_v5.aiprof"}) {
    std::unique_ptr<Trace> trace = testing::MustImport(path);
    ASSERT_TRUE(trace);
    AnalysisResults results(*trace, AnalyzeOptions{});
    for (const AnalysisSpec* a : AllAnalyses()) {
      if (a->applies != nullptr && !a->applies(*trace)) continue;
      std::set<std::string_view> own;
      for (const MetricInfo& m : a->metrics) own.insert(m.name);
      MetricSet m;
      a->publish(results, &m);
      for (const auto& [name, value] : m.values()) {
        EXPECT_TRUE(own.count(name)) << path << ": " << a->name << " publishes " << name << ", not in its spec";
        ++published;
      }
      for (const auto& [name, why] : m.unavailable()) {
        EXPECT_TRUE(own.count(name)) << path << ": " << a->name << " marks " << name << ", not in its spec";
      }
    }
  }
  EXPECT_GT(published, 100u);
}

}  // namespace
}  // namespace aiprof
