#include "src/view/flame/flame_from_diff.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

struct FlamePair {
  std::unique_ptr<Trace> a, b;
  AttributionResult ra, rb;
  AttributionDiff d;
};

std::unique_ptr<Trace> Sample(const std::string& name) {
  StatusOr<std::unique_ptr<Trace>> t = testing::ImportPath(std::string(AIPROF_TEST_DATA_DIR) + "/" + name);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? std::move(*t) : nullptr;
}

std::unique_ptr<FlamePair> Load(std::unique_ptr<Trace> a, std::unique_ptr<Trace> b) {
  if (a == nullptr || b == nullptr) return nullptr;
  auto p = std::make_unique<FlamePair>();
  p->a = std::move(a);
  p->b = std::move(b);
  p->ra = ComputeAttribution(*p->a, nullptr);
  p->rb = ComputeAttribution(*p->b, nullptr);
  p->d = DiffAttribution(*p->a, p->ra, *p->b, p->rb, {});
  return p;
}

// Checks that hold for any diff flame, against the diff's own columns:
// every shown frame is one diff node of B, matched to the A frame of the
// same diff node exactly when the diff aligned A's node to it; self times
// are never negative and add up to the root's total.
void CheckConsistent(const FlamePair& p, const DiffFlame& f, DiffFlameBase base) {
  ASSERT_EQ(f.shown.size(), f.match.size());
  size_t expected_matched = 0, matched = 0;
  for (uint32_t i = 0; i < p.d.nodes.size(); ++i) {
    if (base == DiffFlameBase::kHost && p.d.nodes.kind[i] == AttributionKind::kDevice) continue;
    expected_matched += p.d.nodes.a[i] != kNoNode && p.d.nodes.b[i] != kNoNode ? 1 : 0;
  }
  int64_t self_sum = 0;
  for (uint32_t r = 0; r < f.shown.size(); ++r) {
    const uint32_t node = f.node_of_shown[r];
    ASSERT_NE(node, kNoNode);
    EXPECT_NE(p.d.nodes.b[node], kNoNode);
    EXPECT_EQ(f.match[r] != kNoFrame, p.d.nodes.a[node] != kNoNode) << r;
    matched += f.match[r] != kNoFrame ? 1 : 0;
    EXPECT_GE(f.shown.self_ns[r], 0);
    self_sum += f.shown.self_ns[r];
    if (r > 0) {
      EXPECT_LT(f.shown.parent[r], r);
    }
  }
  EXPECT_EQ(matched, expected_matched);
  EXPECT_EQ(self_sum, f.shown.root_total_ns());
}

// The ResNet50 pair (num_workers 0 → 4): host time per step. The root is
// the step: its total is the diff's B step time per steady step (within
// rounding: no node's children exceed it).
TEST(FlameFromDiffTest, ResNet50HostTimeOnTheDiffsAlignment) {
  auto p = Load(Sample("resnet50_num_workers_0.pt.trace.json.gz"), Sample("resnet50_num_workers_4.pt.trace.json.gz"));
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->d.available) << p->d.problem;
  DiffFlame f = BuildDiffFlame(*p->a, p->ra, *p->b, p->rb, p->d, DiffFlameBase::kHost);
  CheckConsistent(*p, f, DiffFlameBase::kHost);
  // The page says its frames are the diff's nodes, not slices.
  EXPECT_TRUE(f.shown.from_diff);
  EXPECT_EQ(f.shown.source(), "aligned diff nodes");
  EXPECT_EQ(f.shown.event_noun(), "nodes");
  EXPECT_NEAR(static_cast<double>(f.shown.root_total_ns()), p->d.nodes.b_ns[0], 2);
  EXPECT_NEAR(static_cast<double>(f.baseline.root_total_ns()), p->d.nodes.a_ns[0], 2);
  // The single-process loader of A and the multi-process one of B are one
  // role in the diff: the shown loader frame is matched, not added.
  bool loader_matched = false;
  for (uint32_t r = 0; r < f.shown.size(); ++r) {
    if (p->d.nodes.match[f.node_of_shown[r]] == DiffMatch::kRole) loader_matched |= f.match[r] != kNoFrame;
  }
  EXPECT_TRUE(loader_matched);
  // Each frame carries its node's calls per step on its run, and the page
  // both sides' (the diff's figures, not recounted).
  ASSERT_EQ(f.shown.calls.size(), f.shown.size());
  ASSERT_EQ(f.baseline.calls.size(), f.baseline.size());
  size_t called = 0;
  for (uint32_t r = 1; r < f.shown.size(); ++r) {
    EXPECT_EQ(f.shown.calls[r], p->d.nodes.b_calls[f.node_of_shown[r]]);
    if (f.match[r] != kNoFrame) {
      EXPECT_EQ(f.baseline.calls[f.match[r]], p->d.nodes.a_calls[f.node_of_shown[r]]);
    }
    called += f.shown.calls[r] > 0;
  }
  EXPECT_GT(called, f.shown.size() / 2);
  StringViewSink sink;
  ASSERT_TRUE(WriteDiffFlameHtml(f, "A.json", "B.json", &sink).ok());
  EXPECT_NE(sink.str().find("\"diff\":{\"title\":\"A.json\""), std::string::npos);
  EXPECT_NE(sink.str().find(",\"calls\":["), std::string::npos);
  EXPECT_NE(sink.str().find("\"calls\":[", sink.str().find("\"diff\":{")), std::string::npos);
}

// H100 against MI300 (TraceLens fixtures, bert-small): kernels differ by
// name and pair through their launching op; on device time the kernels are
// the leaves, and the root's total is the diff's device time per step.
TEST(FlameFromDiffTest, H100AgainstMi300DeviceTime) {
  auto p = Load(testing::ImportFixture("tracelens/h100__gaunernst_bert-small-uncased__1016001.json.gz"),
                testing::ImportFixture("tracelens/mi300__gaunernst_bert-small-uncased__1016001.json.gz"));
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->d.available) << p->d.problem;
  DiffFlame f = BuildDiffFlame(*p->a, p->ra, *p->b, p->rb, p->d, DiffFlameBase::kDevice);
  CheckConsistent(*p, f, DiffFlameBase::kDevice);
  size_t kernels = 0, through_op = 0;
  for (uint32_t r = 0; r < f.shown.size(); ++r) {
    const uint32_t node = f.node_of_shown[r];
    if (p->d.nodes.kind[node] != AttributionKind::kDevice) continue;
    ++kernels;
    through_op += p->d.nodes.match[node] == DiffMatch::kLaunchOrder && f.match[r] != kNoFrame ? 1 : 0;
  }
  EXPECT_GT(kernels, 0u);
  EXPECT_GT(through_op, 0u);
  EXPECT_NEAR(static_cast<double>(f.shown.root_total_ns()), p->d.nodes.b_device_ns[0], 0.001 * p->d.nodes.b_device_ns[0] + 2);
}

}  // namespace
}  // namespace aiprof
