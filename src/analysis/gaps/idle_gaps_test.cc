#include "src/analysis/gaps/idle_gaps.h"

#include <gtest/gtest.h>

#include "src/analysis/common/capture_windows.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/window/analysis_window.h"
#include "src/model/trace_builder.h"
#include "test/util/hand_made_traces.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportFixture;
using testing::ImportJsonText;

int64_t Cause(const TimelineBreakdown& tl, GapCause c) { return tl.idle_by_cause_ns[static_cast<size_t>(c)]; }

// Expected figures from src/analysis/testing/oracles/gaps_oracle.py over the
// same file (an independent reading of the JSON with Python).
TEST(IdleGapsTest, AlexnetA100MatchesOracle) {
  auto t = ImportFixture("kineto/HolisticTraceAnalysis__tests__data__critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz");
  ASSERT_NE(t, nullptr);
  GapsResult r = ComputeGaps(*t);
  EXPECT_FALSE(r.cpu_only);
  EXPECT_TRUE(r.has_launch_links);
  ASSERT_EQ(r.timelines.size(), 1u);
  const TimelineBreakdown& tl = r.timelines[0];
  EXPECT_EQ(tl.span_ns, 12920244000);
  EXPECT_EQ(tl.busy_ns, 66141000);
  EXPECT_EQ(tl.gap_count, 95u);
  EXPECT_EQ(tl.compute_ns, 10630000);
  EXPECT_EQ(tl.memcpy_ns, 55511000);
  EXPECT_EQ(tl.comm_ns, 0);
  EXPECT_EQ(Cause(tl, GapCause::kHostBound), 11952487000);
  EXPECT_EQ(Cause(tl, GapCause::kSync), 901523000);
  EXPECT_EQ(Cause(tl, GapCause::kOther), 93000);
  EXPECT_EQ(Cause(tl, GapCause::kDataLoading), 0);
  uint64_t hist = 0;
  for (uint64_t c : tl.gap_hist_count) hist += c;
  EXPECT_EQ(hist, 95u);
  ASSERT_EQ(tl.largest_gaps.size(), kLargestGapsKept);
  EXPECT_GE(tl.largest_gaps[0].end_ns - tl.largest_gaps[0].start_ns,
            tl.largest_gaps[1].end_ns - tl.largest_gaps[1].start_ns);
}

TEST(IdleGapsTest, NcclTraceMatchesOracle) {
  auto t = ImportFixture("kineto/HolisticTraceAnalysis__tests__data__nccl_parser_config__nccl_data.json.gz");
  ASSERT_NE(t, nullptr);
  GapsResult r = ComputeGaps(*t);
  ASSERT_EQ(r.timelines.size(), 1u);
  const TimelineBreakdown& tl = r.timelines[0];
  EXPECT_EQ(tl.span_ns, 660551005);
  EXPECT_EQ(tl.busy_ns, 157500014);
  EXPECT_EQ(tl.gap_count, 3480u);
  EXPECT_EQ(tl.compute_ns, 115655847);
  EXPECT_EQ(tl.comm_ns, 46876493);
  EXPECT_EQ(tl.memcpy_ns, 2653498);
  EXPECT_EQ(Cause(tl, GapCause::kHostBound), 488566065);
  EXPECT_EQ(Cause(tl, GapCause::kSync), 12484792);
  EXPECT_EQ(Cause(tl, GapCause::kOther), 2000134);
  MetricSet m;
  PublishGaps(*t, r, &m);
  EXPECT_NEAR(m.Get("comm_ratio")->value, 46876493.0 / 157500014.0, 1e-12);
  EXPECT_NEAR(m.Get("device_util")->value, 157500014.0 / 660551005.0, 1e-12);
  EXPECT_NEAR(m.Get("idle_host_bound_ratio")->value, 488566065.0 / 660551005.0, 1e-12);
  EXPECT_EQ(tl.comm_overlap_ns, 7317025);
  EXPECT_NEAR(m.Get("comm_overlap_ratio")->value, 7317025.0 / 46876493.0, 1e-12);
  EXPECT_NEAR(m.Get("comm_exposed_ratio")->value, (46876493.0 - 7317025.0) / 660551005.0, 1e-12);
}

// Hand-made: an NCCL kernel [0,10) µs on stream 8 overlapping a compute
// kernel [5,20) on stream 7: half the communication is hidden.
TEST(IdleGapsTest, HandMadeCommunicationOverlap) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float","pid":0,"tid":8,"ts":0,"dur":10,"args":{"device":0,"stream":8}},
    {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":5,"dur":15,"args":{"device":0,"stream":7}}]})");
  ASSERT_NE(t, nullptr);
  GapsResult r = ComputeGaps(*t);
  ASSERT_EQ(r.timelines.size(), 1u);
  EXPECT_EQ(r.timelines[0].comm_ns, 10000);
  EXPECT_EQ(r.timelines[0].comm_overlap_ns, 5000);
  EXPECT_EQ(r.timelines[0].comm_exposed_ns(), 5000);  // the report's breakdown bar reads it (it subtracted)
  MetricSet m;
  PublishGaps(*t, r, &m);
  EXPECT_NEAR(m.Get("comm_overlap_ratio")->value, 0.5, 1e-12);
  EXPECT_NEAR(m.Get("comm_exposed_ratio")->value, 5.0 / 20, 1e-12);
  EXPECT_NEAR(m.Get("comm_ratio")->value, 10.0 / 20, 1e-12);
}

// kDeviceBehindWithCollectivesTrace (test/util/hand_made_traces.h, figures
// by hand there): the device's window is [20, 50) (two periods). Each period
// holds 5 us of exposed all-reduce and no idle: comm_exposed_ns = 10 / 2 =
// 5 us per step = 1/3 of the 15 us step. The old code measured the host
// spans [0, 30): 5 us of all-reduce (15-20) and 5 us of idle (0-5) over 3
// steps, 1.67 us each, against the 15 us step.
TEST(IdleGapsTest, DeviceBehindIsMeasuredOverTheDevicePeriods) {
  auto t = ImportJsonText(testing::kDeviceBehindWithCollectivesTrace);
  ASSERT_NE(t, nullptr);
  const AnalysisWindow w = ComputeAnalysisWindow(*t);
  ASSERT_TRUE(w.device_behind());
  EXPECT_NEAR(w.base_ns, 15'000, 0.5);
  EXPECT_EQ(w.periods, 2u);
  ASSERT_EQ(w.device_intervals.size(), 1u);
  EXPECT_EQ(w.device_intervals[0], (std::pair<int64_t, int64_t>{20'000, 50'000}));
  GapsOptions options;
  options.window = &w;
  const GapsResult r = ComputeGaps(*t, options);
  MetricSet m;
  PublishGapImpacts(r, w, &m);
  EXPECT_NEAR(m.Get("comm_exposed_ns")->value, 5'000, 0.5);
  EXPECT_NEAR(m.Get("idle_other_ns")->value + m.Get("idle_host_bound_ns")->value + m.Get("idle_sync_ns")->value +
                  m.Get("data_loading_wait_ns")->value,
              0, 0.5);
  // The consumers: gemm 10 us per period on the device (the old code: 20 us
  // of it in the host spans over 3 steps).
  PublishConsumers(*t, w, &m);
  double gemm = -1;
  for (const auto& c : m.consumers()) {
    if (c.name == "gemm") gemm = c.ns;
  }
  EXPECT_NEAR(gemm, 10'000, 0.5);
}

TEST(IdleGapsTest, CpuOnlyUsesMainThreadOps) {
  auto t = ImportFixture("torch-cpu/convnet_bs8_contiguous.kineto.json");
  ASSERT_NE(t, nullptr);
  GapsResult r = ComputeGaps(*t);
  EXPECT_TRUE(r.cpu_only);
  ASSERT_EQ(r.timelines.size(), 1u);
  EXPECT_EQ(r.timelines[0].span_ns, 179169000);
  EXPECT_EQ(r.timelines[0].busy_ns, 171274000);
  EXPECT_EQ(r.timelines[0].gap_count, 215u);
  EXPECT_EQ(r.timelines[0].idle_by_cause_ns[static_cast<size_t>(GapCause::kOther)], 7895000);
  MetricSet m;
  PublishGaps(*t, r, &m);
  EXPECT_NEAR(m.Get("device_util")->value, 171274000.0 / 179169000.0, 1e-12);
  EXPECT_EQ(m.Get("idle_host_bound_ratio"), nullptr);
  EXPECT_TRUE(m.UnavailableReason("idle_host_bound_ratio").has_value());
  EXPECT_TRUE(m.UnavailableReason("memcpy_ratio").has_value());
}

// Hand-made: kernels K1 [0,10) K2 [20,30) K3 [40,50) K4 [60,70) µs on one
// device. Gap 1 (10..20): launch of K2 at 12 ≥ 10 → host_bound. Gap 2
// (30..40): launch of K3 at 29 < 30 and a cudaStreamSynchronize at 31..39
// overlaps → sync. Gap 3 (50..60): launch at 49 < 50, no sync → other
// (one µs before the gap start: the other side of the host-bound test).
// Gap 4 (60..?) none. A DataLoader span overlapping gap 1 would win: tested
// separately below.
constexpr char kFourKernels[] = R"({"traceEvents":[
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0,"dur":1,"args":{"correlation":1}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":1,"args":{"correlation":2}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":29,"dur":1,"args":{"correlation":3}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":31,"dur":8,"args":{}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":49,"dur":1,"args":{"correlation":4}},
  DL
  {"ph":"X","cat":"kernel","name":"K1","pid":0,"tid":7,"ts":0,"dur":10,"args":{"device":0,"stream":7,"correlation":1}},
  {"ph":"X","cat":"kernel","name":"K2","pid":0,"tid":7,"ts":20,"dur":10,"args":{"device":0,"stream":7,"correlation":2}},
  {"ph":"X","cat":"kernel","name":"K3","pid":0,"tid":7,"ts":40,"dur":10,"args":{"device":0,"stream":7,"correlation":3}},
  {"ph":"X","cat":"kernel","name":"K4","pid":0,"tid":7,"ts":60,"dur":10,"args":{"device":0,"stream":7,"correlation":4}}
]})";

std::string WithDataLoader(bool on) {
  std::string s = kFourKernels;
  std::string dl = on ? R"({"ph":"X","cat":"user_annotation","name":"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__","pid":1,"tid":1,"ts":14,"dur":2},)"
                      : "";
  return s.replace(s.find("DL"), 2, dl);
}

// aiprof's own work in the program (the capture's torch-hook export,
// category aiprof_overhead) is not the program's idle. Hand-made, by hand: a
// CPU-only main thread with ops [0, 6), [10, 16), [20, 26) ms and an export
// [16.5, 19.5) ms: span 26 ms, busy 18 ms; the gap [16, 20) becomes
// [16, 16.5) and [19.5, 20) (2 gaps of 0.5 ms), so idle 8 - 3 = 5 ms of
// "other", aiprof's own 3 ms, and device_util 18 / (26 - 3). It read idle
// 8 ms (3 of them the export's) and 18 / 26 before.
TEST(IdleGapsTest, AiprofOwnWorkIsNeitherBusyNorIdle) {
  auto t = ImportJsonText(R"json({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":6000},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10000,"dur":6000},
    {"ph":"X","cat":"aiprof_overhead","name":"aiprof::torch_export","pid":1,"tid":1,"ts":16500,"dur":3000},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":20000,"dur":6000}
  ]})json");
  ASSERT_NE(t, nullptr);
  GapsOptions options;
  options.keep_all_gaps = true;
  GapsResult r = ComputeGaps(*t, options);
  ASSERT_TRUE(r.cpu_only);
  ASSERT_EQ(r.timelines.size(), 1u);
  const TimelineBreakdown& tl = r.timelines[0];
  EXPECT_EQ(tl.span_ns, 26'000'000);
  EXPECT_EQ(tl.busy_ns, 18'000'000);
  EXPECT_EQ(tl.aiprof_overhead_ns, 3'000'000);
  EXPECT_EQ(tl.idle_ns, 5'000'000);
  EXPECT_EQ(Cause(tl, GapCause::kOther), 5'000'000);
  EXPECT_EQ(tl.gap_count, 3u);
  ASSERT_EQ(tl.gaps.size(), 3u);
  EXPECT_EQ(tl.gaps[1].start_ns, 16'000'000);
  EXPECT_EQ(tl.gaps[1].end_ns, 16'500'000);
  EXPECT_EQ(tl.gaps[2].start_ns, 19'500'000);
  EXPECT_EQ(tl.gaps[2].end_ns, 20'000'000);
  MetricSet m;
  PublishGaps(*t, r, &m);
  ASSERT_NE(m.Get("device_util"), nullptr);
  EXPECT_NEAR(m.Get("device_util")->value, 18.0 / 23.0, 1e-12);
  EXPECT_NEAR(m.Get("device_idle_ratio")->value, 5.0 / 23.0, 1e-12);
}

// A CPU trace that merges a DataLoader worker profiling itself (another pid,
// as fresh's loader_pids): the trainer (pid 1) runs three 10 ms
// ProfilerSteps with a 2 ms op each (busy 6 ms, span 22 ms); the worker
// (pid 2) is busier, 5 ops of 5 ms. By hand: the main thread is the
// trainer's, the thread holding the steps (busy 6 ms, idle 16 ms); it was
// the worker's (busy 25 ms). Without the steps, the busiest thread stays.
std::string MergedLoaderTrace(bool steps) {
  std::string ev;
  for (int k = 0; k < 3; ++k) {
    if (steps) {
      ev += R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#)" + std::to_string(k + 1) +
            R"(","pid":1,"tid":1,"ts":)" + std::to_string(10000 * k) + R"(,"dur":10000},)";
    }
    ev += R"({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":)" + std::to_string(10000 * k + 10) +
          R"(,"dur":2000},)";
  }
  for (int k = 0; k < 5; ++k) {
    ev += R"({"ph":"X","cat":"cpu_op","name":"aten::full","pid":2,"tid":2,"ts":)" + std::to_string(5500 * k) +
          R"(,"dur":5000})" + (k < 4 ? "," : "");
  }
  return R"({"traceEvents":[)" + ev + "]}";
}

TEST(IdleGapsTest, CpuMainThreadIsTheThreadHoldingTheSteps) {
  auto t = ImportJsonText(MergedLoaderTrace(true));
  ASSERT_NE(t, nullptr);
  GapsResult r = ComputeGaps(*t);
  ASSERT_TRUE(r.cpu_only);
  ASSERT_EQ(r.timelines.size(), 1u);
  EXPECT_EQ(r.timelines[0].busy_ns, 6'000'000);
  EXPECT_EQ(r.timelines[0].track, static_cast<uint32_t>(t->steps.track[0]));
  auto bare = ImportJsonText(MergedLoaderTrace(false));
  ASSERT_NE(bare, nullptr);
  ASSERT_EQ(FindSteps(*bare).steps.size(), 0u);
  GapsResult b = ComputeGaps(*bare);
  ASSERT_EQ(b.timelines.size(), 1u);
  EXPECT_EQ(b.timelines[0].busy_ns, 25'000'000);
}

TEST(IdleGapsTest, HandMadeCausesBothSidesOfEachTest) {
  auto t = ImportJsonText(WithDataLoader(false));
  ASSERT_NE(t, nullptr);
  GapsResult r = ComputeGaps(*t);
  ASSERT_EQ(r.timelines.size(), 1u);
  const TimelineBreakdown& tl = r.timelines[0];
  EXPECT_EQ(tl.gap_count, 3u);
  EXPECT_EQ(tl.span_ns, 70000);
  EXPECT_EQ(tl.busy_ns, 40000);
  EXPECT_EQ(Cause(tl, GapCause::kHostBound), 10000);
  EXPECT_EQ(Cause(tl, GapCause::kSync), 10000);
  EXPECT_EQ(Cause(tl, GapCause::kOther), 10000);
  EXPECT_EQ(Cause(tl, GapCause::kDataLoading), 0);
  EXPECT_EQ(tl.gap_hist_count[2], 3u);  // 10 µs gaps land in [10 µs, 100 µs)
  MetricSet m;
  PublishGaps(*t, r, &m);
  EXPECT_NEAR(m.Get("idle_host_bound_ratio")->value, 10.0 / 70, 1e-12);
  EXPECT_NEAR(m.Get("idle_sync_ratio")->value, 10.0 / 70, 1e-12);
  EXPECT_NEAR(m.Get("data_loading_ratio")->value, 0, 1e-12);
  EXPECT_FALSE(m.Evidence("host_bound").empty());
}

TEST(IdleGapsTest, HandMadeDataLoaderTakesPrecedence) {
  auto t = ImportJsonText(WithDataLoader(true));
  ASSERT_NE(t, nullptr);
  GapsResult r = ComputeGaps(*t);
  const TimelineBreakdown& tl = r.timelines[0];
  EXPECT_EQ(Cause(tl, GapCause::kDataLoading), 10000);
  EXPECT_EQ(Cause(tl, GapCause::kHostBound), 0);
}

TEST(IdleGapsTest, NoLaunchLinksMakesHostBoundUnavailable) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"kernel","name":"K1","pid":0,"tid":7,"ts":0,"dur":10,"args":{"device":0,"stream":7}},
    {"ph":"X","cat":"kernel","name":"K2","pid":0,"tid":7,"ts":20,"dur":10,"args":{"device":0,"stream":7}}]})");
  ASSERT_NE(t, nullptr);
  MetricSet m;
  PublishGaps(*t, ComputeGaps(*t), &m);
  EXPECT_EQ(m.Get("idle_host_bound_ratio"), nullptr);
  EXPECT_TRUE(m.UnavailableReason("idle_host_bound_ratio").has_value());
  EXPECT_NEAR(m.Get("device_idle_ratio")->value, 10.0 / 30, 1e-12);
}

// keep_all_gaps: every gap, in time order, whose lengths and causes sum to
// the timeline's totals; without it none are kept.
TEST(IdleGapsTest, KeepAllGapsListsEveryGap) {
  auto t = ImportFixture("kineto/HolisticTraceAnalysis__tests__data__critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz");
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(ComputeGaps(*t).timelines[0].gaps.empty());
  GapsOptions options;
  options.keep_all_gaps = true;
  GapsResult r = ComputeGaps(*t, options);
  ASSERT_EQ(r.timelines.size(), 1u);
  const TimelineBreakdown& tl = r.timelines[0];
  ASSERT_EQ(tl.gaps.size(), tl.gap_count);
  std::array<int64_t, kGapCauseCount> by_cause{};
  int64_t total = 0;
  for (size_t i = 0; i < tl.gaps.size(); ++i) {
    if (i > 0) {
      EXPECT_GE(tl.gaps[i].start_ns, tl.gaps[i - 1].end_ns);
    }
    by_cause[static_cast<size_t>(tl.gaps[i].cause)] += tl.gaps[i].end_ns - tl.gaps[i].start_ns;
    total += tl.gaps[i].end_ns - tl.gaps[i].start_ns;
  }
  EXPECT_EQ(total, tl.idle_ns);
  EXPECT_EQ(by_cause, tl.idle_by_cause_ns);
}

}  // namespace
}  // namespace aiprof

namespace aiprof {
namespace {

// Hand-made: two kernels with a 1 ms idle gap between them; the host thread
// is sampled 5 times, 4 of them inside the gap (3 in load_batch, 1 in decode).
TEST(IdleGapsTest, HostSamplesInsideGapsAreItsEvidence) {
  Trace t;
  TraceBuilder b(&t);
  uint32_t stream = b.ThreadTrack(IdValue::Str(b.Intern("GPU 0")), IdValue::Num(7));
  b.SetTrackRole(stream, TrackKind::kDeviceStream, Layer::kDevice, 0);
  StringId kernel = b.Intern("kernel");
  b.AddSlice(stream, 0, 100'000, b.Intern("gemm"), kernel, kNoCorrelation, b.ArgCursor(), 0);
  b.AddSlice(stream, 1'100'000, 100'000, b.Intern("relu"), kernel, kNoCorrelation, b.ArgCursor(), 0);
  uint32_t host = b.ThreadTrack(IdValue::Num(10), IdValue::Num(10));
  b.SetTrackRole(host, TrackKind::kThread, Layer::kHost, kHostDevice);
  StringId module = b.Intern("/usr/bin/app");
  uint32_t main_fn = b.InternCallsite(kNoCallsite, b.Intern("main"), module, FrameKind::kNative);
  uint32_t load = b.InternCallsite(main_fn, b.Intern("load_batch"), module, FrameKind::kNative);
  uint32_t decode = b.InternCallsite(main_fn, b.Intern("decode"), module, FrameKind::kNative);
  b.AddStackSample(host, 50'000, decode, 1'000'000);  // device busy: not evidence
  b.AddStackSample(host, 200'000, load, 1'000'000);
  b.AddStackSample(host, 300'000, load, 1'000'000);
  b.AddStackSample(host, 400'000, decode, 1'000'000);
  b.AddStackSample(host, 1'099'999, load, 1'000'000);
  b.AddStackSample(host, 1'100'000, decode, 1'000'000);  // the gap has ended
  ASSERT_TRUE(b.Finalize().ok());
  GapsResult r = ComputeGaps(t);
  ASSERT_EQ(r.timelines.size(), 1u);
  ASSERT_EQ(r.timelines[0].largest_gaps.size(), 1u);
  const Gap& g = r.timelines[0].largest_gaps[0];
  EXPECT_EQ(g.start_ns, 100'000);
  EXPECT_EQ(g.end_ns, 1'100'000);
  EXPECT_EQ(g.host_samples, 4u);
  ASSERT_EQ(g.top_host_frames.size(), 2u);
  EXPECT_EQ(t.Str(g.top_host_frames[0].first), "load_batch");
  EXPECT_EQ(g.top_host_frames[0].second, 3u);
  EXPECT_EQ(t.Str(g.top_host_frames[1].first), "decode");
  EXPECT_EQ(g.top_host_frames[1].second, 1u);
  MetricSet m;
  PublishGaps(t, r, &m);
  ASSERT_EQ(m.Evidence("host_samples_in_gaps").size(), 1u);
  EXPECT_NE(m.Evidence("host_samples_in_gaps")[0].find("4 host samples in the gap, top leaf frames: load_batch (75%), "
                                                       "decode (25%)"),
            std::string::npos)
      << m.Evidence("host_samples_in_gaps")[0];
}

}  // namespace
}  // namespace aiprof

namespace aiprof {
namespace {

using testing::ImportFixture;
using testing::ImportJsonText;

int64_t WindowIdle(const TimelineBreakdown& tl, GapCause c) {
  return tl.window_idle_by_cause_ns[static_cast<size_t>(c)];
}

// Every window nanosecond of a timeline is busy or idle by one cause.
void ExpectWindowAddsUp(const TimelineBreakdown& tl, int64_t window_ns) {
  int64_t idle = 0;
  for (int64_t v : tl.window_idle_by_cause_ns) idle += v;
  EXPECT_EQ(tl.window_busy_ns + idle, window_ns) << "rank " << tl.rank << " device " << tl.device;
}

// Hand-made (µs): steps ProfilerStep#1 [0,100) and #2 [100,200) on the host;
// kernels K1 [30,60) K2 [70,80) K3 [110,150) launched at 29, 65 and 75.
// Window [0,200): busy 30 + 10 + 40 = 80; gaps 60..70 host_bound (launch
// 65 ≥ 60) and 80..110 other (launch 75 < 80, no loader, no sync), 10 + 30.
// Idle before K1, 0..30, and after K3, 150..200, are not gaps but are window
// idle: with LEAD a DataLoader span [2,28) makes the leading 30 data_loading
// (without it: K1's launch at 29 ≥ 0, host_bound); with TRAIL a
// cudaDeviceSynchronize [152,190) makes the trailing 50 sync (without it:
// no next kernel, so other).
constexpr char kTwoSteps[] = R"({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":100,"dur":100},
  LEAD
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":29,"dur":1,"args":{"correlation":1}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":65,"dur":1,"args":{"correlation":2}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":75,"dur":1,"args":{"correlation":3}},
  TRAIL
  {"ph":"X","cat":"kernel","name":"K1","pid":0,"tid":7,"ts":30,"dur":30,"args":{"device":0,"stream":7,"correlation":1}},
  {"ph":"X","cat":"kernel","name":"K2","pid":0,"tid":7,"ts":70,"dur":10,"args":{"device":0,"stream":7,"correlation":2}},
  {"ph":"X","cat":"kernel","name":"K3","pid":0,"tid":7,"ts":110,"dur":40,"args":{"device":0,"stream":7,"correlation":3}}
]})";

std::string TwoSteps(bool loader, bool sync) {
  std::string s = kTwoSteps;
  s.replace(
      s.find("LEAD"), 4,
      loader
          ? R"({"ph":"X","cat":"user_annotation","name":"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__","pid":1,"tid":1,"ts":2,"dur":26},)"
          : "");
  s.replace(s.find("TRAIL"), 5,
            sync
                ? R"({"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":152,"dur":38},)"
                : "");
  return s;
}

struct WindowedGaps {
  AnalysisWindow window;
  GapsResult gaps;
  MetricSet metrics;
};

WindowedGaps ComputeWindowed(const Trace& t, int warmup_steps) {
  WindowedGaps out;
  out.window = ComputeAnalysisWindow(t, warmup_steps);
  GapsOptions options;
  options.window = &out.window;
  out.gaps = ComputeGaps(t, options);
  PublishGapImpacts(out.gaps, out.window, &out.metrics);
  return out;
}

TEST(IdleGapsTest, HandMadeWindowIdleBeforeTheFirstAndAfterTheLastActivity) {
  auto t = ImportJsonText(TwoSteps(/*loader=*/true, /*sync=*/true));
  ASSERT_NE(t, nullptr);
  WindowedGaps r = ComputeWindowed(*t, 0);
  ASSERT_EQ(r.window.steps, 2u);
  ASSERT_EQ(r.gaps.timelines.size(), 1u);
  const TimelineBreakdown& tl = r.gaps.timelines[0];
  EXPECT_EQ(tl.window_busy_ns, 80'000);
  EXPECT_EQ(WindowIdle(tl, GapCause::kDataLoading), 30'000);  // leading 0..30
  EXPECT_EQ(WindowIdle(tl, GapCause::kSync), 50'000);         // trailing 150..200
  EXPECT_EQ(WindowIdle(tl, GapCause::kHostBound), 10'000);    // gap 60..70
  EXPECT_EQ(WindowIdle(tl, GapCause::kOther), 30'000);        // gap 80..110
  ExpectWindowAddsUp(tl, 200'000);
  // The edges are window idle only: the gaps (between activities) stay two.
  EXPECT_EQ(tl.gap_count, 2u);
  EXPECT_EQ(tl.span_ns, 120'000);
  EXPECT_EQ(tl.idle_ns, 40'000);
  EXPECT_EQ(Cause(tl, GapCause::kDataLoading), 0);
  EXPECT_EQ(Cause(tl, GapCause::kSync), 0);
  // Per step: the window totals / 2 steps.
  EXPECT_DOUBLE_EQ(r.metrics.Get("data_loading_wait_ns")->value, 15'000);
  EXPECT_DOUBLE_EQ(r.metrics.Get("idle_sync_ns")->value, 25'000);
  EXPECT_DOUBLE_EQ(r.metrics.Get("idle_host_bound_ns")->value, 5'000);
  EXPECT_DOUBLE_EQ(r.metrics.Get("idle_other_ns")->value, 15'000);
}

TEST(IdleGapsTest, HandMadeEdgeIdleWithoutLoaderOrSync) {
  auto t = ImportJsonText(TwoSteps(/*loader=*/false, /*sync=*/false));
  ASSERT_NE(t, nullptr);
  WindowedGaps r = ComputeWindowed(*t, 0);
  ASSERT_EQ(r.gaps.timelines.size(), 1u);
  const TimelineBreakdown& tl = r.gaps.timelines[0];
  EXPECT_EQ(WindowIdle(tl, GapCause::kDataLoading), 0);
  EXPECT_EQ(WindowIdle(tl, GapCause::kSync), 0);
  EXPECT_EQ(WindowIdle(tl, GapCause::kHostBound), 30'000 + 10'000);  // K1 launched at 29 ≥ 0; gap 60..70
  EXPECT_EQ(WindowIdle(tl, GapCause::kOther), 30'000 + 50'000);      // gap 80..110; trailing: no next kernel
  ExpectWindowAddsUp(tl, 200'000);
}

// An edge names a host span's cause only when the span covers at least half
// of it: a 2 µs sync in the 50 µs trailing edge leaves it "other" (on
// triton_example a 16 µs cudaDeviceSynchronize in a 13.3 s tail made the
// whole step sync-bound).
TEST(IdleGapsTest, HandMadeShortSyncDoesNotNameALongEdge) {
  std::string text = TwoSteps(/*loader=*/false, /*sync=*/true);
  const std::string long_sync = R"("ts":152,"dur":38)";
  text.replace(text.find(long_sync), long_sync.size(), R"("ts":152,"dur":2)");
  auto t = ImportJsonText(text);
  ASSERT_NE(t, nullptr);
  WindowedGaps r = ComputeWindowed(*t, 0);
  ASSERT_EQ(r.gaps.timelines.size(), 1u);
  const TimelineBreakdown& tl = r.gaps.timelines[0];
  EXPECT_EQ(WindowIdle(tl, GapCause::kSync), 0);
  EXPECT_EQ(WindowIdle(tl, GapCause::kOther), 30'000 + 50'000);
  ExpectWindowAddsUp(tl, 200'000);
}

// Only the window's part of an edge counts: with step 1 as warm-up the window
// is [100,200): K1 and K2 lie before it (no leading idle), 10 µs of the gap
// 80..110, K3's 40 busy, the trailing 50.
TEST(IdleGapsTest, HandMadeEdgeIdleIsClippedToTheWindow) {
  auto t = ImportJsonText(TwoSteps(/*loader=*/true, /*sync=*/false));
  ASSERT_NE(t, nullptr);
  WindowedGaps r = ComputeWindowed(*t, 1);
  ASSERT_EQ(r.window.steps, 1u);
  const TimelineBreakdown& tl = r.gaps.timelines[0];
  EXPECT_EQ(tl.window_busy_ns, 40'000);
  EXPECT_EQ(WindowIdle(tl, GapCause::kDataLoading), 0);
  EXPECT_EQ(WindowIdle(tl, GapCause::kHostBound), 0);
  EXPECT_EQ(WindowIdle(tl, GapCause::kOther), 10'000 + 50'000);
  ExpectWindowAddsUp(tl, 100'000);
}

// Without steps the window is the trace (minus start-up): its ends are the
// capture's, so only the gaps count. The same kernels with the step
// annotations renamed (no steps): window [0,200) = the trace's extent; gaps
// 60..70 host_bound and 80..110 other; busy 80 = busy + idle of the span
// [30,150).
TEST(IdleGapsTest, HandMadePerTraceWindowCountsNoEdges) {
  std::string json = TwoSteps(/*loader=*/true, /*sync=*/true);
  for (size_t at; (at = json.find("ProfilerStep#")) != std::string::npos;) json.replace(at, 13, "annotation ");
  auto t = ImportJsonText(json);
  ASSERT_NE(t, nullptr);
  WindowedGaps r = ComputeWindowed(*t, 0);
  ASSERT_EQ(r.window.steps, 0u);
  const TimelineBreakdown& tl = r.gaps.timelines[0];
  EXPECT_EQ(WindowIdle(tl, GapCause::kDataLoading), 0);
  EXPECT_EQ(WindowIdle(tl, GapCause::kSync), 0);
  EXPECT_EQ(WindowIdle(tl, GapCause::kHostBound), 10'000);
  EXPECT_EQ(WindowIdle(tl, GapCause::kOther), 30'000);
  ExpectWindowAddsUp(tl, 120'000);
}

// Device utilisation is one figure on one base (GapsResult::device_util,
// the metric device_util, the report's headline): with steps, the busy share
// of the steady steps' wall time. By hand on TwoSteps: steps [0,100) and
// [100,200) µs, kernels [30,60), [70,80), [110,150): busy 80 of 200 µs = 0.4
// (the metric read 80 / the 120 µs span = 0.667 before, the report 0.4);
// with step 1 as warm-up, 40 of [100,200) = 0.4; without steps, of the span:
// 80 / 120.
TEST(IdleGapsTest, HandMadeDeviceUtilIsOfTheSteadyStepsElseOfTheSpan) {
  auto t = ImportJsonText(TwoSteps(/*loader=*/false, /*sync=*/false));
  ASSERT_NE(t, nullptr);
  WindowedGaps r = ComputeWindowed(*t, 0);
  EXPECT_EQ(r.gaps.device_util_base, UtilBase::kSteadySteps);
  EXPECT_NEAR(r.gaps.device_util, 80.0 / 200.0, 1e-12);
  PublishGaps(*t, r.gaps, &r.metrics);
  ASSERT_NE(r.metrics.Get("device_util"), nullptr);
  EXPECT_NEAR(r.metrics.Get("device_util")->value, 80.0 / 200.0, 1e-12);
  EXPECT_NEAR(r.metrics.Get("device_idle_ratio")->value, 120.0 / 200.0, 1e-12);

  WindowedGaps warm = ComputeWindowed(*t, 1);
  EXPECT_EQ(warm.gaps.device_util_base, UtilBase::kSteadySteps);
  EXPECT_NEAR(warm.gaps.device_util, 40.0 / 100.0, 1e-12);

  std::string json = TwoSteps(/*loader=*/false, /*sync=*/false);
  for (size_t at; (at = json.find("ProfilerStep#")) != std::string::npos;) json.replace(at, 13, "annotation ");
  auto no_steps = ImportJsonText(json);
  ASSERT_NE(no_steps, nullptr);
  WindowedGaps span = ComputeWindowed(*no_steps, 0);
  EXPECT_EQ(span.gaps.device_util_base, UtilBase::kSpan);
  EXPECT_NEAR(span.gaps.device_util, 80.0 / 120.0, 1e-12);
  PublishGaps(*no_steps, span.gaps, &span.metrics);
  EXPECT_NEAR(span.metrics.Get("device_util")->value, 80.0 / 120.0, 1e-12);
  // Without a window (ComputeGaps alone): of the span, as before.
  EXPECT_EQ(ComputeGaps(*t).device_util_base, UtilBase::kSpan);
  EXPECT_NEAR(ComputeGaps(*t).device_util, 80.0 / 120.0, 1e-12);
}

// Hand-made, two ranks whose clocks differ by 1 ms: each has steps [0,100)
// and [100,200) µs of its own clock and kernels [10,50) and [110,150). Each
// rank's device is measured over its own steps: 80 busy, 120 idle (leading
// 10, gap 60, trailing 50; no launch links, so other). Over the union of both
// ranks' steps rank 0's trailing idle would also take rank 1's 200 µs.
TEST(IdleGapsTest, HandMadeEachRankIsMeasuredOverItsOwnSteps) {
  Trace t;
  TraceBuilder b(&t);
  StringId kernel = b.Intern("kernel"), annotation = b.Intern("user_annotation");
  for (int32_t rank = 0; rank < 2; ++rank) {
    const int64_t t0 = rank * 1'000'000;
    uint32_t host = b.ThreadTrack(IdValue::Num(10 + rank), IdValue::Num(10 + rank));
    b.SetTrackRole(host, TrackKind::kThread, Layer::kHost, kHostDevice);
    b.SetTrackRank(host, rank);
    uint32_t stream = b.ThreadTrack(IdValue::Num(20 + rank), IdValue::Num(7));
    b.SetTrackRole(stream, TrackKind::kDeviceStream, Layer::kDevice, 0);
    b.SetTrackRank(stream, rank);
    b.AddSlice(host, t0, 100'000, b.Intern("ProfilerStep#1"), annotation, kNoCorrelation, b.ArgCursor(), 0);
    b.AddSlice(host, t0 + 100'000, 100'000, b.Intern("ProfilerStep#2"), annotation, kNoCorrelation, b.ArgCursor(), 0);
    b.AddSlice(stream, t0 + 10'000, 40'000, b.Intern("gemm"), kernel, kNoCorrelation, b.ArgCursor(), 0);
    b.AddSlice(stream, t0 + 110'000, 40'000, b.Intern("relu"), kernel, kNoCorrelation, b.ArgCursor(), 0);
  }
  ASSERT_TRUE(b.Finalize().ok());
  WindowedGaps r = ComputeWindowed(t, 0);
  ASSERT_EQ(r.window.steps, 4u);
  ASSERT_EQ(r.gaps.timelines.size(), 2u);
  for (const TimelineBreakdown& tl : r.gaps.timelines) {
    EXPECT_EQ(tl.window_busy_ns, 80'000);
    EXPECT_EQ(WindowIdle(tl, GapCause::kOther), 120'000) << "rank " << tl.rank;
    ExpectWindowAddsUp(tl, 200'000);
  }
  EXPECT_DOUBLE_EQ(r.metrics.Get("idle_other_ns")->value, 2 * 120'000 / 4.0);
}

// The real ResNet50 sample (num_workers=0, 6 steady steps): ProfilerStep#5's
// device starts 69.076 ms after the step begins, waiting for its DataLoader
// fetch. Expected figures from src/analysis/testing/oracles/gaps_oracle.py
// --steps over the same file (a Python reading of the JSON: idle intervals of
// the device, each classified whole, clipped to the ProfilerStep spans):
// data loading 357.460 ms in all (288.384 ms of gaps + the 69.076 ms leading
// wait), host-bound 94.891, sync 2.641, other 6.342; busy 587.642 of the
// steps' 1048.976 ms.
TEST(IdleGapsTest, Resnet50WindowIdleCountsTheLeadingDataLoaderWait) {
  auto t = ImportFixture(
      "kineto/kineto__tb_plugin__samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz");
  ASSERT_NE(t, nullptr);
  WindowedGaps r = ComputeWindowed(*t, -1);
  ASSERT_EQ(r.window.steps, 6u);
  ASSERT_EQ(r.gaps.timelines.size(), 1u);
  const TimelineBreakdown& tl = r.gaps.timelines[0];
  EXPECT_EQ(WindowIdle(tl, GapCause::kDataLoading), 357'460'000);
  EXPECT_EQ(WindowIdle(tl, GapCause::kHostBound), 94'891'000);
  EXPECT_EQ(WindowIdle(tl, GapCause::kSync), 2'641'000);
  EXPECT_EQ(WindowIdle(tl, GapCause::kOther), 6'342'000);
  EXPECT_EQ(tl.window_busy_ns, 587'642'000);
  ExpectWindowAddsUp(tl, 1'048'976'000);
  EXPECT_NEAR(r.metrics.Get("data_loading_wait_ns")->value, 357'460'000 / 6.0, 1);  // ≈ 59.577 ms per step
}

}  // namespace
}  // namespace aiprof

namespace aiprof {
namespace {

// TraceLens's SGLang prefill trace: a 493 ms hipMemcpyWithStream (a
// synchronous copy; its name's median call is 20 us) overlaps the device's
// idle. The host waits in it as in a sync, so that idle is sync time, as
// the attribution and the critical path count it; it read as host-bound
// launch time (494.48 ms) and drew "capture the step in a CUDA graph".
// Expected figures from src/analysis/testing/oracles/gaps_oracle.py.
TEST(IdleGapsTest, ASynchronousCopyCallIsSyncIdle) {
  auto t = ImportFixture("tracelens/inference__sglang_prefilldecode__sglang_Qwen3-8B_prefilldecode.json.gz");
  ASSERT_NE(t, nullptr);
  GapsResult r = ComputeGaps(*t);
  ASSERT_EQ(r.timelines.size(), 1u);
  const TimelineBreakdown& tl = r.timelines[0];
  EXPECT_EQ(tl.span_ns, 987288887);
  EXPECT_EQ(tl.busy_ns, 492806877);
  EXPECT_EQ(Cause(tl, GapCause::kSync), 494007177);
  EXPECT_EQ(Cause(tl, GapCause::kHostBound), 474320);
  EXPECT_EQ(Cause(tl, GapCause::kOther), 513);
}

// Start-up idle (window/startup_work.h). Hand-made, by hand: K1 [0, 10) and K2
// [30, 40) us; K2's launch call begins at 28, after the gap [10, 30) began
// (host_bound by itself). The host opens a stream capture at 13 (the end of
// its 2 us cudaStreamBeginCapture) and closes it at END: a window of 10 us
// covers half the 20 us gap, startup; 9.999 us is under half, host_bound.
std::string CaptureTrace(const char* end_capture_ts) {
  std::string s = R"({"traceEvents":[
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0,"dur":1,"args":{"correlation":1}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaStreamBeginCapture","pid":1,"tid":1,"ts":11,"dur":2,"args":{}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":14,"dur":1,"args":{"correlation":9}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaStreamEndCapture","pid":1,"tid":1,"ts":END,"dur":1,"args":{}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":28,"dur":1,"args":{"correlation":2}},
  {"ph":"X","cat":"kernel","name":"K1","pid":0,"tid":7,"ts":0,"dur":10,"args":{"device":0,"stream":7,"correlation":1}},
  {"ph":"X","cat":"kernel","name":"K2","pid":0,"tid":7,"ts":30,"dur":10,"args":{"device":0,"stream":7,"correlation":2}}
]})";
  return s.replace(s.find("END"), 3, end_capture_ts);
}

TEST(IdleGapsTest, IdleThroughAStreamCaptureIsStartup) {
  auto half = ImportJsonText(CaptureTrace("23"));
  ASSERT_NE(half, nullptr);
  const std::map<int32_t, Intervals> windows = CaptureWindowsByRank(*half, FindCaptureWindows(*half));
  ASSERT_EQ(windows.size(), 1u);
  EXPECT_EQ(windows.begin()->second, (Intervals{{13'000, 23'000}}));
  GapsResult r = ComputeGaps(*half);
  ASSERT_EQ(r.timelines.size(), 1u);
  ASSERT_EQ(r.timelines[0].largest_gaps.size(), 1u);
  EXPECT_EQ(r.timelines[0].largest_gaps[0].cause, GapCause::kStartup);
  EXPECT_EQ(Cause(r.timelines[0], GapCause::kStartup), 20'000);
  EXPECT_EQ(Cause(r.timelines[0], GapCause::kHostBound), 0);
  MetricSet m;
  PublishGaps(*half, r, &m);
  EXPECT_NEAR(m.Get("idle_startup_ratio")->value, 20.0 / 40, 1e-12);
  EXPECT_NEAR(m.Get("idle_host_bound_ratio")->value, 0, 1e-12);
  ASSERT_EQ(m.evidence().count("startup"), 1u);
  EXPECT_NE(m.evidence().at("startup")[0].find("cause startup"), std::string::npos);

  auto under = ImportJsonText(CaptureTrace("22.999"));
  ASSERT_NE(under, nullptr);
  r = ComputeGaps(*under);
  ASSERT_EQ(r.timelines.size(), 1u);
  EXPECT_EQ(Cause(r.timelines[0], GapCause::kStartup), 0);
  EXPECT_EQ(Cause(r.timelines[0], GapCause::kHostBound), 20'000);
}

// The window's start-up calls (analysis_window.h: >= 1 ms and >= 20 x their
// name's median, the device idle through them). Hand-made, by hand: five
// cudaLaunchKernel calls, four of 1 us (the median) and the second of D us
// at 20, launching K2 at 20 + D + 5. The gap [10, 25 + D) begins before the
// call (host_bound by itself). D = 2000: a start-up call covering 2000 of
// the 2015 us gap, startup; D = 900 is under kStartupCallMinNs, no start-up
// call: host_bound as before. Without a window nothing is start-up. The
// three gaps after K2 (5, 10 and 10 us, each before a 1 us launch begun at
// its start) stay host_bound: 25 us.
std::string LongLaunchTrace(int d_us) {
  const std::string d = std::to_string(d_us), k2 = std::to_string(25 + d_us);
  const std::string k3 = std::to_string(40 + d_us), k4 = std::to_string(60 + d_us), k5 = std::to_string(80 + d_us);
  auto call = [](const std::string& ts, const std::string& dur, int corr) {
    return R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":)" + ts + R"(,"dur":)" +
           dur + R"(,"args":{"correlation":)" + std::to_string(corr) + "}},\n";
  };
  auto kernel = [](const std::string& ts, int corr) {
    return R"({"ph":"X","cat":"kernel","name":"K)" + std::to_string(corr) + R"(","pid":0,"tid":7,"ts":)" + ts +
           R"(,"dur":10,"args":{"device":0,"stream":7,"correlation":)" + std::to_string(corr) + "}}";
  };
  return R"({"traceEvents":[)" + call("0", "1", 1) + call("20", d, 2) + call(std::to_string(35 + d_us), "1", 3) +
         call(std::to_string(55 + d_us), "1", 4) + call(std::to_string(75 + d_us), "1", 5) + kernel("0", 1) + ",\n" +
         kernel(k2, 2) + ",\n" + kernel(k3, 3) + ",\n" + kernel(k4, 4) + ",\n" + kernel(k5, 5) + "]}";
}

// More start-up calls than the window lists as evidence (8): each one's
// gap is start-up all the same (the window keeps every call's interval per
// rank). Hand-made: ten blocks 3000 us apart, each with three 1 us
// cudaLaunchKernel calls (the median) and one of 2000 us at +20 launching a
// kernel at +2025, after the block's first kernel [0, 10): ten 2015 us gaps,
// each covered 2000 us by its call.
TEST(IdleGapsTest, EveryStartupCallCountsNotOnlyTheListedEight) {
  std::string events;
  auto call = [&](int ts, int dur, int corr) {
    events += R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":)" + std::to_string(ts) +
              R"(,"dur":)" + std::to_string(dur) +
              (corr >= 0 ? R"(,"args":{"correlation":)" + std::to_string(corr) + "}" : std::string()) + "},\n";
  };
  auto kernel = [&](int ts, int corr) {
    events += R"({"ph":"X","cat":"kernel","name":"K","pid":0,"tid":7,"ts":)" + std::to_string(ts) +
              R"(,"dur":10,"args":{"device":0,"stream":7,"correlation":)" + std::to_string(corr) + "}},\n";
  };
  for (int k = 0; k < 10; ++k) {
    const int base = 3000 * k;
    call(base, 1, 100 + k);
    kernel(base, 100 + k);
    call(base + 3, 1, -1);
    call(base + 5, 1, -1);
    call(base + 20, 2000, k);
    kernel(base + 2025, k);
  }
  events.resize(events.size() - 2);  // the last ",\n"
  auto t = ImportJsonText(R"({"traceEvents":[)" + events + "]}");
  ASSERT_NE(t, nullptr);
  const AnalysisWindow w = ComputeAnalysisWindow(*t);
  EXPECT_EQ(w.startup_calls.size(), 8u);
  GapsOptions options;
  options.window = &w;
  const GapsResult r = ComputeGaps(*t, options);
  ASSERT_EQ(r.timelines.size(), 1u);
  EXPECT_EQ(Cause(r.timelines[0], GapCause::kStartup), 10 * 2'015'000);
}

TEST(IdleGapsTest, IdleThroughAStartupCallIsStartup) {
  auto t = ImportJsonText(LongLaunchTrace(2000));
  ASSERT_NE(t, nullptr);
  const AnalysisWindow w = ComputeAnalysisWindow(*t);
  ASSERT_EQ(w.startup_calls.size(), 1u);
  EXPECT_EQ(w.startup_ns, 2'000'000);
  GapsOptions options;
  options.window = &w;
  GapsResult r = ComputeGaps(*t, options);
  ASSERT_EQ(r.timelines.size(), 1u);
  const TimelineBreakdown& tl = r.timelines[0];
  EXPECT_EQ(tl.largest_gaps[0].end_ns - tl.largest_gaps[0].start_ns, 2'015'000);
  EXPECT_EQ(tl.largest_gaps[0].cause, GapCause::kStartup);
  EXPECT_EQ(Cause(tl, GapCause::kStartup), 2'015'000);
  EXPECT_EQ(Cause(tl, GapCause::kHostBound), 25'000);
  // The per-trace window leaves the call out ([20, 2020) us): the gap's
  // window idle is its 15 us beside it, still start-up.
  EXPECT_EQ(WindowIdle(tl, GapCause::kStartup), 15'000);
  MetricSet m;
  PublishGapImpacts(r, w, &m);
  EXPECT_DOUBLE_EQ(m.Get("idle_startup_ns")->value, 15'000);
  EXPECT_DOUBLE_EQ(m.Get("idle_host_bound_ns")->value, 25'000);
  // No window: no start-up calls, the launch began after the gap: host_bound.
  r = ComputeGaps(*t);
  EXPECT_EQ(Cause(r.timelines[0], GapCause::kStartup), 0);
  EXPECT_EQ(Cause(r.timelines[0], GapCause::kHostBound), 2'015'000 + 25'000);

  auto shorter = ImportJsonText(LongLaunchTrace(900));
  ASSERT_NE(shorter, nullptr);
  const AnalysisWindow ws = ComputeAnalysisWindow(*shorter);
  EXPECT_TRUE(ws.startup_calls.empty());
  options.window = &ws;
  r = ComputeGaps(*shorter, options);
  EXPECT_EQ(Cause(r.timelines[0], GapCause::kStartup), 0);
  EXPECT_EQ(Cause(r.timelines[0], GapCause::kHostBound), 915'000 + 25'000);
}

TEST(IdleGapsTest, StartupCauseIsNamedAndCountedLast) {
  EXPECT_STREQ(GapCauseName(GapCause::kStartup), "startup");
  EXPECT_EQ(static_cast<size_t>(GapCause::kStartup), kGapCauseCount - 1);
  EXPECT_STREQ(GapCauseName(GapCause::kOther), "other");
}

// Unexplained idle is named by the timelines' kind: a CPU-only trace has no
// device to idle (audit3: "device idle with no known cause 752 ms" on a CPU
// gloo job), its idle is the main thread's between ops.
TEST(IdleGapsTest, IdleOtherIsNamedByTheTimelinesKind) {
  auto cpu = ImportFixture("torch-cpu/convnet_bs8_contiguous.kineto.json");
  auto gpu = ImportFixture(
      "kineto/"
      "HolisticTraceAnalysis__tests__data__critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz");
  ASSERT_NE(cpu, nullptr);
  ASSERT_NE(gpu, nullptr);
  const std::string on_cpu = IdleOtherDescription(ComputeGaps(*cpu).cpu_only);
  const std::string on_gpu = IdleOtherDescription(ComputeGaps(*gpu).cpu_only);
  EXPECT_EQ(on_cpu.find("device idle"), std::string::npos) << on_cpu;
  EXPECT_NE(on_cpu.find("main-thread idle"), std::string::npos) << on_cpu;
  EXPECT_EQ(on_gpu, "device idle with no known cause");
}

}  // namespace
}  // namespace aiprof
