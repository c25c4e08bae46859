#include "src/analysis/long_tail/op_tails.h"

#include <gtest/gtest.h>

#include "src/analysis/metrics/metric_set.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportFixture;
using testing::ImportJsonText;

// Expected figures from src/analysis/testing/oracles/launch_memcpy_memory_oracle.py.
TEST(OpTailsTest, Resnet18CpuMatchesOracle) {
  auto t = ImportFixture("torch-cpu/resnet18_bs1_full.kineto.json");
  ASSERT_NE(t, nullptr);
  MetricSet m;
  PublishLongTails(*t, ComputeLongTails(*t), &m);
  ASSERT_NE(m.Get("long_tail_ratio"), nullptr);
  // By name and Input Dims: one of aten::mkldnn_convolution's instances over
  // [1, 512, 7, 7] (3x3, 512 filters) took 24.9 ms among same-shape ones.
  EXPECT_NEAR(m.Get("long_tail_ratio")->value, 0.5061030189600456, 1e-12);
}

// The 24.9 ms convolution is one instance seen at four depths
// (aten::conv2d > convolution > _convolution > mkldnn_convolution): the
// evidence names the innermost op once.
TEST(OpTailsTest, Resnet18EvidenceNamesTheInnermostOpOfANestingChain) {
  auto t = ImportFixture("torch-cpu/resnet18_bs1_full.kineto.json");
  ASSERT_NE(t, nullptr);
  MetricSet m;
  PublishLongTails(*t, ComputeLongTails(*t), &m);
  const std::vector<std::string>& ev = m.Evidence("long_tail");
  ASSERT_FALSE(ev.empty());
  size_t conv_lines = 0;
  for (const std::string& line : ev) {
    if (line.find("[1, 512, 7, 7], [512, 512, 3, 3]") != std::string::npos) ++conv_lines;
    EXPECT_NE(line.rfind("aten::conv2d ", 0), 0u) << line;
  }
  EXPECT_EQ(conv_lines, 1u);
  EXPECT_EQ(ev[0].rfind("aten::mkldnn_convolution ", 0), 0u) << ev[0];
}

// Hand-made: B runs inside each of A's 5 instances; the slow A (40 µs) is
// slow because its B is (35 µs): the evidence names B, not A.
TEST(OpTailsTest, HandMadeWrapperOfASlowOpIsNotListed) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":0,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":1,"dur":8},
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":100,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":101,"dur":8},
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":200,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":201,"dur":8},
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":300,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":301,"dur":8},
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":400,"dur":40},
    {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":401,"dur":35}
  ]})");
  ASSERT_NE(t, nullptr);
  LongTailResult r = ComputeLongTails(*t);
  ASSERT_EQ(r.ops.size(), 2u);
  for (const OpTail& op : r.ops) {
    EXPECT_EQ(op.tail_count, 1u) << t->Str(op.name);
    EXPECT_EQ(op.wrapping_tail_count, t->Str(op.name) == "A" ? 1u : 0u) << t->Str(op.name);
  }
  MetricSet m;
  PublishLongTails(*t, r, &m);
  const std::vector<std::string>& ev = m.Evidence("long_tail");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].rfind("B: 1 of 5", 0), 0u) << ev[0];
}

TEST(OpTailsTest, AlexnetMatchesOracle) {
  auto t = ImportFixture(
      "kineto/HolisticTraceAnalysis__tests__data__critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz");
  ASSERT_NE(t, nullptr);
  LongTailResult r = ComputeLongTails(*t);
  EXPECT_TRUE(r.device);
  MetricSet m;
  PublishLongTails(*t, r, &m);
  EXPECT_NEAR(m.Get("long_tail_ratio")->value, 0.9995675909410302, 1e-12);
}

// Hand-made: op A has 5 instances 10,10,10,30,31 µs (median 10): 31 > 3x10 is
// tail, 30 is not (equal). Tail share = 31/91. Op B has 4 instances (below
// the 5-instance minimum) with a huge outlier that must not decide the metric.
TEST(OpTailsTest, HandMadeBothSidesOfFactorAndMinimumCount) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":0,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":100,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":200,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":300,"dur":30},
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":400,"dur":31},
    {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":500,"dur":1},
    {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":600,"dur":1},
    {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":700,"dur":1},
    {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":800,"dur":90}
  ]})");
  ASSERT_NE(t, nullptr);
  LongTailResult r = ComputeLongTails(*t);
  ASSERT_EQ(r.ops.size(), 2u);
  EXPECT_EQ(t->Str(r.ops[0].name), "A");
  EXPECT_EQ(r.ops[0].tail_count, 1u);
  EXPECT_NEAR(r.ops[0].tail_share, 31.0 / 91, 1e-12);
  EXPECT_FALSE(r.ops[1].qualifies);
  MetricSet m;
  PublishLongTails(*t, r, &m);
  EXPECT_NEAR(m.Get("long_tail_ratio")->value, 31.0 / 91, 1e-12);
  // The 31 µs instance costs 31 - 10 (median) = 21 µs beyond A's median; all
  // op time is 91 + 93 = 184 µs (B counts in op time but not as a tail).
  EXPECT_NEAR(r.ops[0].tail_excess_ns, 21000, 1e-9);
  EXPECT_NEAR(m.Get("long_tail_time_ratio")->value, 21.0 / 184, 1e-12);
}

// Hand-made kernels: "add" over a small grid (5 × 2 µs) and a large one
// (5 × 40 µs, one of them 130 µs). By name alone the median is 2-40 µs and
// the large grid's instances would all be a tail; by name and launch
// configuration only the 130 µs one is (> 3 × 40), excess 90 µs.
TEST(OpTailsTest, KernelsGroupByLaunchConfiguration) {
  std::string events;
  int ts = 0;
  auto kernel = [&](int dur, const char* grid) {
    events += std::string(events.empty() ? "" : ",") +
              R"({"ph":"X","cat":"kernel","name":"add","pid":0,"tid":7,"ts":)" + std::to_string(ts) + R"(,"dur":)" +
              std::to_string(dur) + R"(,"args":{"grid":)" + grid + R"(,"block":[128, 1, 1]}})";
    ts += 200;
  };
  for (int i = 0; i < 5; ++i) kernel(2, "[1, 1, 1]");
  for (int d : {40, 40, 40, 40, 130}) kernel(d, "[4096, 1, 1]");
  auto t = ImportJsonText(R"({"traceEvents":[)" + events + "]}");
  ASSERT_NE(t, nullptr);
  LongTailResult r = ComputeLongTails(*t);
  ASSERT_EQ(r.ops.size(), 2u);
  const OpTail& big = r.ops[0];
  EXPECT_EQ(OpTailShape(*t, r, big), "grid [4096, 1, 1], block [128, 1, 1]");
  EXPECT_EQ(big.count, 5u);
  EXPECT_EQ(big.tail_count, 1u);
  EXPECT_NEAR(big.tail_excess_ns, 90000, 1e-9);
  EXPECT_EQ(r.ops[1].tail_count, 0u);
  MetricSet m;
  PublishLongTails(*t, r, &m);
  EXPECT_NEAR(m.Get("long_tail_ratio")->value, 130.0 / 290, 1e-12);
  bool named = false;
  for (const auto& e : m.Evidence("long_tail"))
    named |= e.find("add [grid [4096, 1, 1], block [128, 1, 1]]: 1 of 5") == 0;
  EXPECT_TRUE(named);
}

// Hand-made: one kernel name and grid launched by the same op over two input
// sizes, 6 x 40 us over [8, 256, 56, 56] and 5 x 130 us over [8, 256, 14, 14]
// (as cuDNN's batch-norm kernels take the channel count as their grid). The
// launching op's Input Dims keep them apart: no tail. Without the ops'
// shapes the 130 us instances would be the tail of one 11-instance group
// (median 40 us; 130 > 3 x 40).
TEST(OpTailsTest, KernelsGroupByTheirLaunchingOpsInputDims) {
  std::string events;
  int ts = 0, id = 0;
  auto launch = [&](int dur, const char* dims) {
    ++id;
    const std::string c = std::to_string(id), t = std::to_string(ts);
    events += std::string(events.empty() ? "" : ",") + R"({"ph":"X","cat":"cpu_op","name":"aten::bn","pid":1,"tid":1,"ts":)" +
              t + R"(,"dur":20,"args":{"Input Dims":)" + dims + R"(}},)" +
              R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":)" + std::to_string(ts + 5) +
              R"(,"dur":10,"args":{"correlation":)" + c + R"(}},)" +
              R"({"ph":"X","cat":"kernel","name":"bn_bw","pid":0,"tid":7,"ts":)" + std::to_string(ts + 20) +
              R"(,"dur":)" + std::to_string(dur) + R"(,"args":{"correlation":)" + c +
              R"(,"grid":[256, 1, 1],"block":[512, 1, 1]}},)" + R"({"ph":"s","id":)" + c +
              R"(,"pid":1,"tid":1,"ts":)" + std::to_string(ts + 5) + R"(,"cat":"ac2g","name":"ac2g"},)" +
              R"({"ph":"f","id":)" + c + R"(,"pid":0,"tid":7,"ts":)" + std::to_string(ts + 20) +
              R"(,"cat":"ac2g","name":"ac2g","bp":"e"})";
    ts += 300;
  };
  for (int i = 0; i < 6; ++i) launch(40, "[[8, 256, 56, 56]]");
  for (int i = 0; i < 5; ++i) launch(130, "[[8, 256, 14, 14]]");
  auto t = ImportJsonText(R"({"traceEvents":[)" + events + "]}");
  ASSERT_NE(t, nullptr);
  LongTailResult r = ComputeLongTails(*t);
  ASSERT_EQ(r.ops.size(), 2u);
  for (const OpTail& op : r.ops) {
    EXPECT_EQ(op.count, op.p50_ns == 40000 ? 6u : 5u);
    EXPECT_EQ(op.tail_count, 0u);
  }
  EXPECT_EQ(OpTailShape(*t, r, r.ops[0]).find("grid [256, 1, 1], block [512, 1, 1], op Input Dims [[8, 256, "), 0u)
      << OpTailShape(*t, r, r.ops[0]);
}

// ResNet50 (num_workers=4): bn_bw under grid [256, 1, 1] ran 47-681 us over
// layers of three spatial sizes; grouped with their ops' sizes no group of it
// has a tail.
TEST(OpTailsTest, Resnet50BatchNormKernelsHaveNoTailWithinALayerShape) {
  auto t = ImportFixture("kineto/kineto__tb_plugin__samples__resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz");
  ASSERT_NE(t, nullptr);
  LongTailResult r = ComputeLongTails(*t);
  size_t groups = 0;
  for (const OpTail& op : r.ops) {
    if (t->Str(op.name).find("bn_bw_1C11") == std::string_view::npos) continue;
    if (OpTailShape(*t, r, op).find("grid [256, 1, 1]") != 0) continue;
    ++groups;
    EXPECT_EQ(op.tail_count, 0u) << OpTailShape(*t, r, op);
  }
  EXPECT_GE(groups, 3u);
}

}  // namespace
}  // namespace aiprof
