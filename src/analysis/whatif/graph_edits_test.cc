#include "src/analysis/whatif/graph_edits.h"

#include <gtest/gtest.h>

#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportJsonText;

StatusOr<WhatIfResult> PredictScenario(const Trace& t, std::string_view text) {
  CriticalPathResult path = ComputeCriticalPath(t);
  ASSIGN_OR_RETURN(Scenario sc, ParseScenario(text));
  RETURN_IF_ERROR(ResolveScenarioDevices(t, "", &sc));
  return PredictWhatIf(t, path, sc);
}

int64_t Step(const Trace& t, std::string_view text) {
  StatusOr<WhatIfResult> r = PredictScenario(t, text);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok() || r->steps.size() != 1) return -1;
  return r->steps[0].predicted_ns;
}

// Hand-made CPU-only trace (µs): step [0, 100]; aten::mul [10, 40],
// aten::add [45, 75], aten::relu [80, 95], fp32 tensors of 1024 elements.
// Roofline bytes (op_cost.h, Σ inputs + output): mul 3 × 4096 = 12288, add
// 12288, relu 2 × 4096 = 8192. `fuse aten::mul aten::add aten::relu`:
// intermediates are add's and relu's largest input, 4096 bytes each; mul
// loses 4096 (its output), add 8192 (reads one, writes one), relu 4096.
// All elementwise (memory-bound): mul 30 × 2/3 = 20, add 30 × 1/3 = 10,
// relu 15 × 1/2 = 7.5; the 5 µs gaps inside the chain go; the 10 µs before
// it and the 5 µs step tail stay: 10 + 20 + 10 + 7.5 + 5 = 52.5 µs.
constexpr char kCpuChain[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
  {"ph":"X","cat":"cpu_op","name":"aten::mul","pid":1,"tid":1,"ts":10,"dur":30,"args":{"Input Dims":[[1024],[1024]],"Input type":["float","float"]}},
  {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":45,"dur":30,"args":{"Input Dims":[[1024],[1024]],"Input type":["float","float"]}},
  {"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":80,"dur":15,"args":{"Input Dims":[[1024]],"Input type":["float"]}}
]})json";

TEST(GraphEditsTest, HandMadeFuseOnCpu) {
  auto t = ImportJsonText(kCpuChain);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(Step(*t, "fuse aten::mul aten::add aten::relu"), 52'500);
  // Two members: mul loses 4096 of 12288 (20), add 4096 of 12288 (20), the
  // gap between them goes, relu and its gap stay: 10 + 20 + 20 + 5 + 15 + 5.
  EXPECT_EQ(Step(*t, "fuse aten::mul aten::add"), 75'000);
  // Not a chain in this order: nothing changes.
  StatusOr<WhatIfResult> none = PredictScenario(*t, "fuse aten::add aten::mul");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->steps.at(0).predicted_ns, 100'000);
  ASSERT_EQ(none->notes.size(), 1u);
  EXPECT_NE(none->notes[0].find("0 chains"), std::string::npos) << none->notes[0];
}

// Hand-made GPU trace (µs): aten::mul [10, 20] launches K1 [20, 60] (call
// [12, 16]); aten::add [30, 40] launches K2 [60, 100] (call [32, 36]);
// cudaDeviceSynchronize [50, 102] waits for K2; the step span [0, 110].
// `fuse aten::mul aten::add`: both kernels lose 4096 of 12288 bytes (× 2/3:
// 26.667 µs each); K2 starts when K1 ends (its launch costs nothing);
// aten::add is dispatch only and takes no time, nor the gap before it:
// K1 [20, 46.667], K2 [46.667, 73.333], the sync 2 µs after: 75.333, the
// step's 8 µs tail: 83.333 µs.
constexpr char kGpuChain[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":110},
  {"ph":"X","cat":"cpu_op","name":"aten::mul","pid":1,"tid":1,"ts":10,"dur":10,"args":{"Input Dims":[[1024],[1024]],"Input type":["float","float"]}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":4,"args":{"correlation":1}},
  {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":30,"dur":10,"args":{"Input Dims":[[1024],[1024]],"Input type":["float","float"]}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":32,"dur":4,"args":{"correlation":2}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":50,"dur":52},
  {"ph":"X","cat":"kernel","name":"void at::native::vectorized_elementwise_kernel<4, MulFunctor>","pid":0,"tid":7,"ts":20,"dur":40,"args":{"device":0,"stream":7,"correlation":1}},
  {"ph":"X","cat":"kernel","name":"void at::native::vectorized_elementwise_kernel<4, AddFunctor>","pid":0,"tid":7,"ts":60,"dur":40,"args":{"device":0,"stream":7,"correlation":2}}
]})json";

TEST(GraphEditsTest, HandMadeFuseOnGpu) {
  auto t = ImportJsonText(kGpuChain);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(Step(*t, "remove no_such_op"), 110'000);
  EXPECT_NEAR(static_cast<double>(Step(*t, "fuse aten::mul aten::add")), 83'333, 2);
  // The same chain named by its kernels: K2 right after K1 and its launch
  // call free, but aten::add keeps its host time (only launches go): the
  // sync starts at 50 − 4 = 46 µs, still before K2 ends: 83.333 µs again.
  EXPECT_NEAR(static_cast<double>(Step(*t, "fuse MulFunctor AddFunctor")), 83'333, 2);
}

// Hand-made (µs): launches of A [10, 30], the all-reduce C [30, 80] and B
// [80, 100], all on stream 7; cudaDeviceSynchronize [10, 102] waits for B,
// the step [0, 110]. overlap-comm: B no longer waits for C, only for A:
// B [30, 50] (its launch 2 µs before, the call's duration: it had been
// queued). The sync still waits for C, its consumer: 80 + 2 = 82, the
// step's 8 µs tail: 90 µs.
constexpr char kComm[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":110},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":2,"args":{"correlation":1}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":4,"dur":2,"args":{"correlation":2}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":7,"dur":2,"args":{"correlation":3}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":10,"dur":92},
  {"ph":"X","cat":"kernel","name":"ampere_sgemm_A","pid":0,"tid":7,"ts":10,"dur":20,"args":{"device":0,"stream":7,"correlation":1}},
  {"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float","pid":0,"tid":7,"ts":30,"dur":50,"args":{"device":0,"stream":7,"correlation":2}},
  {"ph":"X","cat":"kernel","name":"ampere_sgemm_B","pid":0,"tid":7,"ts":80,"dur":20,"args":{"device":0,"stream":7,"correlation":3}}
]})json";

// The same without the sync (step span [0, 12]): the step ends with its
// last device work, B at 100 measured; overlapped, B ends at 50 but C,
// still part of the step, at 80.
constexpr char kCommNoSync[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":12},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":2,"args":{"correlation":1}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":4,"dur":2,"args":{"correlation":2}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":7,"dur":2,"args":{"correlation":3}},
  {"ph":"X","cat":"kernel","name":"ampere_sgemm_A","pid":0,"tid":7,"ts":10,"dur":20,"args":{"device":0,"stream":7,"correlation":1}},
  {"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float","pid":0,"tid":7,"ts":30,"dur":50,"args":{"device":0,"stream":7,"correlation":2}},
  {"ph":"X","cat":"kernel","name":"ampere_sgemm_B","pid":0,"tid":7,"ts":80,"dur":20,"args":{"device":0,"stream":7,"correlation":3}}
]})json";

TEST(GraphEditsTest, HandMadeOverlapComm) {
  auto t = ImportJsonText(kComm);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(Step(*t, "remove no_such_op"), 110'000);
  EXPECT_EQ(Step(*t, "overlap-comm"), 90'000);
  auto u = ImportJsonText(kCommNoSync);
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(Step(*u, "remove no_such_op"), 100'000);
  EXPECT_EQ(Step(*u, "overlap-comm"), 80'000);
  // No collective: nothing changes (the step end is not moved to none).
  auto v = ImportJsonText(kCpuChain);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(Step(*v, "overlap-comm"), 100'000);
  EXPECT_FALSE(ParseScenario("overlap-comm now").ok());
}

// remove-comm (communication_bound's removal): the all-reduce takes no
// time, so B follows A: B [30, 50], the sync 2 µs after it, the step's 8 µs
// tail: 60 µs; without the sync the step ends with B: 50 µs. No collective:
// nothing changes.
TEST(GraphEditsTest, HandMadeRemoveComm) {
  auto t = ImportJsonText(kComm);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(Step(*t, "remove-comm"), 60'000);
  auto u = ImportJsonText(kCommNoSync);
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(Step(*u, "remove-comm"), 50'000);
  auto v = ImportJsonText(kCpuChain);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(Step(*v, "remove-comm"), 100'000);
  EXPECT_FALSE(ParseScenario("remove-comm all").ok());
}

// Hand-made Ascend timeline (µs): .item() waits in aclrtSynchronizeStream
// (CANN's track: same tid, its own pid) for Add, which the stream runs
// after an EVENT_WAIT that ends with the all-reduce [30, 150]. Without
// communication: Add [31, 66] (1 µs after the all-reduce, as measured), the
// sync 2 µs after Add, then the ops' own 1 µs tails and the step's 10 µs
// after .item(): 80 µs. Before, the CANN sync was no child of the op (the op
// kept its 170 µs) and Add kept its measured 136 µs gap after MatMul: 200.
constexpr char kAscendItem[] = R"json([
{"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "Python"}},
{"ph": "M", "name": "process_name", "pid": 102435, "tid": 0, "args": {"name": "CANN"}},
{"ph": "M", "name": "process_name", "pid": 102499, "tid": 0, "args": {"name": "Ascend Hardware"}},
{"ph": "M", "name": "thread_name", "pid": 102499, "tid": 2, "args": {"name": "Stream 2"}},
{"ph": "M", "name": "process_name", "pid": 102467, "tid": 0, "args": {"name": "HCCL"}},
{"ph": "M", "name": "thread_name", "pid": 102467, "tid": 0, "args": {"name": "Group 0 Communication"}},
{"ph": "X", "name": "ProfilerStep#1", "pid": 100, "tid": 100, "ts": "0.000", "dur": 200, "cat": "user_annotation"},
{"ph": "X", "name": "aten::item", "pid": 100, "tid": 100, "ts": "20.000", "dur": 170, "cat": "cpu_op"},
{"ph": "X", "name": "aten::_local_scalar_dense", "pid": 100, "tid": 100, "ts": "21.000", "dur": 168, "cat": "cpu_op"},
{"ph": "X", "name": "AscendCL@aclnnAdd", "pid": 102435, "tid": 100, "ts": "10.000", "dur": 2},
{"ph": "X", "name": "AscendCL@aclrtSynchronizeStreamWithTimeout", "pid": 102435, "tid": 100, "ts": "22.000", "dur": 166},
{"ph": "X", "name": "MatMul", "pid": 102499, "tid": 2, "ts": "5.000", "dur": 10, "args": {"Task Type": "AI_CORE"}},
{"ph": "X", "name": "EVENT_WAIT", "pid": 102499, "tid": 2, "ts": "16.000", "dur": 134, "args": {"Task Type": "EVENT_WAIT_SQE"}},
{"ph": "X", "name": "Add", "pid": 102499, "tid": 2, "ts": "151.000", "dur": 35, "args": {"Task Type": "AI_CORE"}},
{"ph": "X", "name": "hcom_allReduce__1_0_1", "pid": 102467, "tid": 0, "ts": "30.000", "dur": 120},
{"ph": "s", "name": "HostToDevice1", "id": "7", "pid": 102435, "tid": 100, "ts": "10.000", "cat": "HostToDevice"},
{"ph": "f", "name": "HostToDevice1", "id": "7", "pid": 102499, "tid": 2, "ts": "151.000", "cat": "HostToDevice", "bp": "e"}
])json";

TEST(GraphEditsTest, HandMadeAscendRemoveCommThroughItem) {
  auto t = ImportJsonText(kAscendItem);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(Step(*t, "remove no_such_op"), 200'000);
  EXPECT_EQ(Step(*t, "remove-comm"), 80'000);
}

// Real trace (HTA's NCCL sample): the collectives run on a stream of their
// own (40) and the compute stream waits through events: already overlapped,
// so overlap-comm changes no step.
TEST(GraphEditsTest, OverlapCommOnCollectivesAlreadyOnTheirOwnStream) {
  auto t = testing::ImportFixture("kineto/HolisticTraceAnalysis__tests__data__nccl_parser_config__nccl_data.json.gz");
  ASSERT_NE(t, nullptr);
  StatusOr<WhatIfResult> r = PredictScenario(*t, "overlap-comm");
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->steps.empty());
  for (const StepPrediction& s : r->steps) EXPECT_EQ(s.predicted_ns, s.measured_ns) << "step " << s.number;
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("0 compute activities no longer wait"), std::string::npos) << r->notes[0];
  EXPECT_EQ(r->notes[0].find(" 0 device collectives"), std::string::npos) << r->notes[0];
  // The note says why nothing moved (audit4: "+0.00%" on MI300 ResNet read
  // as "overlap gains nothing"), and names the bound.
  EXPECT_NE(r->notes[0].find("nothing to overlap, the collectives already run on streams of their own"),
            std::string::npos)
      << r->notes[0];
  EXPECT_NE(r->notes[0].find("at most: remove-comm"), std::string::npos) << r->notes[0];
}

// Real trace (TraceLens' MI300 ResNet with activation checkpointing, the
// trace audit4 found overlap-comm "+0.00%" on): 17 RCCL collectives on a
// stream of their own, consumed through stream waits: nothing changes, and
// the note says why.
TEST(GraphEditsTest, OverlapCommSaysWhyNothingMovesOnMi300Resnet) {
  auto t = testing::ImportFixture("tracelens/mi300__resnet_act_checkpoint.json.gz");
  ASSERT_NE(t, nullptr);
  StatusOr<WhatIfResult> r = PredictScenario(*t, "overlap-comm");
  ASSERT_TRUE(r.ok());
  for (const StepPrediction& s : r->steps) EXPECT_EQ(s.predicted_ns, s.measured_ns) << "step " << s.number;
  ASSERT_FALSE(r->notes.empty());
  EXPECT_NE(r->notes[0].find("17 device collectives, 0 compute activities"), std::string::npos) << r->notes[0];
  EXPECT_NE(r->notes[0].find("nothing to overlap"), std::string::npos) << r->notes[0];
  EXPECT_NE(r->notes[0].find("and 9 compute activities wait for one through a recorded stream wait"), std::string::npos)
      << r->notes[0];
}

// Hand-made (µs): aten::mm of two fp32 1024×1024 matrices launches K1
// [5, 205]; aten::relu_ (no shapes) launches the elementwise K2 [205, 305];
// the sync ends 2 µs after K2, the step 3 µs after the sync.
// `device H100 from A100` (data/devices.yaml): the mm's roofline, 2·1024³
// FLOPs and 3 · 4 MiB: compute-bound on both (A100 fp32 19.5 TFLOP/s:
// 110.1 µs against 6.2 µs of traffic; H100 67 TFLOP/s: 32.1 against 3.8):
// K1 × 19.5 / 67 = 58.209 µs. K2 has no shapes and is no GEMM: the
// bandwidth ratio 2.039 / 3.35 TB/s: 60.866 µs. K1 [5, 63.209], K2
// [63.209, 124.075], the sync 126.075, the step 129.075 µs.
constexpr char kDevice[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":310},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":9,"args":{"Input Dims":[[1024,1024],[1024,1024]],"Input type":["float","float"]}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":2,"dur":2,"args":{"correlation":1}},
  {"ph":"X","cat":"cpu_op","name":"aten::relu_","pid":1,"tid":1,"ts":11,"dur":9},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":2,"args":{"correlation":2}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":21,"dur":286},
  {"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":5,"dur":200,"args":{"device":0,"stream":7,"correlation":1}},
  {"ph":"X","cat":"kernel","name":"void at::native::vectorized_elementwise_kernel<4>","pid":0,"tid":7,"ts":205,"dur":100,"args":{"device":0,"stream":7,"correlation":2}}
]})json";

// Hand-made (µs), no shapes (a graph replay's kernels carry none): a
// Tensile bf16 GEMM `Cijk_Alik_Bljk_BBS_BH_...` [0, 130.74], a Triton
// attention kernel that names no precision [130.74, 261.48], a bf16-named
// GEMM [261.48, 392.22], then a sync. `device H100 from MI300X`: each by the
// bf16 peak ratio 1307.4 / 989.5 (the first and third by their names, the
// attention by the precision the trace's named dense kernels run in), 130.74
// → 172.74 µs each; the fp32 ratio (163.4 / 67 = 2.44) gave 318.8 µs each
// (TraceLens's vLLM decode: +72.6% where the bf16 ratio gives +20.5%).
constexpr char kShapelessBf16[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":400},
  {"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":1,"ts":0,"dur":1,"args":{"correlation":1}},
  {"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":1,"ts":1,"dur":1,"args":{"correlation":2}},
  {"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":1,"ts":2,"dur":1,"args":{"correlation":3}},
  {"ph":"X","cat":"cuda_runtime","name":"hipDeviceSynchronize","pid":1,"tid":1,"ts":3,"dur":390},
  {"ph":"X","cat":"kernel","name":"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256","pid":0,"tid":7,"ts":0,"dur":130.74,"args":{"device":0,"stream":7,"correlation":1}},
  {"ph":"X","cat":"kernel","name":"kernel_unified_attention_3d","pid":0,"tid":7,"ts":130.74,"dur":130.74,"args":{"device":0,"stream":7,"correlation":2}},
  {"ph":"X","cat":"kernel","name":"_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1","pid":0,"tid":7,"ts":261.48,"dur":130.74,"args":{"device":0,"stream":7,"correlation":3}}
]})json";

TEST(GraphEditsTest, ShapelessDenseKernelsScaleByTheirPrecision) {
  auto t = ImportJsonText(kShapelessBf16);
  ASSERT_NE(t, nullptr);
  StatusOr<WhatIfResult> r = PredictScenario(*t, "device H100 from MI300X");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("3 GEMM/conv/attention kernels without shapes by the compute-peak ratio (2 of the "
                             "precision their name says, the others bf16's, the trace's named precision)"),
            std::string::npos)
      << r->notes[0];
  // The sync ends with the last kernel: 3 x 130.74 x 1307.4 / 989.5 us, then the step's 7 us after it.
  const double kernels = 3 * 130.74 * 1307.4 / 989.5;
  EXPECT_NEAR(static_cast<double>(Step(*t, "device H100 from MI300X")), (kernels + 7.78) * 1e3, 50);
}

TEST(GraphEditsTest, HandMadeDeviceByRoofline) {
  auto t = ImportJsonText(kDevice);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(Step(*t, "remove no_such_op"), 310'000);
  EXPECT_NEAR(static_cast<double>(Step(*t, "device H100 from A100")), 129'075, 2);
  StatusOr<WhatIfResult> r = PredictScenario(*t, "device H100 from A100");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("1 kernels by their op's roofline time"), std::string::npos) << r->notes[0];
  EXPECT_NE(r->notes[0].find("1 by the memory-bandwidth ratio"), std::string::npos) << r->notes[0];
  // The trace names no device: the clause must say where it comes from.
  StatusOr<WhatIfResult> unknown_from = PredictScenario(*t, "device H100");
  ASSERT_FALSE(unknown_from.ok());
  EXPECT_NE(unknown_from.status().message().find("'device H100'"), std::string::npos);
  EXPECT_NE(unknown_from.status().message().find("'device H100 from NAME'"), std::string::npos);
  StatusOr<WhatIfResult> unknown = PredictScenario(*t, "device NoSuchGpu from A100");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("'device NoSuchGpu from A100'"), std::string::npos);
  EXPECT_FALSE(ParseScenario("device").ok());
  EXPECT_FALSE(ParseScenario("device H100 to A100").ok());
}

// Hand-made CPU-only trace (µs): aten::mm [10, 110] (the same matrices),
// aten::relu [120, 140] without shapes, the step [0, 150]. The ops are the
// compute: mm × 19.5 / 67 = 29.104 µs, relu × 2.039 / 3.35 = 12.173 µs; the
// 10 µs gaps (host time) stay: 10 + 29.104 + 10 + 12.173 + 10 = 71.277 µs.
constexpr char kCpuDevice[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":150},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":100,"args":{"Input Dims":[[1024,1024],[1024,1024]],"Input type":["float","float"]}},
  {"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":120,"dur":20}
]})json";

TEST(GraphEditsTest, HandMadeDeviceOnCpuTrace) {
  auto t = ImportJsonText(kCpuDevice);
  ASSERT_NE(t, nullptr);
  EXPECT_NEAR(static_cast<double>(Step(*t, "device H100 from A100")), 71'277, 2);
}

TEST(GraphEditsTest, FuseParseErrorsNameTheClause) {
  StatusOr<Scenario> one = ParseScenario("fuse aten::mul");
  ASSERT_FALSE(one.ok());
  EXPECT_NE(one.status().message().find("'fuse aten::mul'"), std::string::npos);
  EXPECT_NE(ParseScenario("fuse").status().message().find("at least two"), std::string::npos);
  StatusOr<Scenario> ok = ParseScenario("fuse aten::mul aten::add aten::relu; overlap-comm; device H100");
  ASSERT_TRUE(ok.ok());
  ASSERT_EQ(ok->clauses.size(), 3u);
  EXPECT_EQ(ok->clauses[0].chain.size(), 3u);
}

}  // namespace
}  // namespace aiprof
