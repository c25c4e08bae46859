#include "src/analysis/gaps/idle_gaps.h"

#include <gtest/gtest.h>

#include "src/analysis/metrics/metric_set.h"
#include "src/model/trace_builder.h"
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
  MetricSet m;
  PublishGaps(*t, r, &m);
  EXPECT_NEAR(m.Get("comm_overlap_ratio")->value, 0.5, 1e-12);
  EXPECT_NEAR(m.Get("comm_exposed_ratio")->value, 5.0 / 20, 1e-12);
  EXPECT_NEAR(m.Get("comm_ratio")->value, 10.0 / 20, 1e-12);
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
