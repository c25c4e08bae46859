#include "src/analysis/memory/memory_peaks.h"

#include <gtest/gtest.h>

#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/testing/analysis_test_util.h"

namespace aiprof {
namespace {

using testing::ImportFixture;
using testing::ImportJsonText;

// Expected figures from src/analysis/testing/oracles/launch_memcpy_memory_oracle.py.
TEST(MemoryPeaksTest, Resnet18CpuPeak) {
  auto t = ImportFixture("torch-cpu/resnet18_bs1_full.kineto.json");
  ASSERT_NE(t, nullptr);
  MemoryResult r = ComputeMemoryPeaks(*t);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].device_type, 0);
  EXPECT_EQ(r.devices[0].peak_allocated, 10039296);
  EXPECT_EQ(r.devices[0].peak_allocated_ts_ns, 1795977647775638000);
  EXPECT_NE(r.devices[0].peak_allocated_op, kNoSlice);
  MetricSet m;
  PublishMemoryPeaks(*t, r, &m);
  EXPECT_EQ(m.Get("memory_peak_allocated_bytes")->value, 10039296);
  EXPECT_TRUE(m.UnavailableReason("memory_peak_reserved_bytes").has_value());  // 0 on CPU
  EXPECT_TRUE(m.UnavailableReason("memory_peak_util").has_value());
  EXPECT_FALSE(m.Evidence("memory_pressure").empty());
}

TEST(MemoryPeaksTest, NoMemoryEventsIsUnavailable) {
  auto t = ImportFixture("torch-cpu/convnet_bs8_contiguous.kineto.json");
  ASSERT_NE(t, nullptr);
  MetricSet m;
  PublishMemoryPeaks(*t, ComputeMemoryPeaks(*t), &m);
  EXPECT_EQ(m.Get("memory_peak_allocated_bytes"), nullptr);
  EXPECT_TRUE(m.UnavailableReason("memory_peak_allocated_bytes").has_value());
}

// Hand-made GPU case: peaks 300 then 200 allocated; reserved peak 512 of a
// 1024-byte device → util 0.5. The peak falls inside aten::empty.
TEST(MemoryPeaksTest, HandMadeGpuPeakAndUtil) {
  auto t = ImportJsonText(R"({"deviceProperties":[{"id": 0, "name": "Tiny", "totalGlobalMem": 1024}],
  "traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":1,"ts":0,"dur":10},
    {"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":5,
     "args":{"Device Type":1,"Device Id":0,"Bytes":300,"Total Allocated":300,"Total Reserved":512}},
    {"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":20,
     "args":{"Device Type":1,"Device Id":0,"Bytes":-100,"Total Allocated":200,"Total Reserved":512}},
    {"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":21,
     "args":{"Device Type":0,"Device Id":-1,"Bytes":5000,"Total Allocated":5000,"Total Reserved":0}}
  ]})");
  ASSERT_NE(t, nullptr);
  MemoryResult r = ComputeMemoryPeaks(*t);
  ASSERT_EQ(r.devices.size(), 2u);
  MetricSet m;
  PublishMemoryPeaks(*t, r, &m);
  EXPECT_EQ(m.Get("memory_peak_allocated_bytes")->value, 300);  // accelerator preferred over CPU
  EXPECT_EQ(m.Get("memory_peak_reserved_bytes")->value, 512);
  ASSERT_NE(m.Get("memory_peak_util"), nullptr);
  EXPECT_NEAR(m.Get("memory_peak_util")->value, 0.5, 1e-12);
  const MemoryPeak* gpu = r.devices[0].device_type == 1 ? &r.devices[0] : &r.devices[1];
  ASSERT_NE(gpu->peak_allocated_op, kNoSlice);
  EXPECT_EQ(t->Str(t->slices.name[gpu->peak_allocated_op]), "aten::empty");
}

}  // namespace
}  // namespace aiprof
