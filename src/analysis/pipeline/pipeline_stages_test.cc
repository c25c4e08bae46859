#include "src/analysis/pipeline/pipeline_stages.h"

#include <gtest/gtest.h>

#include "src/analysis/metrics/metric_set.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportJsonText;

// Hand-made trace (labelled: not from a profiler), times in µs.
// Thread 1, two requests:
//   stage:preprocess       0..100   op 0..60                       work 60
//   stage:image_generator 100..400  op 100..250, node:vae_decode 300..390 (op 310..380)
//                                                                  work 150+90 = 240
//   stage:postprocess    400..450   op 400..440                    work 40
//   stage:preprocess     450..550   op 450..500                    work 50
//   stage:image_generator 550..750  op 550..700                    work 150
//   stage:postprocess    750..800   op 750..800                    work 50
// Thread 2: pipeline/upload 445..470 (op 446..468, work 22), fed by a flow
// from postprocess's op at 430.
// Pipeline time = Σ top-level spans = 100+300+50+100+200+50+25 = 825 µs.
constexpr char kStagesTrace[] = R"({"traceEvents":[
 {"ph":"X","cat":"user_annotation","name":"stage:preprocess","pid":1,"tid":1,"ts":0,"dur":100},
 {"ph":"X","cat":"cpu_op","name":"aten::resize","pid":1,"tid":1,"ts":0,"dur":60},
 {"ph":"X","cat":"user_annotation","name":"stage:image_generator","pid":1,"tid":1,"ts":100,"dur":300},
 {"ph":"X","cat":"cpu_op","name":"aten::conv2d","pid":1,"tid":1,"ts":100,"dur":150},
 {"ph":"X","cat":"user_annotation","name":"node:vae_decode","pid":1,"tid":1,"ts":300,"dur":90},
 {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":310,"dur":70},
 {"ph":"X","cat":"user_annotation","name":"stage:postprocess","pid":1,"tid":1,"ts":400,"dur":50},
 {"ph":"X","cat":"cpu_op","name":"aten::clamp","pid":1,"tid":1,"ts":400,"dur":40},
 {"ph":"s","cat":"test_flow","name":"to_upload","id":7,"pid":1,"tid":1,"ts":430},
 {"ph":"X","cat":"user_annotation","name":"stage:preprocess","pid":1,"tid":1,"ts":450,"dur":100},
 {"ph":"X","cat":"cpu_op","name":"aten::resize","pid":1,"tid":1,"ts":450,"dur":50},
 {"ph":"X","cat":"user_annotation","name":"stage:image_generator","pid":1,"tid":1,"ts":550,"dur":200},
 {"ph":"X","cat":"cpu_op","name":"aten::conv2d","pid":1,"tid":1,"ts":550,"dur":150},
 {"ph":"X","cat":"user_annotation","name":"stage:postprocess","pid":1,"tid":1,"ts":750,"dur":50},
 {"ph":"X","cat":"cpu_op","name":"aten::clamp","pid":1,"tid":1,"ts":750,"dur":50},
 {"ph":"X","cat":"user_annotation","name":"pipeline/upload","pid":1,"tid":2,"ts":445,"dur":25},
 {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":2,"ts":446,"dur":22},
 {"ph":"f","bp":"e","cat":"test_flow","name":"to_upload","id":7,"pid":1,"tid":2,"ts":450}
]})";

const PipelineStage* FindStage(const PipelineResult& r, std::string_view name, size_t* index = nullptr) {
  for (size_t i = 0; i < r.stages.size(); ++i) {
    if (r.stages[i].name == name) {
      if (index != nullptr) *index = i;
      return &r.stages[i];
    }
  }
  return nullptr;
}

TEST(PipelineStagesTest, StageNameConvention) {
  EXPECT_EQ(StageName("stage:image_generator").value_or(""), "image_generator");
  EXPECT_EQ(StageName("node: decoder").value_or(""), "decoder");
  EXPECT_EQ(StageName("pipeline/upload").value_or(""), "upload");
  EXPECT_FALSE(StageName("stage:").has_value());
  EXPECT_FALSE(StageName("Stage:x").has_value());
  EXPECT_FALSE(StageName("aten::mm").has_value());
}

TEST(PipelineStagesTest, HandMadeTraceSharesWorkAndGraph) {
  auto t = ImportJsonText(kStagesTrace);
  ASSERT_TRUE(t);
  PipelineResult r = ComputePipelineStages(*t);
  EXPECT_EQ(r.pipeline_ns, 825'000);
  ASSERT_EQ(r.stages.size(), 5u);
  EXPECT_EQ(r.stages[0].name, "image_generator");
  const PipelineStage* gen = &r.stages[0];
  EXPECT_EQ(gen->instances, 2u);
  EXPECT_EQ(gen->total_ns, 500'000);
  EXPECT_EQ(gen->working_ns, 390'000);
  EXPECT_EQ(gen->waiting_ns, 110'000);
  EXPECT_NEAR(gen->latency_share, 500.0 / 825, 1e-12);
  const PipelineStage* pre = FindStage(r, "preprocess");
  ASSERT_NE(pre, nullptr);
  EXPECT_EQ(pre->working_ns, 110'000);
  EXPECT_EQ(pre->waiting_ns, 90'000);
  const PipelineStage* vae = FindStage(r, "vae_decode");
  ASSERT_NE(vae, nullptr);
  EXPECT_EQ(vae->top_level_instances, 0u);
  EXPECT_EQ(vae->working_ns, 70'000);
  EXPECT_NEAR(vae->latency_share, 90.0 / 825, 1e-12);
  const PipelineStage* up = FindStage(r, "upload");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->working_ns, 22'000);
  ASSERT_TRUE(r.top_stage && r.limiting_stage);
  EXPECT_EQ(*r.top_stage, 0u);
  EXPECT_EQ(*r.limiting_stage, 0u);  // mean work 195 µs vs vae 70, preprocess 55, postprocess 45, upload 22

  size_t ipre = 0, igen = 0, ipost = 0, ivae = 0, iup = 0;
  FindStage(r, "preprocess", &ipre), FindStage(r, "image_generator", &igen), FindStage(r, "postprocess", &ipost);
  FindStage(r, "vae_decode", &ivae), FindStage(r, "upload", &iup);
  auto count = [&](StageEdgeKind k, size_t a, size_t b) -> uint64_t {
    for (const StageEdge& e : r.edges) {
      if (e.kind == k && e.from == a && e.to == b) return e.count;
    }
    return 0;
  };
  EXPECT_EQ(count(StageEdgeKind::kThen, ipre, igen), 2u);
  EXPECT_EQ(count(StageEdgeKind::kThen, igen, ipost), 2u);
  EXPECT_EQ(count(StageEdgeKind::kThen, ipost, ipre), 1u);
  EXPECT_EQ(count(StageEdgeKind::kContains, igen, ivae), 1u);
  EXPECT_EQ(count(StageEdgeKind::kFlow, ipost, iup), 1u);
  EXPECT_EQ(r.edges.size(), 5u);

  MetricSet m;
  PublishPipelineStages(r, &m);
  ASSERT_NE(m.Get("pipeline_top_stage_share"), nullptr);
  EXPECT_NEAR(m.Get("pipeline_top_stage_share")->value, 500.0 / 825, 1e-12);
  EXPECT_EQ(m.Evidence("pipeline").size(), 2u);
}

// Hand-made: stage spans with nothing recorded inside them (an SDK recording
// of spans alone): every stage has 0 of work, so none limits throughput; it
// named the first stage by total time ("reply" of the shipped v5 SDK file).
TEST(PipelineStagesTest, NoStageLimitsWhereNoneRecordsWork) {
  auto t = ImportJsonText(R"({"traceEvents":[
 {"ph":"X","cat":"user_annotation","name":"stage:recv","pid":1,"tid":1,"ts":0,"dur":100},
 {"ph":"X","cat":"user_annotation","name":"stage:reply","pid":1,"tid":1,"ts":100,"dur":900}]})");
  ASSERT_TRUE(t);
  PipelineResult r = ComputePipelineStages(*t);
  ASSERT_EQ(r.stages.size(), 2u);
  ASSERT_TRUE(r.top_stage);
  EXPECT_EQ(r.stages[*r.top_stage].name, "reply");
  EXPECT_FALSE(r.limiting_stage);
  MetricSet m;
  PublishPipelineStages(r, &m);
  for (const std::string& e : m.Evidence("pipeline")) EXPECT_EQ(e.find("limits throughput"), std::string::npos) << e;
}

// The largest share is not necessarily the throughput limit: a stage that
// mostly waits (1000 µs, 100 of work) against one that works 450 of 500 µs.
TEST(PipelineStagesTest, LimitingStageIsTheMostWorkNotTheLongestSpan) {
  auto t = ImportJsonText(R"({"traceEvents":[
 {"ph":"X","cat":"user_annotation","name":"stage:waits","pid":1,"tid":1,"ts":0,"dur":1000},
 {"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":0,"dur":100},
 {"ph":"X","cat":"user_annotation","name":"stage:busy","pid":1,"tid":1,"ts":1000,"dur":500},
 {"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":1000,"dur":450}]})");
  ASSERT_TRUE(t);
  PipelineResult r = ComputePipelineStages(*t);
  ASSERT_TRUE(r.top_stage && r.limiting_stage);
  EXPECT_EQ(r.stages[*r.top_stage].name, "waits");
  EXPECT_NEAR(r.stages[*r.top_stage].latency_share, 1000.0 / 1500, 1e-12);
  EXPECT_EQ(r.stages[*r.limiting_stage].name, "busy");
}

TEST(PipelineStagesTest, NoStagesIsUnavailable) {
  auto t = ImportJsonText(R"({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":5}]})");
  ASSERT_TRUE(t);
  PipelineResult r = ComputePipelineStages(*t);
  EXPECT_TRUE(r.stages.empty());
  MetricSet m;
  PublishPipelineStages(r, &m);
  EXPECT_EQ(m.Get("pipeline_top_stage_share"), nullptr);
  EXPECT_TRUE(m.UnavailableReason("pipeline_top_stage_share").has_value());
}

}  // namespace
}  // namespace aiprof
