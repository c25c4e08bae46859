// aiprof's FLOP models against TraceLens's published formulas on traces from
// TraceLens's own test suite (../shared/fixtures/tracelens). Expected sums
// from src/analysis/testing/oracles/tracelens_flops_oracle.py, an
// independent reading of the JSON with TraceLens's GEMM.flops_func (bias add
// M·N included) and SDPA.flops_func (causal halved).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "src/analysis/roofline/op_cost.h"
#include "src/analysis/roofline/ops_to_roofline.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportFixture;

struct Sum {
  uint64_t count = 0;
  double flops = 0;
};

// Σ shape-based FLOPs per op name over every instance (nested ones too).
std::map<std::string, Sum> FlopsByName(const Trace& t) {
  std::map<std::string, Sum> out;
  for (uint32_t i = 0; i < t.slices.size(); ++i) {
    if (t.slices.kind[i] != EventKind::kCpuOp) continue;
    std::string name(t.Str(t.slices.name[i]));
    if (name != "aten::linear" && name != "aten::addmm" && name != "aten::mm" && name != "aten::bmm" &&
        name != "aten::scaled_dot_product_attention") {
      continue;
    }
    std::optional<OpCost> c = ShapeCostOfSlice(t, i);
    if (!c) continue;
    out[name].count++;
    out[name].flops += c->flops;
  }
  return out;
}

TEST(TraceLensConventionsTest, BertH100GemmWithBiasAndAttention) {
  auto t = ImportFixture("tracelens/h100__gaunernst_bert-small-uncased__1016001.json.gz");
  ASSERT_NE(t, nullptr);
  std::map<std::string, Sum> f = FlopsByName(*t);
  EXPECT_EQ(f["aten::linear"].count, 26u);
  EXPECT_DOUBLE_EQ(f["aten::linear"].flops, 8036168946.0);
  EXPECT_EQ(f["aten::addmm"].count, 26u);
  EXPECT_DOUBLE_EQ(f["aten::addmm"].flops, 8036168946.0);
  EXPECT_EQ(f["aten::scaled_dot_product_attention"].count, 4u);
  EXPECT_DOUBLE_EQ(f["aten::scaled_dot_product_attention"].flops, 162865152.0);
}

TEST(TraceLensConventionsTest, FalconMi300GemmWithBiasAndAttention) {
  auto t = ImportFixture("tracelens/mi300__Falconsai_nsfw_image_detection__1016002.json.gz");
  ASSERT_NE(t, nullptr);
  std::map<std::string, Sum> f = FlopsByName(*t);
  EXPECT_EQ(f["aten::linear"].count, 73u);
  EXPECT_DOUBLE_EQ(f["aten::linear"].flops, 133927099392.0);
  EXPECT_DOUBLE_EQ(f["aten::addmm"].flops, 133927099392.0);
  EXPECT_EQ(f["aten::scaled_dot_product_attention"].count, 12u);
  EXPECT_DOUBLE_EQ(f["aten::scaled_dot_product_attention"].flops, 5722619904.0);
}

}  // namespace
}  // namespace aiprof
