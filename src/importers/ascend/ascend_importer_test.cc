// torch_npu folders: the real two-rank runs in ../shared/fixtures/ascend-pt
// and the single files in ../shared/fixtures/ascend, plus hand-made inputs
// (labelled) for header variants and bad input.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/importers/ascend/folder_member.h"
#include "src/importers/ascend/trace_view_importer.h"
#include "src/importers/common/importer_registry.h"
#include "src/model/native_file.h"
#include "test/util/compress.h"
#include "test/util/temp_file.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

const std::string kFixtures = AIPROF_FIXTURES_DIR;
const std::string kLevel1 = kFixtures + "/ascend-pt/level1";
const std::string kOldTraceView =
    kFixtures + "/ascend/Ascend__msprof-analyze__test__ut__advisor__timeline_advice__trace_view.json";

using testing::ImportError;
using testing::MustImport;

// The value of metric `key` for op `op` from `source` (rank `rank`); NaN if absent.
double Metric(const Trace& t, int32_t rank, std::string_view source, std::string_view op, std::string_view key,
              std::string* text = nullptr) {
  const OpMetricTable& m = t.op_metrics;
  for (size_t i = 0; i < m.size(); ++i) {
    if (m.rank[i] == rank && t.Str(m.source[i]) == source && t.Str(m.op[i]) == op && t.Str(m.key[i]) == key) {
      if (text) *text = std::string(t.Str(m.text[i]));
      return m.value[i];
    }
  }
  return std::nan("");
}

uint32_t FindSlice(const Trace& t, int32_t rank, std::string_view name) {
  for (uint32_t i = 0; i < t.slices.size(); ++i) {
    if (t.tracks.rank[t.slices.track[i]] == rank && t.Str(t.slices.name[i]) == name) return i;
  }
  return kNoSlice;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(AscendImporterTest, Level1RunOpensBothRanksWithRoles) {
  auto t = MustImport(kLevel1);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->metadata["ranks"], "0,1");
  EXPECT_EQ(t->metadata["rank0.profiler_level"], "Level1");
  EXPECT_EQ(t->metadata["rank1.aic_metrics"], "ACL_AICORE_PIPE_UTILIZATION");
  EXPECT_TRUE(t->metadata.count("rank0.env.HCCL_RDMA_TC"));
  int hardware = 0, hccl = 0, cann = 0;
  for (size_t i = 0; i < t->tracks.size(); ++i) {
    EXPECT_NE(t->tracks.rank[i], kNoRank) << "every track has a rank";
    std::string_view process = t->Str(t->tracks.process_name[i]);
    if (process == "Ascend Hardware") {
      ++hardware;
      EXPECT_EQ(t->tracks.kind[i], TrackKind::kDeviceStream);
      EXPECT_EQ(t->tracks.device[i], t->tracks.rank[i]) << "pid bits give device = rank in this run";
    }
    if (process == "HCCL" && t->Str(t->tracks.name[i]) == "Group 0 Communication") {
      ++hccl;
      EXPECT_EQ(t->tracks.layer[i], Layer::kCommunication);
    }
    if (process == "CANN") {
      ++cann;
      EXPECT_EQ(t->tracks.layer[i], Layer::kRuntime);
    }
  }
  EXPECT_EQ(hardware, 8);  // Stream 0, 2, 3, 4 on each rank
  EXPECT_EQ(hccl, 2);
  EXPECT_GT(cann, 0);
  EXPECT_EQ(t->diagnostics.Count("op_row_unmatched"), 0u);
  EXPECT_EQ(t->diagnostics.Count("flow_without_id"), 0u) << "HostToDevice ids beyond 2^64 are kept linked";
}

TEST(AscendImporterTest, FlowsLinkHostOpsToDeviceTasks) {
  auto t = MustImport(kLevel1 + "/rank0_ascend_pt");
  ASSERT_TRUE(t);
  std::map<std::string, int> by_category;
  for (size_t i = 0; i < t->flows.size(); ++i) {
    std::string cat(t->Str(t->flows.category[i]));
    ++by_category[cat];
    if (cat == "async_npu" || cat == "HostToDevice") {
      uint32_t to = t->flows.to_slice[i];
      EXPECT_EQ(t->tracks.kind[t->slices.track[to]], TrackKind::kDeviceStream) << cat;
    }
  }
  // Counts of s/f pairs in the file: 210 async_npu, 210 HostToDevice, 159 async_task_queue, 27 fwdbwd;
  // 34 HostToDevice device ends are stamped before their host start (clock skew).
  EXPECT_GE(by_category["async_npu"], 200);
  EXPECT_GE(by_category["HostToDevice"], 200);
  EXPECT_EQ(by_category["async_task_queue"], 159);
  EXPECT_EQ(by_category["fwdbwd"], 27);
}

TEST(AscendImporterTest, KernelDetailsJoinedAsMetrics) {
  auto t = MustImport(kLevel1);
  ASSERT_TRUE(t);
  // Row 2 of rank0's kernel_details.csv (PipeUtilization).
  uint32_t slice = FindSlice(*t, 0, "trans_TransData_0");
  ASSERT_NE(slice, kNoSlice);
  EXPECT_EQ(t->slices.dur_ns[slice], 53741);  // 53.741 us in kernel_details, 53.74103125 in trace_view
  std::string text;
  EXPECT_DOUBLE_EQ(Metric(*t, 0, "kernel_details.csv", "trans_TransData_0", "aiv_vec_ratio"), 0.186);
  EXPECT_DOUBLE_EQ(Metric(*t, 0, "kernel_details.csv", "trans_TransData_0", "Block Dim"), 32);
  Metric(*t, 0, "kernel_details.csv", "trans_TransData_0", "Input Shapes", &text);
  EXPECT_EQ(text, "32,3,224,224");
  Metric(*t, 0, "kernel_details.csv", "trans_TransData_0", "OP State", &text);
  EXPECT_EQ(text, "dynamic");
  EXPECT_TRUE(std::isnan(Metric(*t, 0, "kernel_details.csv", "trans_TransData_0", "Model ID")))
      << "Model ID 4294967295 means none";
  size_t joined = 0;
  for (size_t i = 0; i < t->op_metrics.size(); ++i) {
    if (t->Str(t->op_metrics.key[i]) == "Type" && t->op_metrics.slice[i] != kNoSlice) ++joined;
  }
  EXPECT_EQ(joined, 2u * 191u);  // every row of both ranks
}

TEST(AscendImporterTest, CommunicationAndStatisticsFiles) {
  auto t = MustImport(kLevel1 + "/rank0_ascend_pt");
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(Metric(*t, 0, "communication.json", "step50/hcom_allReduce__586_0_1@17522688603477080586",
                          "Communication Time Info/Wait Time(ms)"),
                   5.64663284375);
  EXPECT_DOUBLE_EQ(Metric(*t, 0, "communication.json", "step50/hcom_allReduce__586_0_1@17522688603477080586",
                          "Communication Bandwidth Info/HCCS/Bandwidth(GB/s)"),
                   15.7676);
  EXPECT_DOUBLE_EQ(Metric(*t, 0, "communication_matrix.json", "step50/allreduce-top1@17522688603477080586/0-1",
                          "Bandwidth(GB/s)"),
                   17.5452);
  EXPECT_DOUBLE_EQ(Metric(*t, 0, "op_statistic.csv", "TransData", "Total Time(us)"), 1423.208);
  EXPECT_DOUBLE_EQ(Metric(*t, 0, "api_statistic.csv", "Launch_Ffts", "Time(us)"), 474.41);
  bool found = false;
  for (size_t i = 0; i < t->step_breakdown.size(); ++i) {
    if (t->Str(t->step_breakdown.key[i]) == "Preparing") {
      found = true;
      EXPECT_EQ(t->step_breakdown.step[i], 50);
      EXPECT_EQ(t->step_breakdown.value_ns[i], 17902500);
    }
  }
  EXPECT_TRUE(found);
  int memory_tracks = 0;
  for (size_t i = 0; i < t->tracks.size(); ++i) {
    if (t->Str(t->tracks.name[i]) == "PTA+GE Total Allocated(MB) NPU:0") {
      ++memory_tracks;
      EXPECT_EQ(t->tracks.device[i], 0);
    }
  }
  EXPECT_EQ(memory_tracks, 1);
}

TEST(AscendImporterTest, NativeFileKeepsMetricsAndBreakdown) {
  auto t = MustImport(kLevel1);
  ASSERT_TRUE(t);
  TempDir dir;
  ASSERT_TRUE(WriteNativeFile(*t, dir.Path("t.aiprof")).ok());
  auto back = MustImport(dir.Path("t.aiprof"));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->op_metrics.size(), t->op_metrics.size());
  EXPECT_EQ(back->step_breakdown.size(), t->step_breakdown.size());
  EXPECT_DOUBLE_EQ(Metric(*back, 0, "kernel_details.csv", "trans_TransData_0", "aiv_vec_ratio"), 0.186);
}

TEST(AscendImporterTest, OlderTraceViewWithConcatenatedPids) {
  auto t = MustImport(kOldTraceView);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->metadata["source_format"], "ascend_trace_view");
  int streams = 0;
  for (size_t i = 0; i < t->tracks.size(); ++i) {
    std::string_view process = t->Str(t->tracks.process_name[i]);
    if (process == "Ascend Hardware") {
      ++streams;
      EXPECT_EQ(t->tracks.kind[i], TrackKind::kDeviceStream);
      EXPECT_EQ(t->tracks.pid[i], 800);
      EXPECT_EQ(t->tracks.device[i], 0);  // the concatenated pid carries no device bits
    }
    if (process == "CANN") {
      EXPECT_EQ(t->tracks.layer[i], Layer::kRuntime);
    }
  }
  EXPECT_EQ(streams, 1);
  size_t kernels = 0;
  for (size_t i = 0; i < t->slices.size(); ++i) kernels += t->slices.kind[i] == EventKind::kKernel;
  EXPECT_EQ(kernels, 274u);  // 276 tasks less 2 MEMCPY_ASYNC (Task Type "Other" in this file)
}

TEST(AscendImporterTest, DeviceFromPidAndTaskCategory) {
  EXPECT_EQ(AscendDeviceFromPid((3096504LL << 10) | (13 << 5) | 5, 3096504, 0), 5);
  EXPECT_EQ(AscendDeviceFromPid(800, 437675, 3), 3);
  EXPECT_EQ(AscendTaskCategory("AI_CORE", "Conv2D1"), "kernel");
  EXPECT_EQ(AscendTaskCategory("PCIE_DMA_SQE", "MEMCPY_ASYNC"), "Memcpy");
  EXPECT_EQ(AscendTaskCategory("EVENT_WAIT_SQE", "EVENT_WAIT"), "npu_sync");
  EXPECT_EQ(AscendTaskCategory("Notify Wait", "Notify Wait"), "npu_sync");
  EXPECT_EQ(AscendTaskCategory("HCCL", "hcom_allReduce__586_0_1"), "hccl");
  // HCCL's transfers are part of its collective, not the program's copies
  // (SDMA_SQE / PCIE_DMA_SQE MEMCPY_ASYNC tasks).
  EXPECT_EQ(AscendTaskCategory("SDMA", "SDMA"), "hccl_task");
  EXPECT_EQ(AscendTaskCategory("RDMA", "RDMA"), "hccl_task");
  EXPECT_EQ(AscendTaskCategory("", "SDMA"), "hccl_task");
  EXPECT_EQ(AscendTaskCategory("SDMA_SQE", "MEMCPY_ASYNC"), "Memcpy");
}

// Hand-made: HCCL's tasks on an Ascend Hardware stream (the level1 fixture's
// Stream 4 shape: SDMA, Notify Wait, Write Value under the task id that the
// HCCL Plane threads list, or, as in level0, which lists no Plane tasks,
// under the connection_id of the collective) are the collective's
// sub-tasks, not copies or stream syncs; the program's MEMCPY_ASYNC stays a
// copy, and a task outside the span of the ids it shares (ids wrap around)
// keeps its own category.
TEST(AscendImporterTest, HcclTasksOnHardwareStreamsAreCommunicationNotCopies) {
  TempDir dir;
  std::string path = dir.Write("trace_view.json", R"([
{"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "Python"}},
{"ph": "M", "name": "process_name", "pid": 102432, "tid": 0, "args": {"name": "Ascend Hardware"}},
{"ph": "M", "name": "thread_name", "pid": 102432, "tid": 2, "args": {"name": "Stream 2"}},
{"ph": "M", "name": "thread_name", "pid": 102432, "tid": 4, "args": {"name": "Stream 4"}},
{"ph": "M", "name": "process_name", "pid": 102496, "tid": 0, "args": {"name": "HCCL"}},
{"ph": "M", "name": "thread_name", "pid": 102496, "tid": 0, "args": {"name": "Group 0 Communication"}},
{"ph": "M", "name": "thread_name", "pid": 102496, "tid": 1, "args": {"name": "Plane 0"}},
{"ph": "X", "name": "aten::add", "pid": 100, "tid": 100, "ts": "1000.000", "dur": 10, "cat": "cpu_op"},
{"ph": "X", "name": "Add", "pid": 102432, "tid": 2, "ts": "1500.000", "dur": 20, "args": {"Task Type": "AI_CORE", "Physic Stream Id": 2, "Task Id": 3}},
{"ph": "X", "name": "MEMCPY_ASYNC", "pid": 102432, "tid": 2, "ts": "1600.000", "dur": 30, "args": {"Task Type": "SDMA_SQE", "Physic Stream Id": 2, "Task Id": 4}},
{"ph": "X", "name": "hcom_allReduce__1_0_1", "pid": 102496, "tid": 0, "ts": "2000.000", "dur": 100, "args": {"connection_id": 55}},
{"ph": "X", "name": "Memcpy", "pid": 102496, "tid": 1, "ts": "2000.000", "dur": 10, "args": {"stream id": 4, "task id": 7, "task type": "Memcpy"}},
{"ph": "X", "name": "Notify_Wait", "pid": 102496, "tid": 1, "ts": "2010.000", "dur": 80, "args": {"stream id": 4, "task id": 7, "task type": "Notify_Wait"}},
{"ph": "X", "name": "EVENT_RECORD", "pid": 102432, "tid": 4, "ts": "1990.000", "dur": 0.02, "args": {"Task Type": "EVENT_RECORD_SQE", "Physic Stream Id": 4, "Task Id": 6}},
{"ph": "X", "name": "SDMA", "pid": 102432, "tid": 4, "ts": "2000.000", "dur": 10, "args": {"Task Type": "SDMA", "Physic Stream Id": 4, "Task Id": 7}},
{"ph": "X", "name": "Notify Wait", "pid": 102432, "tid": 4, "ts": "2010.000", "dur": 80, "args": {"Task Type": "Notify Wait", "Physic Stream Id": 4, "Task Id": 7}},
{"ph": "X", "name": "Write Value", "pid": 102432, "tid": 4, "ts": "2089.500", "dur": 0.5, "args": {"Task Type": "Write Value", "Physic Stream Id": 4, "Task Id": 7}},
{"ph": "X", "name": "Notify Record", "pid": 102432, "tid": 4, "ts": "2095.000", "dur": 1, "args": {"Task Type": "Notify Record", "Physic Stream Id": 4, "Task Id": 9, "connection_id": 55}},
{"ph": "X", "name": "Write Value", "pid": 102432, "tid": 4, "ts": "9000.000", "dur": 0.5, "args": {"Task Type": "Write Value", "Physic Stream Id": 4, "Task Id": 7, "connection_id": 55}}
])");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  std::map<std::string, std::vector<std::pair<std::string, EventKind>>> by_name;
  for (uint32_t i = 0; i < t->slices.size(); ++i) {
    by_name[std::string(t->Str(t->slices.name[i]))].emplace_back(t->Str(t->slices.category[i]), t->slices.kind[i]);
  }
  using Row = std::vector<std::pair<std::string, EventKind>>;
  EXPECT_EQ(by_name["SDMA"], (Row{{"hccl_task", EventKind::kOther}}));
  EXPECT_EQ(by_name["Notify Wait"], (Row{{"hccl_task", EventKind::kOther}}));
  EXPECT_EQ(by_name["Write Value"], (Row{{"hccl_task", EventKind::kOther}, {"npu_sync", EventKind::kOther}}));
  EXPECT_EQ(by_name["Notify Record"], (Row{{"hccl_task", EventKind::kOther}}));
  EXPECT_EQ(by_name["EVENT_RECORD"], (Row{{"npu_sync", EventKind::kOther}}));
  EXPECT_EQ(by_name["MEMCPY_ASYNC"], (Row{{"Memcpy", EventKind::kMemcpy}}));
  EXPECT_EQ(by_name["Add"], (Row{{"kernel", EventKind::kKernel}}));
  EXPECT_EQ(by_name["hcom_allReduce__1_0_1"], (Row{{"hccl", EventKind::kCollective}}));
  EXPECT_EQ(by_name["Notify_Wait"], (Row{{"hccl_task", EventKind::kOther}}));
}

// The real runs: of the device tasks, only the program's MEMCPY_ASYNC tasks
// are copies; each rank's Stream 4 holds HCCL's 296 tasks of its four
// allreduces (72 SDMA, 112 Notify Wait, 112 Write Value), all sub-tasks:
// level1 lists them on its Plane threads too, level0 by connection_id only.
void ExpectHcclStreamTasksAreNotCopies(const std::string& run) {
  SCOPED_TRACE(run);
  auto t = MustImport(run);
  ASSERT_TRUE(t);
  std::map<std::pair<int32_t, std::string>, int> hccl_on_hardware;
  for (uint32_t i = 0; i < t->slices.size(); ++i) {
    const uint32_t track = t->slices.track[i];
    std::string_view name = t->Str(t->slices.name[i]);
    if (t->slices.kind[i] == EventKind::kMemcpy) {
      EXPECT_EQ(name, "MEMCPY_ASYNC");
    }
    if (t->Str(t->tracks.process_name[track]) == "Ascend Hardware" && t->Str(t->slices.category[i]) == "hccl_task") {
      EXPECT_EQ(t->Str(t->tracks.name[track]), "Stream 4");
      ++hccl_on_hardware[{t->tracks.rank[track], std::string(name)}];
    }
  }
  for (int32_t rank : {0, 1}) {
    EXPECT_EQ((hccl_on_hardware[{rank, "SDMA"}]), 72) << rank;
    EXPECT_EQ((hccl_on_hardware[{rank, "Notify Wait"}]), 112) << rank;
    EXPECT_EQ((hccl_on_hardware[{rank, "Write Value"}]), 112) << rank;
  }
  EXPECT_EQ(hccl_on_hardware.size(), 6u);
}

TEST(AscendImporterTest, HcclStreamTasksAreNotCopies) {
  ExpectHcclStreamTasksAreNotCopies(kLevel1);
  ExpectHcclStreamTasksAreNotCopies(kFixtures + "/ascend-pt/level0");
}

// Hand-made: bit-packed pids, device 3, a flow id beyond 2^64 and one beyond 2^53.
TEST(AscendImporterTest, InlineTraceViewPackedPidsAndHugeFlowIds) {
  TempDir dir;
  std::string path = dir.Write("trace_view.json", R"([
{"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "Python"}},
{"ph": "M", "name": "process_name", "pid": 102499, "tid": 0, "args": {"name": "Ascend Hardware"}},
{"ph": "M", "name": "thread_name", "pid": 102499, "tid": 7, "args": {"name": "Stream 7"}},
{"ph": "M", "name": "process_name", "pid": 102435, "tid": 0, "args": {"name": "CANN"}},
{"ph": "X", "name": "aten::add", "pid": 100, "tid": 100, "ts": "1000.000", "dur": 10, "cat": "cpu_op"},
{"ph": "X", "name": "AscendCL@aclnnAdd", "pid": 102435, "tid": 100, "ts": "1001.000", "dur": 5},
{"ph": "X", "name": "Add", "pid": 102499, "tid": 7, "ts": "1020.125", "dur": 3.5, "args": {"Task Type": "AI_CORE"}},
{"ph": "s", "name": "torch_to_npu", "id": 9007199254740993, "pid": 100, "tid": 100, "ts": "1000.500", "cat": "async_npu", "bp": "e"},
{"ph": "f", "name": "torch_to_npu", "id": 9007199254740993, "pid": 102499, "tid": 7, "ts": "1020.125", "cat": "async_npu", "bp": "e"},
{"ph": "s", "name": "HostToDevice1", "id": "40004068119343529983", "pid": 102435, "tid": 100, "ts": "1001.000", "cat": "HostToDevice"},
{"ph": "f", "name": "HostToDevice1", "id": "40004068119343529983", "pid": 102499, "tid": 7, "ts": "1020.125", "cat": "HostToDevice", "bp": "e"}
])");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  uint32_t add = FindSlice(*t, kNoRank, "Add");
  ASSERT_NE(add, kNoSlice);
  EXPECT_EQ(t->slices.ts_ns[add], 1020125);
  EXPECT_EQ(t->slices.kind[add], EventKind::kKernel);
  uint32_t track = t->slices.track[add];
  EXPECT_EQ(t->tracks.device[track], 3);  // 102499 = (100 << 10) | (1 << 5) | 3
  EXPECT_EQ(t->tracks.kind[track], TrackKind::kDeviceStream);
  ASSERT_EQ(t->flows.size(), 2u);
  bool exact = false;
  for (size_t i = 0; i < t->flows.size(); ++i) {
    EXPECT_EQ(t->flows.to_slice[i], add);
    exact = exact || t->flows.flow_id[i] == 9007199254740993ULL;
  }
  EXPECT_TRUE(exact) << "ids beyond 2^53 are kept exact";
  EXPECT_EQ(t->slices.kind[FindSlice(*t, kNoRank, "AscendCL@aclnnAdd")], EventKind::kRuntime);
}

// Hand-made rank folders with only kernel_details.csv, one per header variant.
void WriteRank(const TempDir& dir, const std::string& name, const std::string& kernel_details) {
  fs::create_directories(dir.Path(name + "/ASCEND_PROFILER_OUTPUT"));
  dir.Write(name + "/ASCEND_PROFILER_OUTPUT/kernel_details.csv", kernel_details);
}

TEST(AscendImporterTest, KernelDetailsHeaderVariantsWithoutTimeline) {
  TempDir dir;
  // Level0 (no stream/task columns), Block Num + Device_id + MemoryUB columns, and no OP State.
  WriteRank(dir, "rank0_ascend_pt",
            "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim\n"
            "1,MatMul_1,MatMul,AI_CORE,100.000\t,5.5,0,8\n");
  WriteRank(dir, "rank1_ascend_pt",
            "Device_id,Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),"
            "Wait Time(us),Block Num,Mix Block Num,aiv_ub_read_bw_vector(GB/s),aiv_ub_write_bw_vector(GB/s)\n"
            "1,1,4294967295,12,5,Add_3,Add,AI_VECTOR_CORE,200.25,2.25,0.5,40,N/A,123.5,N/A\n"
            "1,1,4294967295,N/A,N/A,hcom_allReduce__1_0_1,hcom_allReduce_,HCCL,210,30,0,0,N/A,N/A,N/A\n");
  auto t = MustImport(dir.path());
  ASSERT_TRUE(t);
  EXPECT_EQ(t->metadata["ranks"], "0,1");
  uint32_t add = FindSlice(*t, 1, "Add_3");
  ASSERT_NE(add, kNoSlice);
  EXPECT_EQ(t->slices.dur_ns[add], 2250);
  EXPECT_EQ(t->Str(t->tracks.name[t->slices.track[add]]), "Stream 5");
  EXPECT_DOUBLE_EQ(Metric(*t, 1, "kernel_details.csv", "Add_3", "aiv_ub_read_bw_vector(GB/s)"), 123.5);
  EXPECT_DOUBLE_EQ(Metric(*t, 1, "kernel_details.csv", "Add_3", "Block Num"), 40);
  EXPECT_EQ(t->slices.kind[FindSlice(*t, 1, "hcom_allReduce__1_0_1")], EventKind::kCollective);
  EXPECT_EQ(t->slices.dur_ns[FindSlice(*t, 0, "MatMul_1")], 5500);
}

TEST(AscendImporterTest, RenamedColumnIsAnErrorNamingFileAndLine) {
  TempDir dir;
  WriteRank(dir, "rank0_ascend_pt", "Name,Type,Start Time(us),Duration\nx,y,1,2\n");
  std::string err = ImportError(dir.path());
  EXPECT_NE(err.find("kernel_details.csv:line 1: missing column \"Duration(us)\""), std::string::npos) << err;
}

TEST(AscendImporterTest, TruncatedKernelDetailsIsAnErrorNamingFileAndLine) {
  TempDir dir;
  std::string real = ReadAll(kLevel1 + "/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv");
  WriteRank(dir, "rank0_ascend_pt", real.substr(0, real.size() / 2));
  std::string err = ImportError(dir.path());
  EXPECT_NE(err.find("kernel_details.csv:line "), std::string::npos) << err;
  EXPECT_NE(err.find("truncated"), std::string::npos) << err;
}

TEST(AscendImporterTest, TruncatedTraceViewIsAnErrorNamingFileAndByte) {
  TempDir dir;
  std::string real = ReadAll(kLevel1 + "/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
  fs::create_directories(dir.Path("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"));
  dir.Write("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", real.substr(0, 100000));
  std::string err = ImportError(dir.Path("rank0_ascend_pt"));
  EXPECT_NE(err.find("trace_view.json"), std::string::npos) << err;
  EXPECT_NE(err.find("byte"), std::string::npos) << err;
}

// Hand-made: a rank folder with kernel_details.csv and a side file.
std::string WriteRankWith(const TempDir& dir, const std::string& file, const std::string& content) {
  WriteRank(dir, "rank0_ascend_pt",
            "Name,Type,Accelerator Core,Start Time(us),Duration(us)\nMatMul_1,MatMul,AI_CORE,100,5.5\n");
  return dir.Write("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/" + file, content);
}

// D10 of the input trial: step_trace_time.csv values that do not read ('x',
// '-1e30') were dropped silently, and a row whose step is 'x' vanished.
TEST(AscendImporterTest, UnreadableStepTraceValuesAreCounted) {
  TempDir dir;
  WriteRankWith(dir, "step_trace_time.csv",
                "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free\n"
                "50,x,10,0,10,-1e30\n"
                "x,x,x,x,x,x\n"
                "51,100,N/A,0,,7\n");
  auto t = MustImport(dir.Path("rank0_ascend_pt"));
  ASSERT_TRUE(t);
  const auto& d = t->diagnostics.entries();
  ASSERT_TRUE(d.count("bad_step_trace_value"));
  EXPECT_EQ(d.at("bad_step_trace_value").count, 2u);
  EXPECT_NE(d.at("bad_step_trace_value").first_where.find("step_trace_time.csv:line 2 column \"Computing\""),
            std::string::npos)
      << d.at("bad_step_trace_value").first_where;
  ASSERT_TRUE(d.count("bad_step_trace_row"));
  EXPECT_EQ(d.at("bad_step_trace_row").count, 1u);
  EXPECT_NE(d.at("bad_step_trace_row").first_where.find("step_trace_time.csv:line 3"), std::string::npos);
  EXPECT_EQ(t->step_breakdown.size(), 3u + 3u);  // 50: three good values; 51: Computing, Overlapped, Free
}

// D11 of the input trial: communication.json cut short said "not valid JSON"
// and nothing of where.
TEST(AscendImporterTest, TruncatedCommunicationJsonNamesTheByte) {
  TempDir dir;
  std::string json =
      R"j({"step1": {"collective": {"hcom_allReduce__1": {"Communication Time Info": {"Elapse Time(ms)": 1.5}}}}})j";
  WriteRankWith(dir, "communication.json", json.substr(0, 60));
  std::string err = ImportError(dir.Path("rank0_ascend_pt"));
  EXPECT_NE(err.find("communication.json: not valid JSON: truncated JSON: input ends at byte 60 (line 1)"),
            std::string::npos)
      << err;
  WriteRankWith(dir, "communication.json", "{\"step1\": {\n\"collective\": ]}}");
  err = ImportError(dir.Path("rank0_ascend_pt"));
  EXPECT_NE(err.find("']' at byte 26 (line 2) closes nothing open there"), std::string::npos) << err;
}

// Hand-made: a JSON side file is read whole, then parsed into a DOM: a 1 MB
// communication.json.gz of 1 GB held 2.1 GB resident before its parse and
// ran out of memory under ulimit -v 4000000. Past kMaxJsonMemberBytes
// (lowered here to 1 MiB), plain or compressed, it is an error naming the
// file and the limit; a file under it still imports.
TEST(AscendImporterTest, JsonSideFilePastItsLimitIsAnErrorNamingIt) {
  TempDir dir;
  SetJsonMemberLimitForTesting(uint64_t{1} << 20);
  const std::string json =
      R"j({"step1": {"collective": {"hcom_allReduce__1": {"Communication Time Info": {"Elapse Time(ms)": 1.5}}}}})j";
  WriteRankWith(dir, "communication.json", json + std::string(2 << 20, ' '));
  std::string err = ImportError(dir.Path("rank0_ascend_pt"));
  EXPECT_NE(err.find("communication.json: over 1 MiB of JSON; a profiler folder's JSON side file is read whole"),
            std::string::npos)
      << err;
  fs::remove(dir.Path("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json"));
  WriteRankWith(dir, "communication.json.gz", testing::GzipBytes(json + std::string(2 << 20, ' ')));
  err = ImportError(dir.Path("rank0_ascend_pt"));
  EXPECT_NE(err.find("communication.json.gz: over 1 MiB of JSON (decompressed)"), std::string::npos) << err;
  WriteRankWith(dir, "communication.json.gz", testing::GzipBytes(json + std::string(1000, ' ')));
  EXPECT_TRUE(MustImport(dir.Path("rank0_ascend_pt")));
  SetJsonMemberLimitForTesting(0);
}

// D14: a side file that is a FIFO blocked the import forever; one that
// links to /dev/zero was read until memory ran out.
TEST(AscendImporterTest, SideFilesThatAreNotRegularAreErrors) {
  TempDir dir;
  WriteRank(dir, "rank0_ascend_pt",
            "Name,Type,Accelerator Core,Start Time(us),Duration(us)\nMatMul_1,MatMul,AI_CORE,100,5.5\n");
  const std::string out = dir.Path("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/");
  ASSERT_EQ(::mkfifo((out + "step_trace_time.csv").c_str(), 0600), 0);
  std::string err = ImportError(dir.Path("rank0_ascend_pt"));
  EXPECT_NE(err.find("step_trace_time.csv: is a named pipe (FIFO), not a regular file"), std::string::npos) << err;
  fs::remove(out + "step_trace_time.csv");
  fs::create_symlink("/dev/zero", out + "communication.json");
  err = ImportError(dir.Path("rank0_ascend_pt"));
  EXPECT_NE(err.find("communication.json: is a character device"), std::string::npos) << err;
}

}  // namespace
}  // namespace aiprof
