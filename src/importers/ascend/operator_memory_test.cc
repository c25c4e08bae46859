// operator_memory.csv and l2_cache.csv: the real torch_npu run in
// ../shared/fixtures/ascend-pt/level1/rank0_ascend_pt, figures from
// src/analysis/testing/oracles/ascend_memory_steps_oracle.py (Python csv +
// Decimal over the same files), plus hand-made folders for bad input.
#include "src/importers/ascend/operator_memory.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "src/importers/ascend/ascend_pt_importer.h"
#include "src/importers/ascend/csv_table.h"
#include "test/util/temp_file.h"

namespace aiprof {
namespace {

using testing::TempDir;

const std::string kRank0 = std::string(AIPROF_FIXTURES_DIR) + "/ascend-pt/level1/rank0_ascend_pt";

std::unique_ptr<Trace> MustImportFolder(const std::string& dir) {
  auto r = ImportAscendPtFolder(dir);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : nullptr;
}

// Int args of instant `i` by key.
std::map<std::string, int64_t> IntArgs(const Trace& t, uint32_t i) {
  std::map<std::string, int64_t> out;
  for (uint64_t a = t.instants.arg_begin[i]; a < t.instants.arg_begin[i] + t.instants.arg_count[i]; ++a) {
    if (t.args[a].type == ArgType::kInt) out[std::string(t.Str(t.args[a].key))] = t.args[a].i;
  }
  return out;
}

std::vector<uint32_t> OperatorMemoryInstants(const Trace& t) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < t.instants.size(); ++i) {
    if (t.Str(t.instants.category[i]) == kOperatorMemoryCategory) out.push_back(i);
  }
  return out;
}

TEST(OperatorMemoryTest, RealRunEveryAllocationWithExactBytes) {
  auto t = MustImportFolder(kRank0);
  ASSERT_TRUE(t);
  std::vector<uint32_t> allocs = OperatorMemoryInstants(*t);
  ASSERT_EQ(allocs.size(), 184u);  // oracle: operator_memory_rows 184
  int64_t total = 0;
  size_t with_release = 0;
  for (uint32_t i : allocs) {
    std::map<std::string, int64_t> args = IntArgs(*t, i);
    total += args["size_bytes"];
    with_release += args.count("release_ts_ns");
    uint32_t track = t->instants.track[i];
    EXPECT_EQ(t->tracks.layer[track], Layer::kDevice);
    EXPECT_EQ(t->tracks.device[track], 0);
    EXPECT_EQ(t->tracks.rank[track], 0);
    EXPECT_EQ(t->Str(t->tracks.name[track]), "operator memory NPU:0");
  }
  EXPECT_EQ(total, 1495289344);  // oracle: total_size_bytes (sum of Size(KB) x 1024)
  EXPECT_EQ(with_release, 160u);  // oracle: with_release
  EXPECT_EQ(t->diagnostics.Count("bad_operator_memory_row"), 0u);
  // Row 4 of the file: aten::_convolution,25009.5,1736408883702735.700,1736408883736793.940,...,34058.240,...,
  // 978.7939453125,1452.0,978.7939453125,977.6123046875,1452.0,977.6123046875
  bool found = false;
  for (uint32_t i : allocs) {
    if (t->instants.ts_ns[i] != 1736408883702735700) continue;
    found = true;
    EXPECT_EQ(t->Str(t->instants.name[i]), "aten::_convolution");
    std::map<std::string, int64_t> a = IntArgs(*t, i);
    EXPECT_EQ(a["size_bytes"], 25609728);  // 25009.5 × 1024
    EXPECT_EQ(a["release_ts_ns"], 1736408883736793940);
    EXPECT_EQ(a["duration_ns"], 34058240);
    EXPECT_EQ(a["alloc_total_allocated_bytes"], 1026339840);  // 978.7939453125 × 2^20
    EXPECT_EQ(a["alloc_total_reserved_bytes"], 1522532352);   // 1452.0 × 2^20
    EXPECT_EQ(a["release_total_allocated_bytes"], 1025100800);  // 977.6123046875 × 2^20
  }
  EXPECT_TRUE(found);
}

TEST(OperatorMemoryTest, RealRunL2CacheJoinedToDeviceTasks) {
  auto t = MustImportFolder(kRank0);
  ASSERT_TRUE(t);
  size_t rows = 0, joined = 0;
  double victim = 0;
  for (size_t i = 0; i < t->op_metrics.size(); ++i) {
    if (t->Str(t->op_metrics.source[i]) != "l2_cache.csv") continue;
    ASSERT_EQ(t->Str(t->op_metrics.key[i]), "Victim Rate");  // Hit Rate is N/A in every row
    ++rows;
    victim += t->op_metrics.value[i];
    uint32_t s = t->op_metrics.slice[i];
    if (s == kNoSlice) continue;
    ++joined;
    EXPECT_EQ(t->Str(t->slices.name[s]), t->Str(t->op_metrics.op[i]));
  }
  EXPECT_EQ(rows, 179u);    // oracle: l2_rows
  EXPECT_EQ(joined, 179u);  // every (Op Name, Task Id, stream) is one device task
  EXPECT_NEAR(victim, 22.300258, 1e-9);  // oracle: victim_rate_sum
  EXPECT_EQ(t->diagnostics.Count("l2_cache_row_unmatched"), 0u);
}

// A hand-made folder: kernel_details.csv as the timeline, then bad rows.
std::string MakeFolder(const TempDir& dir, std::string_view operator_memory, std::string_view l2_cache) {
  std::filesystem::create_directories(dir.Path("r_ascend_pt/ASCEND_PROFILER_OUTPUT"));
  dir.Write("r_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
            "Name,Type,Accelerator Core,Start Time(us),Duration(us)\nMatMul1,MatMul,AI_CORE,10.5,2\n");
  if (!operator_memory.empty()) dir.Write("r_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv", operator_memory);
  if (!l2_cache.empty()) dir.Write("r_ascend_pt/ASCEND_PROFILER_OUTPUT/l2_cache.csv", l2_cache);
  return dir.Path("r_ascend_pt");
}

TEST(OperatorMemoryTest, HandMadeBadRowsAreCountedNotFatal) {
  TempDir dir;
  // Row 2 is good; row 3 has no size; row 4 is on the host; row 5 is short;
  // row 6 has a negative size.
  std::string folder =
      MakeFolder(dir,
                 "Name,Size(KB),Allocation Time(us),Release Time(us),Device Type\n"
                 "aten::empty,0.5,100.25,101,NPU:3\n"
                 "aten::empty,,100.5,,NPU:3\n"
                 "aten::empty,1,100.75,,CPU\n"
                 "aten::empty,1\n"
                 "aten::empty,-5,100.8,,NPU:3\n"
                 "aten::add,2.001,102,,NPU:3\n",
                 "Stream Id,Task Id,Hit Rate,Victim Rate,Op Name\n1,7,0.5,N/A,Nope\nx,7,0.5,0.1,Nope\n");
  auto t = MustImportFolder(folder);
  ASSERT_TRUE(t);
  std::vector<uint32_t> allocs = OperatorMemoryInstants(*t);
  ASSERT_EQ(allocs.size(), 2u);
  EXPECT_EQ(t->diagnostics.Count("bad_operator_memory_row"), 4u);
  std::map<std::string, int64_t> a = IntArgs(*t, allocs[0]);
  EXPECT_EQ(t->instants.ts_ns[allocs[0]], 100250);
  EXPECT_EQ(a["size_bytes"], 512);
  EXPECT_EQ(a["release_ts_ns"], 101000);
  EXPECT_EQ(t->tracks.device[t->instants.track[allocs[0]]], 3);
  EXPECT_EQ(IntArgs(*t, allocs[1])["size_bytes"], 2049);  // 2.001 KB = 2049.024 bytes, rounded
  EXPECT_EQ(t->diagnostics.Count("l2_cache_row_unmatched"), 1u);
  EXPECT_EQ(t->diagnostics.Count("bad_l2_cache_row"), 1u);
}

TEST(OperatorMemoryTest, MissingColumnIsAnErrorNamingTheFile) {
  TempDir dir;
  std::string folder = MakeFolder(dir, "Name,Allocation Time(us),Device Type\naten::empty,1,NPU:0\n", "");
  auto r = ImportAscendPtFolder(folder);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("operator_memory.csv"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("Size(KB)"), std::string::npos) << r.status().message();
}

TEST(ParseDecimalTimesTest, ExactScaling) {
  EXPECT_EQ(ParseDecimalTimes("954.37060546875", 1048576), 1000730112);
  EXPECT_EQ(ParseDecimalTimes("18816.5", 1024), 19268096);
  EXPECT_EQ(ParseDecimalTimes("-0.5", 1024), -512);
  EXPECT_EQ(ParseDecimalTimes("1736408883702735.700", 1000), 1736408883702735700);
  EXPECT_EQ(ParseDecimalTimes("0.0005", 1000), 1);   // half rounds away from zero
  EXPECT_EQ(ParseDecimalTimes("0.0004999", 1000), 0);
  EXPECT_EQ(ParseDecimalTimes("12", 1024), 12288);
  EXPECT_EQ(ParseDecimalTimes(".5", 2), 1);
  EXPECT_FALSE(ParseDecimalTimes("1e3", 1024).has_value());
  EXPECT_FALSE(ParseDecimalTimes("", 1024).has_value());
  EXPECT_FALSE(ParseDecimalTimes(".", 1024).has_value());
  EXPECT_FALSE(ParseDecimalTimes("abc", 1024).has_value());
  EXPECT_FALSE(ParseDecimalTimes("99999999999999999999", 1024).has_value());  // overflow
}

}  // namespace
}  // namespace aiprof
