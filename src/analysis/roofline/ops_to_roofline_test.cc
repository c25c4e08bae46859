#include "src/analysis/roofline/ops_to_roofline.h"

#include <gtest/gtest.h>

#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/testing/analysis_test_util.h"

namespace aiprof {
namespace {

using testing::ImportFixture;
using testing::ImportJsonText;

// Hand-made CPU trace (labelled: not from a profiler). One thread:
//   aten::mm     0..100 µs  [64,64]·[64,64]        F = 2·64³ = 524288, B = 3·4096·4 = 49152, AI 10.67
//   aten::add  100..150 µs  [64,64]+[64,64]        F = 4096,  B = 49152, AI 0.083
//   aten::linear 150..160   x[2,8] W[4,8] b[4]     F = 999 (its addmm's `flops` arg), B = (16+32+4+8)·4 = 240
//     aten::t 150..151, aten::addmm 152..160 (flops 999): inside linear, not counted again
//   aten::conv2d 160..180   x[1,3,8,8] w[4,3,3,3] b[4]; output [1,4,6,6] from the relu that consumes it
//     aten::convolution 161..179                   F = 2·36·108 = 7776, B = (192+108+4+144)·4 = 1792
//   aten::relu  180..185    [1,4,6,6]              F = 144, B = 1152
constexpr char kTrace[] = R"({"traceEvents":[
 {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":100,
  "args":{"Input Dims":[[64,64],[64,64]],"Input type":["float","float"]}},
 {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":100,"dur":50,
  "args":{"Input Dims":[[64,64],[64,64],[]],"Input type":["float","float","Scalar"]}},
 {"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":150,"dur":10,
  "args":{"Input Dims":[[2,8],[4,8],[4]],"Input type":["float","float","float"]}},
 {"ph":"X","cat":"cpu_op","name":"aten::t","pid":1,"tid":1,"ts":150,"dur":1,
  "args":{"Input Dims":[[4,8]],"Input type":["float"]}},
 {"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":152,"dur":8,
  "args":{"Input Dims":[[4],[2,8],[8,4],[],[]],"Input type":["float","float","float","Scalar","Scalar"],"flops":999}},
 {"ph":"X","cat":"cpu_op","name":"aten::conv2d","pid":1,"tid":1,"ts":160,"dur":20,
  "args":{"Input Dims":[[1,3,8,8],[4,3,3,3],[4],[],[],[],[]],"Input type":["float","float","float","","","","Scalar"]}},
 {"ph":"X","cat":"cpu_op","name":"aten::convolution","pid":1,"tid":1,"ts":161,"dur":18,
  "args":{"Input Dims":[[1,3,8,8],[4,3,3,3],[4],[],[],[],[]],"Input type":["float","float","float","","","",""]}},
 {"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":180,"dur":5,
  "args":{"Input Dims":[[1,4,6,6]],"Input type":["float"]}}
]})";

DevicePeaks TestDevice(double peak_fp32) {
  DevicePeaks d;
  d.name = "test-device";
  d.peak_flops_per_second["fp32"] = peak_fp32;
  d.memory_bandwidth_bytes_per_second = 1e11;
  return d;
}

const RooflineRow* Row(const RooflineResult& r, std::string_view name) {
  for (const RooflineRow& row : r.rows) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

TEST(RooflineTest, HandMadeTraceFiguresAndMetrics) {
  auto t = ImportJsonText(kTrace);
  ASSERT_TRUE(t);
  DevicePeaks dev = TestDevice(1e12);  // ridge 10 FLOP/byte
  RooflineResult r = ComputeRoofline(*t, &dev);
  EXPECT_FALSE(r.device_time);
  EXPECT_EQ(r.ops, 5u);  // mm, add, linear, conv2d, relu; t/addmm/convolution are nested
  EXPECT_EQ(r.ops_without_shapes, 0u);
  EXPECT_DOUBLE_EQ(r.flops, 524288 + 4096 + 999 + 7776 + 144);
  EXPECT_DOUBLE_EQ(r.bytes, 49152 + 49152 + 240 + 1792 + 1152);
  EXPECT_EQ(r.time_ns, 185'000);
  ASSERT_EQ(r.rows.size(), 5u);
  EXPECT_EQ(r.rows[0].name, "aten::mm");  // largest time first
  const RooflineRow* lin = Row(r, "aten::linear");
  ASSERT_NE(lin, nullptr);
  EXPECT_EQ(lin->flops_from_trace, 1u);
  EXPECT_DOUBLE_EQ(lin->flops, 999);
  const RooflineRow* conv = Row(r, "aten::conv2d");
  ASSERT_NE(conv, nullptr);
  EXPECT_DOUBLE_EQ(conv->flops, 7776);
  EXPECT_EQ(conv->output_assumed, 0u);
  EXPECT_TRUE(r.any_flops_estimated);

  RooflinePoint mm = EvaluateRow(r.rows[0], &dev);
  EXPECT_EQ(mm.bound, Bound::kCompute);  // AI 10.67 ≥ ridge 10
  EXPECT_NEAR(*mm.arithmetic_intensity_flops_per_byte, 524288.0 / 49152, 1e-12);
  EXPECT_NEAR(*mm.achieved_flops_per_second, 524288 / 100e-6, 1e-3);
  EXPECT_NEAR(*mm.ai_utilization, (524288 / 100e-6) / 1e12, 1e-12);  // attainable = peak
  RooflinePoint add = EvaluateRow(*Row(r, "aten::add"), &dev);
  EXPECT_EQ(add.bound, Bound::kMemory);
  EXPECT_NEAR(*add.attainable_flops_per_second, 4096.0 / 49152 * 1e11, 1e-3);  // AI·B

  MetricSet m;
  PublishRoofline(r, "", &m);
  ASSERT_NE(m.Get("compute_util"), nullptr);
  EXPECT_NEAR(m.Get("compute_util")->value, 537303 / (185e-6 * 1e12), 1e-12);
  EXPECT_FALSE(m.Get("compute_util")->measured);
  EXPECT_NEAR(m.Get("memory_bandwidth_util")->value, 101488 / (185e-6 * 1e11), 1e-12);
  EXPECT_NEAR(m.Get("memory_bound_time_ratio")->value, 85.0 / 185, 1e-12);  // add, linear, conv2d, relu
  EXPECT_FALSE(m.Evidence("memory_bound").empty());
  EXPECT_FALSE(m.Evidence("compute_bound").empty());
}

TEST(RooflineTest, RidgePointBothSides) {
  auto t = ImportJsonText(kTrace);
  ASSERT_TRUE(t);
  // mm has AI 10.67: compute-bound under ridge 10, memory-bound under ridge 11.
  DevicePeaks low = TestDevice(1.0e12), high = TestDevice(1.1e12);
  EXPECT_EQ(EvaluateRow(ComputeRoofline(*t, &low).rows[0], &low).bound, Bound::kCompute);
  RooflineResult r = ComputeRoofline(*t, &high);
  EXPECT_EQ(EvaluateRow(r.rows[0], &high).bound, Bound::kMemory);
  MetricSet m;
  PublishRoofline(r, "", &m);
  EXPECT_DOUBLE_EQ(m.Get("memory_bound_time_ratio")->value, 1.0);
}

TEST(RooflineTest, UnavailableWithoutDeviceOrShapes) {
  auto t = ImportJsonText(kTrace);
  ASSERT_TRUE(t);
  RooflineResult r = ComputeRoofline(*t, nullptr);
  EXPECT_EQ(EvaluateRow(r.rows[0], nullptr).bound, Bound::kUnknown);
  EXPECT_TRUE(EvaluateRow(r.rows[0], nullptr).achieved_flops_per_second.has_value());
  MetricSet m;
  PublishRoofline(r, "no device given", &m);
  EXPECT_EQ(m.Get("compute_util"), nullptr);
  EXPECT_EQ(m.UnavailableReason("compute_util").value_or(""), "no device given");

  auto bare = ImportJsonText(R"({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":5}]})");
  ASSERT_TRUE(bare);
  DevicePeaks dev = TestDevice(1e12);
  RooflineResult none = ComputeRoofline(*bare, &dev);
  EXPECT_EQ(none.ops, 0u);
  EXPECT_EQ(none.ops_without_shapes, 1u);
  MetricSet m2;
  PublishRoofline(none, "", &m2);
  EXPECT_TRUE(m2.UnavailableReason("memory_bound_time_ratio").has_value());
  // A device without a peak for the ops' precision: unavailable, not 0.
  DevicePeaks fp16_only = TestDevice(1e12);
  fp16_only.peak_flops_per_second = {{"fp16", 1e12}};
  MetricSet m3;
  PublishRoofline(ComputeRoofline(*t, &fp16_only), "", &m3);
  EXPECT_TRUE(m3.UnavailableReason("compute_util").has_value());
}

// The shape formulas against the profiler's own `flops` args (torch computes
// them with the real stride/padding): every conv2d, addmm, mm and bmm of the
// two torch-cpu fixtures recorded with --with-flops.
void ExpectShapeFlopsMatchProfiler(const std::string& fixture, size_t expected_ops) {
  auto t = ImportFixture(fixture);
  ASSERT_TRUE(t);
  std::optional<StringId> key = t->strings.Find("flops");
  ASSERT_TRUE(key);
  size_t checked = 0;
  for (uint32_t i = 0; i < t->slices.size(); ++i) {
    const Arg* a = t->FindSliceArg(i, *key);
    if (a == nullptr) continue;
    std::optional<OpCost> c = ShapeCostOfSlice(*t, i);
    ASSERT_TRUE(c) << t->Str(t->slices.name[i]);
    EXPECT_DOUBLE_EQ(c->flops, static_cast<double>(a->i)) << t->Str(t->slices.name[i]) << " slice " << i;
    EXPECT_FALSE(c->output_assumed);
    ++checked;
  }
  EXPECT_EQ(checked, expected_ops);
}

TEST(RooflineTest, ShapeFlopsEqualProfilerFlopsOnFixtures) {
  ExpectShapeFlopsMatchProfiler("torch-cpu/resnet18_bs1_full.kineto.json", 63);   // 60 conv2d, 3 addmm
  ExpectShapeFlopsMatchProfiler("torch-cpu/transformer_enc_bs2.kineto.json", 60);  // 24 bmm, 24 addmm, 12 mm
}

TEST(RooflineTest, Resnet18FixtureUsesProfilerFlops) {
  auto t = ImportFixture("torch-cpu/resnet18_bs1_full.kineto.json");
  ASSERT_TRUE(t);
  RooflineResult r = ComputeRoofline(*t, nullptr);
  const RooflineRow* conv = Row(r, "aten::conv2d");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->count, 60u);
  EXPECT_EQ(conv->flops_from_trace, 60u);
  // Σ of the 60 conv2d `flops` args (python3 over the JSON): 3 steps × 3.627 GFLOP,
  // i.e. resnet18's 1.81 G multiply-adds per 224x224 image.
  EXPECT_DOUBLE_EQ(conv->flops, 10881368064.0);
}

}  // namespace
}  // namespace aiprof
