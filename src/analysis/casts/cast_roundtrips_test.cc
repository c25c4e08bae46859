#include "src/analysis/casts/cast_roundtrips.h"

#include <gtest/gtest.h>

#include <string>

#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/window/analysis_window.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportJsonText;

// A cast op chain (aten::to > aten::_to_copy > aten::copy_) on thread `tid`
// at `ts` for `dur` us, converting `from` to `to` on `dims`: copy_'s first
// input is the destination.
std::string Cast(int tid, int ts, int dur, const std::string& from, const std::string& to, const std::string& dims) {
  auto ev = [&](const char* name, int t, int d, const std::string& args) {
    return R"({"ph":"X","cat":"cpu_op","name":")" + std::string(name) + R"(","pid":1,"tid":)" + std::to_string(tid) +
           R"(,"ts":)" + std::to_string(t) + R"(,"dur":)" + std::to_string(d) + R"(,"args":{)" + args + "}},\n";
  };
  return ev("aten::to", ts, dur, R"("Input type":[")" + from + R"(","Scalar"],"Input Dims":[)" + dims + ",[]]") +
         ev("aten::_to_copy", ts + 1, dur - 2,
            R"("Input type":[")" + from + R"(","Scalar"],"Input Dims":[)" + dims + ",[]]") +
         ev("aten::copy_", ts + 2, dur - 4,
            R"("Input type":[")" + to + R"(",")" + from + R"(","Scalar"],"Input Dims":[)" + dims + "," + dims + ",[]]");
}

std::string Op(int tid, int ts, int dur, const std::string& name, const std::string& type, const std::string& dims) {
  return R"({"ph":"X","cat":"cpu_op","name":")" + name + R"(","pid":1,"tid":)" + std::to_string(tid) + R"(,"ts":)" +
         std::to_string(ts) + R"(,"dur":)" + std::to_string(dur) + R"(,"args":{"Input type":[")" + type +
         R"("],"Input Dims":[)" + dims + "]}},\n";
}

std::string Step(int n, int ts, int dur) {
  return R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#)" + std::to_string(n) +
         R"(","pid":1,"tid":1,"ts":)" + std::to_string(ts) + R"(,"dur":)" + std::to_string(dur) + "},\n";
}

std::unique_ptr<Trace> Import(std::string events) {
  events.resize(events.size() - 2);  // the last ",\n"
  return ImportJsonText(R"({"traceEvents":[)" + events + "]}");
}

// Hand-made, two 100 us steps on thread 1, one round trip in each:
// float -> double (20 us) and back (10 us), then an mm on float. Per step:
// 1 trip, (20 + 10) us = 30 us, 30% of the 100 us mean step.
TEST(CastRoundtripsTest, HandMadeRoundTripPerStep) {
  std::string e;
  for (int s = 0; s < 2; ++s) {
    int t = 100 * s;
    e += Step(s + 1, t, 100) + Cast(1, t + 10, 20, "float", "double", "[2, 3]") +
         Cast(1, t + 30, 10, "double", "float", "[2, 3]") + Op(1, t + 50, 40, "aten::mm", "float", "[2, 3]");
  }
  auto t = Import(e);
  ASSERT_NE(t, nullptr);
  CastRoundtripResult r = ComputeCastRoundtrips(*t);
  EXPECT_FALSE(r.device);
  EXPECT_EQ(r.conversions, 4u);
  ASSERT_EQ(r.trips.size(), 2u);
  EXPECT_EQ(r.trips[0].time_ns, 30000);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].dtype, "float");
  EXPECT_EQ(r.groups[0].via, "double");
  EXPECT_EQ(r.groups[0].shape, (Dims{2, 3}));
  EXPECT_EQ(r.groups[0].trigger, "ProfilerStep#*");
  EXPECT_EQ(r.groups[0].count, 2u);
  EXPECT_EQ(r.groups[0].total_ns, 60000);
  AnalysisWindow w = ComputeAnalysisWindow(*t);
  ASSERT_EQ(w.steps, 2u);
  ASSERT_EQ(w.base_ns, 100000);
  MetricSet m;
  PublishCastRoundtrips(*t, r, w, &m);
  EXPECT_EQ(m.Get("cast_roundtrip_ns")->value, 30000);
  EXPECT_DOUBLE_EQ(m.Get("cast_roundtrip_ratio")->value, 0.3);
  EXPECT_EQ(m.Get("cast_roundtrip_count_per_step")->value, 1);
  ASSERT_EQ(m.Evidence("cast_roundtrip").size(), 1u);
  EXPECT_EQ(
      m.Evidence("cast_roundtrip")[0],
      "float -> double -> float on [2, 3]: 1 per step, 30.00 us per step (30.0% of the step), the casts' op time, "
      "first cast in ProfilerStep#*");
}

// Hand-made negatives, one per thread (thread 1 holds the step): a cast with
// no return; float -> double -> c10::Half; the same dtypes on [2, 3] then
// [3, 2]; a trip with 3 ops between (over the allowance of 2); a trip whose
// double copy an op between reads; a dtype-changing copy_ with no cast op
// above it (out.copy_(x)) and back. Thread 8: the allowance's edge, 2
// unrelated ops between, is a trip (10 + 10 us).
TEST(CastRoundtripsTest, HandMadeNegatives) {
  std::string e = Step(1, 0, 1000);
  e += Cast(2, 10, 10, "float", "double", "[2, 3]");
  e += Cast(3, 10, 10, "float", "double", "[2, 3]") + Cast(3, 30, 10, "double", "c10::Half", "[2, 3]");
  e += Cast(4, 10, 10, "float", "double", "[2, 3]") + Cast(4, 30, 10, "double", "float", "[3, 2]");
  e += Cast(5, 10, 10, "float", "double", "[2, 3]");
  for (int i = 0; i < 3; ++i) e += Op(5, 30 + 10 * i, 5, "aten::relu", "float", "[4]");
  e += Cast(5, 70, 10, "double", "float", "[2, 3]");
  e += Cast(6, 10, 10, "float", "double", "[2, 3]") + Op(6, 30, 5, "aten::mul", "double", "[2, 3]") +
       Cast(6, 40, 10, "double", "float", "[2, 3]");
  e += Op(7, 10, 10, "aten::copy_", "double\",\"float", "[2, 3], [2, 3]") +
       Op(7, 30, 10, "aten::copy_", "float\",\"double", "[2, 3], [2, 3]");
  e += Cast(8, 10, 10, "float", "double", "[2, 3]");
  for (int i = 0; i < 2; ++i) e += Op(8, 30 + 10 * i, 5, "aten::relu", "float", "[4]");
  e += Cast(8, 50, 10, "double", "float", "[2, 3]");
  auto t = Import(e);
  ASSERT_NE(t, nullptr);
  CastRoundtripResult r = ComputeCastRoundtrips(*t);
  EXPECT_EQ(r.conversions, 11u);  // threads 2-6 and 8; thread 7's copies have no cast op
  ASSERT_EQ(r.trips.size(), 1u);
  EXPECT_EQ(t->tracks.tid[t->slices.track[r.trips[0].there]], 8);
  EXPECT_EQ(r.trips[0].time_ns, 20000);
}

// Hand-made device trace: the two casts launch a copy kernel each (30 and
// 20 us); the trip is timed on them (50 us, not the ops' 10 + 10 us). A
// cast that launches a memcpy (x.to("cuda", torch.double)) is a transfer:
// the float -> double -> float on thread 2 is no trip.
TEST(CastRoundtripsTest, HandMadeDeviceTripIsTimedOnItsKernels) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":200},
    {"ph":"X","cat":"cpu_op","name":"aten::to","pid":1,"tid":1,"ts":10,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"aten::_to_copy","pid":1,"tid":1,"ts":11,"dur":8},
    {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":1,"ts":12,"dur":6,
     "args":{"Input type":["c10::Half","float","Scalar"],"Input Dims":[[4,8],[4,8],[]]}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":13,"dur":2,"args":{"correlation":1}},
    {"ph":"X","cat":"cpu_op","name":"aten::to","pid":1,"tid":1,"ts":30,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"aten::_to_copy","pid":1,"tid":1,"ts":31,"dur":8},
    {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":1,"ts":32,"dur":6,
     "args":{"Input type":["float","c10::Half","Scalar"],"Input Dims":[[4,8],[4,8],[]]}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":33,"dur":2,"args":{"correlation":2}},
    {"ph":"X","cat":"cpu_op","name":"aten::to","pid":1,"tid":2,"ts":10,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":2,"ts":12,"dur":6,
     "args":{"Input type":["double","float","Scalar"],"Input Dims":[[4,8],[4,8],[]]}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":2,"ts":13,"dur":2,"args":{"correlation":3}},
    {"ph":"X","cat":"cpu_op","name":"aten::to","pid":1,"tid":2,"ts":30,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":2,"ts":32,"dur":6,
     "args":{"Input type":["float","double","Scalar"],"Input Dims":[[4,8],[4,8],[]]}},
    {"ph":"X","cat":"kernel","name":"copy_half","pid":0,"tid":7,"ts":50,"dur":30,"args":{"device":0,"stream":7,"correlation":1}},
    {"ph":"X","cat":"kernel","name":"copy_float","pid":0,"tid":7,"ts":90,"dur":20,"args":{"device":0,"stream":7,"correlation":2}},
    {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":0,"tid":7,"ts":120,"dur":5,"args":{"device":0,"stream":7,"correlation":3}}
  ]})");
  ASSERT_NE(t, nullptr);
  CastRoundtripResult r = ComputeCastRoundtrips(*t);
  EXPECT_TRUE(r.device);
  EXPECT_EQ(r.conversions, 3u);  // thread 2's first cast is a transfer
  ASSERT_EQ(r.trips.size(), 1u);
  EXPECT_EQ(r.trips[0].time_ns, 50000);
  EXPECT_EQ(r.trips[0].timed.size(), 2u);
  EXPECT_EQ(r.groups[0].via, "c10::Half");
  MetricSet m;
  PublishCastRoundtrips(*t, r, ComputeAnalysisWindow(*t), &m);
  EXPECT_EQ(m.Get("cast_roundtrip_ns")->value, 50000);
  ASSERT_EQ(m.Evidence("cast_roundtrip").size(), 1u);
  EXPECT_NE(m.Evidence("cast_roundtrip")[0].find("the copy kernels' device time"), std::string::npos);
}

// Hand-made: without "Input type" (record_shapes off) the casts cannot be
// read: the metrics are unavailable, not zero.
TEST(CastRoundtripsTest, WithoutInputTypesTheMetricsAreUnavailable) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","cat":"cpu_op","name":"aten::to","pid":1,"tid":1,"ts":10,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":1,"ts":12,"dur":6}
  ]})");
  ASSERT_NE(t, nullptr);
  CastRoundtripResult r = ComputeCastRoundtrips(*t);
  EXPECT_FALSE(r.typed);
  MetricSet m;
  PublishCastRoundtrips(*t, r, ComputeAnalysisWindow(*t), &m);
  EXPECT_FALSE(m.Get("cast_roundtrip_ns"));
  ASSERT_TRUE(m.UnavailableReason("cast_roundtrip_ns").has_value());
  EXPECT_NE(m.UnavailableReason("cast_roundtrip_ns")->find("record_shapes"), std::string::npos);
}

// Hand-made: a trace with no torch ops (a runtime call and its kernel)
// computes nothing: the metrics are absent, not unavailable, so the rule
// (applies_if_computed) is not listed.
TEST(CastRoundtripsTest, WithoutTorchOpsNothingIsPublished) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":2,"args":{"correlation":1}},
    {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10,"dur":30,"args":{"device":0,"stream":7,"correlation":1}}
  ]})");
  ASSERT_NE(t, nullptr);
  CastRoundtripResult r = ComputeCastRoundtrips(*t);
  EXPECT_FALSE(r.torch_ops);
  MetricSet m;
  PublishCastRoundtrips(*t, r, ComputeAnalysisWindow(*t), &m);
  EXPECT_FALSE(m.Get("cast_roundtrip_ratio"));
  EXPECT_FALSE(m.UnavailableReason("cast_roundtrip_ratio").has_value());
}

// Hand-made: torch_npu writes Input type and Input Dims as text
// ("double;\r\nfloat;\r\nScalar", "2,3;\r\n2,3;\r\n"), which the arg reader
// reads as Kineto's lists: a trip in that form is found.
TEST(CastRoundtripsTest, TorchNpuTextFormIsRead) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"aten::to","pid":1,"tid":1,"ts":10,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":1,"ts":12,"dur":6,
     "args":{"Input type":"double;\r\nfloat;\r\nScalar","Input Dims":"2,3;\r\n2,3;\r\n"}},
    {"ph":"X","cat":"cpu_op","name":"aten::to","pid":1,"tid":1,"ts":30,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":1,"ts":32,"dur":6,
     "args":{"Input type":"float;\r\ndouble;\r\nScalar","Input Dims":"2,3;\r\n2,3;\r\n"}}
  ]})");
  ASSERT_NE(t, nullptr);
  CastRoundtripResult r = ComputeCastRoundtrips(*t);
  EXPECT_TRUE(r.typed);
  EXPECT_FALSE(r.types_unread);
  MetricSet m;
  PublishCastRoundtrips(*t, r, ComputeAnalysisWindow(*t), &m);
  ASSERT_TRUE(m.Get("cast_roundtrip_count_per_step"));
  EXPECT_EQ(m.Get("cast_roundtrip_count_per_step")->value, 1);
}

// Hand-made, two ranks without steps (so the base is per trace, the mean
// over ranks): rank 0 runs a float -> double -> float trip (20 + 10 us) and
// an mm, rank 1 the same mm and no cast. By hand: 30 us of trips over the
// two ranks, 15 us per trace (mean over ranks), 0.5 trips. Only the ranks
// with a trip entered the mean, so rank 0's 30 us and 1 trip were taken
// for the whole run's.
TEST(CastRoundtripsTest, PerTraceMeanIsOverEveryRank) {
  auto rank = [](int r, const std::string& events) {
    std::string e = events;
    e.resize(e.size() - 2);  // the last ",\n"
    return R"({"distributedInfo":{"backend":"gloo","rank":)" + std::to_string(r) + R"(},"traceEvents":[)" + e + "]}";
  };
  auto t = testing::ImportJsonFolder({{"rank0.json", rank(0, Cast(1, 10, 20, "float", "double", "[2, 3]") +
                                                                 Cast(1, 40, 10, "double", "float", "[2, 3]") +
                                                                 Op(1, 60, 40, "aten::mm", "float", "[2, 3]"))},
                                      {"rank1.json", rank(1, Op(1, 10, 90, "aten::mm", "float", "[2, 3]"))}});
  ASSERT_NE(t, nullptr);
  CastRoundtripResult r = ComputeCastRoundtrips(*t);
  ASSERT_EQ(r.trips.size(), 1u);
  AnalysisWindow w = ComputeAnalysisWindow(*t);
  ASSERT_EQ(w.steps, 0u);
  MetricSet m;
  PublishCastRoundtrips(*t, r, w, &m);
  EXPECT_DOUBLE_EQ(m.Get("cast_roundtrip_ns")->value, 15000);
  EXPECT_DOUBLE_EQ(m.Get("cast_roundtrip_count_per_step")->value, 0.5);
}

// The real pair (test/data/pairs, pairs.yaml: "each conv block casts its
// input to float64 and straight back to float32"). From the raw JSON
// (a script over the file): 96 aten::to, each over a dtype-changing copy_,
// 116001 us in all, in 12 ProfilerSteps of 330894 us; no warm-up step is
// left out. So 48 trips, 4 per step, 9666.75 us per step. The after run
// has no aten::to.
TEST(CastRoundtripsTest, RealPairNamesTheFloat64RoundTrips) {
  auto before =
      testing::MustImport(std::string(AIPROF_SOURCE_DIR) + "/test/data/pairs/cast_roundtrip_before.pt.trace.json.gz");
  ASSERT_NE(before, nullptr);
  CastRoundtripResult r = ComputeCastRoundtrips(*before);
  EXPECT_EQ(r.conversions, 96u);
  EXPECT_EQ(r.trips.size(), 48u);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].total_ns, 116001000);
  AnalysisWindow w = ComputeAnalysisWindow(*before);
  ASSERT_EQ(w.steps, 12u);
  MetricSet m;
  PublishCastRoundtrips(*before, r, w, &m);
  EXPECT_DOUBLE_EQ(m.Get("cast_roundtrip_ns")->value, 116001000.0 / 12);
  EXPECT_NEAR(m.Get("cast_roundtrip_ratio")->value, 116001000.0 / 330894000.0, 1e-12);
  EXPECT_EQ(m.Get("cast_roundtrip_count_per_step")->value, 4);
  auto after =
      testing::MustImport(std::string(AIPROF_SOURCE_DIR) + "/test/data/pairs/cast_roundtrip_after.pt.trace.json.gz");
  ASSERT_NE(after, nullptr);
  CastRoundtripResult ra = ComputeCastRoundtrips(*after);
  EXPECT_EQ(ra.conversions, 0u);
  MetricSet ma;
  PublishCastRoundtrips(*after, ra, ComputeAnalysisWindow(*after), &ma);
  EXPECT_EQ(ma.Get("cast_roundtrip_ns")->value, 0);
}

// Real GPU trace (TraceLens' Flux.1 on MI300, bf16): 169 dtype-changing
// copies under cast ops, 2 of them host-to-device transfers (a
// hipMemcpyWithStream inside: [512, 3] and [256, 3] float -> bf16), so 167
// conversions; 102 of them followed by the cast back on the same
// shape (a script over the raw JSON), each with an op reading the float
// copy between (RMSNorm's pow/mean/rsqrt, softmax in float: one op between,
// inside the allowance): upcasting to compute is no round trip.
TEST(CastRoundtripsTest, FluxUpcastsAroundComputeAreNotRoundTrips) {
  auto t = testing::ImportFixture("tracelens/inference__xdit_flux.1_aiter_sage__profile_trace_rank_0.json.gz");
  ASSERT_NE(t, nullptr);
  CastRoundtripResult r = ComputeCastRoundtrips(*t);
  EXPECT_TRUE(r.device);
  EXPECT_EQ(r.conversions, 167u);
  EXPECT_TRUE(r.trips.empty());
}

}  // namespace
}  // namespace aiprof
