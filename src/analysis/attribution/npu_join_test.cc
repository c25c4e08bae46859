// torch_npu links each device task twice: to the CANN call that submitted it
// (on a task-queue thread outside every step) and to the op that queued it.
#include <gtest/gtest.h>

#include "src/analysis/attribution/attribution.h"
#include "src/analysis/attribution/compute_finding.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportJsonText;

// Hand-made (µs), torch_npu's shape: the ops run on the main thread (tid 1)
// and queue their tasks; the task-queue thread (tid 3) submits them (CANN
// calls). Each device task has two flows: async_npu from the op, and
// HostToDevice from the CANN call. step [0, 100]: aten::mm [10, 30] ->
// kernel MatMul [45, 65]; c10d::allreduce_ [39, 47] > HcclAllreduce [40, 45]
// -> ncclKernel_AllReduce [50, 90] (a collective).
constexpr char kNpuTwoLinks[] = R"json({"traceEvents":[
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
 {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":20},
 {"ph":"X","cat":"cpu_op","name":"c10d::allreduce_","pid":1,"tid":1,"ts":39,"dur":8},
 {"ph":"X","cat":"cpu_op","name":"HcclAllreduce","pid":1,"tid":1,"ts":40,"dur":5},
 {"ph":"X","cat":"cuda_runtime","name":"aclnnMm_MatMul","pid":1,"tid":3,"ts":35,"dur":3},
 {"ph":"X","cat":"cuda_runtime","name":"HcomAllReduce","pid":1,"tid":3,"ts":46,"dur":2},
 {"ph":"X","cat":"kernel","name":"MatMul","pid":0,"tid":7,"ts":45,"dur":20,"args":{"device":0,"stream":7}},
 {"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float","pid":0,"tid":8,"ts":50,"dur":40,"args":{"device":0,"stream":8}},
 {"ph":"s","id":1,"pid":1,"tid":1,"ts":12,"cat":"async_npu","name":"a"},
 {"ph":"f","id":1,"pid":0,"tid":7,"ts":45,"cat":"async_npu","name":"a","bp":"e"},
 {"ph":"s","id":2,"pid":1,"tid":3,"ts":36,"cat":"HostToDevice","name":"h"},
 {"ph":"f","id":2,"pid":0,"tid":7,"ts":45,"cat":"HostToDevice","name":"h","bp":"e"},
 {"ph":"s","id":3,"pid":1,"tid":1,"ts":41,"cat":"async_npu","name":"a"},
 {"ph":"f","id":3,"pid":0,"tid":8,"ts":50,"cat":"async_npu","name":"a","bp":"e"},
 {"ph":"s","id":4,"pid":1,"tid":3,"ts":47,"cat":"HostToDevice","name":"h"},
 {"ph":"f","id":4,"pid":0,"tid":8,"ts":50,"cat":"HostToDevice","name":"h","bp":"e"}
]})json";

TEST(NpuJoinTest, DeviceTasksJoinTheOpWhenTheirCannCallIsOutsideTheTree) {
  auto t = ImportJsonText(kNpuTwoLinks);
  ASSERT_NE(t, nullptr);
  AttributionResult a = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(a.available);
  EXPECT_EQ(a.device_ns, 60'000);  // was 0: both tasks joined no node
  EXPECT_EQ(a.unlinked_device_ns, 0);
  ComputeResult c = ComputeComputeTime(a, RooflineResult{}, "");
  EXPECT_TRUE(c.device_time);
  EXPECT_EQ(c.compute_ns, 20'000);  // MatMul only: the all-reduce is communication
}

TEST(NpuJoinTest, UnjoinedDeviceActivityIsNeverReplacedByHostOpTime) {
  // The same trace without flows: the device ran 60 µs in the step, joined to
  // no op; its compute is the 20 µs MatMul (not 0, not host op time).
  std::string text = kNpuTwoLinks;
  text = text.substr(0, text.find(",\n {\"ph\":\"s\"")) + "\n]}";
  auto t = ImportJsonText(text);
  ASSERT_NE(t, nullptr);
  AttributionResult a = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(a.available);
  EXPECT_EQ(a.device_ns, 0);
  EXPECT_GT(a.unlinked_device_ns, 0);
  ComputeResult c = ComputeComputeTime(a, RooflineResult{}, "");
  EXPECT_TRUE(c.device_time);
  EXPECT_EQ(c.compute_ns, 20'000);  // the MatMul, joined to no op; not the all-reduce; was the ops' host time
}

}  // namespace
}  // namespace aiprof
