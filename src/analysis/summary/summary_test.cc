#include "src/analysis/summary/summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "src/analysis/summary/step_breakdown.h"
#include "src/model/trace_builder.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

TEST(SummaryTest, QuantilesInterpolateLikeNumpy) {
  int64_t v[] = {10, 20, 30, 40};
  EXPECT_DOUBLE_EQ(QuantileSorted(v, 4, 0.5), 25);    // numpy.percentile([10,20,30,40], 50)
  EXPECT_DOUBLE_EQ(QuantileSorted(v, 4, 0.99), 39.7); // pos 2.97
  EXPECT_DOUBLE_EQ(QuantileSorted(v, 1, 0.99), 10);
  EXPECT_DOUBLE_EQ(QuantileSorted(v, 0, 0.5), 0);
}

TEST(SummaryTest, QuantileBySelectionEqualsQuantileOfSortedValues) {
  std::mt19937 rng(3);
  for (size_t n : {1, 2, 3, 10, 101, 1000}) {
    std::vector<int64_t> v(n);
    for (int64_t& x : v) x = static_cast<int64_t>(rng() % 50);  // many ties
    std::vector<int64_t> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    for (double q : {0.0, 0.5, 0.9, 0.99, 1.0}) {
      std::vector<int64_t> scratch = v;
      EXPECT_DOUBLE_EQ(QuantileSelect(scratch.data(), n, q), QuantileSorted(sorted.data(), n, q)) << n << " " << q;
    }
  }
}

TEST(SummaryTest, UnionOfOverlappingIntervals) {
  std::vector<std::pair<int64_t, int64_t>> iv = {{10, 20}, {0, 5}, {15, 30}, {30, 31}, {40, 40}};
  EXPECT_EQ(UnionLengthNs(&iv), 5 + 20 + 1);  // [0,5) [10,31) [40,40)
  std::vector<std::pair<int64_t, int64_t>> empty;
  EXPECT_EQ(UnionLengthNs(&empty), 0);
}

// Hand-worked: two streams on device 0 overlap; a gpu_user_annotation on the
// same stream is a label, not activity, and must not count as busy time.
TEST(SummaryTest, DeviceBusyIsTheUnionAcrossStreams) {
  Trace t;
  TraceBuilder b(&t);
  uint32_t s7 = b.ThreadTrack(IdValue::Num(0), IdValue::Num(7));
  uint32_t s8 = b.ThreadTrack(IdValue::Num(0), IdValue::Num(8));
  StringId kernel = b.Intern("kernel"), memcpy = b.Intern("gpu_memcpy"), ann = b.Intern("gpu_user_annotation");
  b.AddSlice(s7, 1000, 1000, b.Intern("k1"), kernel, kNoCorrelation, 0, 0);   // [1000, 2000)
  b.AddSlice(s8, 1500, 1000, b.Intern("c1"), memcpy, kNoCorrelation, 0, 0);   // [1500, 2500)
  b.AddSlice(s7, 4000, 1000, b.Intern("k1"), kernel, kNoCorrelation, 0, 0);   // [4000, 5000)
  b.AddSlice(s7, 0, 10000, b.Intern("step"), ann, kNoCorrelation, 0, 0);
  ASSERT_TRUE(b.Finalize().ok());
  Summary s = ComputeSummary(t);
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_EQ(s.devices[0].busy_ns, 2500);
  EXPECT_EQ(s.devices[0].span_ns, 4000);
  EXPECT_DOUBLE_EQ(s.devices[0].utilization, 0.625);
  ASSERT_EQ(s.ops.size(), 3u);
  EXPECT_EQ(t.Str(s.ops[0].name), "step");
  EXPECT_EQ(t.Str(s.ops[1].name), "k1");
  EXPECT_EQ(s.ops[1].count, 2u);
  EXPECT_EQ(s.ops[1].total_ns, 2000);
  EXPECT_EQ(s.events_by_category.at("kernel"), 2u);
}

TEST(SummaryTest, EmptyTraceHasNoDevicesAndNoDivisionByZero) {
  Trace t;
  TraceBuilder b(&t);
  uint32_t s7 = b.ThreadTrack(IdValue::Num(0), IdValue::Num(7));
  b.AddSlice(s7, 5, 0, b.Intern("k"), b.Intern("kernel"), kNoCorrelation, 0, 0);
  ASSERT_TRUE(b.Finalize().ok());
  Summary s = ComputeSummary(t);
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_EQ(s.devices[0].span_ns, 0);
  EXPECT_EQ(s.devices[0].utilization, 0);
  Trace empty;
  EXPECT_TRUE(ComputeSummary(empty).ops.empty());
}

// Hand-made: the profiler's wrapper [0,100) holds ProfilerStep#1 [0,90),
// which holds aten::linear [10,60) → aten::addmm [20,50), and aten::relu
// [60,80). Self: linear 50 - 30 = 20, addmm 30, relu 20; the wrappers are
// not ranked; nested time is not counted twice (Σ self = 100).
// Hand-made, the shape of torch's record_function with with_stack (seen in
// torch-cpu/resnet18_bs1_full): ProfilerStep#1 [0,100) holds the Python
// frame _record_function_enter [5,10); the annotation "## forward ##"
// starts inside that frame at 7 and outlives it to 90; the module [12,88)
// runs inside the annotation. Each instant goes to the innermost open
// slice: step [0,5)+[90,100) = 15, frame [5,7) = 2, annotation
// [7,12)+[88,90) = 7, module 76; Σ self = 100, the step's span. (Clipping
// the annotation to the frame gave it 83 of self and the module's 76 twice.)
TEST(SummaryTest, SelfTimeOfASliceThatOutlivesItsParentCountsOnce) {
  auto t = testing::ImportJsonText(R"json({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","cat":"python_function","name":"_record_function_enter","pid":1,"tid":1,"ts":5,"dur":5},
    {"ph":"X","cat":"user_annotation","name":"## forward ##","pid":1,"tid":1,"ts":7,"dur":83},
    {"ph":"X","cat":"python_function","name":"nn.Module: Net_0","pid":1,"tid":1,"ts":12,"dur":76}]})json");
  ASSERT_NE(t, nullptr);
  Summary s = ComputeSummary(*t);
  std::map<std::string, int64_t> self;
  int64_t sum = 0;
  for (const OpStat& op : s.ops) {
    self[std::string(t->Str(op.name))] = op.self_ns;
    sum += op.self_ns;
  }
  EXPECT_EQ(self["ProfilerStep#1"], 15'000);
  EXPECT_EQ(self["_record_function_enter"], 2'000);
  EXPECT_EQ(self["## forward ##"], 7'000);
  EXPECT_EQ(self["nn.Module: Net_0"], 76'000);
  EXPECT_EQ(sum, 100'000);
}

TEST(SummaryTest, TopOpsRankBySelfTimeWithoutWrappers) {
  auto t = testing::ImportJsonText(R"json({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"PyTorch Profiler (0)","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":90},
    {"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":10,"dur":50},
    {"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":20,"dur":30},
    {"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":60,"dur":20}]})json");
  ASSERT_NE(t, nullptr);
  Summary s = ComputeSummary(*t);
  std::vector<size_t> top = TopOpsBySelf(*t, s);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(t->Str(s.ops[top[0]].name), "aten::addmm");
  EXPECT_EQ(s.ops[top[0]].self_ns, 30'000);
  // linear and relu tie on self (20 µs); linear's larger total ranks first.
  EXPECT_EQ(t->Str(s.ops[top[1]].name), "aten::linear");
  EXPECT_EQ(s.ops[top[1]].self_ns, 20'000);
  EXPECT_EQ(s.ops[top[1]].total_ns, 50'000);
  EXPECT_EQ(t->Str(s.ops[top[2]].name), "aten::relu");
  int64_t self = 0;
  for (const OpStat& op : s.ops) self += op.self_ns;
  EXPECT_EQ(self, 100'000);  // the wrapper [0,100): every ns once
  for (const OpStat& op : s.ops) {
    if (t->Str(op.name) == "ProfilerStep#1") {
      EXPECT_TRUE(op.profiler_wrapper);
      EXPECT_EQ(op.self_ns, 90'000 - 50'000 - 20'000);
    }
  }
}

// Hand-made (labelled). A CUDA gpu_user_annotation range on the stream re-counts
// the kernel under it: a device record, never ranked; the kernel and the host
// op are ranked. Before, the annotation was ranked with them (its 10 us of
// self time past the kernel); on Ascend such records led the table.
TEST(SummaryTest, DeviceRecordsAreListedApartFromTheOps) {
  auto t = testing::ImportJsonText(R"json({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":20},
    {"ph":"X","cat":"gpu_user_annotation","name":"forward","pid":0,"tid":7,"ts":10,"dur":100,"args":{"stream":7,"device":0}},
    {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":10,"dur":90,"args":{"stream":7,"device":0}}]})json");
  ASSERT_NE(t, nullptr);
  Summary s = ComputeSummary(*t);
  std::map<std::string, bool> record;
  for (const OpStat& op : s.ops) record[std::string(t->Str(op.name))] = op.device_record;
  EXPECT_TRUE(record["forward"]);
  EXPECT_FALSE(record["gemm"]);
  EXPECT_FALSE(record["aten::mm"]);
  std::vector<size_t> top = TopOpsBySelf(*t, s);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(t->Str(s.ops[top[0]].name), "gemm");
}

// Hand-made (labelled: not from a profiler). Steps [0, 100) and [100, 200)
// µs; kernels: one launched at 10 running 20..30 and one launched at 80
// running 90..110 (step 1's, past step 2's start), one launched at 105
// running 150..180 (step 2's, after 50 µs of waiting for data). Step 2 owns
// only its kernel: Preparing 40 (the device idle from step 1's last kernel's
// end, 110, to its own), Free 0. Clipped to the window (before),
// the tail 100..110 made step 2's Preparing 0 and its 40 µs wait Free.
TEST(StepBreakdownTest, AStepOwnsTheDeviceWorkItLaunched) {
  auto t = testing::ImportJsonText(R"json({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":100,"dur":100},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":5,"args":{"correlation":3}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":80,"dur":5,"args":{"correlation":1}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":105,"dur":5,"args":{"correlation":2}},
    {"ph":"X","cat":"kernel","name":"k3","pid":0,"tid":7,"ts":20,"dur":10,"args":{"correlation":3,"stream":7,"device":0}},
    {"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":90,"dur":20,"args":{"correlation":1,"stream":7,"device":0}},
    {"ph":"X","cat":"kernel","name":"k2","pid":0,"tid":7,"ts":150,"dur":30,"args":{"correlation":2,"stream":7,"device":0}}]})json");
  ASSERT_NE(t, nullptr);
  std::vector<StepBreakdown> b = ComputeStepBreakdowns(*t);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].method, "device_activity");
  std::map<std::string, int64_t> one = b[0].values_ns, two = b[1].values_ns;
  EXPECT_EQ(one["Computing"], 30'000);
  EXPECT_EQ(one["Preparing"], 20'000);
  EXPECT_EQ(one["Stage"], 90'000);  // 20..110: its last kernel ends in step 2's window
  EXPECT_EQ(one["Free"], 60'000);
  EXPECT_EQ(two["Computing"], 30'000);
  EXPECT_EQ(two["Preparing"], 40'000);  // idle from step 1's last kernel (110) to its own (150)
  EXPECT_EQ(two["Stage"], 30'000);
  EXPECT_EQ(two["Free"], 0);
}

}  // namespace
}  // namespace aiprof
