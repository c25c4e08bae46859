#include "src/analysis/roofline/op_metrics_to_device_cost.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace aiprof {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(PmuMainMemoryBytesTest, BandwidthTimesCoreTimePerSide) {
  // Cube: (100 + 50) GB/s × 10 µs = 150e9 B/s × 10e-6 s = 1.5e6 bytes.
  // Vector: (20 + 10) GB/s × 4 µs = 30e9 × 4e-6 = 1.2e5 bytes. Sum 1.62e6.
  std::optional<double> b = PmuMainMemoryBytes({100, 50, 10}, {20, 10, 4});
  ASSERT_TRUE(b);
  EXPECT_NEAR(*b, 1.62e6, 1e-6);
  // A missing write column counts as no write traffic: 100 GB/s × 10 µs = 1e6.
  EXPECT_NEAR(*PmuMainMemoryBytes({100, kNaN, 10}, {kNaN, kNaN, kNaN}), 1e6, 1e-6);
}

TEST(PmuMainMemoryBytesTest, ZeroTimeAndZeroBandwidth) {
  // Zero bandwidth over a positive time: a measured zero.
  std::optional<double> zero_bw = PmuMainMemoryBytes({0, 0, 10}, {kNaN, kNaN, kNaN});
  ASSERT_TRUE(zero_bw);
  EXPECT_EQ(*zero_bw, 0);
  // Zero (or missing) core time: that side says nothing; no side → unavailable.
  EXPECT_FALSE(PmuMainMemoryBytes({100, 100, 0}, {100, 100, kNaN}));
  // One side without time, the other usable: only the usable side (5 GB/s × 2 µs = 1e4).
  EXPECT_NEAR(*PmuMainMemoryBytes({100, 100, 0}, {5, 0, 2}), 1e4, 1e-9);
  // Bandwidth columns absent (only time): unavailable, not zero.
  EXPECT_FALSE(PmuMainMemoryBytes({kNaN, kNaN, 10}, {kNaN, kNaN, 4}));
  // Negative bandwidth is not a reading.
  EXPECT_FALSE(PmuMainMemoryBytes({-1, kNaN, 10}, {kNaN, kNaN, kNaN}));
}

TEST(AscendOpCostTest, MatmulTransposesResolvedFromOutput) {
  // b written [N, K] (transpose_x2): [64,128] · [256,128]ᵀ → [64,256].
  // FLOPs 2·64·128·256 = 4194304; bytes (64·128 + 256·128 + 64·256)·2 = 114688.
  std::optional<OpCost> c =
      AscendOpCost({"MatMulV2", "64,128;256,128", "DT_FLOAT16;DT_FLOAT16", "FORMAT_ND;FORMAT_ND", "64,256"});
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->flops, 4194304);
  EXPECT_DOUBLE_EQ(c->bytes, 114688);
  EXPECT_EQ(c->precision, Precision::kFp16);
  // a written [K, M] (transpose_x1): same figures.
  c = AscendOpCost({"MatMul", "128,64;128,256", "FLOAT16;FLOAT16", "ND;ND", "64,256"});
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->flops, 4194304);
  // A bias input is not counted in FLOPs: 2·2·3·4 = 48.
  c = AscendOpCost({"MatMulV2", "2,3;3,4;4", "FLOAT;FLOAT;FLOAT", "", "2,4"});
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->flops, 48);
  // Batch: [8,64,32]·[8,32,16] → [8,64,16]: 2·8·64·32·16 = 524288.
  c = AscendOpCost({"BatchMatMulV2", "8,64,32;8,32,16", "DT_BF16;DT_BF16", "ND;ND", "8,64,16"});
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->flops, 524288);
  EXPECT_EQ(c->precision, Precision::kBf16);
}

TEST(AscendOpCostTest, UnsoundMappingsAreUnavailable) {
  // Shapes that do not multiply to the output.
  EXPECT_FALSE(AscendOpCost({"MatMulV2", "64,128;100,128", "FLOAT16;FLOAT16", "ND;ND", "64,256"}));
  // Fractal layouts: shapes are blocked, not logical.
  EXPECT_FALSE(AscendOpCost({"MatMulV2", "8,4,16,16;16,8,16,16", "FLOAT16;FLOAT16", "FRACTAL_NZ;FRACTAL_NZ", "16,4,16,16"}));
  // The layout of FlashAttentionScore is an attribute the row does not hold.
  EXPECT_FALSE(AscendOpCost({"FlashAttentionScore", "8192,2,640;8192,2,640;8192,2,640", "DT_BF16;DT_BF16;DT_BF16",
                             "ND;ND;ND", "655360"}));
  EXPECT_FALSE(AscendOpCost({"Cast", "2,8193", "INT64", "FORMAT_ND", "2,8193"}));
  // Dynamic (-1) dims and unparsable text.
  EXPECT_FALSE(AscendOpCost({"Add", "-1,4;-1,4", "FLOAT;FLOAT", "ND;ND", "-1,4"}));
  // Conv2D in NC1HWC0 / FRACTAL_Z (what Ascend usually runs): unavailable.
  EXPECT_FALSE(AscendOpCost({"Conv2D", "1,1,8,8,16;9,1,16,16", "FLOAT16;FLOAT16", "NC1HWC0;FRACTAL_Z", "1,1,6,6,16"}));
}

TEST(AscendOpCostTest, ElementwiseAndConv) {
  // Add [2,8193] + [2,8193], fp32: 16386 FLOPs, 3 × 16386 × 4 = 196632 bytes.
  std::optional<OpCost> c = AscendOpCost({"Add", "2,8193;2,8193", "FLOAT;FLOAT", "FORMAT_ND;FORMAT_ND", "2,8193"});
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->flops, 16386);
  EXPECT_DOUBLE_EQ(c->bytes, 196632);
  // Conv2D in NCHW: x[1,3,8,8] w[4,3,3,3] → [1,4,6,6]: 2·36·108 = 7776 (as op_cost's conv2d).
  c = AscendOpCost({"Conv2D", "1,3,8,8;4,3,3,3", "FLOAT;FLOAT", "NCHW;NCHW", "1,4,6,6"});
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->flops, 7776);
  // Conv2D whose output does not fit: never assumed.
  EXPECT_FALSE(AscendOpCost({"Conv2D", "1,3,8,8;4,3,3,3", "FLOAT;FLOAT", "NCHW;NCHW", "2,5,6,6"}));
}

TEST(AscendOpCostTest, DtypeNames) {
  EXPECT_EQ(TorchDtypeOfAscend("DT_BF16"), "c10::BFloat16");
  EXPECT_EQ(TorchDtypeOfAscend("FLOAT"), "float");
  EXPECT_EQ(TorchDtypeOfAscend("FLOAT16"), "c10::Half");
  EXPECT_EQ(TorchDtypeOfAscend("INT64"), "long int");
  EXPECT_EQ(TorchDtypeOfAscend("UINT64"), "");
  EXPECT_EQ(BytesSourceName(BytesSource::kPmu), std::string("pmu"));
  EXPECT_EQ(BytesSourceName(BytesSource::kShapes), std::string("shapes"));
}

}  // namespace
}  // namespace aiprof
