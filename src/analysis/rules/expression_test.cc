#include "src/analysis/rules/expression.h"

#include <gtest/gtest.h>

#include <map>

namespace aiprof {
namespace {

MetricSet Metrics() {
  MetricSet m;
  m.Set("device_util", 0.55, "test");
  m.Set("launches_per_step", 1217, "test");
  m.Set("step_time_mean_ns", 2.5e6, "test");
  m.Set("memory_peak_reserved_bytes", 3.5e9, "test");
  m.SetUnavailable("comm_ratio", "no collectives in this trace");
  return m;
}

Truth Eval(const std::string& text) {
  auto e = Expression::Parse(text);
  EXPECT_TRUE(e.ok()) << e.status().message();
  return e.ok() ? e->Evaluate(Metrics()).truth : Truth::kUnknown;
}

TEST(ExpressionTest, ComparisonsWithUnitsOnBothSidesOfTheThreshold) {
  EXPECT_EQ(Eval("device_util < 60%"), Truth::kTrue);
  EXPECT_EQ(Eval("device_util < 55%"), Truth::kFalse);  // 0.55 is not < 0.55
  EXPECT_EQ(Eval("device_util <= 55%"), Truth::kTrue);
  EXPECT_EQ(Eval("device_util < 0.56"), Truth::kTrue);
  EXPECT_EQ(Eval("launches_per_step > 1216"), Truth::kTrue);
  EXPECT_EQ(Eval("launches_per_step > 1217"), Truth::kFalse);
  EXPECT_EQ(Eval("step_time_mean_ns >= 2.5ms"), Truth::kTrue);
  EXPECT_EQ(Eval("step_time_mean_ns > 2500us"), Truth::kFalse);
  EXPECT_EQ(Eval("memory_peak_reserved_bytes > 3GB"), Truth::kTrue);
  EXPECT_EQ(Eval("memory_peak_reserved_bytes > 3.5GB"), Truth::kFalse);
  EXPECT_EQ(Eval("memory_peak_reserved_bytes < 3.3GiB"), Truth::kTrue);  // 3.54e9 bytes
  EXPECT_EQ(Eval("60% > device_util"), Truth::kTrue);  // number on the left
}

TEST(ExpressionTest, BooleanLogicIsThreeValued) {
  EXPECT_EQ(Eval("device_util < 60% and launches_per_step > 1000"), Truth::kTrue);
  EXPECT_EQ(Eval("device_util < 50% or launches_per_step > 1000"), Truth::kTrue);
  EXPECT_EQ(Eval("not (device_util < 60%)"), Truth::kFalse);
  EXPECT_EQ(Eval("comm_ratio > 10%"), Truth::kUnknown);
  EXPECT_EQ(Eval("comm_ratio > 10% and device_util > 90%"), Truth::kFalse);  // false wins
  EXPECT_EQ(Eval("comm_ratio > 10% or device_util < 90%"), Truth::kTrue);    // true wins
  EXPECT_EQ(Eval("comm_ratio > 10% and device_util < 90%"), Truth::kUnknown);
  EXPECT_EQ(Eval("not comm_ratio > 10%"), Truth::kUnknown);
}

TEST(ExpressionTest, MarginAndMissingMetricsAreReported) {
  auto e = Expression::Parse("device_util < 50% or launches_per_step > 1000 or comm_ratio > 1%");
  ASSERT_TRUE(e.ok());
  EvalResult r = e->Evaluate(Metrics());
  EXPECT_EQ(r.truth, Truth::kTrue);
  ASSERT_EQ(r.comparisons.size(), 2u);
  EXPECT_FALSE(r.comparisons[0].holds);
  EXPECT_TRUE(r.comparisons[1].holds);
  EXPECT_NEAR(r.comparisons[1].margin, 0.217, 1e-9);
  EXPECT_EQ(r.missing_metrics, std::set<std::string>{"comm_ratio"});
  EXPECT_EQ(e->Metrics(), (std::set<std::string>{"comm_ratio", "device_util", "launches_per_step"}));
}

TEST(ExpressionTest, ErrorsNameTheProblemAndColumn) {
  auto err = [](const std::string& text) {
    auto e = Expression::Parse(text);
    EXPECT_FALSE(e.ok()) << text;
    return e.ok() ? "" : e.status().message();
  };
  EXPECT_NE(err("gpu_utilisation < 60%").find("unknown metric 'gpu_utilisation'"), std::string::npos);
  EXPECT_NE(err("device_util < 60ms").find("does not fit"), std::string::npos);
  EXPECT_NE(err("step_time_mean_ns > 5").find("needs a unit"), std::string::npos);
  EXPECT_NE(err("device_util < 60 %% and").find("column"), std::string::npos);
  EXPECT_NE(err("device_util 60%").find("expected a comparison"), std::string::npos);
  EXPECT_NE(err("device_util < 60% and").find("ends too early"), std::string::npos);
  EXPECT_NE(err("(device_util < 60%").find("expected ')'"), std::string::npos);
  EXPECT_NE(err("device_util < launches_per_step").find("one metric and one number"), std::string::npos);
  EXPECT_NE(err("device_util = 1").find("comparison"), std::string::npos);
  EXPECT_NE(err("device_util < 5parsecs").find("unknown unit"), std::string::npos);
  EXPECT_NE(err("device_util < 1e400%").find("out of range"), std::string::npos);  // was +inf, accepted
  EXPECT_NE(err(std::string(100, '(') + "device_util < 1" + std::string(100, ')')).find("nested too deeply"),
            std::string::npos);
}

// A catalogue of two metrics with the units aiprof monitor uses.
const MetricInfo* TestCatalogue(std::string_view name) {
  static const MetricInfo kInfos[] = {{"throughput", MetricUnit::kPerSecond, "requests per second"},
                                      {"p99_latency", MetricUnit::kNanoseconds, "p99 request latency"}};
  for (const MetricInfo& i : kInfos) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

Truth EvalWith(const std::string& text, const std::map<std::string, double, std::less<>>& values) {
  auto e = Expression::Parse(text, &TestCatalogue);
  EXPECT_TRUE(e.ok()) << e.status().message();
  if (!e.ok()) return Truth::kUnknown;
  std::map<std::string, MetricValue, std::less<>> held;
  for (const auto& [k, v] : values) held[k] = MetricValue{v, true, "test"};
  return e->Evaluate([&](std::string_view name) -> const MetricValue* {
             auto it = held.find(name);
             return it == held.end() ? nullptr : &it->second;
           }).truth;
}

TEST(ExpressionTest, RatesPerSecondAndPerMinute) {
  EXPECT_EQ(EvalWith("throughput < 50/s", {{"throughput", 49.9}}), Truth::kTrue);
  EXPECT_EQ(EvalWith("throughput < 50/s", {{"throughput", 50.1}}), Truth::kFalse);
  EXPECT_EQ(EvalWith("throughput < 600/min", {{"throughput", 9.9}}), Truth::kTrue);
  EXPECT_EQ(EvalWith("throughput < 600/min", {{"throughput", 10.1}}), Truth::kFalse);
  EXPECT_EQ(EvalWith("throughput < 50", {{"throughput", 49}}), Truth::kTrue);  // a rate needs no unit
  EXPECT_FALSE(Expression::Parse("p99_latency > 50/s", &TestCatalogue).ok());
  EXPECT_FALSE(Expression::Parse("device_util < 50/s").ok());  // the analyses' catalogue: a ratio
  // The monitor's names are not rule metrics.
  EXPECT_FALSE(Expression::Parse("throughput < 50/s").ok());
}

TEST(ExpressionTest, BaselineScalesTheThreshold) {
  const std::map<std::string, double, std::less<>> v = {{"p99_latency", 1.25e9}, {"baseline.p99_latency", 1.0e9}};
  EXPECT_EQ(EvalWith("p99_latency > 1.2 * baseline", v), Truth::kTrue);
  EXPECT_EQ(EvalWith("p99_latency > 1.3 * baseline", v), Truth::kFalse);
  EXPECT_EQ(EvalWith("p99_latency > baseline * 1.3", v), Truth::kFalse);
  EXPECT_EQ(EvalWith("p99_latency > baseline", v), Truth::kTrue);
  EXPECT_EQ(EvalWith("1.2 * baseline < p99_latency", v), Truth::kTrue);
  // Without a stored baseline the comparison is unknown, never true.
  EXPECT_EQ(EvalWith("p99_latency > 1.2 * baseline", {{"p99_latency", 5e9}}), Truth::kUnknown);
  auto e = Expression::Parse("p99_latency > 1.2 * baseline or throughput < 5/s", &TestCatalogue);
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->UsesBaseline());
  EXPECT_FALSE(Expression::Parse("throughput < 5/s", &TestCatalogue)->UsesBaseline());
  auto err = [](const std::string& text) {
    auto r = Expression::Parse(text, &TestCatalogue);
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_NE(err("p99_latency > 1.2 * throughput").find("only scales the baseline"), std::string::npos);
  EXPECT_NE(err("p99_latency > 2s * baseline").find("only scales the baseline"), std::string::npos);
  EXPECT_NE(err("baseline > 1.2").find("one metric and one number"), std::string::npos);
}

}  // namespace
}  // namespace aiprof
