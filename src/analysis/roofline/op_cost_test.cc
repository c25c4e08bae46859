#include "src/analysis/roofline/op_cost.h"

#include <gtest/gtest.h>

namespace aiprof {
namespace {

// Hand-worked FLOP and byte counts (fp32 = 4 bytes per element).
OpCost Cost(std::string_view name, std::vector<Dims> dims, std::vector<std::string> types,
            const Dims* out = nullptr) {
  std::optional<OpCost> c = EstimateOpCost(name, dims, types, out);
  EXPECT_TRUE(c.has_value()) << name;
  return c.value_or(OpCost{});
}

TEST(OpCostTest, MatmulFamily) {
  OpCost mm = Cost("aten::mm", {{4, 8}, {8, 16}}, {"float", "float"});
  EXPECT_DOUBLE_EQ(mm.flops, 2.0 * 4 * 8 * 16);           // 1024
  EXPECT_DOUBLE_EQ(mm.bytes, (32 + 128 + 64) * 4.0);      // A, B, C
  EXPECT_EQ(mm.precision, Precision::kFp32);
  OpCost addmm = Cost("aten::addmm", {{16}, {4, 8}, {8, 16}, {}, {}}, {"float", "float", "float", "Scalar", "Scalar"});
  EXPECT_DOUBLE_EQ(addmm.flops, 1024 + 4 * 16);  // + bias add M·N (TraceLens GEMM.flops_func)
  EXPECT_DOUBLE_EQ(addmm.bytes, (16 + 32 + 128 + 64) * 4.0);
  OpCost linear = Cost("aten::linear", {{2, 3, 8}, {16, 8}, {16}}, {"float", "float", "float"});
  EXPECT_DOUBLE_EQ(linear.flops, 2.0 * 6 * 8 * 16 + 6 * 16);  // M = 2·3, + bias M·N
  // Without a bias, no bias add.
  EXPECT_DOUBLE_EQ(Cost("aten::linear", {{2, 3, 8}, {16, 8}}, {"float", "float"}).flops, 2.0 * 6 * 8 * 16);
  EXPECT_DOUBLE_EQ(linear.bytes, (48 + 128 + 16 + 96) * 4.0);
  EXPECT_DOUBLE_EQ(Cost("aten::bmm", {{2, 4, 8}, {2, 8, 16}}, {"float", "float"}).flops, 2.0 * 2 * 4 * 8 * 16);
  // matmul broadcasts the batch dims of a [3,4,8] · [8,16].
  EXPECT_DOUBLE_EQ(Cost("aten::matmul", {{3, 4, 8}, {8, 16}}, {"float", "float"}).flops, 2.0 * 3 * 4 * 8 * 16);
  // Half: 2 bytes per element, fp16 peak.
  OpCost half = Cost("aten::mm", {{4, 8}, {8, 16}}, {"c10::Half", "c10::Half"});
  EXPECT_DOUBLE_EQ(half.bytes, (32 + 128 + 64) * 2.0);
  EXPECT_EQ(half.precision, Precision::kFp16);
  // Inner dimensions that do not agree: no estimate.
  EXPECT_FALSE(EstimateOpCost("aten::mm", {{4, 8}, {9, 16}}, {"float", "float"}, nullptr).has_value());
}

TEST(OpCostTest, ConvolutionUsesConsumerOutputElseAssumesSame) {
  std::vector<Dims> in = {{1, 3, 8, 8}, {4, 3, 3, 3}, {4}, {}, {}, {}, {}};
  std::vector<std::string> types = {"float", "float", "float", "", "", "", "Scalar"};
  Dims out = {1, 4, 6, 6};  // 3x3, stride 1, no padding
  OpCost c = Cost("aten::conv2d", in, types, &out);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 1 * 36 * 108);  // 2·N·Hout·Wout·(Cout·Cin·kh·kw) = 7776
  EXPECT_DOUBLE_EQ(c.bytes, (192 + 108 + 4 + 144) * 4.0);
  EXPECT_FALSE(c.output_assumed);
  OpCost same = Cost("aten::conv2d", in, types, nullptr);
  EXPECT_DOUBLE_EQ(same.flops, 2.0 * 64 * 108);
  EXPECT_TRUE(same.output_assumed);
  Dims wrong_cout = {1, 5, 6, 6};
  EXPECT_TRUE(Cost("aten::conv2d", in, types, &wrong_cout).output_assumed);
  // Grouped (depthwise) conv: weight [Cout, Cin/groups, kh, kw] already divides by groups.
  Dims dw_out = {1, 3, 8, 8};
  EXPECT_DOUBLE_EQ(Cost("aten::mkldnn_convolution", {{1, 3, 8, 8}, {3, 1, 3, 3}}, {"float", "float"}, &dw_out).flops,
                   2.0 * 64 * 27);
}

TEST(OpCostTest, AttentionAndElementwise) {
  OpCost a = Cost("aten::scaled_dot_product_attention", {{2, 4, 16, 8}, {2, 4, 32, 8}, {2, 4, 32, 8}},
                  {"float", "float", "float"});
  EXPECT_DOUBLE_EQ(a.flops, 2.0 * 8 * 16 * 32 * 8 * 2);  // QKᵀ and PV, batch·heads = 8
  EXPECT_DOUBLE_EQ(a.bytes, (1024 + 2048 + 2048 + 1024) * 4.0);
  // Causal (is_causal is input 5 of scaled_dot_product_attention, 4 of
  // _scaled_dot_product_flash_attention): half when L = S, as TraceLens's
  // SDPA.flops_func (B·H·(2·L·S·E + 2·L·S·Ev) / 2).
  std::vector<std::string> causal = {"", "", "", "", "0.", "True", "", "False"};
  std::vector<Dims> self = {{1, 12, 77, 64}, {1, 12, 77, 64}, {1, 12, 77, 64}, {}, {}, {}, {}, {}};
  std::vector<std::string> bf16 = {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "Scalar", "Scalar", "Scalar",
                                   "Scalar"};
  std::optional<OpCost> full = EstimateOpCost("aten::scaled_dot_product_attention", self, bf16, nullptr);
  std::optional<OpCost> half = EstimateOpCost("aten::scaled_dot_product_attention", self, bf16, nullptr, &causal);
  ASSERT_TRUE(full && half);
  EXPECT_DOUBLE_EQ(full->flops, 12.0 * (2 * 77 * 77 * 64 + 2 * 77 * 77 * 64));
  EXPECT_DOUBLE_EQ(half->flops, full->flops / 2);
  std::vector<std::string> flash = {"", "", "", "0.", "True", "False", "0.125"};
  EXPECT_DOUBLE_EQ(
      EstimateOpCost("aten::_scaled_dot_product_flash_attention", {{1, 12, 77, 64}, {1, 12, 77, 64}, {1, 12, 77, 64}},
                     {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16"}, nullptr, &flash)
          ->flops,
      full->flops / 2);
  // L = 2 queries over S = 4 keys, bottom-right aligned: query 0 sees 3 keys,
  // query 1 sees 4: 7 of 8 pairs.
  std::optional<OpCost> tail = EstimateOpCost("aten::scaled_dot_product_attention", {{1, 1, 2, 8}, {1, 1, 4, 8}, {1, 1, 4, 8}},
                                              {"float", "float", "float"}, nullptr, &causal);
  EXPECT_DOUBLE_EQ(tail->flops, (2.0 * 2 * 4 * 8 * 2) * 7 / 8);
  OpCost add = Cost("aten::add", {{4, 4}, {4}, {}}, {"float", "float", "Scalar"});
  EXPECT_DOUBLE_EQ(add.flops, 16);                       // 1 per output element
  EXPECT_DOUBLE_EQ(add.bytes, (16 + 4 + 16) * 4.0);
  EXPECT_EQ(ClassifyOp("aten::view"), OpFamily::kNone);
  EXPECT_FALSE(EstimateOpCost("aten::view", {{4}}, {"float"}, nullptr).has_value());
  EXPECT_EQ(PrecisionOfDtype("long int"), Precision::kOther);
  EXPECT_EQ(PrecisionOfDtype("c10::BFloat16"), Precision::kBf16);
}

}  // namespace
}  // namespace aiprof
