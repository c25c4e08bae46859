// The compute finding's suggestions (and fusion_missing's torch.compile
// advice) on real traces: the conditions of rules/compute.yaml and
// rules/fusion_missing.yaml through the diagnosis and suggest, over the
// metrics whose figures src/analysis/attribution/compute_rules_test.cc checks.
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

using testing::ImportFixture;

constexpr char kVllmDecodeReplay[] = "tracelens/inference__vllm_decode_full__graph_execution.json.gz";
constexpr char kResnet50Fp32[] =
    "kineto/kineto__tb_plugin__samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz";
constexpr char kResnetMi300Bf16[] = "tracelens/mi300__resnet_act_checkpoint.json.gz";

struct ComputeRulesOutcome {
  MetricSet metrics;
  std::vector<std::string> kept, excluded;  // "rule/suggestion"
};

ComputeRulesOutcome ComputeRulesOn(const Trace& trace) {
  ComputeRulesOutcome o;
  o.metrics = ComputeAllMetrics(trace, AnalyzeOptions{});
  auto rules = LoadBuiltinRules();
  EXPECT_TRUE(rules.ok()) << rules.status().message();
  if (!rules.ok()) return o;
  const Diagnosis d = Diagnose(trace, o.metrics, *rules);
  SuggestOptions options;
  options.target = "throughput";  // every target of the compute suggestions
  const SuggestResult r = Suggest(d, o.metrics, options);
  for (const SuggestionOutcome& s : r.kept) o.kept.push_back(s.finding->rule->id + "/" + s.suggestion->id);
  for (const SuggestionOutcome& s : r.excluded) o.excluded.push_back(s.finding->rule->id + "/" + s.suggestion->id);
  return o;
}

bool HasId(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The vLLM decode replay (TraceLens, MI300: one hipGraphLaunch replaying 421
// kernels, attribution/compute_rules_test.cc): its GEMMs are bf16, it has no
// convolution, and Inductor compiled it, so none of the four applies.
TEST(ComputeFindingTest, GraphReplayedDecodeStepGetsNoComputeSuggestion) {
  auto t = ImportFixture(kVllmDecodeReplay);
  ASSERT_NE(t, nullptr);
  const ComputeRulesOutcome o = ComputeRulesOn(*t);
  for (const char* s : {"lower_precision_compute", "channels_last_compute", "library_autotune", "compile_fuse"}) {
    EXPECT_TRUE(HasId(o.excluded, std::string("compute_time/") + s)) << s;
    EXPECT_FALSE(HasId(o.kept, std::string("compute_time/") + s)) << s;
  }
}

// float32 convolutions (ResNet50 on a V100, Kineto's sample): autocast,
// channels_last and the library's autotuning all apply.
TEST(ComputeFindingTest, Float32ConvolutionsKeepAutocastAndChannelsLast) {
  auto t = ImportFixture(kResnet50Fp32);
  ASSERT_NE(t, nullptr);
  const ComputeRulesOutcome o = ComputeRulesOn(*t);
  ASSERT_TRUE(o.metrics.Get("compute_low_precision_ratio"));
  EXPECT_EQ(o.metrics.Get("compute_low_precision_ratio")->value, 0);
  EXPECT_GT(o.metrics.Get("compute_conv_ratio")->value, 0.5);
  EXPECT_EQ(o.metrics.Get("compute_compiled_ratio")->value, 0);
  for (const char* s : {"lower_precision_compute", "channels_last_compute", "library_autotune", "compile_fuse"}) {
    EXPECT_TRUE(HasId(o.kept, std::string("compute_time/") + s)) << s;
  }
}

// bf16 convolutions (MI300 ResNet with activation checkpointing, MIOpen
// igemm_*_bf16): channels_last applies, autocast does not; fusion_missing
// fires on this eager trace and says torch.compile, not the compiled advice.
TEST(ComputeFindingTest, Bf16ConvolutionsKeepChannelsLastOnly) {
  auto t = ImportFixture(kResnetMi300Bf16);
  ASSERT_NE(t, nullptr);
  const ComputeRulesOutcome o = ComputeRulesOn(*t);
  EXPECT_GT(o.metrics.Get("compute_low_precision_ratio")->value, 0.5);
  EXPECT_GE(o.metrics.Get("compute_conv_ratio")->value, 0.05);
  EXPECT_TRUE(HasId(o.kept, "compute_time/channels_last_compute"));
  EXPECT_TRUE(HasId(o.excluded, "compute_time/lower_precision_compute"));
  EXPECT_TRUE(HasId(o.kept, "fusion_missing/torch_compile"));
  EXPECT_TRUE(HasId(o.excluded, "fusion_missing/compile_eager_rest"));
}

}  // namespace
}  // namespace aiprof
