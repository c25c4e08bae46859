#include "src/importers/common/accelerator.h"

#include <gtest/gtest.h>

#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportFixture;
using testing::ImportJsonText;

std::string Meta(const Trace& t, const std::string& key) {
  auto it = t.metadata.find(key);
  return it == t.metadata.end() ? "" : it->second;
}

uint64_t DeviceActivity(const Trace& t) {
  uint64_t n = 0;
  for (size_t i = 0; i < t.slices.size(); ++i) n += IsDeviceActivity(t.slices.kind[i]);
  return n;
}

TEST(AcceleratorTest, ProcessNames) {
  EXPECT_EQ(AcceleratorOfProcessName("MTIA 17"), "mtia");
  EXPECT_EQ(AcceleratorOfProcessName("HPU"), "hpu");
  EXPECT_EQ(AcceleratorOfProcessName("GPU 0"), "");
  EXPECT_TRUE(IsDeviceProcessName("GPU 0"));
  EXPECT_TRUE(IsDeviceProcessName("XPU 3"));
  EXPECT_FALSE(IsDeviceProcessName("python3"));
  EXPECT_FALSE(IsDeviceProcessName("GPU worker 1"));
}

// HTA's MTIA inference trace: device events in mtia_ccp_events on "MTIA 17"
// stream tracks (pe_exe, dma_request, ...): 1313 of them, of which 48
// event_wait and 291 event_record are markers, not work (counted by hand with
// a JSON reader: 24 pe_exe + 877 dma_request + 36 merge + 37 remote = 974).
TEST(AcceleratorTest, MtiaTraceHasDeviceActivity) {
  auto t = ImportFixture("kineto/HolisticTraceAnalysis__tests__data__mtia_inference_trace__mtia_inference_rank_0.json.gz");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(Meta(*t, "accelerator"), "mtia");
  EXPECT_EQ(DeviceActivity(*t), 974u);
  EXPECT_EQ(Meta(*t, "accelerator_unmodelled"), "");
}

TEST(AcceleratorTest, RocmAndCudaFromRuntimeCalls) {
  auto rocm = ImportFixture("tracelens/inference__vllm_decode_full__graph_execution.json.gz");
  ASSERT_NE(rocm, nullptr);
  EXPECT_EQ(Meta(*rocm, "accelerator"), "rocm");
  auto cuda = ImportFixture(
      "kineto/HolisticTraceAnalysis__tests__data__critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz");
  ASSERT_NE(cuda, nullptr);
  EXPECT_EQ(Meta(*cuda, "accelerator"), "cuda");
  auto cpu = ImportFixture("torch-cpu/convnet_bs8_contiguous.kineto.json");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(Meta(*cpu, "accelerator"), "");
}

// Hand-made: a device process "XPU 0" whose events aiprof does not model
// (category "xpu_unknown_op") and no kernels: an accelerator without a
// model, never a CPU-only trace.
TEST(AcceleratorTest, UnmodelledAcceleratorIsNamed) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"M","name":"process_name","pid":5,"tid":0,"args":{"name":"XPU 0"}},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":10},
    {"ph":"X","cat":"device_op","name":"matmul","pid":5,"tid":2,"ts":2,"dur":5}
  ]})");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(Meta(*t, "accelerator"), "xpu");
  EXPECT_EQ(Meta(*t, "accelerator_unmodelled"), "XPU 0");
  auto unknown = ImportJsonText(R"({"traceEvents":[
    {"ph":"M","name":"process_name","pid":5,"tid":0,"args":{"name":"TPU 0"}},
    {"ph":"X","cat":"device_op","name":"fusion.1","pid":5,"tid":2,"ts":2,"dur":5}
  ]})");
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(Meta(*unknown, "accelerator"), "unknown");
  EXPECT_EQ(Meta(*unknown, "accelerator_unmodelled"), "TPU 0");
}

}  // namespace
}  // namespace aiprof
