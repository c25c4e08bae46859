#include "src/analysis/common/op_args.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace aiprof {
namespace {

TEST(OpArgsTest, IntListsAndScalarsAsConcreteInputsWriteThem) {
  EXPECT_EQ(ParseIntList("[2, 2]"), (Dims{2, 2}));
  EXPECT_EQ(ParseIntList(" [-1,3] "), (Dims{-1, 3}));
  EXPECT_EQ(ParseIntList("1"), (Dims{1}));
  EXPECT_EQ(ParseIntList("[]"), Dims{});
  EXPECT_FALSE(ParseIntList("same"));
  EXPECT_FALSE(ParseIntList("[2, 2] x"));
  EXPECT_FALSE(ParseIntList("1.5"));
  EXPECT_FALSE(ParseIntList(""));
}

TEST(OpArgsTest, KinetoListsAreRead) {
  auto dims = ParseDimsList("[[8, 3, 64, 64], [], [2]]");
  ASSERT_TRUE(dims);
  EXPECT_EQ(*dims, (std::vector<Dims>{{8, 3, 64, 64}, {}, {2}}));
  auto types = ParseStringList(R"(["float", "", "Scalar"])");
  ASSERT_TRUE(types);
  EXPECT_EQ(*types, (std::vector<std::string>{"float", "", "Scalar"}));
  EXPECT_FALSE(ParseDimsList("[[8, x]]"));
  EXPECT_FALSE(ParseStringList(R"(["float")"));
}

// torch_npu writes the same args as text, one input per ";\r\n" item (the
// ascend-pt fixtures' trace_view.json: aten::convolution
// "32,3,224,224;\r\n64,3,11,11;\r\n64;\r\n;\r\n..." with Input type
// "float;\r\nfloat;\r\nfloat;\r\nScalarList;..."). They were not read, so on
// every torch_npu trace the analyses that need shapes or dtypes (op cost,
// layout copies, dtype round trips, fusion traffic) had none.
TEST(OpArgsTest, TorchNpuTextFormIsRead) {
  auto dims = ParseDimsList("32,3,224,224;\r\n64,3,11,11;\r\n64;\r\n;\r\n");
  ASSERT_TRUE(dims);
  EXPECT_EQ(*dims, (std::vector<Dims>{{32, 3, 224, 224}, {64, 3, 11, 11}, {64}, {}, {}}));
  auto types = ParseStringList("float;\r\nfloat;\r\nlong int;\r\nScalarList");
  ASSERT_TRUE(types);
  EXPECT_EQ(*types, (std::vector<std::string>{"float", "float", "long int", "ScalarList"}));
  // One input, and an op with no tensor dims (aten::item: "" with type "double").
  EXPECT_EQ(*ParseDimsList("32,1000"), (std::vector<Dims>{{32, 1000}}));
  EXPECT_EQ(*ParseDimsList(""), (std::vector<Dims>{{}}));
  EXPECT_EQ(*ParseStringList("double"), (std::vector<std::string>{"double"}));
  // Not numbers, or a number too long for int64: malformed.
  EXPECT_FALSE(ParseDimsList("32,abc;\r\n"));
  EXPECT_FALSE(ParseDimsList("1,,2"));
  EXPECT_FALSE(ParseDimsList("1234567890123456789012"));
}

// Hand-made: numbers past int64 in Kineto's list form are malformed, as in
// the text form (20 digits wrapped, by signed overflow, to
// 7766279631452241919), and a product of dims past int64 saturates: 2^32 x
// 2^32 elements (2^64) wrapped to 0, so an op's bytes read 0 where the
// shape said more than any memory holds.
TEST(OpArgsTest, HugeNumbersAreNotWrapped) {
  EXPECT_FALSE(ParseDimsList("[[99999999999999999999, 2]]"));
  EXPECT_FALSE(ParseDimsList("[[-99999999999999999999]]"));
  auto ok = ParseDimsList("[[999999999999999999]]");  // 18 digits: read
  ASSERT_TRUE(ok);
  EXPECT_EQ((*ok)[0][0], 999999999999999999);
  EXPECT_EQ(NumElements({int64_t{1} << 32, int64_t{1} << 32}), INT64_MAX);
  EXPECT_EQ(NumElements({int64_t{1} << 31, 3}), (int64_t{1} << 31) * 3);
  EXPECT_EQ(NumElements({}), 1);
}

}  // namespace
}  // namespace aiprof
