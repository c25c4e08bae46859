#include "src/analysis/memory/memory_peaks.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/analysis/metrics/metric_set.h"
#include "test/util/temp_file.h"
#include "test/util/trace_fixtures.h"

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

// Hand-made, as 2021 Kineto writes [memory] events: Bytes only, no Total
// Allocated. No peak is published (the running sum is net since the trace
// started, not the allocator's total), and the reason says what the events
// lack, not that there are none (before: "no [memory] events with Total
// Allocated ... (profile_memory off?)" though profile_memory was on).
TEST(MemoryPeaksTest, BytesOnlyMemoryEventsSayWhyThereIsNoPeak) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":5,
     "args":{"Device Type":1,"Device Id":0,"Bytes":300}},
    {"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":20,
     "args":{"Device Type":1,"Device Id":0,"Bytes":-100}}
  ]})");
  ASSERT_NE(t, nullptr);
  MemoryResult r = ComputeMemoryPeaks(*t);
  EXPECT_TRUE(r.devices.empty());
  EXPECT_EQ(r.bytes_only_events, 2u);
  MetricSet m;
  PublishMemoryPeaks(*t, r, &m);
  EXPECT_EQ(m.Get("memory_peak_allocated_bytes"), nullptr);
  for (const char* metric : {"memory_peak_allocated_bytes", "memory_peak_reserved_bytes", "memory_peak_util"}) {
    std::optional<std::string> why = m.UnavailableReason(metric);
    ASSERT_TRUE(why.has_value()) << metric;
    EXPECT_NE(why->find("2 [memory] events carry each allocation's Bytes only, no Total Allocated"), std::string::npos)
        << *why;
    EXPECT_EQ(why->find("profile_memory off"), std::string::npos) << *why;
  }
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

// torch_npu runs: figures from
// src/analysis/testing/oracles/ascend_memory_steps_oracle.py (Python csv +
// Decimal over memory_record.csv and operator_memory.csv):
//   level1/rank0: PTA+GE peak 1261.04296875 MB = 1322299392 bytes at
//   1736408883743396.450 us, made by cann::Conv2DBackpropFilter10 (256 KB)
//   allocated at that time; PTA+GE reserved peak 1526.75 MB = 1600913408.
//   level0/rank0: 1245819904 bytes first reached at 1736405443921184.280 us,
//   aten::_foreach_add (1 KB) allocated then.
struct AscendCase {
  const char* folder;
  double peak_bytes;
  int64_t peak_ts_ns;
  const char* allocation;
  int64_t allocation_bytes;
};
void PrintTo(const AscendCase& c, std::ostream* os) { *os << c.folder; }

class AscendMemoryPeaksTest : public ::testing::TestWithParam<AscendCase> {};

TEST_P(AscendMemoryPeaksTest, PeakFromMemoryRecordAndOperatorMemory) {
  const AscendCase& c = GetParam();
  auto t = ImportFixture(c.folder);
  ASSERT_NE(t, nullptr);
  MemoryResult r = ComputeMemoryPeaks(*t);
  ASSERT_EQ(r.devices.size(), 1u);
  const MemoryPeak& p = r.devices[0];
  EXPECT_EQ(p.device_type, kNpuDeviceType);
  EXPECT_EQ(p.device_id, 0);
  EXPECT_EQ(p.rank, 0);
  EXPECT_EQ(p.component, "PTA+GE");
  EXPECT_EQ(p.events, 495u);  // PTA+GE rows with Total Allocated
  EXPECT_EQ(p.peak_allocated, c.peak_bytes);
  EXPECT_EQ(p.peak_allocated_ts_ns, c.peak_ts_ns);
  EXPECT_EQ(p.peak_reserved, 1600913408);
  ASSERT_NE(p.peak_allocation, kNoInstant);
  EXPECT_EQ(t->Str(t->instants.name[p.peak_allocation]), c.allocation);
  EXPECT_EQ(t->instants.ts_ns[p.peak_allocation], c.peak_ts_ns);
  ASSERT_NE(p.peak_allocated_op, kNoSlice);  // the host op running then
  const SliceTable& s = t->slices;
  EXPECT_LE(s.ts_ns[p.peak_allocated_op], c.peak_ts_ns);
  EXPECT_GE(s.ts_ns[p.peak_allocated_op] + s.dur_ns[p.peak_allocated_op], c.peak_ts_ns);
  MetricSet m;
  PublishMemoryPeaks(*t, r, &m);
  EXPECT_EQ(m.Get("memory_peak_allocated_bytes")->value, c.peak_bytes);
  EXPECT_EQ(m.Get("memory_peak_reserved_bytes")->value, 1600913408);
  EXPECT_TRUE(m.UnavailableReason("memory_peak_util").has_value());  // no NPU capacity in the files
  ASSERT_FALSE(m.Evidence("memory_pressure").empty());
  std::string line = DescribePeak(*t, p);
  EXPECT_NE(line.find(c.allocation), std::string::npos) << line;
  EXPECT_NE(line.find("NPU:0"), std::string::npos) << line;
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, AscendMemoryPeaksTest,
    ::testing::Values(AscendCase{"ascend-pt/level1/rank0_ascend_pt", 1322299392, 1736408883743396450,
                                 "cann::Conv2DBackpropFilter10", 262144},
                      AscendCase{"ascend-pt/level0/rank0_ascend_pt", 1245819904, 1736405443921184280,
                                 "aten::_foreach_add", 1024}),
    [](const ::testing::TestParamInfo<AscendCase>& info) {
      return std::string(info.param.folder).find("level1") != std::string::npos ? "Level1Rank0" : "Level0Rank0";
    });

// The device index comes from the file's Device Type column: one past
// int64 aborted analyze (std::stoll threw), 100,000 digits overflowed the
// regex's stack (found by review). Neither is a device index: no peak.
TEST(MemoryPeaksTest, AscendDeviceNumbersFromTheFileAreParsedSafely) {
  namespace fs = std::filesystem;
  for (const std::string& npu : {std::string("99999999999999999999"), std::string(100000, '7')}) {
    testing::TempDir dir;
    const fs::path copy = fs::path(dir.path()) / "rank0_ascend_pt";
    fs::copy(testing::FixturesDir() + "/ascend-pt/level1/rank0_ascend_pt", copy, fs::copy_options::recursive);
    const fs::path csv = copy / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv";
    std::stringstream text;
    text << std::ifstream(csv).rdbuf();
    std::string body = text.str();
    for (size_t at; (at = body.find("NPU:0")) != std::string::npos;) body.replace(at, 5, "NPU:" + npu);
    std::ofstream(csv, std::ios::trunc) << body;
    auto t = testing::ImportPath(copy.string());
    ASSERT_TRUE(t.ok()) << t.status().message();
    MemoryResult r = ComputeMemoryPeaks(**t);
    EXPECT_TRUE(r.devices.empty()) << npu.size() << " digits";
  }
}

// Two ranks in one folder: one peak per rank, the same figures per rank as
// the oracle gives for each rank folder (rank1 peak at 1736408883749732.560 us).
TEST(MemoryPeaksTest, AscendMultiRankFolderOnePeakPerRank) {
  auto t = ImportFixture("ascend-pt/level1");
  ASSERT_NE(t, nullptr);
  MemoryResult r = ComputeMemoryPeaks(*t);
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0].rank, 0);
  EXPECT_EQ(r.devices[1].rank, 1);
  EXPECT_EQ(r.devices[1].device_id, 1);
  EXPECT_EQ(r.devices[1].peak_allocated, 1322299392);
  EXPECT_EQ(r.devices[1].peak_allocated_ts_ns, 1736408883749732560);
}

}  // namespace
}  // namespace aiprof
