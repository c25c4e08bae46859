#include "src/analysis/critical_path/critical_path.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "src/analysis/attribution/attribution.h"
#include "src/analysis/communication/cross_rank.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/window/analysis_window.h"
#include "src/model/event_kind.h"
#include "src/model/trace_builder.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportFixture;
using testing::ImportJsonText;

int64_t On(const StepPath& p, PathClass c) { return p.by_class_ns[static_cast<size_t>(c)]; }

int64_t PathSum(const StepPath& p) {
  int64_t sum = 0;
  for (int64_t v : p.by_class_ns) sum += v;
  return sum;
}

uint32_t SliceNamed(const Trace& t, std::string_view name) {
  for (uint32_t i = 0; i < t.slices.size(); ++i) {
    if (t.Str(t.slices.name[i]) == name) return i;
  }
  return kNoSlice;
}

// Hand-made (times in µs): one step [0, 105]. K1 (60) then K2 (10) on stream
// 7; a copy H2D (30) on stream 8 runs under K1; a copy D2H (20) on stream 7
// after K2, which the host waits for in cudaStreamSynchronize [30, 102].
// Worked by hand, backward from the step's end at 105:
//   [102,105] ProfilerStep's own time (idle_other)     3
//   [100,102] cudaStreamSynchronize after the copy     2  (sync edge)
//   [ 80,100] copy D2H                                 20
//   [ 70, 80] K2, [10, 70] K1 (stream order)           70
//   [  4, 10] K1 waits for its launch call (host bound) 6
//   [  2,  4] aten::mm's own time before the launch      2
//   [  0,  2] ProfilerStep's own time (idle_other)      2
// The H2D copy is hidden under K1: off the path.
constexpr char kCopies[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":105},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":2,"dur":6},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":4,"dur":2,"args":{"correlation":1}},
  {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":1,"ts":10,"dur":4},
  {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":11,"dur":2,"args":{"correlation":2}},
  {"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":20,"dur":4},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":21,"dur":2,"args":{"correlation":3}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":25,"dur":2,"args":{"correlation":4}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":30,"dur":72},
  {"ph":"X","cat":"kernel","name":"K1","pid":0,"tid":7,"ts":10,"dur":60,"args":{"device":0,"stream":7,"correlation":1}},
  {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":8,"ts":15,"dur":30,"args":{"device":0,"stream":8,"correlation":2}},
  {"ph":"X","cat":"kernel","name":"K2","pid":0,"tid":7,"ts":70,"dur":10,"args":{"device":0,"stream":7,"correlation":3}},
  {"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pageable)","pid":0,"tid":7,"ts":80,"dur":20,"args":{"device":0,"stream":7,"correlation":4}}
]})json";

TEST(CriticalPathTest, HandMadeHiddenCopyOffPathStallingCopyOn) {
  auto t = ImportJsonText(kCopies);
  ASSERT_NE(t, nullptr);
  CriticalPathResult r = ComputeCriticalPath(*t);
  ASSERT_EQ(r.steps.size(), 1u);
  const StepPath& p = r.steps[0];
  EXPECT_EQ(p.length_ns(), 105'000);
  EXPECT_EQ(PathSum(p), 105'000);
  EXPECT_EQ(On(p, PathClass::kIdleOther), 5'000);
  EXPECT_EQ(On(p, PathClass::kSync), 2'000);
  EXPECT_EQ(On(p, PathClass::kCopy), 20'000);
  EXPECT_EQ(On(p, PathClass::kCompute), 70'000);
  EXPECT_EQ(On(p, PathClass::kIdleHostBound), 6'000);
  EXPECT_EQ(On(p, PathClass::kHostOp), 2'000);
  EXPECT_EQ(p.device_total_ns[static_cast<size_t>(PathClass::kCopy)], 50'000);
  EXPECT_FALSE(r.on_path[SliceNamed(*t, "Memcpy HtoD (Pageable -> Device)")]);
  EXPECT_TRUE(r.on_path[SliceNamed(*t, "Memcpy DtoH (Device -> Pageable)")]);
  EXPECT_TRUE(r.on_path[SliceNamed(*t, "K1")]);
  EXPECT_FALSE(r.on_path[SliceNamed(*t, "aten::relu")]);
  // Segments tile the path in time order.
  ASSERT_GT(p.segment_count, 0u);
  EXPECT_EQ(r.segments[p.first_segment].start_ns, p.start_ns);
  for (size_t k = p.first_segment + 1; k < p.first_segment + p.segment_count; ++k) {
    EXPECT_EQ(r.segments[k].start_ns, r.segments[k - 1].end_ns);
  }
  EXPECT_EQ(r.segments[p.first_segment + p.segment_count - 1].end_ns, p.end_ns);
  MetricSet m;
  PublishCriticalPath(r, &m);
  EXPECT_EQ(m.Get("critical_path_ns")->value, 105'000);
  EXPECT_EQ(m.Get("critical_path_copy_ns")->value, 20'000);
  EXPECT_NEAR(m.Get("critical_path_copy_hidden_ratio")->value, 30.0 / 50, 1e-12);
  EXPECT_EQ(m.Get("critical_path_host_ns")->value, 4'000);
}

// Hand-made, two ranks (µs): each launches a GEMM then an all-reduce and
// waits for the device in cudaDeviceSynchronize [5, 77]; the step is [0, 80].
// Rank 1's GEMM takes 40 against rank 0's 20, so its all-reduce starts at 45,
// 20 after rank 0's: rank 0's path runs back through the all-reduce's
// transfer [45, 75] to rank 1's arrival, then rank 1's GEMM [5, 45], its
// launch wait [1, 5] and the step's first µs.
std::unique_ptr<Trace> TwoRanks() {
  auto trace = std::make_unique<Trace>();
  TraceBuilder b(trace.get());
  const StringId step = b.Intern("ProfilerStep#1"), annot = b.Intern("user_annotation");
  const StringId launch = b.Intern("cudaLaunchKernel"), runtime = b.Intern("cuda_runtime");
  const StringId sync = b.Intern("cudaDeviceSynchronize"), kernel = b.Intern("kernel");
  const StringId gemm = b.Intern("gemm"), nccl = b.Intern("ncclKernel_AllReduce_RING_LL_Sum_float");
  for (int r = 0; r < 2; ++r) {
    const uint32_t host = b.ThreadTrack(IdValue::Num(100 + r), IdValue::Num(1));
    const uint32_t dev = b.ThreadTrack(IdValue::Num(r), IdValue::Num(7));
    b.SetTrackRole(dev, TrackKind::kDeviceStream, Layer::kDevice, 0);
    b.SetTrackRank(host, r);
    b.SetTrackRank(dev, r);
    const int64_t us = 1000, gemm_us = r == 0 ? 20 : 40;
    b.AddSlice(host, 0, 80 * us, step, annot, kNoCorrelation, 0, 0);
    b.AddSlice(host, 1 * us, 1 * us, launch, runtime, 1, 0, 0);
    b.AddSlice(host, 3 * us, 1 * us, launch, runtime, 2, 0, 0);
    b.AddSlice(host, 5 * us, 72 * us, sync, runtime, kNoCorrelation, 0, 0);
    b.AddSlice(dev, 5 * us, gemm_us * us, gemm, kernel, 1, 0, 0);
    b.AddSlice(dev, (5 + gemm_us) * us, (70 - gemm_us) * us, nccl, kernel, 2, 0, 0);
  }
  if (!b.Finalize().ok()) return nullptr;
  return trace;
}

TEST(CriticalPathTest, HandMadeCollectiveEndsWhenLastRankArrives) {
  auto t = TwoRanks();
  ASSERT_NE(t, nullptr);
  // The multi-rank analysis's pairing (collective_pairing.h), as the session passes it.
  const CrossRankResult cross = ComputeCrossRank(*t, CollectCollectives(*t));
  ASSERT_TRUE(cross.clocks_agree);
  CriticalPathOptions o;
  o.cross = &cross;
  CriticalPathResult r = ComputeCriticalPath(*t, o);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.graph.edges[static_cast<size_t>(DepKind::kCollective)], 1u);
  for (const StepPath& p : r.steps) {
    EXPECT_EQ(p.length_ns(), 80'000);
    EXPECT_EQ(PathSum(p), 80'000);
    EXPECT_EQ(On(p, PathClass::kCollective), 30'000) << "rank " << p.rank;
    EXPECT_EQ(On(p, PathClass::kCompute), 40'000) << "rank " << p.rank;  // rank 1's GEMM on both
    EXPECT_EQ(On(p, PathClass::kIdleHostBound), 4'000);
    EXPECT_EQ(On(p, PathClass::kSync), 2'000);
    EXPECT_EQ(On(p, PathClass::kIdleOther), 4'000);
  }
  const StepPath& r0 = r.steps[0].rank == 0 ? r.steps[0] : r.steps[1];
  const StepPath& r1 = r.steps[0].rank == 0 ? r.steps[1] : r.steps[0];
  EXPECT_EQ(r0.waited_rank, 1);
  EXPECT_EQ(r0.waited_late_ns, 20'000);
  ASSERT_NE(r0.waited_cause, kNoSlice);
  EXPECT_EQ(t->Str(t->slices.name[r0.waited_cause]), "gemm");
  EXPECT_EQ(t->tracks.rank[t->slices.track[r0.waited_cause]], 1);
  EXPECT_EQ(r1.waited_rank, kNoRank);
  // Without the cross-rank join rank 0's own (shorter) GEMM is on its path.
  CriticalPathResult alone = ComputeCriticalPath(*t);
  const StepPath& a0 = alone.steps[0].rank == 0 ? alone.steps[0] : alone.steps[1];
  EXPECT_EQ(On(a0, PathClass::kCompute), 20'000);
  EXPECT_EQ(On(a0, PathClass::kCollective), 50'000);
}

// HTA's critical-path test (tests/test_critical_path_analysis.py) checks on
// this AlexNet trace a GPU→GPU sync edge from the fft2d_c2r kernel of
// correlation 5606 on stream 20 to the elementwise kernel of correlation
// 5629 on stream 7 (cudaStreamWaitEvent); we find the same edge.
TEST(CriticalPathTest, AlexnetStreamWaitEdgeMatchesHta) {
  auto t = ImportFixture(
      "kineto/HolisticTraceAnalysis__tests__data__critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz");
  ASSERT_NE(t, nullptr);
  CriticalPathResult r = ComputeCriticalPath(*t);
  auto device_with_corr = [&](int64_t corr) {
    for (uint32_t i = 0; i < t->slices.size(); ++i) {
      if (r.graph.on_device[i] && t->slices.correlation[i] == corr) return i;
    }
    return kNoSlice;
  };
  const uint32_t fft = device_with_corr(5606), elwise = device_with_corr(5629);
  ASSERT_NE(fft, kNoSlice);
  ASSERT_NE(elwise, kNoSlice);
  EXPECT_TRUE(t->Str(t->slices.name[fft]).starts_with("void fft2d_c2r_32x32"));
  EXPECT_EQ(t->tracks.tid[t->slices.track[fft]], 20);
  EXPECT_EQ(t->tracks.tid[t->slices.track[elwise]], 7);
  EXPECT_EQ(r.graph.wait_on[elwise], fft);
  EXPECT_GT(r.graph.edges[static_cast<size_t>(DepKind::kSync)], 0u);
  ASSERT_FALSE(r.steps.empty());
  for (const StepPath& p : r.steps) {
    EXPECT_EQ(PathSum(p), p.length_ns());
    EXPECT_FALSE(p.truncated);
  }
}

// Hand-made (µs), as SGLang's trace has it: a synchronous copy call
// hipMemcpyWithStream [2, 92] in the step [0, 100] blocks while the device is
// idle; its 2 µs copy runs at [88, 90]. By hand, backward from 100: [92, 100]
// the step's own time (idle_other, 8), [2, 92] the call's own time (90),
// [0, 2] the step's own time (2). The call is a wait: the attribution counts
// its 90 µs as synchronisation, so the path's class is sync_call, not runtime
// (the old code put all 90 µs under runtime).
constexpr char kSyncCopy[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
  {"ph":"X","cat":"cuda_runtime","name":"hipMemcpyWithStream","pid":1,"tid":1,"ts":2,"dur":90,"args":{"correlation":1}},
  {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Host -> Device)","pid":0,"tid":7,"ts":88,"dur":2,"args":{"device":0,"stream":7,"correlation":1}}
]})json";

TEST(CriticalPathTest, HandMadeSynchronousCopyIsSyncLikeTheAttribution) {
  auto t = ImportJsonText(kSyncCopy);
  ASSERT_NE(t, nullptr);
  CriticalPathResult r = ComputeCriticalPath(*t);
  ASSERT_EQ(r.steps.size(), 1u);
  const StepPath& p = r.steps[0];
  EXPECT_EQ(p.length_ns(), 100'000);
  EXPECT_EQ(On(p, PathClass::kSync), 90'000);
  EXPECT_EQ(On(p, PathClass::kRuntime), 0);
  EXPECT_EQ(On(p, PathClass::kIdleOther), 10'000);
  // The attribution's synchronisation, on the same trace: the same 90 µs.
  AttributionResult a = ComputeAttribution(*t, nullptr);
  EXPECT_EQ(a.by_class_ns[static_cast<size_t>(TimeClass::kSync)], 90'000);
  EXPECT_EQ(a.by_class_ns[static_cast<size_t>(TimeClass::kLaunch)], 0);
}

// Hand-made (µs): the device runs a step behind. Step 1 [0, 10] launches K1
// at 1, which runs [5, 40]; step 2 [20, 30] launches K2 at 21, which runs
// [40, 50] after K1 on the same stream. By hand, step 2's path [20, 50]: K2
// [40, 50] (its own work, 10), then K1 clipped to the step, [20, 40] (step
// 1's work, 20): compute 30 on the path against 10 of its own device time.
// On the steps' own work, by launch: step 1 35 of 35, step 2 10 of 10 on the
// path; earlier steps' work on step 2's path 20. The old table divided the
// path's compute (65) by the steps' own (45): 144%, hidden 0.
constexpr char kBacklog[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":10},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":1,"args":{"correlation":1}},
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":20,"dur":10},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":21,"dur":1,"args":{"correlation":2}},
  {"ph":"X","cat":"kernel","name":"K1","pid":0,"tid":7,"ts":5,"dur":35,"args":{"device":0,"stream":7,"correlation":1}},
  {"ph":"X","cat":"kernel","name":"K2","pid":0,"tid":7,"ts":40,"dur":10,"args":{"device":0,"stream":7,"correlation":2}}
]})json";

TEST(CriticalPathTest, HandMadeBacklogIsApartFromTheStepsOwnWork) {
  auto t = ImportJsonText(kBacklog);
  ASSERT_NE(t, nullptr);
  CriticalPathResult r = ComputeCriticalPath(*t);
  ASSERT_EQ(r.steps.size(), 2u);
  const size_t k = static_cast<size_t>(PathClass::kCompute);
  const StepPath& s1 = r.steps[0];
  const StepPath& s2 = r.steps[1];
  EXPECT_EQ(s2.length_ns(), 30'000);
  EXPECT_EQ(s2.by_class_ns[k], 30'000);
  EXPECT_EQ(s2.device_total_ns[k], 10'000);
  EXPECT_EQ(s2.own_on_path_ns[k], 10'000);
  EXPECT_EQ(s2.earlier_on_path_ns[k], 20'000);
  EXPECT_EQ(s1.device_total_ns[k], 35'000);
  EXPECT_EQ(s1.own_on_path_ns[k], 35'000);
  EXPECT_EQ(s1.earlier_on_path_ns[k], 0);
  EXPECT_EQ(r.window_device_total_ns[k], 45'000);
  EXPECT_EQ(r.window_own_on_path_ns[k], 45'000);
  EXPECT_EQ(r.window_earlier_on_path_ns[k], 20'000);
  EXPECT_EQ(r.window_by_class_ns[k], 65'000);
  for (size_t c = 0; c < kPathClassCount; ++c) EXPECT_LE(r.window_own_on_path_ns[c], r.window_device_total_ns[c]);
}

// The largest on-path consumers are the analysis' (the report's renderer
// summed and sorted them): by name, over the counted steps. kBacklog by hand:
// both steps counted, K1 35 (step 1) + 20 (step 2's path) = 55 µs, K2 10;
// with step 1 as warm-up, step 2 alone: K1 20, K2 10. kCopies: K1 60, the
// D2H copy 20, K2 10, then aten::mm and cudaStreamSynchronize 2 each (equal:
// by name id); no idle, and the hidden H2D copy is not on the path.
TEST(CriticalPathTest, HandMadeTopSlicesAreTheCountedStepsOwnTimeByName) {
  auto t = ImportJsonText(kBacklog);
  ASSERT_NE(t, nullptr);
  auto names = [&](const CriticalPathResult& r) {
    std::vector<std::pair<std::string, int64_t>> v;
    for (const PathSliceTotal& e : r.window_top_slices) v.emplace_back(std::string(t->Str(e.name)), e.on_path_ns);
    return v;
  };
  using V = std::vector<std::pair<std::string, int64_t>>;
  const CriticalPathResult all = ComputeCriticalPath(*t);
  EXPECT_EQ(names(all), (V{{"K1", 55'000}, {"K2", 10'000}}));
  ASSERT_FALSE(all.window_top_slices.empty());
  EXPECT_EQ(all.window_top_slices[0].cls, PathClass::kCompute);
  const AnalysisWindow w = ComputeAnalysisWindow(*t, /*warmup_steps=*/1);
  CriticalPathOptions o;
  o.window = &w;
  const CriticalPathResult steady = ComputeCriticalPath(*t, o);
  ASSERT_EQ(steady.window_steps, 1u);
  EXPECT_EQ(names(steady), (V{{"K1", 20'000}, {"K2", 10'000}}));

  auto c = ImportJsonText(kCopies);
  ASSERT_NE(c, nullptr);
  const CriticalPathResult r = ComputeCriticalPath(*c);
  ASSERT_EQ(r.window_top_slices.size(), 5u);
  std::vector<std::pair<std::string, PathClass>> got;
  for (const PathSliceTotal& e : r.window_top_slices) got.emplace_back(std::string(c->Str(e.name)), e.cls);
  EXPECT_EQ(got[0], std::make_pair(std::string("K1"), PathClass::kCompute));
  EXPECT_EQ(got[1], std::make_pair(std::string("Memcpy DtoH (Device -> Pageable)"), PathClass::kCopy));
  EXPECT_EQ(got[2], std::make_pair(std::string("K2"), PathClass::kCompute));
  EXPECT_EQ(r.window_top_slices[0].on_path_ns, 60'000);
  EXPECT_EQ(r.window_top_slices[1].on_path_ns, 20'000);
  EXPECT_EQ(r.window_top_slices[2].on_path_ns, 10'000);
  EXPECT_EQ(r.window_top_slices[3].on_path_ns, 2'000);
  EXPECT_EQ(r.window_top_slices[4].on_path_ns, 2'000);
  EXPECT_LT(r.window_top_slices[3].name.raw, r.window_top_slices[4].name.raw);
  const std::set<std::string> last{got[3].first, got[4].first};
  EXPECT_EQ(last, (std::set<std::string>{"aten::mm", "cudaStreamSynchronize"}));
}

// Hand-made (µs), as ROCm records stream waits: hipStreamWaitEvent with no
// event record. Step [0, 50]: K1 launched at 1 runs [10, 20] on stream 7; an
// all-reduce launched at 3 runs [10, 60] on stream 8; the wait call at 5;
// K2 launched at 7 runs [62, 80] on stream 7, which idled 42 µs though K2
// was launched. By hand, with the wait bound (all-reduce → K2), the path
// [0, 80]: K2 18, waiting for the all-reduce [60, 62] idle_sync 2, the
// all-reduce 50, its launch delay [3, 10] 7, the first launch call 1,
// idle_other 2 ([0, 1] and [2, 3]). Unbound (the old code; also without
// the wait call), the same 80 µs are K2 18, stream idle [20, 62] 42
// (idle_other, unexplained), K1 10, launch delay [1, 10] 9, idle 1: the
// all-reduce off the path.
std::string CollectiveWaitTrace(bool with_wait_call) {
  std::string j = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":50},
  {"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":1,"ts":1,"dur":1,"args":{"correlation":3}},
  {"ph":"X","cat":"cuda_runtime","name":"hipExtLaunchKernel","pid":1,"tid":1,"ts":3,"dur":1,"args":{"correlation":1}},
  {"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":1,"ts":7,"dur":1,"args":{"correlation":2}},
  {"ph":"X","cat":"kernel","name":"K1","pid":0,"tid":7,"ts":10,"dur":10,"args":{"device":0,"stream":7,"correlation":3}},
  {"ph":"X","cat":"kernel","name":"ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)","pid":0,"tid":8,"ts":10,"dur":50,"args":{"device":0,"stream":8,"correlation":1}},
  {"ph":"X","cat":"kernel","name":"K2","pid":0,"tid":7,"ts":62,"dur":18,"args":{"device":0,"stream":7,"correlation":2}})json";
  if (with_wait_call) {
    j += R"json(,
  {"ph":"X","cat":"cuda_runtime","name":"hipStreamWaitEvent","pid":1,"tid":1,"ts":5,"dur":1,"args":{"correlation":4}})json";
  }
  return j + "\n]}";
}

TEST(CriticalPathTest, HandMadeUnresolvedStreamWaitBoundToTheCollective) {
  auto t = ImportJsonText(CollectiveWaitTrace(true));
  ASSERT_NE(t, nullptr);
  CriticalPathResult r = ComputeCriticalPath(*t);
  ASSERT_EQ(r.steps.size(), 1u);
  const StepPath& p = r.steps[0];
  EXPECT_EQ(r.graph.wait_calls, 1u);
  EXPECT_EQ(r.graph.wait_calls_unresolved, 1u);
  EXPECT_EQ(r.graph.waits_bound_by_timing, 1u);
  EXPECT_EQ(r.graph.edges[static_cast<size_t>(DepKind::kStreamWait)], 1u);
  EXPECT_EQ(p.length_ns(), 80'000);
  EXPECT_EQ(PathSum(p), 80'000);
  EXPECT_EQ(On(p, PathClass::kCompute), 18'000);
  EXPECT_EQ(On(p, PathClass::kIdleSync), 2'000);
  EXPECT_EQ(On(p, PathClass::kCollective), 50'000);
  EXPECT_EQ(On(p, PathClass::kIdleHostBound), 7'000);
  EXPECT_EQ(On(p, PathClass::kRuntime), 1'000);
  EXPECT_EQ(On(p, PathClass::kIdleOther), 2'000);
  EXPECT_EQ(p.device_idle_unexplained_ns, 0);
  EXPECT_EQ(p.own_on_path_ns[static_cast<size_t>(PathClass::kCollective)], 50'000);
  // No wait call: nothing says a stream waited, nothing is bound; the idle is
  // reported as unexplained.
  auto plain = ImportJsonText(CollectiveWaitTrace(false));
  ASSERT_NE(plain, nullptr);
  CriticalPathResult u = ComputeCriticalPath(*plain);
  ASSERT_EQ(u.steps.size(), 1u);
  EXPECT_EQ(u.graph.wait_calls_unresolved, 0u);
  EXPECT_EQ(u.graph.edges[static_cast<size_t>(DepKind::kStreamWait)], 0u);
  EXPECT_EQ(On(u.steps[0], PathClass::kCollective), 0);
  EXPECT_EQ(On(u.steps[0], PathClass::kIdleOther), 43'000);
  EXPECT_EQ(u.steps[0].device_idle_unexplained_ns, 42'000);
  EXPECT_EQ(On(u.steps[0], PathClass::kCompute), 28'000);
}

// Every device-class ns on a step's path is one of own, earlier, later or
// other_rank (critical_path.h): their sum per class is by_class_ns, and the
// window's sums are the composition's.
void ExpectDeviceWorkSplitsThePath(const CriticalPathResult& r) {
  for (size_t c : {size_t{0}, size_t{1}, size_t{2}}) {
    for (const StepPath& p : r.steps) {
      EXPECT_EQ(p.own_on_path_ns[c] + p.earlier_on_path_ns[c] + p.later_on_path_ns[c] + p.other_rank_on_path_ns[c],
                p.by_class_ns[c])
          << PathClassName(static_cast<PathClass>(c)) << " rank " << p.rank << " step " << p.number;
    }
    EXPECT_EQ(r.window_own_on_path_ns[c] + r.window_earlier_on_path_ns[c] + r.window_later_on_path_ns[c] +
                  r.window_other_rank_on_path_ns[c],
              r.window_by_class_ns[c]);
  }
}

// Review 26, finding 1: device work on the path that is neither the step's
// own nor earlier steps' was in no figure. Two cases, earlier == 0 in both.
// (a) TwoRanks (above): rank 0's path runs through its own all-reduce
// [45, 75] (own, 30) and rank 1's GEMM [5, 45] (other_rank, 40). The old
// fields (own + earlier) covered 0 of the 40 µs of compute.
// (b) Hand-made (µs): step [20, 30] launches K2 at 21, which runs [40, 50];
// an unlinked kernel KX (no launching call: its step by its start, 32, in
// no step) runs [32, 40] before it on stream 7. By hand, the path [20, 50]:
// K2 10 (own), KX 8 (later: after the step began, by no step), stream idle
// [20, 32] 12 (idle_other). Compute on the path 18 = 10 + 0 + 8.
constexpr char kLaterWork[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":20,"dur":10},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":21,"dur":1,"args":{"correlation":2}},
  {"ph":"X","cat":"kernel","name":"KX","pid":0,"tid":7,"ts":32,"dur":8,"args":{"device":0,"stream":7}},
  {"ph":"X","cat":"kernel","name":"K2","pid":0,"tid":7,"ts":40,"dur":10,"args":{"device":0,"stream":7,"correlation":2}}
]})json";

TEST(CriticalPathTest, HandMadeEveryOnPathDeviceNsIsInOneColumn) {
  auto t = TwoRanks();
  ASSERT_NE(t, nullptr);
  // The multi-rank analysis's pairing (collective_pairing.h), as the session passes it.
  const CrossRankResult cross = ComputeCrossRank(*t, CollectCollectives(*t));
  ASSERT_TRUE(cross.clocks_agree);
  CriticalPathOptions o;
  o.cross = &cross;
  CriticalPathResult r = ComputeCriticalPath(*t, o);
  ASSERT_EQ(r.steps.size(), 2u);
  const StepPath& r0 = r.steps[0].rank == 0 ? r.steps[0] : r.steps[1];
  const size_t compute = static_cast<size_t>(PathClass::kCompute), coll = static_cast<size_t>(PathClass::kCollective);
  EXPECT_EQ(r0.own_on_path_ns[coll], 30'000);
  EXPECT_EQ(r0.own_on_path_ns[compute], 0);
  EXPECT_EQ(r0.earlier_on_path_ns[compute], 0);
  EXPECT_EQ(r0.later_on_path_ns[compute], 0);
  EXPECT_EQ(r0.other_rank_on_path_ns[compute], 40'000);
  ExpectDeviceWorkSplitsThePath(r);

  auto later = ImportJsonText(kLaterWork);
  ASSERT_NE(later, nullptr);
  CriticalPathResult l = ComputeCriticalPath(*later);
  ASSERT_EQ(l.steps.size(), 1u);
  const StepPath& p = l.steps[0];
  EXPECT_EQ(p.length_ns(), 30'000);
  EXPECT_EQ(p.by_class_ns[compute], 18'000);
  EXPECT_EQ(p.own_on_path_ns[compute], 10'000);
  EXPECT_EQ(p.earlier_on_path_ns[compute], 0);
  EXPECT_EQ(p.later_on_path_ns[compute], 8'000);
  EXPECT_EQ(p.other_rank_on_path_ns[compute], 0);
  EXPECT_EQ(On(p, PathClass::kIdleOther), 12'000);
  ExpectDeviceWorkSplitsThePath(l);
  // The backlog trace: own 45, earlier 20, later 0 of the 65 on the paths.
  auto backlog = ImportJsonText(kBacklog);
  ASSERT_NE(backlog, nullptr);
  ExpectDeviceWorkSplitsThePath(ComputeCriticalPath(*backlog));
}

// Review 26, finding 5: a rewalk compares launch times with the replayed
// step start, so both must be replayed times. Every slice moved 1 ms earlier
// is the same trace: the same own/earlier/later. The old code compared K1's
// measured launch (1 µs) with step 2's replayed start (-980 µs) and filed
// the 20 µs of backlog as neither own nor earlier.
TEST(CriticalPathTest, RewalkSplitsOnPathWorkOnTheReplayedTimes) {
  auto t = ImportJsonText(kBacklog);
  ASSERT_NE(t, nullptr);
  CriticalPathResult m = ComputeCriticalPath(*t);
  const size_t n = t->slices.size();
  std::vector<int64_t> start(n), end(n);
  for (uint32_t i = 0; i < n; ++i) {
    start[i] = t->slices.ts_ns[i] - 1'000'000;
    end[i] = SliceEnd(t->slices, i) - 1'000'000;
  }
  CriticalPathResult r = RewalkCriticalPath(*t, m, start, end);
  ASSERT_EQ(r.steps.size(), m.steps.size());
  for (size_t k = 0; k < m.steps.size(); ++k) {
    EXPECT_EQ(r.steps[k].start_ns, m.steps[k].start_ns - 1'000'000);
    EXPECT_EQ(r.steps[k].by_class_ns, m.steps[k].by_class_ns);
    EXPECT_EQ(r.steps[k].own_on_path_ns, m.steps[k].own_on_path_ns);
    EXPECT_EQ(r.steps[k].earlier_on_path_ns, m.steps[k].earlier_on_path_ns) << "step " << k;
    EXPECT_EQ(r.steps[k].later_on_path_ns, m.steps[k].later_on_path_ns) << "step " << k;
  }
  EXPECT_EQ(r.steps[1].earlier_on_path_ns[static_cast<size_t>(PathClass::kCompute)], 20'000);
  ExpectDeviceWorkSplitsThePath(r);
}

// Review 26, finding 4: LinkCollectiveWaits' rule 4 takes only the wait
// calls no record resolved. CollectiveWaitTrace's call at 5 µs, now with a
// CUPTI "Stream Wait Event" record (stream 9 waits for stream 8's event
// recorded at 4 µs, so K9, launched at 9 on stream 9, waits for the
// all-reduce): it is resolved, and it lies between the all-reduce's launch
// (3) and K2's (7), so the old code also bound the all-reduce to K2 by
// timing. A second, unresolved call at 40 µs comes after K2's launch and
// admits no binding. By hand: 2 calls, 1 unresolved, nothing bound by
// timing, K2 waits for nothing, K9 for the all-reduce (the record).
TEST(CriticalPathTest, HandMadeResolvedWaitCallBindsNothingByTiming) {
  std::string j = CollectiveWaitTrace(true);
  j.resize(j.size() - 3);  // "\n]}"
  j += R"json(,
  {"ph":"X","cat":"cuda_runtime","name":"cudaEventRecord","pid":1,"tid":1,"ts":4,"dur":1,"args":{"correlation":5}},
  {"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","pid":0,"tid":9,"ts":6,"dur":0,"args":{"device":0,"stream":9,"correlation":4,"wait_on_stream":8,"wait_on_cuda_event_record_corr_id":5}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":9,"dur":1,"args":{"correlation":7}},
  {"ph":"X","cat":"kernel","name":"K9","pid":0,"tid":9,"ts":61,"dur":2,"args":{"device":0,"stream":9,"correlation":7}},
  {"ph":"X","cat":"cuda_runtime","name":"hipStreamWaitEvent","pid":1,"tid":1,"ts":40,"dur":1,"args":{"correlation":6}}
]})json";
  auto t = ImportJsonText(j);
  ASSERT_NE(t, nullptr);
  CriticalPathResult r = ComputeCriticalPath(*t);
  EXPECT_EQ(r.graph.wait_calls, 2u);
  EXPECT_EQ(r.graph.wait_calls_unresolved, 1u);
  EXPECT_EQ(r.graph.waits_bound_by_timing, 0u);
  EXPECT_EQ(r.graph.wait_on[SliceNamed(*t, "K2")], kNoSlice);
  EXPECT_EQ(r.graph.wait_on[SliceNamed(*t, "K9")],
            SliceNamed(*t, "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"));
}

// Review 26, finding 9: one name rule for stream-wait calls
// (IsStreamWaitCallName), the import's: the graph counts a runtime and a
// driver call that it accepts, and not a name it does not (lower case),
// which the import does not make a sync call either. The old graph matched
// any case and counted 3.
constexpr char kWaitNames[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":50},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":1,"args":{"correlation":1}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaStreamWaitEvent","pid":1,"tid":1,"ts":3,"dur":1},
  {"ph":"X","cat":"cuda_driver","name":"cuStreamWaitEvent","pid":1,"tid":1,"ts":5,"dur":1},
  {"ph":"X","cat":"cuda_runtime","name":"my_streamwaitevent_probe","pid":1,"tid":1,"ts":7,"dur":1},
  {"ph":"X","cat":"kernel","name":"K1","pid":0,"tid":7,"ts":10,"dur":10,"args":{"device":0,"stream":7,"correlation":1}}
]})json";

TEST(CriticalPathTest, StreamWaitCallsFollowTheImportsNameRule) {
  for (std::string_view name :
       {"cudaStreamWaitEvent", "hipStreamWaitEvent", "cuStreamWaitEvent", "AscendCL@aclrtStreamWaitEvent"}) {
    EXPECT_TRUE(IsStreamWaitCallName(name)) << name;
    EXPECT_EQ(ClassifyEvent("cuda_runtime", name), EventKind::kSync) << name;
  }
  EXPECT_FALSE(IsStreamWaitCallName("my_streamwaitevent_probe"));
  EXPECT_EQ(ClassifyEvent("cuda_runtime", "my_streamwaitevent_probe"), EventKind::kRuntime);
  auto t = ImportJsonText(kWaitNames);
  ASSERT_NE(t, nullptr);
  CriticalPathResult r = ComputeCriticalPath(*t);
  EXPECT_EQ(r.graph.wait_calls, 2u);
  EXPECT_EQ(r.graph.wait_calls_unresolved, 2u);
}

// Review 26, finding 15: the unexplained stream idle counts only idle of at
// least kMinStreamIdleGapNs, measured from the later of the stream
// predecessor's end and the launch call's end. Hand-made (µs): host span
// [0, 50]; A launched [1, 2] runs [5, 20]; B launched [3, 4] runs [25, 30]
// (5 µs after A: scheduling); C launched by a long call [5, 45] runs
// [60, 70] (the stream idled [30, 60], but C was handed over at 45). By
// hand, the path [0, 70] ends with C, B and A in stream order: idle [30, 60]
// and [20, 25] are idle_other (35, and the step's own [0, 1]); unexplained: [45, 60] = 15 (15 ≥ 10), the
// 5 µs gap not. The old figure was 30 + 5 = 35.
constexpr char kSchedulingGaps[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":50},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":1,"args":{"correlation":1}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":3,"dur":1,"args":{"correlation":2}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":5,"dur":40,"args":{"correlation":3}},
  {"ph":"X","cat":"kernel","name":"A","pid":0,"tid":7,"ts":5,"dur":15,"args":{"device":0,"stream":7,"correlation":1}},
  {"ph":"X","cat":"kernel","name":"B","pid":0,"tid":7,"ts":25,"dur":5,"args":{"device":0,"stream":7,"correlation":2}},
  {"ph":"X","cat":"kernel","name":"C","pid":0,"tid":7,"ts":60,"dur":10,"args":{"device":0,"stream":7,"correlation":3}}
]})json";

TEST(CriticalPathTest, HandMadeUnexplainedIdleSkipsSchedulingGapsAndWaitsForTheLaunch) {
  auto t = ImportJsonText(kSchedulingGaps);
  ASSERT_NE(t, nullptr);
  CriticalPathResult r = ComputeCriticalPath(*t);
  ASSERT_EQ(r.steps.size(), 1u);
  const StepPath& p = r.steps[0];
  EXPECT_EQ(p.length_ns(), 70'000);
  EXPECT_EQ(On(p, PathClass::kCompute), 30'000);
  EXPECT_EQ(On(p, PathClass::kIdleOther), 36'000);     // [30, 60], [20, 25] and the step's own [0, 1]
  EXPECT_EQ(On(p, PathClass::kIdleHostBound), 4'000);  // A waits for its launch, [1, 5]
  EXPECT_EQ(p.device_idle_unexplained_ns, 15'000);
  EXPECT_EQ(r.window_device_idle_unexplained_ns, 15'000);
}

// Hand-made hand-offs (µs), one process per (rank, pid): rank 0's pid 100
// runs "forward" [0, 100] on thread 1 and "backward" [300, 400] on thread 2.
// Inside backward's gap, work also ends on rank 1's thread 3 of the same pid
// (at 250) and on rank 0's pid 200 (at 260), later than forward: neither is
// backward's process, so backward waits for forward. Rank 1's "step" [280,
// 390] waits for its own thread's "other" [0, 250]. LinkHandoffs numbers the
// processes to keep its roots at 16 bytes (mem2): the hand-off must stay
// within (rank, pid).
TEST(CriticalPathTest, HandMadeHandoffStaysInItsRankAndProcess) {
  Trace trace;
  TraceBuilder b(&trace);
  const StringId op = b.Intern("cpu_op");
  const StringId forward = b.Intern("forward"), backward = b.Intern("backward"), other = b.Intern("other");
  const StringId late = b.Intern("late"), step = b.Intern("step");
  const uint32_t t1 = b.ThreadTrack(IdValue::Num(100), IdValue::Num(1));
  const uint32_t t2 = b.ThreadTrack(IdValue::Num(100), IdValue::Num(2));
  const uint32_t t3 = b.ThreadTrack(IdValue::Num(100), IdValue::Num(3));
  const uint32_t t4 = b.ThreadTrack(IdValue::Num(100), IdValue::Num(4));
  const uint32_t t5 = b.ThreadTrack(IdValue::Num(200), IdValue::Num(5));
  for (uint32_t tr : {t1, t2, t5}) b.SetTrackRank(tr, 0);
  for (uint32_t tr : {t3, t4}) b.SetTrackRank(tr, 1);
  constexpr int64_t us = 1000;
  b.AddSlice(t1, 0, 100 * us, forward, op, kNoCorrelation, 0, 0);
  b.AddSlice(t2, 300 * us, 100 * us, backward, op, kNoCorrelation, 0, 0);
  b.AddSlice(t3, 0, 250 * us, other, op, kNoCorrelation, 0, 0);
  b.AddSlice(t4, 280 * us, 110 * us, step, op, kNoCorrelation, 0, 0);
  b.AddSlice(t5, 0, 260 * us, late, op, kNoCorrelation, 0, 0);
  ASSERT_TRUE(b.Finalize().ok());
  const DependencyGraph g = BuildDependencyGraph(trace);
  EXPECT_EQ(g.handoff[SliceNamed(trace, "backward")], SliceNamed(trace, "forward"));
  EXPECT_EQ(g.handoff[SliceNamed(trace, "step")], SliceNamed(trace, "other"));
  EXPECT_EQ(g.handoff[SliceNamed(trace, "forward")], kNoSlice);
  EXPECT_EQ(g.handoff[SliceNamed(trace, "late")], kNoSlice);
  EXPECT_EQ(g.edges[static_cast<size_t>(DepKind::kHandoff)], 2u);
}

// Hand-made (µs): a first launch that loads its kernel's code object. One
// step [0, 2100]: aten::mm [2, 2005] launches K1 in a 2,000 µs
// cudaLaunchKernel [4, 2004] (a start-up call: >= 1 ms and >= 20 x its
// name's median, 1 µs, with the device idle through it); aten::relu launches
// K2..K4 at once, which queue behind K1 on stream 7; cudaDeviceSynchronize
// [2011, 2030] waits for K4. Worked by hand, backward from 2100:
//   [2030, 2100] ProfilerStep's own time (idle_other)   70
//   [2027, 2030] the sync after K4                        3
//   [2005, 2027] K1 (10), K2 (10), K3 (1), K4 (1)        22
//   [   4, 2005] K1 waits for its launch call           2001: idle_startup,
//                as the start-up call covers 2000 of it (StartupWork::Covers,
//                the gaps' startup cause); idle_host_bound without a window
//   [   2,    4] aten::mm's own time                      2
//   [   0,    2] ProfilerStep's own time (idle_other)     2
constexpr char kFirstLaunch[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":2100},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":2,"dur":2003},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":4,"dur":2000,"args":{"correlation":1}},
  {"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":2005,"dur":5},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":2006,"dur":1,"args":{"correlation":2}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":2007,"dur":1,"args":{"correlation":3}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":2008,"dur":1,"args":{"correlation":4}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":2011,"dur":19},
  {"ph":"X","cat":"kernel","name":"K1","pid":0,"tid":7,"ts":2005,"dur":10,"args":{"device":0,"stream":7,"correlation":1}},
  {"ph":"X","cat":"kernel","name":"K2","pid":0,"tid":7,"ts":2015,"dur":10,"args":{"device":0,"stream":7,"correlation":2}},
  {"ph":"X","cat":"kernel","name":"K3","pid":0,"tid":7,"ts":2025,"dur":1,"args":{"device":0,"stream":7,"correlation":3}},
  {"ph":"X","cat":"kernel","name":"K4","pid":0,"tid":7,"ts":2026,"dur":1,"args":{"device":0,"stream":7,"correlation":4}}
]})json";

TEST(CriticalPathTest, HandMadeLaunchWaitInAStartupCallIsIdleStartup) {
  auto t = ImportJsonText(kFirstLaunch);
  ASSERT_NE(t, nullptr);
  const AnalysisWindow w = ComputeAnalysisWindow(*t);
  ASSERT_EQ(w.startup_by_rank.size(), 1u);
  EXPECT_EQ(w.startup_by_rank.begin()->second, (Intervals{{4'000, 2'004'000}}));
  CriticalPathOptions options;
  options.window = &w;
  CriticalPathResult r = ComputeCriticalPath(*t, options);
  ASSERT_EQ(r.steps.size(), 1u);
  const StepPath& p = r.steps[0];
  EXPECT_EQ(PathSum(p), 2'100'000);
  EXPECT_EQ(On(p, PathClass::kIdleStartup), 2'001'000);
  EXPECT_EQ(On(p, PathClass::kIdleHostBound), 0);
  EXPECT_EQ(On(p, PathClass::kCompute), 22'000);
  EXPECT_EQ(On(p, PathClass::kSync), 3'000);
  EXPECT_EQ(On(p, PathClass::kHostOp), 2'000);
  EXPECT_EQ(On(p, PathClass::kIdleOther), 72'000);
  // Without a window there are no start-up calls: the same wait is the host's.
  CriticalPathResult bare = ComputeCriticalPath(*t);
  ASSERT_EQ(bare.steps.size(), 1u);
  EXPECT_EQ(On(bare.steps[0], PathClass::kIdleStartup), 0);
  EXPECT_EQ(On(bare.steps[0], PathClass::kIdleHostBound), 2'001'000);
}

}  // namespace
}  // namespace aiprof
