#include "src/analysis/roofline/ops_to_roofline.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/analysis/metrics/metric_set.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::FixturesDir;
using testing::ImportFixture;
using testing::ImportJsonText;
using testing::TempDir;

// Hand-made CPU trace (labelled: not from a profiler). One thread:
//   aten::mm     0..100 µs  [64,64]·[64,64]        F = 2·64³ = 524288, B = 3·4096·4 = 49152, AI 10.67
//   aten::add  100..150 µs  [64,64]+[64,64]        F = 4096,  B = 49152, AI 0.083
//   aten::linear 150..160   x[2,8] W[4,8] b[4]     F = 999 (its addmm's `flops` arg), B = (16+32+4+8)·4 = 240
//     aten::t 150..151, aten::addmm 152..160 (flops 999): inside linear, not counted again
//   aten::conv2d 160..180   x[1,3,8,8] w[4,3,3,3] b[4]; output [1,4,6,6] from the relu that consumes it
//     aten::convolution 161..179                   F = 2·36·108 = 7776, B = (192+108+4+144)·4 = 1792
//   aten::relu  180..185    [1,4,6,6]              F = 144, B = 1152
constexpr char kRooflineTrace[] = R"({"traceEvents":[
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
  auto t = ImportJsonText(kRooflineTrace);
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

// Hand-made (labelled: not from a profiler), the two ways a convolution's
// output size is found:
//   conv A 0..10 µs: x[2,3,224,224] w[64,3,7,7], Concrete Inputs stride
//     [2, 2], padding [3, 3], dilation [1, 1]: out [2,64,112,112] from the
//     arguments ((224 + 6 − 6 − 1) / 2 + 1 = 112), F = 2·2·112²·(64·3·49);
//     the relu after it is [2,64,56,56] (a max pool's output in between left
//     unrecorded), which the consumer rule would have taken;
//   conv B 20..30 µs: x[2,64,56,56] w[64,64,3,3], no Concrete Inputs; then
//     BatchNorm's counter `aten::add_` on scalars ([[],[],[]]) and the
//     batch_norm reading [2,64,54,54] (3×3, no padding): the counter cannot
//     consume a 4-D output and is passed over, F = 2·2·54²·(64·64·9).
// ResNet training traces (kineto's ResNet50 sample, TraceLens's MI300 ResNet)
// have these shapes; before, each of their convolutions was "assumed".
constexpr char kConvOutputTrace[] = R"({"traceEvents":[
 {"ph":"X","cat":"cpu_op","name":"aten::conv2d","pid":1,"tid":1,"ts":0,"dur":10,
  "args":{"Input Dims":[[2,3,224,224],[64,3,7,7],[],[],[],[],[]],"Input type":["float","float","","","","","Scalar"],
          "Concrete Inputs":["","","","[2, 2]","[3, 3]","[1, 1]","1"]}},
 {"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":12,"dur":2,
  "args":{"Input Dims":[[2,64,56,56]],"Input type":["float"]}},
 {"ph":"X","cat":"cpu_op","name":"aten::conv2d","pid":1,"tid":1,"ts":20,"dur":10,
  "args":{"Input Dims":[[2,64,56,56],[64,64,3,3],[],[],[],[],[]],"Input type":["float","float","","","","","Scalar"]}},
 {"ph":"X","cat":"cpu_op","name":"aten::add_","pid":1,"tid":1,"ts":31,"dur":1,
  "args":{"Input Dims":[[],[],[]],"Input type":["long int","Scalar","Scalar"]}},
 {"ph":"X","cat":"cpu_op","name":"aten::batch_norm","pid":1,"tid":1,"ts":33,"dur":3,
  "args":{"Input Dims":[[2,64,54,54],[64],[64],[64],[64],[],[],[],[]],"Input type":["float","float","float","float","float","Scalar","Scalar","Scalar","Scalar"]}}
]})";

TEST(RooflineTest, ConvolutionOutputFromArgumentsOrFromTheOpThatReadsIt) {
  auto t = ImportJsonText(kConvOutputTrace);
  ASSERT_TRUE(t);
  RooflineResult r = ComputeRoofline(*t, nullptr);
  const RooflineRow* conv = Row(r, "aten::conv2d");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->count, 2u);
  EXPECT_EQ(conv->output_assumed, 0u);
  EXPECT_DOUBLE_EQ(conv->flops, 2.0 * 2 * 112 * 112 * (64 * 3 * 49) + 2.0 * 2 * 54 * 54 * (64 * 64 * 9));
}

TEST(RooflineTest, RidgePointBothSides) {
  auto t = ImportJsonText(kRooflineTrace);
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
  auto t = ImportJsonText(kRooflineTrace);
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
    // torch's `flops` leave out the bias add of addmm, which aiprof counts
    // (M·N, TraceLens's convention).
    double bias = 0;
    if (t->Str(t->slices.name[i]) == "aten::addmm") {
      auto dims = OpArgReader(*t).InputDims(i);
      ASSERT_TRUE(dims && dims->size() >= 3);
      bias = static_cast<double>((*dims)[1][0] * (*dims)[2][1]);
    }
    EXPECT_DOUBLE_EQ(c->flops - bias, static_cast<double>(a->i)) << t->Str(t->slices.name[i]) << " slice " << i;
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

// ---- Ascend device tasks (kernel_details.csv rows) ----

// Imports a rank folder holding only this kernel_details.csv (no timeline:
// the rows become the device slices, every other column an op metric).
std::unique_ptr<Trace> ImportKernelDetails(const TempDir& dir, std::string_view csv) {
  std::filesystem::create_directories(dir.Path("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"));
  dir.Write("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", csv);
  auto r = ImportTrace(dir.path());
  if (!r.ok()) {
    ADD_FAILURE() << r.status().message();
    return nullptr;
  }
  return std::move(r).value();
}

// Hand-made kernel_details.csv (labelled: not from a profiler), recorded with
// aic_metrics=Memory. Bytes = (read + write GB/s) · 1e9 · core time µs · 1e-6:
//   MatMulV2_1 bf16 [1024,1024]·[1024,1024], 10 µs: FLOPs 2·1024³ = 2147483648;
//              cube (400 + 100) GB/s × 8 µs = 4e6 bytes (pmu); AI 536.870912
//   Add_1      fp32 [1024,1024]+[1024,1024], 5 µs: FLOPs 1048576;
//              vector (1000 + 500) GB/s × 4 µs = 6e6 bytes (pmu); AI 0.174763
//   ZerosLike_1  2 µs: no FLOP model; vector (0 + 500) GB/s × 2 µs = 1e6 bytes (pmu)
//   Cast_1     3 µs: no FLOP model, no PMU values: not placed
//   MatMulV2_2 fp16 [16,16]·[16,16], 1 µs, aicore_time 0: PMU unusable →
//              bytes from shapes 3·256·2 = 1536; FLOPs 2·16³ = 8192; AI 5.33
//   Add_2      fp32 [4,4]+[4,4], 1 µs: vector 0 GB/s × 2 µs = 0 bytes (a
//              measured zero): FLOPs 16, AI unknown
constexpr char kKernelDetailsHeader[] =
    "Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),"
    "Block Dim,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,"
    "aicore_time(us),aic_total_cycles,aic_main_mem_read_bw(GB/s),aic_main_mem_write_bw(GB/s),aiv_time(us),"
    "aiv_total_cycles,aiv_main_mem_read_bw(GB/s),aiv_main_mem_write_bw(GB/s)\n";
constexpr char kMemoryRows[] =
    "1,4294967295,1,2,MatMulV2_1,MatMulV2,AI_CORE,100,10,0,20,\"1024,1024;1024,1024\",DT_BF16;DT_BF16,"
    "FORMAT_ND;FORMAT_ND,\"1024,1024\",DT_BF16,FORMAT_ND,8,100,400,100,N/A,N/A,N/A,N/A\n"
    "1,4294967295,2,2,Add_1,Add,AI_VECTOR_CORE,200,5,0,40,\"1024,1024;1024,1024\",FLOAT;FLOAT,"
    "FORMAT_ND;FORMAT_ND,\"1024,1024\",FLOAT,FORMAT_ND,0,0,N/A,N/A,4,100,1000,500\n"
    "1,4294967295,3,2,ZerosLike_1,ZerosLike,AI_VECTOR_CORE,300,2,0,40,\"1024\",FLOAT,FORMAT_ND,\"1024\",FLOAT,"
    "FORMAT_ND,0,0,N/A,N/A,2,100,0,500\n"
    "1,4294967295,4,2,Cast_1,Cast,AI_CORE,400,3,0,8,\"2,8193\",INT64,FORMAT_ND,\"2,8193\",INT32,FORMAT_ND,"
    "N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A\n"
    "1,4294967295,5,2,MatMulV2_2,MatMulV2,AI_CORE,500,1,0,1,\"16,16;16,16\",FLOAT16;FLOAT16,ND;ND,\"16,16\","
    "FLOAT16,ND,0,0,100,100,N/A,N/A,N/A,N/A\n"
    "1,4294967295,6,2,Add_2,Add,AI_VECTOR_CORE,600,1,0,1,\"4,4;4,4\",FLOAT;FLOAT,ND;ND,\"4,4\",FLOAT,ND,"
    "0,0,N/A,N/A,2,100,0,0\n";

DevicePeaks NpuDevice(double peak_16bit) {
  DevicePeaks d;
  d.name = "test-npu";
  d.peak_flops_per_second = {{"bf16", peak_16bit}, {"fp16", peak_16bit}, {"fp32", 1e13}};
  d.memory_bandwidth_bytes_per_second = 1e12;
  return d;
}

TEST(RooflineAscendTest, PmuBytesAndShapeFlopsPerDeviceTask) {
  TempDir dir;
  auto t = ImportKernelDetails(dir, std::string(kKernelDetailsHeader) + kMemoryRows);
  ASSERT_TRUE(t);
  DevicePeaks dev = NpuDevice(5.0e14);  // 16-bit ridge 5e14 / 1e12 = 500 FLOP/byte; fp32 ridge 10
  RooflineResult r = ComputeRoofline(*t, &dev);
  EXPECT_EQ(r.device_tasks, 6u);
  EXPECT_EQ(r.device_ops, 5u);  // all but Cast_1
  EXPECT_EQ(r.device_tasks_with_flops, 4u);
  EXPECT_EQ(r.device_tasks_pmu_bytes, 4u);
  EXPECT_EQ(r.device_tasks_shape_bytes, 1u);
  EXPECT_EQ(r.device_tasks_onchip_pmu_only, 0u);
  EXPECT_EQ(r.ops, 5u);
  EXPECT_EQ(r.time_ns, 19'000);  // 10 + 5 + 2 + 1 + 1 µs
  EXPECT_DOUBLE_EQ(r.bytes, 4e6 + 6e6 + 1e6 + 1536 + 0);

  const RooflineRow* mm = Row(r, "MatMulV2_1");
  ASSERT_NE(mm, nullptr);
  EXPECT_TRUE(mm->device_task);
  EXPECT_EQ(mm->bytes_source, BytesSource::kPmu);
  EXPECT_EQ(mm->precision, Precision::kBf16);
  EXPECT_DOUBLE_EQ(mm->flops, 2147483648.0);
  EXPECT_NEAR(mm->bytes, 4e6, 1e-6);
  RooflinePoint p = EvaluateRow(*mm, &dev);
  EXPECT_NEAR(*p.arithmetic_intensity_flops_per_byte, 536.870912, 1e-6);
  EXPECT_NEAR(*p.achieved_flops_per_second, 2147483648.0 / 10e-6, 1);     // 2.147e14 FLOP/s
  EXPECT_NEAR(*p.achieved_bytes_per_second, 4e11, 1e-3);                  // 4e6 B / 10 µs
  EXPECT_NEAR(*p.compute_utilization, 2147483648.0 / 10e-6 / 5e14, 1e-12);  // 0.4295
  EXPECT_NEAR(*p.bandwidth_utilization, 0.4, 1e-12);                      // 4e11 / 1e12
  EXPECT_EQ(p.bound, Bound::kCompute);  // 536.87 ≥ ridge 500

  const RooflineRow* zeros = Row(r, "ZerosLike_1");
  ASSERT_NE(zeros, nullptr);
  EXPECT_FALSE(zeros->flops_known);
  EXPECT_EQ(zeros->bytes_source, BytesSource::kPmu);
  RooflinePoint zp = EvaluateRow(*zeros, &dev);
  EXPECT_FALSE(zp.arithmetic_intensity_flops_per_byte);  // FLOPs unknown, not zero
  EXPECT_FALSE(zp.achieved_flops_per_second);
  EXPECT_EQ(zp.bound, Bound::kUnknown);
  EXPECT_NEAR(*zp.bandwidth_utilization, 0.5, 1e-12);  // 1e6 B / 2 µs = 5e11 B/s of 1e12

  const RooflineRow* small = Row(r, "MatMulV2_2");
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(small->bytes_source, BytesSource::kShapes);  // aicore_time 0: PMU bytes unusable
  EXPECT_DOUBLE_EQ(small->bytes, 1536);
  const RooflineRow* add0 = Row(r, "Add_2");
  ASSERT_NE(add0, nullptr);
  EXPECT_EQ(add0->bytes_source, BytesSource::kPmu);
  EXPECT_EQ(add0->bytes, 0);
  EXPECT_FALSE(EvaluateRow(*add0, &dev).arithmetic_intensity_flops_per_byte);  // 16 FLOPs / 0 bytes: guarded
  EXPECT_EQ(EvaluateRow(*add0, &dev).bound, Bound::kUnknown);
  EXPECT_EQ(Row(r, "Cast_1"), nullptr);

  MetricSet m;
  PublishRoofline(r, "", &m);
  // Bound known for MatMulV2_1 (10 µs, compute), Add_1 (5, memory: 0.17 < 10),
  // MatMulV2_2 (1, memory: 5.33 < 500); Add_2 moved 0 bytes and is left out.
  EXPECT_NEAR(m.Get("memory_bound_time_ratio")->value, 6.0 / 16, 1e-12);
  // Σ bytes / (Σ time · B) = 11001536 / (19e-6 · 1e12); one row's bytes are from shapes.
  EXPECT_NEAR(m.Get("memory_bandwidth_util")->value, 11001536 / (19e-6 * 1e12), 1e-12);
  EXPECT_FALSE(m.Get("memory_bandwidth_util")->measured);
  // Σ FLOPs with a peak / Σ time·peak = (2147483648 + 1048576 + 8192 + 16) /
  // (10e-6·5e14 + 5e-6·1e13 + 1e-6·5e14 + 1e-6·1e13) = 2148540432 / 5.56e9.
  EXPECT_NEAR(m.Get("compute_util")->value, 2148540432 / 5.56e9, 1e-12);
  EXPECT_FALSE(m.Get("compute_util")->measured);
  ASSERT_FALSE(m.Evidence("compute_bound").empty());
  EXPECT_NE(m.Evidence("compute_bound")[0].find("bytes measured by the PMU"), std::string::npos);

  EXPECT_EQ(Row(r, "MatMulV2_1")->bytes_source, BytesSource::kPmu);
}

TEST(RooflineAscendTest, RidgePointBothSidesWithPmuBytes) {
  TempDir dir;
  auto t = ImportKernelDetails(dir, std::string(kKernelDetailsHeader) + kMemoryRows);
  ASSERT_TRUE(t);
  // MatMulV2_1 has AI 536.87: compute-bound under ridge 500, memory-bound under 550.
  DevicePeaks low = NpuDevice(5.0e14), high = NpuDevice(5.5e14);
  EXPECT_EQ(EvaluateRow(*Row(ComputeRoofline(*t, &low), "MatMulV2_1"), &low).bound, Bound::kCompute);
  RooflineResult r = ComputeRoofline(*t, &high);
  EXPECT_EQ(EvaluateRow(*Row(r, "MatMulV2_1"), &high).bound, Bound::kMemory);
  MetricSet m;
  PublishRoofline(r, "", &m);
  EXPECT_DOUBLE_EQ(m.Get("memory_bound_time_ratio")->value, 1.0);  // all 16 µs memory-bound
}

TEST(RooflineAscendTest, AllBytesFromPmuAreMeasured) {
  TempDir dir;
  std::string rows = kMemoryRows;
  auto t = ImportKernelDetails(dir, std::string(kKernelDetailsHeader) + rows.substr(0, rows.find("1,4294967295,2,")));
  ASSERT_TRUE(t);
  DevicePeaks dev = NpuDevice(5.0e14);
  RooflineResult r = ComputeRoofline(*t, &dev);
  ASSERT_EQ(r.ops, 1u);
  MetricSet m;
  PublishRoofline(r, "", &m);
  EXPECT_NEAR(m.Get("memory_bandwidth_util")->value, 0.4, 1e-12);  // 4e6 B / (10 µs · 1e12 B/s)
  EXPECT_TRUE(m.Get("memory_bandwidth_util")->measured);
}

TEST(RooflineAscendTest, BytesOnlyTasksLeaveFlopMetricsUnavailable) {
  TempDir dir;
  std::string rows = kMemoryRows;
  size_t zeros = rows.find("1,4294967295,3,");
  auto t = ImportKernelDetails(dir, std::string(kKernelDetailsHeader) + rows.substr(zeros, rows.find("1,4294967295,4,") - zeros));
  ASSERT_TRUE(t);
  DevicePeaks dev = NpuDevice(5.0e14);
  RooflineResult r = ComputeRoofline(*t, &dev);
  ASSERT_EQ(r.ops, 1u);
  MetricSet m;
  PublishRoofline(r, "", &m);
  EXPECT_NEAR(m.Get("memory_bandwidth_util")->value, 0.5, 1e-12);
  EXPECT_NE(m.UnavailableReason("compute_util").value_or("").find("FLOP model"), std::string::npos);
  EXPECT_TRUE(m.UnavailableReason("memory_bound_time_ratio").has_value());
}

// The real MemoryL0 kernel_details.csv of msinsight's test data: its PMU
// bandwidth columns are L0A/L0B/L0C levels only, and none of its op types
// (ZerosLike, Cast, Slice, DSAStatelessGenBitMask, FlashAttentionScore,
// NonZero) has a sound FLOP model, so nothing is placed and the reasons are said.
TEST(RooflineAscendTest, RealMemoryL0FixtureReportsWhatIsMissing) {
  std::ifstream in(FixturesDir() +
                   "/ascend/Ascend__msinsight__server__src__test__test_data__test_rank_0__ASCEND_PROFILER_OUTPUT__"
                   "kernel_details.csv");
  ASSERT_TRUE(in);
  std::stringstream text;
  text << in.rdbuf();
  TempDir dir;
  auto t = ImportKernelDetails(dir, text.str());
  ASSERT_TRUE(t);
  DevicePeaks dev = NpuDevice(313e12);
  RooflineResult r = ComputeRoofline(*t, &dev);
  // 21 rows: 4 HCCL (not kernels), 1 short row (bad_op_row), 16 device tasks
  // (python3 csv over the file); 12 of them carry L0 bandwidth values.
  EXPECT_EQ(r.device_tasks, 16u);
  EXPECT_EQ(r.device_ops, 0u);
  EXPECT_EQ(r.device_tasks_with_flops, 0u);
  EXPECT_EQ(r.device_tasks_pmu_bytes, 0u);
  EXPECT_EQ(r.device_tasks_onchip_pmu_only, 12u);
  EXPECT_EQ(r.onchip_pmu_columns,
            (std::vector<std::string>{"aic_l0a_read_bw(GB/s)", "aic_l0a_write_bw(GB/s)", "aic_l0b_read_bw(GB/s)",
                                      "aic_l0b_write_bw(GB/s)", "aic_l0c_read_bw_cube(GB/s)",
                                      "aic_l0c_write_bw_cube(GB/s)", "aiv_l0c_read_bw(GB/s)",
                                      "aiv_l0c_write_bw(GB/s)"}));
  EXPECT_TRUE(r.rows.empty());
  MetricSet m;
  PublishRoofline(r, "", &m);
  EXPECT_TRUE(m.UnavailableReason("memory_bandwidth_util").has_value());
  std::vector<std::string> lines = DescribeDeviceTasks(r);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("16 device tasks"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("12 tasks have PMU bandwidth of on-chip levels only (aic_l0a_read_bw(GB/s)"),
            std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("DRAM bytes are unavailable"), std::string::npos);
}

// Hand-made torch_npu folder (labelled: not profiler output): two host
// aten::mm ops with shapes, each launching one device task through an
// async_npu flow. MatMulV2_1 has a kernel_details row with PMU bytes, so it
// is placed as a device task and its host op is left out (no double
// counting); MatMulV2_9 has no row, so its host op is placed with the
// task's time (10 µs) and shape bytes 3·1024²·2 = 6291456.
TEST(RooflineAscendTest, HostOpOfAPlacedDeviceTaskIsNotCountedTwice) {
  TempDir dir;
  std::filesystem::create_directories(dir.Path("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"));
  dir.Write("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", R"([
{"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "Python"}},
{"ph": "M", "name": "process_name", "pid": 102402, "tid": 0, "args": {"name": "Ascend Hardware"}},
{"ph": "M", "name": "thread_name", "pid": 102402, "tid": 2, "args": {"name": "Stream 2"}},
{"ph": "X", "name": "aten::mm", "pid": 100, "tid": 100, "ts": "1000.000", "dur": 10, "cat": "cpu_op",
 "args": {"Input Dims": [[1024, 1024], [1024, 1024]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}},
{"ph": "X", "name": "aten::mm", "pid": 100, "tid": 100, "ts": "2000.000", "dur": 10, "cat": "cpu_op",
 "args": {"Input Dims": [[1024, 1024], [1024, 1024]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}},
{"ph": "X", "name": "MatMulV2_1", "pid": 102402, "tid": 2, "ts": "1100.000", "dur": 10, "args": {"Task Type": "AI_CORE"}},
{"ph": "X", "name": "MatMulV2_9", "pid": 102402, "tid": 2, "ts": "2100.000", "dur": 10, "args": {"Task Type": "AI_CORE"}},
{"ph": "s", "name": "torch_to_npu", "id": 1, "pid": 100, "tid": 100, "ts": "1000.500", "cat": "async_npu", "bp": "e"},
{"ph": "f", "name": "torch_to_npu", "id": 1, "pid": 102402, "tid": 2, "ts": "1100.000", "cat": "async_npu", "bp": "e"},
{"ph": "s", "name": "torch_to_npu", "id": 2, "pid": 100, "tid": 100, "ts": "2000.500", "cat": "async_npu", "bp": "e"},
{"ph": "f", "name": "torch_to_npu", "id": 2, "pid": 102402, "tid": 2, "ts": "2100.000", "cat": "async_npu", "bp": "e"}
])");
  dir.Write("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
            std::string(kKernelDetailsHeader) +
                "1,4294967295,1,2,MatMulV2_1,MatMulV2,AI_CORE,1100,10,0,20,\"1024,1024;1024,1024\",DT_BF16;DT_BF16,"
                "FORMAT_ND;FORMAT_ND,\"1024,1024\",DT_BF16,FORMAT_ND,8,100,400,100,N/A,N/A,N/A,N/A\n");
  auto imported = ImportTrace(dir.path());
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  const Trace& t = **imported;
  DevicePeaks dev = NpuDevice(5.0e14);
  RooflineResult r = ComputeRoofline(t, &dev);
  EXPECT_EQ(r.device_tasks, 1u);
  EXPECT_EQ(r.device_ops, 1u);
  EXPECT_EQ(r.ops_on_device_tasks, 1u);
  const RooflineRow* task = Row(r, "MatMulV2_1");
  ASSERT_NE(task, nullptr);
  EXPECT_TRUE(task->device_task);
  EXPECT_NEAR(task->bytes, 4e6, 1e-6);  // (400 + 100) GB/s × 8 µs
  const RooflineRow* host = Row(r, "aten::mm");
  ASSERT_NE(host, nullptr);
  EXPECT_FALSE(host->device_task);
  EXPECT_EQ(host->count, 1u);
  EXPECT_EQ(host->time_ns, 10'000);
  EXPECT_DOUBLE_EQ(host->flops, 2147483648.0);
  EXPECT_DOUBLE_EQ(host->bytes, 6291456.0);
  EXPECT_EQ(r.ops, 2u);
}

}  // namespace
}  // namespace aiprof
