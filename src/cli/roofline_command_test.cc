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
  EXPECT_NE(csv.find("\naten::mm,20,20.0%,No,fp32,matmul,2,1000.000,200000000,10000000,200,10,0.2,0.1,compute,bytes,profiler,0\n"),
            std::string::npos) << csv;
  // odd: AI 0.1, attainable 0.1·1e11 = 1e10, achieved 1e9 → 10%; formula-looking name quoted and defused.
  EXPECT_NE(csv.find("\n\"'=op,\"\"x\"\"\",0.1,10.0%,Yes,"), std::string::npos) << csv;
}

}  // namespace
}  // namespace aiprof
