#include "src/analysis/memcpy/memcpy_stats.h"

#include <gtest/gtest.h>

#include "src/analysis/metrics/metric_set.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportFixture;
using testing::ImportJsonText;

// Expected figures from src/analysis/testing/oracles/launch_memcpy_memory_oracle.py.
TEST(MemcpyStatsTest, AlexnetPageableHostToDevice) {
  auto t = ImportFixture(
      "kineto/HolisticTraceAnalysis__tests__data__critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz");
  ASSERT_NE(t, nullptr);
  MemcpyStats st = ComputeMemcpyStats(*t);
  const CopyTotals& h2d = st.by_direction[static_cast<size_t>(CopyDirection::kHostToDevice)];
  EXPECT_EQ(h2d.count, 16u);
  EXPECT_EQ(h2d.bytes, 244403360);
  EXPECT_EQ(h2d.time_ns, 55503000);
  EXPECT_EQ(st.total, 16u);
  EXPECT_EQ(st.pageable, 16u);
  EXPECT_EQ(st.synchronous, 0u);  // all issued by cudaMemcpyAsync
  MetricSet m;
  PublishMemcpyStats(*t, st, &m);
  EXPECT_EQ(m.Get("pageable_memcpy_count")->value, 16);
}

// HTA's MTIA inference trace: its 877 dma_request copies name no direction;
// their "direction" arg does. Counts, bytes (from "size", the importer) and
// microseconds from a Python script over the raw file (json.load, the
// dma_request X events' args.direction, args.size, dur).
TEST(MemcpyStatsTest, MtiaDmaRequestsByTheirDirectionArg) {
  auto t =
      ImportFixture("kineto/HolisticTraceAnalysis__tests__data__mtia_inference_trace__mtia_inference_rank_0.json.gz");
  ASSERT_NE(t, nullptr);
  MemcpyStats st = ComputeMemcpyStats(*t);
  const CopyTotals& h2d = st.by_direction[static_cast<size_t>(CopyDirection::kHostToDevice)];
  const CopyTotals& d2h = st.by_direction[static_cast<size_t>(CopyDirection::kDeviceToHost)];
  EXPECT_EQ(h2d.count, 427u);
  EXPECT_EQ(h2d.bytes, 788439608);
  EXPECT_NEAR(static_cast<double>(h2d.time_ns), 42611301, 1000);
  EXPECT_EQ(d2h.count, 450u);
  EXPECT_EQ(d2h.bytes, 460800);
  EXPECT_NEAR(static_cast<double>(d2h.time_ns), 2759890, 1000);
  EXPECT_EQ(st.by_direction[static_cast<size_t>(CopyDirection::kOther)].count, 0u);
}

TEST(MemcpyStatsTest, Resnet50MatchesOracle) {
  auto t = ImportFixture("kineto/kineto__tb_plugin__samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz");
  ASSERT_NE(t, nullptr);
  MemcpyStats st = ComputeMemcpyStats(*t);
  const CopyTotals& h2d = st.by_direction[static_cast<size_t>(CopyDirection::kHostToDevice)];
  EXPECT_EQ(h2d.count, 12u);
  EXPECT_EQ(h2d.bytes, 115607040);
  EXPECT_EQ(h2d.time_ns, 11492000);
  EXPECT_EQ(st.pageable, 12u);
}

// Hand-made: a pinned DtoH copy from a synchronous cudaMemcpy (counted as
// synchronous, not pageable) and a pageable HtoD from cudaMemcpyAsync.
TEST(MemcpyStatsTest, HandMadeSyncAndPageable) {
  auto t = ImportJsonText(R"J({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpy","pid":1,"tid":1,"ts":1,"dur":20,"args":{"correlation":1}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":30,"dur":2,"args":{"correlation":2}},
    {"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pinned)","pid":0,"tid":7,"ts":5,"dur":10,"args":{"device":0,"stream":7,"correlation":1,"bytes":1024}},
    {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":40,"dur":15,"args":{"device":0,"stream":7,"correlation":2,"bytes":2048}}
  ]})J");
  ASSERT_NE(t, nullptr);
  MemcpyStats st = ComputeMemcpyStats(*t);
  EXPECT_EQ(st.synchronous, 1u);
  EXPECT_EQ(st.pageable, 1u);
  EXPECT_EQ(st.by_direction[static_cast<size_t>(CopyDirection::kDeviceToHost)].bytes, 1024);
  EXPECT_EQ(st.by_direction[static_cast<size_t>(CopyDirection::kHostToDevice)].bytes, 2048);
  MetricSet m;
  PublishMemcpyStats(*t, st, &m);
  EXPECT_NEAR(m.Get("memcpy_step_ratio")->value, 25.0 / 100, 1e-12);
}

TEST(MemcpyStatsTest, CpuOnlyIsUnavailable) {
  auto t = ImportFixture("torch-cpu/mlp_train_bs32.kineto.json");
  ASSERT_NE(t, nullptr);
  MetricSet m;
  PublishMemcpyStats(*t, ComputeMemcpyStats(*t), &m);
  EXPECT_TRUE(m.UnavailableReason("pageable_memcpy_count").has_value());
}

}  // namespace
}  // namespace aiprof
