#include "src/analysis/roofline/device_peaks.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace aiprof {
namespace {

constexpr char kYaml[] = R"(devices:
  - name: A100-SXM4-80GB
    aliases: [A100]
    peak_flops_per_second: {fp32: 19.5e12, fp16: 312e12}
    memory_bandwidth_bytes_per_second: 2.039e12
    memory_capacity_bytes: 85899345920
  - name: Ascend910B
    peak_flops_per_second: {fp16: 313e12}
    memory_bandwidth_bytes_per_second: 1.6e12
)";

TEST(DevicePeaksTest, ParsesFindsAndDetects) {
  auto d = ParseDevicesYaml(kYaml, "test");
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_EQ(d->size(), 2u);
  const DevicePeaks* a100 = FindDevice(*d, "a100");
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(a100->name, "A100-SXM4-80GB");
  EXPECT_DOUBLE_EQ(*a100->PeakFlops(Precision::kFp16), 312e12);
  EXPECT_DOUBLE_EQ(*a100->PeakFlops(Precision::kOther), 19.5e12);  // other dtypes use fp32
  EXPECT_FALSE(a100->PeakFlops(Precision::kInt8).has_value());
  EXPECT_DOUBLE_EQ(a100->memory_capacity_bytes, 85899345920.0);
  EXPECT_EQ(FindDevice(*d, "H100"), nullptr);
  std::map<std::string, std::string> meta = {{"device_properties", R"([{"id":0,"name":"NVIDIA A100-SXM4-80GB"}])"}};
  const DevicePeaks* detected = DetectDevice(*d, meta);
  ASSERT_NE(detected, nullptr);
  EXPECT_EQ(detected->name, "A100-SXM4-80GB");
  EXPECT_EQ(DetectDevice(*d, {{"source_format", "chrome_json"}}), nullptr);
}

TEST(DevicePeaksTest, RejectsBadEntries) {
  EXPECT_FALSE(ParseDevicesYaml("devices: [{name: x}]", "t").ok());
  EXPECT_FALSE(ParseDevicesYaml("devices: [{name: x, peak_flops_per_second: {fp32: 0}, "
                                "memory_bandwidth_bytes_per_second: 1}]", "t").ok());
  EXPECT_FALSE(ParseDevicesYaml("other: 1", "t").ok());
  EXPECT_FALSE(ParseDevicesYaml("devices: [", "t").ok());
}

TEST(DevicePeaksTest, UpsertAndRoundTrip) {
  auto d = ParseDevicesYaml(kYaml, "test");
  ASSERT_TRUE(d.ok());
  DevicePeaks cpu;
  cpu.name = kCalibratedCpuName;
  cpu.peak_flops_per_second = {{"fp32", 1.5e11}, {"fp64", 7.5e10}};
  cpu.memory_bandwidth_bytes_per_second = 1.2e10;
  cpu.source = "aiprof calibrate";
  UpsertDevice(cpu, &*d);
  cpu.memory_bandwidth_bytes_per_second = 1.3e10;
  UpsertDevice(cpu, &*d);  // same name: replaced
  ASSERT_EQ(d->size(), 3u);
  auto again = ParseDevicesYaml(DevicesToYaml(*d), "round trip");
  ASSERT_TRUE(again.ok()) << again.status().message();
  ASSERT_EQ(again->size(), 3u);
  const DevicePeaks* c = FindDevice(*again, "cpu-local");
  ASSERT_NE(c, nullptr);
  EXPECT_DOUBLE_EQ(c->memory_bandwidth_bytes_per_second, 1.3e10);
  EXPECT_DOUBLE_EQ(*c->PeakFlops(Precision::kFp64), 7.5e10);
  EXPECT_EQ(FindDevice(*again, "A100")->aliases.size(), 1u);
}

TEST(DevicePeaksTest, BundledFileHasTheDocumentedDevices) {
  auto d = ReadDevicesFile(std::string(AIPROF_TEST_DATA_DIR) + "/../../data/devices.yaml");
  ASSERT_TRUE(d.ok()) << d.status().message();
  for (const char* n : {"Ascend310B", "Ascend910B", "A100", "H100", "H200", "MI250", "cpu-generic"}) {
    EXPECT_NE(FindDevice(*d, n), nullptr) << n;
  }
  EXPECT_DOUBLE_EQ(*FindDevice(*d, "H200")->PeakFlops(Precision::kBf16), 989.5e12);
  EXPECT_DOUBLE_EQ(FindDevice(*d, "H200")->memory_bandwidth_bytes_per_second, 4.8e12);
}

}  // namespace
}  // namespace aiprof
