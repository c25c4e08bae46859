#include "src/report/attribution/attribution_report.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using render::Value;

// Hand-made trace (trial_dx D4, D5): 4 steps of 1000 µs on tid 1. Per step:
//   aten::big [s+10, +600) with 5 children aten::tiny_K, 2 µs each
//     (0.2% of the step: under the tree's 0.5%), and aten::mid [s+100, +200)
//   one kernel "orphan" of 30 µs on stream 7 starting at s+700, with no
//   correlation id (no launching call in the trace).
// By hand, per step: big total 600 µs, self 600 - 200 - 10 = 390 µs; the
// five tiny children are one "other" row of 10 µs under big; device not
// joined to any node 30 µs.
std::string MakeRun() {
  std::string j = R"({"traceEvents":[)";
  auto ev = [&](const std::string& cat, const std::string& name, int tid, int ts, int dur,
                const std::string& args = "") {
    j += R"({"ph":"X","cat":")" + cat + R"(","name":")" + name + R"(","pid":1,"tid":)" + std::to_string(tid) +
         R"(,"ts":)" + std::to_string(ts) + R"(,"dur":)" + std::to_string(dur) +
         (args.empty() ? "" : R"(,"args":{)" + args + "}") + "},";
  };
  for (int k = 0; k < 4; ++k) {
    const int s = 100 + k * 1000;
    ev("user_annotation", "ProfilerStep#" + std::to_string(k), 1, s, 1000);
    ev("cpu_op", "aten::big", 1, s + 10, 600);
    ev("cpu_op", "aten::mid", 1, s + 100, 200);
    for (int t = 0; t < 5; ++t) ev("cpu_op", "aten::tiny_" + std::to_string(t), 1, s + 400 + 10 * t, 2);
    ev("kernel", "orphan", 7, s + 700, 30, R"("device":0,"stream":7)");
  }
  j.pop_back();
  return j + "]}";
}

const render::Table* FindTable(const render::Section& s, const std::string& key) {
  for (const render::Block& b : s.blocks) {
    if (const auto* t = std::get_if<render::Table>(&b); t && t->key == key) return t;
  }
  for (const render::Section& c : s.sections) {
    if (const render::Table* t = FindTable(c, key)) return t;
  }
  return nullptr;
}

const render::KeyValue* FindItem(const render::Section& s, const std::string& key) {
  for (const render::Block& b : s.blocks) {
    if (const auto* kv = std::get_if<render::KeyValues>(&b)) {
      for (const render::KeyValue& i : kv->items) {
        if (i.key == key) return &i;
      }
    }
  }
  return nullptr;
}

// Hand-made CPU trace (no device activity): no "not joined" lines, which
// would read 0 beside a device line of 0.
TEST(AttributionReportTest, CpuTraceHasNoUnjoinedDeviceLines) {
  std::unique_ptr<Trace> t = testing::ImportJsonText(R"({"traceEvents":[
   {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
   {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":50}]})");
  ASSERT_TRUE(t);
  AttributionResult r = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(r.available) << r.problem;
  render::Document doc = AttributionToDocument(*t, r);
  ASSERT_FALSE(doc.sections.empty());
  EXPECT_EQ(FindItem(doc.sections[0], "unlinked_device_ns"), nullptr);
  EXPECT_EQ(FindItem(doc.sections[0], "unlinked_compute_ns"), nullptr);
  EXPECT_NE(FindItem(doc.sections[0], "device_ns"), nullptr);
}

// Hand-made: under aten::big (900 us of a 1000 us step) one child of 2 us,
// under the tree's 0.5% share: it is shown by its name, not as
// "other (1 node ...)", which would take the same row and say less.
TEST(AttributionReportTest, ALoneSmallChildIsShownByItsName) {
  std::unique_ptr<Trace> t = testing::ImportJsonText(R"({"traceEvents":[
   {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1000},
   {"ph":"X","cat":"cpu_op","name":"aten::big","pid":1,"tid":1,"ts":10,"dur":900},
   {"ph":"X","cat":"cpu_op","name":"aten::tiny","pid":1,"tid":1,"ts":20,"dur":2}]})");
  ASSERT_TRUE(t);
  AttributionResult r = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(r.available) << r.problem;
  render::Document doc = AttributionToDocument(*t, r);
  ASSERT_FALSE(doc.sections.empty());
  const render::Table* tree = FindTable(doc.sections[0], "tree");
  ASSERT_NE(tree, nullptr);
  bool tiny = false;
  for (const auto& row : tree->rows) {
    EXPECT_EQ(row[0].str().find("other ("), std::string::npos) << row[0].str();
    tiny |= row[0].str().find("aten::tiny") != std::string::npos;
  }
  EXPECT_TRUE(tiny);
}

TEST(AttributionReportTest, UnjoinedDeviceTimeAndLeftOutNodesAreShown) {
  std::unique_ptr<Trace> t = testing::ImportJsonText(MakeRun());
  ASSERT_TRUE(t);
  AttributionResult r = ComputeAttribution(*t, nullptr);
  ASSERT_TRUE(r.available) << r.problem;
  ASSERT_EQ(r.steps, 4u);
  render::Document doc = AttributionToDocument(*t, r);
  ASSERT_FALSE(doc.sections.empty());
  const render::Section& s = doc.sections[0];
  // D4: 30 µs per step not joined (the old report had no such item).
  const render::KeyValue* un = FindItem(s, "unlinked_device_ns");
  ASSERT_NE(un, nullptr);
  EXPECT_DOUBLE_EQ(un->value.number(), 30'000);
  // D5: under aten::big, the five 2 µs children are one "other" row of 10 µs,
  // and big's self + its rows add up to its total (the old tree dropped them).
  const render::Table* tree = FindTable(s, "tree");
  ASSERT_NE(tree, nullptr);
  size_t big = tree->rows.size();
  for (size_t i = 0; i < tree->rows.size(); ++i) {
    if (tree->rows[i][0].str().find("aten::big") != std::string::npos) big = i;
  }
  ASSERT_LT(big, tree->rows.size());
  const size_t depth = tree->rows[big][0].str().find_first_not_of(' ');
  EXPECT_DOUBLE_EQ(tree->rows[big][2].number(), 600'000);
  EXPECT_DOUBLE_EQ(tree->rows[big][3].number(), 390'000);
  double children = 0;
  bool other = false;
  for (size_t i = big + 1; i < tree->rows.size(); ++i) {
    const std::string& label = tree->rows[i][0].str();
    const size_t d = label.find_first_not_of(' ');
    if (d <= depth) break;
    if (d != depth + 2) continue;
    children += tree->rows[i][2].number();
    if (tree->rows[i][1].str() == "other") {
      other = true;
      EXPECT_NE(label.find("other (5 nodes"), std::string::npos) << label;
      EXPECT_DOUBLE_EQ(tree->rows[i][2].number(), 10'000);
    }
  }
  EXPECT_TRUE(other);
  EXPECT_DOUBLE_EQ(tree->rows[big][3].number() + children, tree->rows[big][2].number());
}

}  // namespace
}  // namespace aiprof
