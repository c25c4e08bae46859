// msprof PROF_* folders. There is no real msprof output among the fixtures,
// so these folders are synthetic: built here from the column names msprof's
// documentation gives for op_summary, op_statistic, api_statistic, task_time
// and step_trace (CANN 8), in both the current and the older per-device layout.
#include "src/importers/ascend/msprof_importer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "src/importers/common/importer_registry.h"
#include "test/util/compress.h"
#include "test/util/temp_file.h"

namespace aiprof {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

const char* kOpSummary =
    "Device_id,Model Name,Model ID,Task ID,Stream ID,Infer ID,Op Name,OP Type,OP State,Task Type,"
    "Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Num,Mix Block Num,HF32 Eligible,"
    "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,"
    "aicore_time(us),aic_total_cycles,aic_mac_ratio,aic_mte2_ratio\n"
    "0,N/A,4294967295,10,2,N/A,MatMul_1,MatMul,dynamic,AI_CORE,1700000000000100.000\t,20.5,0,24,0,NO,"
    "\"\"\"16,32;32,64\"\"\",FLOAT16,ND,\"\"\"16,64\"\"\",FLOAT16,ND,N/A,19.5,35100,0.62,0.21\n"
    "0,N/A,4294967295,11,2,N/A,Add_2,Add,dynamic,AI_VECTOR_CORE,1700000000000130.250,4.25,9.75,8,0,NO,"
    "\"\"\"16,64;16,64\"\"\",FLOAT16,ND,\"\"\"16,64\"\"\",FLOAT16,ND,N/A,4,7200,0,0.5\n"
    "0,N/A,4294967295,12,3,N/A,hcom_allReduce__1_0_1,hcom_allReduce_,N/A,HCCL,1700000000000140,30,0,0,N/A,"
    "N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A\n";
const char* kOpStatistic =
    "Device_id,Model Name,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n"
    "0,N/A,MatMul,AI_CORE,1,20.5,20.5,20.5,20.5,82.8\n0,N/A,Add,AI_VECTOR_CORE,1,4.25,4.25,4.25,4.25,17.2\n";
const char* kApiStatistic =
    "Device_id,Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance\n"
    "0,acl,aclnnMatmul,12.5,1,12.5,12.5,12.5,0\n";
const char* kTaskTime =
    "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),task_stop(us)\n"
    "0,MatMul_1,KERNEL_AICORE,2,10,20.5,1700000000000100.000,1700000000000120.500\n";
const char* kStepTrace =
    "Device_id,Iteration ID,FP Start(us),BP End(us),Iteration End(us),Iteration Time(us),FP to BP Time(us),"
    "Iteration Refresh(us),Data Aug Bound(us),Model ID\n"
    "0,1,1700000000000090,1700000000000170,1700000000000175,85,80,5,N/A,4294967295\n";

std::string MakeProf(const TempDir& dir, const std::string& sub) {
  std::string out = dir.Path(sub);
  fs::create_directories(out);
  dir.Write(sub + "/op_summary_20240101010101.csv", kOpSummary);
  dir.Write(sub + "/op_statistic_20240101010101.csv", kOpStatistic);
  dir.Write(sub + "/api_statistic_20240101010101.csv", kApiStatistic);
  dir.Write(sub + "/task_time_20240101010101.csv", kTaskTime);
  dir.Write(sub + "/step_trace_20240101010101.csv", kStepTrace);
  return out;
}

double MsprofMetric(const Trace& t, std::string_view source, std::string_view op, std::string_view key) {
  for (size_t i = 0; i < t.op_metrics.size(); ++i) {
    if (t.Str(t.op_metrics.source[i]) == source && t.Str(t.op_metrics.op[i]) == op && t.Str(t.op_metrics.key[i]) == key) {
      return t.op_metrics.value[i];
    }
  }
  return std::nan("");
}

void ExpectSyntheticRun(const Trace& t, int32_t device) {
  ASSERT_EQ(t.slices.size(), 3u);
  EXPECT_EQ(t.metadata.at("source_format"), "msprof");
  size_t kernels = 0, collectives = 0;
  for (size_t i = 0; i < t.slices.size(); ++i) {
    kernels += t.slices.kind[i] == EventKind::kKernel;
    collectives += t.slices.kind[i] == EventKind::kCollective;
    EXPECT_EQ(t.tracks.device[t.slices.track[i]], device);
  }
  EXPECT_EQ(kernels, 2u);
  EXPECT_EQ(collectives, 1u);
  EXPECT_DOUBLE_EQ(MsprofMetric(t, "op_summary.csv", "MatMul_1", "aic_mac_ratio"), 0.62);
  EXPECT_DOUBLE_EQ(MsprofMetric(t, "op_summary.csv", "Add_2", "Task Wait Time(us)"), 9.75);
  EXPECT_DOUBLE_EQ(MsprofMetric(t, "task_time.csv", "MatMul_1", "task_stop(us)"), 1700000000000120.5);
  EXPECT_DOUBLE_EQ(MsprofMetric(t, "op_statistic_20240101010101.csv", "MatMul", "Total Time(us)"), 20.5);
  EXPECT_DOUBLE_EQ(MsprofMetric(t, "api_statistic_20240101010101.csv", "aclnnMatmul", "Time(us)"), 12.5);
  bool iteration_time = false;
  for (size_t i = 0; i < t.step_breakdown.size(); ++i) {
    if (t.Str(t.step_breakdown.key[i]) == "Iteration Time(us)") {
      iteration_time = true;
      EXPECT_EQ(t.step_breakdown.step[i], 1);
      EXPECT_EQ(t.step_breakdown.value_ns[i], 85000);
    }
  }
  EXPECT_TRUE(iteration_time);
  EXPECT_TRUE(t.diagnostics.empty());
}

TEST(MsprofImporterTest, CurrentLayoutWithoutTimeline) {
  TempDir dir;
  MakeProf(dir, "PROF_000001_20240101010101_ABC/mindstudio_profiler_output");
  auto r = ImportTrace(dir.Path("PROF_000001_20240101010101_ABC"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ExpectSyntheticRun(**r, 0);
}

// A row with a negative duration and no timeline: skipped once, as
// bad_op_row, not also "kept unjoined" as op_row_unmatched.
TEST(MsprofImporterTest, ABadRowIsCountedOnce) {
  TempDir dir;
  MakeProf(dir, "PROF_5/mindstudio_profiler_output");
  dir.Write("PROF_5/mindstudio_profiler_output/op_summary_20240101010101.csv",
            std::string(kOpSummary) +
                "0,N/A,4294967295,13,2,N/A,Neg_3,Neg,dynamic,AI_CORE,1700000000000200.000,-5,0,8,0,NO,"
                "N/A,N/A,N/A,N/A,N/A,N/A,N/A,4,7200,0,0.5\n");
  auto r = ImportTrace(dir.Path("PROF_5"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->diagnostics.Count("bad_op_row"), 1u);
  EXPECT_EQ((*r)->diagnostics.Count("op_row_unmatched"), 0u);
  EXPECT_EQ((*r)->slices.size(), 3u);  // the three good rows
}

TEST(MsprofImporterTest, OlderPerDeviceLayout) {
  TempDir dir;
  MakeProf(dir, "PROF_000002/device_3/summary");
  auto r = ImportTrace(dir.Path("PROF_000002"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ExpectSyntheticRun(**r, 3);
}

// Hand-made: a device_N folder whose N is past an int (device_99999999999)
// threw std::out_of_range from std::stoi: `aiprof summary PROF_1` aborted
// (exit 134). It is not a device's output now; beside a real one it is
// left out, alone it is the "without ... device_N" error naming the folder.
TEST(MsprofImporterTest, DeviceFolderNumberPastAnIntIsNoDevice) {
  TempDir dir;
  MakeProf(dir, "PROF_000007/device_99999999999/summary");
  auto alone = ImportTrace(dir.Path("PROF_000007"));
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.status().message().find("PROF_000007"), std::string::npos) << alone.status().message();
  MakeProf(dir, "PROF_000007/device_3/summary");
  auto r = ImportTrace(dir.Path("PROF_000007"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ExpectSyntheticRun(**r, 3);
}

TEST(MsprofImporterTest, TimelineJsonAndSlicesJoined) {
  TempDir dir;
  std::string out = MakeProf(dir, "PROF_3/mindstudio_profiler_output");
  dir.Write("PROF_3/mindstudio_profiler_output/msprof_slice_0_20240101010101.json", R"([
{"name": "process_name", "pid": 2000, "tid": 0, "ph": "M", "args": {"name": "Ascend Hardware"}},
{"name": "thread_name", "pid": 2000, "tid": 2, "ph": "M", "args": {"name": "Stream 2"}},
{"name": "MatMul_1", "pid": 2000, "tid": 2, "ts": "1700000000000100.000", "dur": 20.5, "ph": "X", "args": {"Task Type": "AI_CORE"}},
{"name": "Add_2", "pid": 2000, "tid": 2, "ts": "1700000000000130.250", "dur": 4.25, "ph": "X", "args": {"Task Type": "AI_VECTOR_CORE"}}
])");
  auto r = ImportTrace(dir.Path("PROF_3"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& t = **r;
  EXPECT_EQ(t.slices.size(), 2u) << "the timeline gives the slices; op_summary only joins";
  EXPECT_DOUBLE_EQ(MsprofMetric(t, "op_summary.csv", "MatMul_1", "aic_mac_ratio"), 0.62);
  EXPECT_EQ(t.diagnostics.entries().at("op_row_unmatched").count, 1u);  // the HCCL row has no timeline task
}

TEST(MsprofImporterTest, RenamedOpSummaryColumnIsAnError) {
  TempDir dir;
  fs::create_directories(dir.Path("PROF_4/mindstudio_profiler_output"));
  dir.Write("PROF_4/mindstudio_profiler_output/op_summary_1.csv", "Op Name,OP Type,Task Start(us),Task Duration(us)\n");
  auto r = ImportTrace(dir.Path("PROF_4"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("op_summary_1.csv:line 1: missing column \"Task Start Time(us)\""),
            std::string::npos) << r.status().message();
}

// D13 of the input trial: a Stream ID that does not read
// (-99999999999999999999) put a MatMul kernel on the HCCL track, uncounted.
TEST(MsprofImporterTest, UnreadableStreamIdIsABadRow) {
  TempDir dir;
  MakeProf(dir, "PROF_6/mindstudio_profiler_output");
  dir.Write("PROF_6/mindstudio_profiler_output/op_summary_20240101010101.csv",
            std::string(kOpSummary) +
                "0,N/A,4294967295,13,-99999999999999999999,N/A,MatMul_3,MatMul,dynamic,AI_CORE,1700000000000200.000,"
                "5,0,8,0,NO,N/A,N/A,N/A,N/A,N/A,N/A,N/A,4,7200,0,0.5\n"
                "0,N/A,4294967295,14,-3,N/A,MatMul_4,MatMul,dynamic,AI_CORE,1700000000000300.000,"
                "5,0,8,0,NO,N/A,N/A,N/A,N/A,N/A,N/A,N/A,4,7200,0,0.5\n");
  auto r = ImportTrace(dir.Path("PROF_6"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->diagnostics.Count("bad_op_row"), 2u);
  EXPECT_NE((*r)->diagnostics.entries().at("bad_op_row").first_where.find("op_summary_20240101010101.csv:line 5"),
            std::string::npos);
  EXPECT_EQ((*r)->diagnostics.Count("op_row_unmatched"), 0u);
  EXPECT_EQ((*r)->slices.size(), 3u);  // the three good rows; none of the bad on the HCCL track
}

// Replaces every file under `root` by its gzip'd form (zstd'd for every
// other file, sorted by path), as `gzip -r` or `zstd -r --rm` leave a folder.
void CompressEveryFile(const std::string& root) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  for (size_t i = 0; i < files.size(); ++i) {
    std::ifstream in(files[i], std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const bool zstd = i % 2 == 1;
    std::ofstream(files[i].string() + (zstd ? ".zst" : ".gz"), std::ios::binary)
        << (zstd ? testing::ZstdBytes(bytes) : testing::GzipBytes(bytes));
    fs::remove(files[i]);
  }
}

// A PROF_* folder compressed file by file (op_summary_*.csv.gz,
// msprof_*.json.zst, ...), in both layouts: the same run as the plain
// folder. A folder holding a table both plain and compressed reads it once.
// Before, no file matched msprof's names and the folder was "nothing
// recognizable".
TEST(MsprofImporterTest, CompressedFilesReadAsThePlainOnes) {
  TempDir dir;
  MakeProf(dir, "PROF_7/mindstudio_profiler_output");
  CompressEveryFile(dir.Path("PROF_7"));
  ASSERT_TRUE(fs::exists(dir.Path("PROF_7/mindstudio_profiler_output/api_statistic_20240101010101.csv.gz")));
  auto current = ImportTrace(dir.Path("PROF_7"));
  ASSERT_TRUE(current.ok()) << current.status().message();
  ExpectSyntheticRun(**current, 0);

  MakeProf(dir, "PROF_8/device_3/summary");
  CompressEveryFile(dir.Path("PROF_8"));
  auto older = ImportTrace(dir.Path("PROF_8"));
  ASSERT_TRUE(older.ok()) << older.status().message();
  ExpectSyntheticRun(**older, 3);

  // The timeline compressed too: it gives the slices, as in TimelineJsonAndSlicesJoined.
  MakeProf(dir, "PROF_9/mindstudio_profiler_output");
  dir.Write("PROF_9/mindstudio_profiler_output/msprof_slice_0_20240101010101.json.gz", testing::GzipBytes(R"([
{"name": "process_name", "pid": 2000, "tid": 0, "ph": "M", "args": {"name": "Ascend Hardware"}},
{"name": "thread_name", "pid": 2000, "tid": 2, "ph": "M", "args": {"name": "Stream 2"}},
{"name": "MatMul_1", "pid": 2000, "tid": 2, "ts": "1700000000000100.000", "dur": 20.5, "ph": "X", "args": {"Task Type": "AI_CORE"}},
{"name": "Add_2", "pid": 2000, "tid": 2, "ts": "1700000000000130.250", "dur": 4.25, "ph": "X", "args": {"Task Type": "AI_VECTOR_CORE"}}
])"));
  // op_statistic both plain and gzip'd: read once (its total is not doubled).
  dir.Write("PROF_9/mindstudio_profiler_output/op_statistic_20240101010101.csv.gz", testing::GzipBytes(kOpStatistic));
  auto timeline = ImportTrace(dir.Path("PROF_9"));
  ASSERT_TRUE(timeline.ok()) << timeline.status().message();
  EXPECT_EQ((*timeline)->slices.size(), 2u) << "the compressed timeline gives the slices";
  EXPECT_DOUBLE_EQ(MsprofMetric(**timeline, "op_summary.csv", "MatMul_1", "aic_mac_ratio"), 0.62);
  size_t matmul_totals = 0;
  for (size_t i = 0; i < (*timeline)->op_metrics.size(); ++i) {
    const Trace& t = **timeline;
    matmul_totals += t.Str(t.op_metrics.op[i]) == "MatMul" && t.Str(t.op_metrics.key[i]) == "Total Time(us)";
  }
  EXPECT_EQ(matmul_totals, 1u);
}

}  // namespace
}  // namespace aiprof
