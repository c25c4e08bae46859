#include <gtest/gtest.h>

#include <string>

#include "src/analysis/roofline/ops_to_roofline.h"

namespace aiprof {

std::string RooflineToCsv(const RooflineResult& r);

namespace {

// Hand-made result: one compute-bound matmul row (AI 20 > ridge 10), one
// memory-bound row whose name needs CSV quoting.
TEST(RooflineCsvTest, SeedColumnsFirstAndEscaped) {
  RooflineResult r;
  DevicePeaks d;
  d.name = "t";
  d.peak_flops_per_second["fp32"] = 1e12;
  d.memory_bandwidth_bytes_per_second = 1e11;
  r.device = d;
  RooflineRow mm{"aten::mm", OpFamily::kMatmul, Precision::kFp32, 2, 1'000'000, 2e8, 1e7, 2, 0, 0};
  RooflineRow odd{"=op,\"x\"", OpFamily::kElementwise, Precision::kFp32, 1, 1'000'000, 1e6, 1e7, 0, 0, 1'000'000};
  r.rows = {mm, odd};
  std::string csv = RooflineToCsv(r);
  EXPECT_EQ(csv.substr(0, csv.find('\n')).rfind("Operator,Arithmetic_Intensity,AI_Utilization,Memory_Bound,", 0), 0u);
  // mm: AI 20, 2e8 FLOP in 1 ms = 200 GFLOP/s, attainable = peak 1e12 → 20%.
  EXPECT_NE(csv.find("\naten::mm,20,20.0%,No,fp32,matmul,2,1000.000,200000000,10000000,200,10,0.2,0.1,compute,bytes,profiler,0,shapes,host_op\n"),
            std::string::npos) << csv;
  // odd: AI 0.1, attainable 0.1·1e11 = 1e10, achieved 1e9 → 10%; formula-looking name quoted and defused.
  EXPECT_NE(csv.find("\n\"'=op,\"\"x\"\"\",0.1,10.0%,Yes,"), std::string::npos) << csv;
}

// Hand-made device-task rows: a MatMul with PMU bytes and shape FLOPs, and a
// ZerosLike with PMU bytes only (FLOPs unavailable: its FLOP columns stay empty).
TEST(RooflineCsvTest, DeviceTasksSayWhereBytesCameFrom) {
  RooflineResult r;
  DevicePeaks d;
  d.name = "npu";
  d.peak_flops_per_second["bf16"] = 5e14;
  d.memory_bandwidth_bytes_per_second = 1e12;
  r.device = d;
  RooflineRow mm{"MatMulV2_1", OpFamily::kMatmul, Precision::kBf16, 1, 10'000, 2147483648.0, 4e6, 0, 0, 0};
  mm.bytes_source = BytesSource::kPmu;
  mm.device_task = true;
  RooflineRow zeros{"ZerosLike_1", OpFamily::kNone, Precision::kFp32, 1, 2'000, 0, 1e6, 0, 0, 0};
  zeros.bytes_source = BytesSource::kPmu;
  zeros.flops_known = false;
  zeros.device_task = true;
  r.rows = {mm, zeros};
  std::string csv = RooflineToCsv(r);
  // mm: AI 2147483648 / 4e6 = 536.87 ≥ ridge 500; 2.147e14 FLOP/s of peak 5e14 (attainable) = 42.9%;
  // 4e6 B / 10 µs = 400 GB/s = 0.4 of 1e12 B/s. FLOPs estimated from shapes, bytes measured.
  EXPECT_NE(csv.find("\nMatMulV2_1,536.9,42.9%,No,bf16,matmul,1,10.000,2147483648,4000000,2.147e+05,400,0.4295,0.4,"
                     "compute,flops,shapes,0,pmu,device_task\n"),
            std::string::npos) << csv;
  // zeros: no AI, no FLOPs, 1e6 B / 2 µs = 500 GB/s = 0.5 of B; nothing estimated.
  EXPECT_NE(csv.find("\nZerosLike_1,,,,fp32,none,1,2.000,,1000000,,500,,0.5,unknown,none,unavailable,0,pmu,device_task\n"),
            std::string::npos) << csv;
}

}  // namespace
}  // namespace aiprof
