#include "src/analysis/window/analysis_window.h"

#include <gtest/gtest.h>

#include <tuple>

#include "src/analysis/analyze.h"
#include "src/analysis/attribution/attribution.h"
#include "src/analysis/fusion/fusion_candidates.h"
#include "src/analysis/gaps/idle_gaps.h"
#include "src/analysis/long_tail/op_tails.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/steps/step_stats.h"
#include "test/util/hand_made_traces.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportFixture;
using testing::ImportJsonText;

TEST(AnalysisWindowTest, LeadingWarmupIsALeadingOutlierOnly) {
  // resnet50 num_workers=4 (ms): the first step is warm-up, 163.5 later is not leading.
  EXPECT_EQ(LeadingWarmup({181.6, 123.9, 126.8, 126.3, 163.5, 116.1}), 1u);
  // num_workers=0: no outlier among 164-181 ms.
  EXPECT_EQ(LeadingWarmup({176.1, 174.0, 176.9, 181.3, 176.5, 164.3}), 0u);
  EXPECT_EQ(LeadingWarmup({50, 40, 10, 10, 10, 10}), 2u);
  EXPECT_EQ(LeadingWarmup({50, 10, 10}), 0u);       // fewer than 4 steps: none
  EXPECT_EQ(LeadingWarmup({11, 10, 10, 10, 10}), 0u);  // 10% slower is not an outlier
  EXPECT_EQ(LeadingWarmup({50, 10, 10}, 2), 2u);    // forced
  EXPECT_EQ(LeadingWarmup({50, 10}, 5), 1u);        // forced, one step always stays
}

// Hand-made: a recording without slices (a program without torch under
// `aiprof trace` has only samples and page-fault counters). By hand: the
// counters run from 1 ms to 4 ms and the instant is at 5 ms, so the window
// is 1 ms .. 5 ms and 1 ns (the last point inside the half-open interval),
// per trace; before, it was empty (0 ms) and every fault fell outside it.
TEST(AnalysisWindowTest, TraceWithoutSlicesIsTheSpanOfItsOtherEvents) {
  auto t = ImportJsonText(R"json({"traceEvents":[
    {"ph":"C","name":"page_faults","pid":1,"tid":1,"ts":1000,"args":{"faults":3}},
    {"ph":"C","name":"page_faults","pid":1,"tid":1,"ts":4000,"args":{"faults":5}},
    {"ph":"i","name":"marker","pid":1,"tid":1,"ts":5000,"s":"t"}
  ]})json");
  ASSERT_EQ(t->slices.size(), 0u);
  AnalysisWindow w = ComputeAnalysisWindow(*t);
  EXPECT_EQ(w.trace_start_ns, 1'000'000);
  EXPECT_EQ(w.trace_span_ns, 4'000'001);
  EXPECT_EQ(w.steps, 0u);
  EXPECT_DOUBLE_EQ(w.base_ns, 4'000'001);
  EXPECT_TRUE(IntervalsContain(w.intervals, 5'000'000));
}

// Hand-made two-rank folder without steps: each rank runs one 100 us op.
// Per trace, a mean over ranks divides by the trace's 2 ranks, whatever a
// per-rank map holds: an analysis that found 30 us on rank 0 only (and left
// rank 1 out of its map) is 15 us for the run, not 30 us (helper rv found
// the casts and fusion maps left such ranks out; layout's does too).
TEST(AnalysisWindowTest, PerTraceMeanOverRanksCountsEveryRank) {
  auto rank = [](int r) {
    return R"({"distributedInfo":{"backend":"gloo","rank":)" + std::to_string(r) +
           R"(},"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":100}]})";
  };
  auto t = testing::ImportJsonFolder({{"rank0.json", rank(0)}, {"rank1.json", rank(1)}});
  ASSERT_NE(t, nullptr);
  AnalysisWindow w = ComputeAnalysisWindow(*t);
  ASSERT_EQ(w.steps, 0u);
  EXPECT_EQ(w.trace_ranks, 2u);
  EXPECT_DOUBLE_EQ(w.PerBase(std::map<int32_t, double>{{0, 30'000}}), 15'000);
  EXPECT_DOUBLE_EQ(w.PerBase(std::map<int32_t, double>{{0, 30'000}, {1, 10'000}}), 20'000);
  // One process of no rank: one rank.
  auto one = ImportJsonText(R"json({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":100},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":2,"ts":10,"dur":100}]})json");
  EXPECT_EQ(ComputeAnalysisWindow(*one).trace_ranks, 1u);
}

// Hand-made, CPU only: three 10 ms ProfilerStep spans, each with a 6 ms
// cpu_op; step 2 also holds a 3 ms aiprof::torch_export (category
// aiprof_overhead, the capture's torch hook writing its chunk) in its 4 ms
// gap. By hand: main-thread idle is 4 + 4 + 4 = 12 ms, of which 3 ms is
// aiprof's own work, so the program's idle is 9 ms, 3 ms per step; the old
// window counted 4 ms per step (trial_cap2 M4: a capture's four largest
// "idle" gaps were exactly its exports).
TEST(AnalysisWindowTest, AiprofOwnOverheadIsLeftOutOfImpacts) {
  auto t = ImportJsonText(R"json({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":10000},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":6000},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":10000,"dur":10000},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10000,"dur":6000},
    {"ph":"X","cat":"aiprof_overhead","name":"aiprof::torch_export","pid":1,"tid":1,"ts":16500,"dur":3000},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":20000,"dur":10000},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":20000,"dur":6000}
  ]})json");
  ASSERT_NE(t, nullptr);
  const AnalysisWindow w = ComputeAnalysisWindow(*t, 0);
  EXPECT_EQ(w.steps, 3u);
  EXPECT_NEAR(w.base_ns, 10e6, 0.5);  // the steps still hold it
  EXPECT_EQ(w.aiprof_overhead_ns, 3'000'000);
  EXPECT_EQ(LengthOf(w.intervals), 27'000'000);
  EXPECT_NE(w.Describe().find("3.00 ms of aiprof's own work in the program"), std::string::npos) << w.Describe();
  GapsOptions options;
  options.window = &w;
  MetricSet m;
  PublishGapImpacts(ComputeGaps(*t, options), w, &m);
  double idle = 0;
  for (const char* name : {"idle_other_ns", "data_loading_wait_ns"}) {
    if (m.Get(name)) idle += m.Get(name)->value;
  }
  EXPECT_NEAR(idle, 3e6, 0.5);
}

TEST(AnalysisWindowTest, BaseSentenceSaysHowStepsSplitOverRanks) {
  EXPECT_EQ(DescribeImpactBase(5, 1, 126.3e6, 1, 0),
            "per step (mean of 5 steady-state steps, 126.300 ms); 1 warm-up step left out");
  EXPECT_EQ(DescribeImpactBase(1, 0, 2e6, 0, 0), "per step (mean of 1 steady-state step, 2.000 ms)");
  // 4 steps over 2 ranks are 2 steps of each rank, not 4 steps of one run.
  EXPECT_EQ(DescribeImpactBase(4, 2, 617.2e6, 2, 0),
            "per step (mean of 4 steady-state steps, 2 on each of 2 ranks, 617.200 ms); 2 warm-up steps left out");
  EXPECT_EQ(DescribeImpactBase(5, 2, 1e6, 0, 0), "per step (mean of 5 steady-state steps over 2 ranks, 1.000 ms)");
  EXPECT_EQ(DescribeImpactBase(0, 0, 40e6, 0, 3e6),
            "per trace (40.000 ms of steady-state time; 3.000 ms of start-up left out)");
}

// A generate loop's first step is the LLM prefill, long by nature: it leaves
// with the warm-up, and the base says so (the llm section has its figures).
TEST(AnalysisWindowTest, BaseSentenceNamesAPrefillLeftWithTheWarmup) {
  EXPECT_EQ(DescribeImpactBase(6, 1, 0.697e6, 3, 0, 1),
            "per step (mean of 6 steady-state steps, 0.697 ms); 3 warm-up steps left out, 1 of them the LLM prefill "
            "(the llm section has it)");
  EXPECT_EQ(DescribeImpactBase(6, 1, 1e6, 1, 0, 1),
            "per step (mean of 6 steady-state steps, 1.000 ms); 1 warm-up step left out, the LLM prefill (the llm "
            "section has it)");
  EXPECT_EQ(DescribeImpactBase(6, 2, 1e6, 2, 0, 2),
            "per step (mean of 6 steady-state steps, 3 on each of 2 ranks, 1.000 ms); 2 warm-up steps left out, each "
            "an LLM prefill (the llm section has them)");
}

// Real: a tiny GPT's generate loop recorded on CPU with one profiler step per
// forward and SGLang-style annotations (test/data/llm_cpu/sglang_per_forward:
// ProfilerStep#8 holds step[EXTEND ...], the prefill; #9-#16 step[DECODE ...]).
// The warm-up rule leaves out #8-#10 (11.86, 1.30, 1.14 ms against a median
// of 0.75 ms): one of them holds the prefill.
TEST(AnalysisWindowTest, RealCpuGenerateLoopPrefillLeavesWithTheWarmup) {
  auto t =
      testing::MustImport(std::string(AIPROF_SOURCE_DIR) + "/test/data/llm_cpu/sglang_per_forward.pt.trace.json.gz");
  ASSERT_NE(t, nullptr);
  const AnalysisWindow w = ComputeAnalysisWindow(*t, -1);
  EXPECT_EQ(w.warmup.size(), 3u);
  EXPECT_EQ(w.warmup_prefill_steps, 1u);
  EXPECT_EQ(w.steps, 6u);
  EXPECT_NE(w.Describe().find("1 of them the LLM prefill"), std::string::npos) << w.Describe();
  MetricSet m;
  PublishAnalysisWindow(*t, w, &m);
  ASSERT_NE(m.Get("warmup_prefill_steps"), nullptr);
  EXPECT_EQ(m.Get("warmup_prefill_steps")->value, 1);
  // A trace whose warm-up holds no prefill sets no such metric.
  auto plain = ImportFixture("torch-cpu/convnet_bs8_mixed.kineto.json");
  ASSERT_NE(plain, nullptr);
  MetricSet pm;
  PublishAnalysisWindow(*plain, ComputeAnalysisWindow(*plain, -1), &pm);
  EXPECT_EQ(pm.Get("warmup_prefill_steps"), nullptr);
}

// Hand-made: a 100 ms context creation, then 10 ms of device work with a
// 4 ms host-bound gap in the middle; no steps.
constexpr char kStartup[] = R"({"traceEvents": [
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceGetStreamPriorityRange", "pid": 1, "tid": 1, "ts": 0, "dur": 100000},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 100000, "dur": 10, "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 100010, "dur": 3000, "args": {"correlation": 1, "device": 0, "stream": 7}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 107000, "dur": 10, "args": {"correlation": 2}},
  {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 107010, "dur": 3000, "args": {"correlation": 2, "device": 0, "stream": 7}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7, "ts": 50000, "dur": 2000, "args": {"correlation": 3, "device": 0, "stream": 7}},
  {"ph": "f", "id": 1, "pid": 0, "tid": 7, "ts": 100010, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "s", "id": 1, "pid": 1, "tid": 1, "ts": 100000, "cat": "ac2g", "name": "ac2g"},
  {"ph": "f", "id": 2, "pid": 0, "tid": 7, "ts": 107010, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "s", "id": 2, "pid": 1, "tid": 1, "ts": 107000, "cat": "ac2g", "name": "ac2g"}
]})";

TEST(AnalysisWindowTest, StartupIsLeftOutOfTheWindowAndImpacts) {
  auto t = ImportJsonText(kStartup);
  ASSERT_NE(t, nullptr);
  AnalysisWindow w = ComputeAnalysisWindow(*t);
  EXPECT_EQ(w.trace_span_ns, 110'010'000);
  EXPECT_EQ(w.startup_ns, 100'000'000);
  EXPECT_TRUE(w.startup_dominated);
  EXPECT_EQ(w.steps, 0u);
  EXPECT_EQ(w.base, "per trace");
  EXPECT_DOUBLE_EQ(w.base_ns, 10'010'000);  // the span minus start-up
  MetricSet m;
  GapsOptions options;
  options.window = &w;
  GapsResult g = ComputeGaps(*t, options);
  PublishGapImpacts(g, w, &m);
  // The copy during start-up is outside the window: its exposed time is 0 here.
  ASSERT_NE(m.Get("memcpy_exposed_ns"), nullptr);
  EXPECT_DOUBLE_EQ(m.Get("memcpy_exposed_ns")->value, 0);
  // Host-bound gaps inside the window: k1 -> k2 (103.01 .. 107.01 ms, 4 ms).
  // The gap before k1 (copy end 52 ms .. 100.01 ms) is start-up idle (the
  // start-up call covers 48 of its 48.01 ms: startup_work.h): its last 10 us,
  // inside the window (which starts at 100 ms, when start-up ends), too.
  ASSERT_NE(m.Get("idle_host_bound_ns"), nullptr);
  EXPECT_DOUBLE_EQ(m.Get("idle_host_bound_ns")->value, 4'000'000);
  ASSERT_NE(m.Get("idle_startup_ns"), nullptr);
  EXPECT_DOUBLE_EQ(m.Get("idle_startup_ns")->value, 10'000);
}

// Hand-made: a 50 ms hipMemcpyWithStream (three more of 10 us each: 5000x
// their median) with the device idle, optionally inside a user annotation
// ("execute_1", as sglang's aten::to -> copy_) and optionally after a first
// kernel (so the context exists); a last kernel after it. Times in us.
std::string BlockedCopyTrace(bool annotated, bool kernel_first) {
  std::string ev =
      R"({"ph": "X", "cat": "kernel", "name": "k_last", "pid": 0, "tid": 7, "ts": 60000, "dur": 1000, "args": {"device": 0, "stream": 7}})";
  if (kernel_first) {
    ev +=
        R"(, {"ph": "X", "cat": "kernel", "name": "k_first", "pid": 0, "tid": 7, "ts": 0, "dur": 1000, "args": {"device": 0, "stream": 7}})";
  }
  if (annotated) {
    ev +=
        R"(, {"ph": "X", "cat": "user_annotation", "name": "execute_1", "pid": 1, "tid": 1, "ts": 1500, "dur": 58000})";
  }
  ev += R"(, {"ph": "X", "cat": "cpu_op", "name": "aten::to", "pid": 1, "tid": 1, "ts": 1900, "dur": 50200})";
  ev +=
      R"(, {"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpyWithStream", "pid": 1, "tid": 1, "ts": 2000, "dur": 50000})";
  for (int k = 0; k < 3; ++k) {
    ev += R"(, {"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpyWithStream", "pid": 1, "tid": 1, "ts": )" +
          std::to_string(53000 + 1000 * k) + R"(, "dur": 10})";
  }
  return "{\"traceEvents\": [" + ev + "]}";
}

// sglang's 493 ms copy: a blocking copy the program issues from an annotation
// after the device has worked is a wait of the steady state, not start-up.
TEST(AnalysisWindowTest, BlockingCopyInAnnotationIsNotStartup) {
  auto t = ImportJsonText(BlockedCopyTrace(/*annotated=*/true, /*kernel_first=*/true));
  ASSERT_NE(t, nullptr);
  AnalysisWindow w = ComputeAnalysisWindow(*t);
  EXPECT_EQ(w.startup_ns, 0);
  EXPECT_TRUE(w.startup_calls.empty());
  EXPECT_FALSE(w.startup_dominated);
  EXPECT_EQ(w.trace_span_ns, 61'000'000);
  EXPECT_DOUBLE_EQ(w.base_ns, 61'000'000);  // the whole span
}

// The other sides: outside any annotation, or before any device work (the
// first copy may carry context creation), the same copy stays start-up.
TEST(AnalysisWindowTest, LongCopyOutsideAnnotationsOrBeforeDeviceWorkIsStartup) {
  for (bool annotated : {false, true}) {
    const bool kernel_first = !annotated;
    auto t = ImportJsonText(BlockedCopyTrace(annotated, kernel_first));
    ASSERT_NE(t, nullptr);
    AnalysisWindow w = ComputeAnalysisWindow(*t);
    EXPECT_EQ(w.startup_ns, 50'000'000) << "annotated " << annotated;
    ASSERT_EQ(w.startup_calls.size(), 1u);
    EXPECT_EQ(t->Str(t->slices.name[w.startup_calls[0].slice]), "hipMemcpyWithStream");
    EXPECT_DOUBLE_EQ(w.base_ns, static_cast<double>(w.trace_span_ns - 50'000'000));
  }
}

// Hand-made: a 10 ms cudaLaunchKernel (three more of 5 us) while one kernel
// runs for `busy_us` of it; no annotation. A launch blocked behind a busy
// device (full launch queue) is a wait; at 40% busy it is still start-up
// (lazy module loading), at 60% it is not (threshold 50%).
TEST(AnalysisWindowTest, CallWaitingOnABusyDeviceIsNotStartup) {
  for (int busy_us : {4000, 6000}) {
    std::string ev =
        R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1000, "dur": 10000},
        {"ph": "X", "cat": "kernel", "name": "k_long", "pid": 0, "tid": 7, "ts": 1000, "dur": )" +
        std::to_string(busy_us) + R"(, "args": {"device": 0, "stream": 7}})";
    for (int k = 0; k < 3; ++k) {
      ev += R"(, {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": )" +
            std::to_string(12000 + 100 * k) + R"(, "dur": 5})";
    }
    auto t = ImportJsonText("{\"traceEvents\": [" + ev + "]}");
    ASSERT_NE(t, nullptr);
    AnalysisWindow w = ComputeAnalysisWindow(*t);
    EXPECT_EQ(w.startup_ns, busy_us < 5000 ? 10'000'000 : 0) << "busy " << busy_us << " us of 10 ms";
  }
}

// Real fixtures (figures checked with /tmp-independent Python over the raw
// JSON: the call's enclosing events and the device busy time during it):
//   sglang Qwen3-8B prefill: hipMemcpyWithStream 493.21 ms inside
//   execute_15360_context... -> aten::to -> copy_, device idle, after the first
//   kernel: stays in the window (the whole 987.4 ms span);
//   Flux.1: hipMemcpyWithStream 113.92 ms (D2H .cpu()) inside ProfilerStep#3,
//   device 100% busy: not start-up;
//   AlexNet (HTA critical_path): context creation in
//   cudaDeviceGetStreamPriorityRange (29.93 s) stays start-up, still dominated.
TEST(AnalysisWindowTest, RealBlockingCopiesStayInTheBase) {
  auto sglang = ImportFixture("tracelens/inference__sglang_prefilldecode__sglang_Qwen3-8B_prefilldecode.json.gz");
  ASSERT_NE(sglang, nullptr);
  AnalysisWindow w = ComputeAnalysisWindow(*sglang);
  EXPECT_EQ(w.steps, 0u);
  EXPECT_EQ(w.startup_ns, 0);
  EXPECT_NEAR(w.base_ns / 1e6, 987.4, 0.1);
  EXPECT_DOUBLE_EQ(w.base_ns, static_cast<double>(w.trace_span_ns));

  auto flux = ImportFixture("tracelens/inference__xdit_flux.1_aiter_sage__profile_trace_rank_0.json.gz");
  ASSERT_NE(flux, nullptr);
  AnalysisWindow f = ComputeAnalysisWindow(*flux);
  for (const StartupCall& c : f.startup_calls) {
    EXPECT_NE(flux->Str(flux->slices.name[c.slice]), "hipMemcpyWithStream");
  }
  EXPECT_LT(f.startup_ns, 1'000'000);

  auto alexnet = ImportFixture(
      "kineto/"
      "HolisticTraceAnalysis__tests__data__critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz");
  ASSERT_NE(alexnet, nullptr);
  AnalysisWindow a = ComputeAnalysisWindow(*alexnet);
  EXPECT_TRUE(a.startup_dominated);
  ASSERT_FALSE(a.startup_calls.empty());
  EXPECT_EQ(alexnet->Str(alexnet->slices.name[a.startup_calls[0].slice]), "cudaDeviceGetStreamPriorityRange");
  EXPECT_NEAR(static_cast<double>(alexnet->slices.dur_ns[a.startup_calls[0].slice]) / 1e6, 29927.38, 0.01);
  // Its model.to(cuda) weight uploads (16 pageable copies inside the
  // [param|cuda] annotation) last as long as their own transfers: they did
  // not wait, they are set-up: start-up 42,182.083 ms as before the copy
  // rule (which took them out: 42,127.59 ms).
  EXPECT_EQ(a.startup_ns, 42'182'083'000);
}

// Hand-made device stream: a GEMM and its split-K epilogue repeat with two
// elementwise kernels after them. The GEMM -> splitKreduce pair is
// library-internal, not a candidate; the elementwise pair is.
TEST(AnalysisWindowTest, GemmEpilogueIsLibraryInternalNotAFusionCandidate) {
  auto t = ImportJsonText(testing::KernelStreamTrace(
      {"cutlass_80_tensorop_s1688gemm_128x128", "void splitKreduce_kernel<float>", "vectorized_mul", "vectorized_add"},
      4));
  ASSERT_NE(t, nullptr);
  FusionResult r = ComputeFusionCandidates(*t);
  ASSERT_EQ(r.library_internal.size(), 1u);
  EXPECT_EQ(t->Str(r.library_internal[0].second), "void splitKreduce_kernel<float>");
  EXPECT_EQ(r.library_internal[0].occurrences, 4u);
  for (const FusionCandidate& c : r.top) {
    EXPECT_EQ(DescribeSequence(*t, c).find("splitKreduce"), std::string::npos) << DescribeSequence(*t, c);
    EXPECT_EQ(DescribeSequence(*t, c).find("gemm"), std::string::npos) << DescribeSequence(*t, c);
  }
  ASSERT_FALSE(r.top.empty());
  EXPECT_EQ(DescribeSequence(*t, r.top[0]), "vectorized_mul -> vectorized_add");
}

// Hand-made: NCCL kernels that wait for peers are communication, not long tails.
TEST(AnalysisWindowTest, NcclKernelsAreNotLongTails) {
  std::string ev;
  for (int i = 0; i < 10; ++i) {
    if (i) ev += ",";
    int dur = i == 9 ? 5000 : 100;  // one very long wait
    ev += R"({"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float", "pid": 0, "tid": 7, "ts": )" +
          std::to_string(i * 10000) + R"(, "dur": )" + std::to_string(dur) + R"(, "args": {"device": 0, "stream": 7}})";
  }
  auto t = ImportJsonText("{\"traceEvents\": [" + ev + "]}");
  ASSERT_NE(t, nullptr);
  LongTailResult r = ComputeLongTails(*t);
  EXPECT_TRUE(r.ops.empty());
  EXPECT_EQ(r.communication_left_out, 10u);
}

// Real fixture: resnet50 num_workers=4 leaves its first step out of the
// window; the base is the mean of the other five (oracle: test/accuracy/label_fixtures.py).
TEST(AnalysisWindowTest, Resnet50WarmupStepLeftOut) {
  auto t = ImportFixture("kineto/kineto__tb_plugin__samples__resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz");
  ASSERT_NE(t, nullptr);
  AnalysisWindow w = ComputeAnalysisWindow(*t);
  ASSERT_EQ(w.warmup.size(), 1u);
  EXPECT_EQ(w.steps, 5u);
  EXPECT_NEAR(w.base_ns / 1e6, (123.9 + 126.8 + 126.3 + 163.5 + 116.1) / 5, 0.1);
  AnalysisWindow all = ComputeAnalysisWindow(*t, 0);
  EXPECT_TRUE(all.warmup.empty());
  EXPECT_EQ(all.steps, 6u);
  EXPECT_EQ(all.Describe().find("--warmup-steps"), std::string::npos) << all.Describe();
  // Asked for more than the six steps: five leave, the last stays, and the
  // base says the count was not what was asked.
  AnalysisWindow clamped = ComputeAnalysisWindow(*t, 9);
  EXPECT_EQ(clamped.warmup.size(), 5u);
  EXPECT_EQ(clamped.steps, 1u);
  EXPECT_NE(
      clamped.Describe().find("5 warm-up steps left out; --warmup-steps 9 asks for every step, so the last one stays"),
      std::string::npos)
      << clamped.Describe();
  // Exactly the steps before the last: no clamp to say.
  EXPECT_EQ(ComputeAnalysisWindow(*t, 5).Describe().find("asks for every step"), std::string::npos);
}

TEST(AnalysisWindowTest, TrailingTruncatedIsAShortEmptyLastStep) {
  // Hand-made durations (ms) with, per step, whether it owns device work and
  // whether a host op starts inside it.
  const std::vector<char> all4 = {1, 1, 1, 1}, none4 = {0, 0, 0, 0}, last_empty4 = {1, 1, 1, 0};
  // mi250_minitoy's shape: a 9.29 ms step, then 49 us holding nothing.
  EXPECT_EQ(TrailingTruncated({9.288, 0.049}, {1, 0}, {1, 0}), 1u);
  EXPECT_EQ(TrailingTruncated({10, 10, 10, 0.05}, last_empty4, all4), 1u);
  // Short but with device work of its own: a real (smaller) step.
  EXPECT_EQ(TrailingTruncated({10, 10, 10, 0.05}, all4, all4), 0u);
  // No work, but not short (20% below the median is the bar): it stays.
  EXPECT_EQ(TrailingTruncated({10, 10, 10, 8.5}, last_empty4, last_empty4), 0u);
  EXPECT_EQ(TrailingTruncated({10, 10, 10, 7.9}, last_empty4, last_empty4), 1u);
  // A CPU trace (no step owns device work): a fast last step holding ops is
  // a step (the pairs' runs); one holding no op is a fragment.
  EXPECT_EQ(TrailingTruncated({47, 2.6, 47, 2.9}, none4, all4), 0u);
  EXPECT_EQ(TrailingTruncated({10, 10, 10, 0.05}, none4, last_empty4), 1u);
  // All steps short and empty alike: nothing changes.
  EXPECT_EQ(TrailingTruncated({0.05, 0.05, 0.05, 0.05}, none4, none4), 0u);
  // Two trailing fragments; one step always stays.
  EXPECT_EQ(TrailingTruncated({10, 10, 10, 0.05, 0.04}, {1, 1, 1, 0, 0}, {1, 1, 1, 0, 0}), 2u);
  EXPECT_EQ(TrailingTruncated({10, 0.05}, {0, 0}, {1, 0}), 1u);
  EXPECT_EQ(TrailingTruncated({10}, {0}, {0}), 0u);
  // Only the trailing side: an empty short step in the middle is not truncated.
  EXPECT_EQ(TrailingTruncated({10, 0.05, 10, 10}, {1, 0, 1, 1}, {1, 0, 1, 1}), 0u);
  EXPECT_EQ(TrailingTruncated({}, {}, {}), 0u);
}

// Hand-made Kineto trace: `steps` ProfilerStep#N spans of 1 ms back to back
// from 0, each launching one 500 us kernel, then ProfilerStep#(steps+1) of
// `last_us` that launches nothing (with `last_works`, a kernel half its length), and,
// with `sync_after`, the profiler's closing cudaDeviceSynchronize 100 us
// after it (so the recording does not end in the step). A `warmup_us` > 0
// makes the first step that long instead.
std::string TruncatedStepTrace(int steps, double last_us, bool last_works, bool sync_after, double warmup_us = 0) {
  std::string ev;
  double ts = 0;
  int corr = 0;
  auto step = [&](int n, double dur, bool works) {
    if (!ev.empty()) ev += ",";
    ev += R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#)" + std::to_string(n) +
          R"(","pid":1,"tid":1,"ts":)" + std::to_string(ts) + R"(,"dur":)" + std::to_string(dur) + "}";
    if (works) {
      ++corr;
      const double kernel = std::min(500.0, dur / 2);
      ev += R"(,{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":)" +
            std::to_string(ts + 1) + R"(,"dur":5,"args":{"correlation":)" + std::to_string(corr) + "}}";
      ev += R"(,{"ph":"X","cat":"kernel","name":"K","pid":0,"tid":7,"ts":)" + std::to_string(ts + 6) + R"(,"dur":)" +
            std::to_string(kernel) + R"(,"args":{"device":0,"stream":7,"correlation":)" + std::to_string(corr) + "}}";
    }
    ts += dur;
  };
  for (int n = 1; n <= steps; ++n) step(n, n == 1 && warmup_us > 0 ? warmup_us : 1000, true);
  step(steps + 1, last_us, last_works);
  if (sync_after) {
    ev += R"(,{"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":)" +
          std::to_string(ts + 100) + R"(,"dur":60})";
  }
  return R"({"traceEvents":[)" + ev + "]}";
}

// Hand-made: three 1 ms steps with a kernel each, then a 50 us
// ProfilerStep#4 without work that the profiler stopped in. By hand: the
// steady state is steps 1-3, 1.000 ms; before, step 4 counted and the base
// was (3 x 1000 + 50) / 4 = 762.5 us.
TEST(AnalysisWindowTest, TruncatedLastStepLeavesTheSteadyState) {
  auto t = ImportJsonText(TruncatedStepTrace(3, 50, false, true));
  ASSERT_NE(t, nullptr);
  AnalysisWindow w = ComputeAnalysisWindow(*t);
  EXPECT_EQ(w.steps, 3u);
  EXPECT_DOUBLE_EQ(w.base_ns, 1e6);
  ASSERT_EQ(w.truncated.size(), 1u);
  EXPECT_EQ(t->Str(FindSteps(*t).steps[w.truncated[0]].name), "ProfilerStep#4");
  EXPECT_EQ(w.warmup, w.truncated);  // every consumer leaves it out as it does warm-up
  EXPECT_EQ(w.warmup_only(), 0u);
  EXPECT_EQ(w.Describe(), "per step (mean of 3 steady-state steps, 1.000 ms); 1 truncated last step left out");
  EXPECT_FALSE(IntervalsContain(w.intervals, 3'000'000 + 10'000));  // inside step 4
  MetricSet m;
  PublishAnalysisWindow(*t, w, &m);
  ASSERT_NE(m.Get("truncated_steps"), nullptr);
  EXPECT_EQ(m.Get("truncated_steps")->value, 1);
  EXPECT_EQ(m.Get("warmup_steps")->value, 0);
  ASSERT_EQ(m.Evidence("warmup").size(), 1u);
  EXPECT_NE(m.Evidence("warmup")[0].find("ProfilerStep#4: 50.00 us, left out of impacts as a truncated last step"),
            std::string::npos)
      << m.Evidence("warmup")[0];
  // The step time every command reports follows the window.
  EXPECT_DOUBLE_EQ(ComputeStepStats(*t, &w).mean_ns, 1e6);
  EXPECT_EQ(ComputeStepStats(*t, &w).count, 3u);
}

// Hand-made: the last step is as short but launched a kernel of its own (a
// smaller last batch), or the steps are all alike: nothing is truncated and
// no metric says so.
TEST(AnalysisWindowTest, ShortLastStepWithWorkOrAlikeStepsStay) {
  auto works = ImportJsonText(TruncatedStepTrace(3, 50, true, true));
  ASSERT_NE(works, nullptr);
  AnalysisWindow w = ComputeAnalysisWindow(*works);
  EXPECT_EQ(w.steps, 4u);
  EXPECT_TRUE(w.truncated.empty());
  MetricSet m;
  PublishAnalysisWindow(*works, w, &m);
  EXPECT_EQ(m.Get("truncated_steps"), nullptr);
  auto alike = ImportJsonText(TruncatedStepTrace(3, 1000, true, false));
  ASSERT_NE(alike, nullptr);
  EXPECT_EQ(ComputeAnalysisWindow(*alike).steps, 4u);
  EXPECT_TRUE(ComputeAnalysisWindow(*alike).truncated.empty());
  // A CPU trace whose last step is fast but holds its op, and ends where the
  // recording ends (as a CPU trace's last ProfilerStep does): a step. Empty,
  // it is a fragment.
  auto cpu = [](bool last_holds_op) {
    std::string ev;
    for (int k = 0; k < 4; ++k) {
      const int ts = 1000 * k, dur = k < 3 ? 1000 : 100;
      ev += std::string(k ? "," : "") + R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#)" +
            std::to_string(k + 1) + R"(","pid":1,"tid":1,"ts":)" + std::to_string(ts) + R"(,"dur":)" +
            std::to_string(dur) + "}";
      if (k < 3 || last_holds_op) {
        ev += R"(,{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":)" + std::to_string(ts + 10) +
              R"(,"dur":50})";
      }
    }
    return ImportJsonText(R"({"traceEvents":[)" + ev + "]}");
  };
  auto fast = cpu(true), empty = cpu(false);
  ASSERT_NE(fast, nullptr);
  ASSERT_NE(empty, nullptr);
  EXPECT_TRUE(ComputeAnalysisWindow(*fast).truncated.empty());
  EXPECT_EQ(ComputeAnalysisWindow(*fast).steps, 4u);
  EXPECT_EQ(ComputeAnalysisWindow(*empty).truncated.size(), 1u);
  EXPECT_DOUBLE_EQ(ComputeAnalysisWindow(*empty).base_ns, 1e6);
}

// CutLastStep by hand: 2+ earlier steps, shorter than each, the recording
// ending in it, and a name every earlier step holds that it lacks; each
// condition alone dropped keeps the step.
TEST(AnalysisWindowTest, CutLastStepNeedsEveryCondition) {
  const std::vector<std::string> whole = {"## forward ##", "Optimizer.step#SGD.step", "autograd::engine::x"};
  const std::vector<std::string> cut = {"## forward ##"};
  EXPECT_EQ(CutLastStep({725, 401, 171}, {whole, whole, cut}, true),
            "the recording ends inside it, before ops every earlier step holds: Optimizer.step#SGD.step and "
            "autograd::engine::x");
  EXPECT_EQ(CutLastStep({725, 401, 171}, {whole, whole, cut}, false), "");  // recorded on after it
  EXPECT_EQ(CutLastStep({725, 171}, {whole, cut}, true), "");               // 1 earlier step
  EXPECT_EQ(CutLastStep({725, 401, 402}, {whole, whole, cut}, true), "");   // not shorter than each
  EXPECT_EQ(CutLastStep({725, 401, 171}, {whole, whole, whole}, true), "");  // holds every name
  // A name only some earlier steps hold (a skipped optimizer step) is no evidence.
  EXPECT_EQ(CutLastStep({725, 401, 171}, {whole, cut, cut}, true), "");
  EXPECT_EQ(CutLastStep({725, 401, 171}, {whole, whole}, true), "");  // sizes differ
  const std::vector<std::string> many = {"a", "b", "c", "d", "e"};
  EXPECT_EQ(CutLastStep({9, 9, 9, 1}, {many, many, many, {"a"}}, true),
            "the recording ends inside it, before ops every earlier step holds: b, c, d and 1 more");
}

// Hand-made CPU trace shaped as fresh's exc_out (test/data/fresh/
// exc_out.kineto.json): steps of 725 and 401 us holding forward, backward
// and optimizer, then a 171 us step the recording ends in that holds the
// forward only. TrailingTruncated keeps it (it holds an op, and against 2
// steps this spread it is not short: median 563, margin 720 us); CutLastStep
// leaves it out. By hand: base (725 + 401) / 2 = 563 us (was 432.3 us).
// With `epoch`, the last step opens an "epoch 2" annotation around its ops
// (fresh's midepoch: a whole last step whose ops all lie below the top level).
std::string CutStepTrace(bool last_cut, bool op_after, bool epoch = false) {
  std::string ev;
  const int starts[3] = {0, 737, 1146}, durs[3] = {725, 401, 171};
  for (int k = 0; k < 3; ++k) {
    auto x = [&](const char* cat, const std::string& name, int ts, int dur) {
      ev += std::string(ev.empty() ? "" : ",") + R"({"ph":"X","cat":")" + cat + R"(","name":")" + name +
            R"(","pid":1,"tid":1,"ts":)" + std::to_string(ts) + R"(,"dur":)" + std::to_string(dur) + "}";
    };
    const int t = starts[k];
    x("user_annotation", "ProfilerStep#" + std::to_string(k + 1), t, durs[k]);
    if (epoch && k == 2) x("user_annotation", "epoch 2", t + 5, 165);
    x("user_annotation", "## forward ##", t + 10, 100);
    x("cpu_op", "aten::linear", t + 20, 50);
    if (k < 2 || !last_cut) {
      x("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", t + 120, 30);
      x("user_annotation", "Optimizer.step#SGD.step", t + 155, 10);
    }
  }
  if (op_after) {
    ev += R"(,{"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":1,"ts":1400,"dur":5})";
  }
  return R"({"traceEvents":[)" + ev + "]}";
}

TEST(AnalysisWindowTest, LastStepCutBeforeItsBackwardIsTruncated) {
  auto t = ImportJsonText(CutStepTrace(true, false));
  ASSERT_NE(t, nullptr);
  AnalysisWindow w = ComputeAnalysisWindow(*t);
  ASSERT_EQ(w.truncated.size(), 1u);
  EXPECT_EQ(t->Str(FindSteps(*t).steps[w.truncated[0]].name), "ProfilerStep#3");
  ASSERT_EQ(w.truncated_why.size(), 1u);
  EXPECT_EQ(w.truncated_why[0],
            "the recording ends inside it, before ops every earlier step holds: Optimizer.step#SGD.step and "
            "autograd::engine::evaluate_function: AddmmBackward0");
  EXPECT_EQ(w.steps, 2u);
  EXPECT_DOUBLE_EQ(w.base_ns, 563e3);
  EXPECT_EQ(w.Describe(), "per step (mean of 2 steady-state steps, 0.563 ms); 1 truncated last step left out");
  MetricSet m;
  PublishAnalysisWindow(*t, w, &m);
  ASSERT_EQ(m.Evidence("warmup").size(), 1u);
  EXPECT_NE(m.Evidence("warmup")[0].find("ProfilerStep#3: 171.00 us, left out of impacts as a truncated last step "
                                         "(cut short: the recording ends inside it, before "
                                         "ops every earlier step holds: Optimizer.step#SGD.step and "),
            std::string::npos)
      << m.Evidence("warmup")[0];
  EXPECT_DOUBLE_EQ(ComputeStepStats(*t, &w).mean_ns, 563e3);
  // Whole (it holds every name, also when an annotation opened in it puts
  // them all below the top level) or recorded on after it: a step.
  for (auto [cut, after, epoch] : {std::tuple{false, false, false}, std::tuple{true, true, false},
                                   std::tuple{false, false, true}}) {
    auto other = ImportJsonText(CutStepTrace(cut, after, epoch));
    ASSERT_NE(other, nullptr);
    AnalysisWindow o = ComputeAnalysisWindow(*other);
    EXPECT_TRUE(o.truncated.empty()) << cut << after << epoch;
    EXPECT_EQ(o.steps, 3u) << cut << after << epoch;
  }
}

// Hand-made: a 5 ms warm-up step, four 1 ms steps and a 50 us fragment. By
// hand: warm-up 1 (5 ms against a 1 ms median of the rest), truncated 1,
// steady 3 steps of 1 ms; the base says both.
TEST(AnalysisWindowTest, WarmupAndTruncatedStepsAreSaidApart) {
  auto t = ImportJsonText(TruncatedStepTrace(4, 50, false, true, 5000));
  ASSERT_NE(t, nullptr);
  AnalysisWindow w = ComputeAnalysisWindow(*t);
  EXPECT_EQ(w.steps, 3u);
  EXPECT_DOUBLE_EQ(w.base_ns, 1e6);
  EXPECT_EQ(w.warmup.size(), 2u);
  EXPECT_EQ(w.warmup_only(), 1u);
  EXPECT_EQ(w.truncated.size(), 1u);
  EXPECT_EQ(
      w.Describe(),
      "per step (mean of 3 steady-state steps, 1.000 ms); 1 warm-up step left out; 1 truncated last step left out");
  // A forced warm-up count applies to the steps that are left.
  AnalysisWindow forced = ComputeAnalysisWindow(*t, 0);
  EXPECT_EQ(forced.steps, 4u);
  EXPECT_EQ(forced.truncated.size(), 1u);
  EXPECT_EQ(DescribeImpactBase(3, 1, 1e6, 0, 0, 0, 2),
            "per step (mean of 3 steady-state steps, 1.000 ms); 2 truncated last steps left out");
}

// Hand-made: a forced warm-up count on a trace without steps does nothing,
// and the base says so rather than leaving the user to think it applied.
TEST(AnalysisWindowTest, WarmupForcedWithoutStepsIsSaid) {
  auto t = ImportJsonText(
      R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 50}]})");
  ASSERT_NE(t, nullptr);
  AnalysisWindow w = ComputeAnalysisWindow(*t, 3);
  EXPECT_EQ(w.steps, 0u);
  EXPECT_NE(w.Describe().find("--warmup-steps 3 does nothing here: the trace has no steps"), std::string::npos)
      << w.Describe();
  EXPECT_EQ(ComputeAnalysisWindow(*t).Describe().find("--warmup-steps"), std::string::npos);
}

// Hand-made capture with ops in 1 step in 2 (aiprof trace --torch-every 2):
// ProfilerStep#1..8 on the main thread; the even steps carry an aten::mm
// (8 ms, 18 ms in step 8) and last 12 ms (22 ms), the odd ones hold no op
// and last 10 ms. By hand: the profiled steps are 2, 4, 6, 8, mean
// (12 + 12 + 12 + 22) / 4 = 14.5 ms; the four without ops, mean 10 ms, count
// in the step time only: (4 x 10 + 3 x 12 + 22) / 8 = 12.25 ms. Before, the
// window was all 8 steps, 12.25 ms, and attribution's wall time held the
// steps without ops (98 ms against 58 ms of profiled steps).
std::string EveryOtherStepProfiled() {
  std::string events;
  int64_t ts = 0;
  for (int n = 1; n <= 8; ++n) {
    const bool profiled = n % 2 == 0;
    const int64_t dur = profiled ? (n == 8 ? 22'000 : 12'000) : 10'000;
    events += std::string(events.empty() ? "" : ",") + R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#)" +
              std::to_string(n) + R"(","pid":1,"tid":1,"ts":)" + std::to_string(ts) + R"(,"dur":)" +
              std::to_string(dur) + "}";
    if (profiled) {
      events += R"(,{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":)" + std::to_string(ts + 1000) +
                R"(,"dur":)" + std::to_string(n == 8 ? 18'000 : 8'000) + "}";
    }
    ts += dur;
  }
  return R"({"traceEvents":[)" + events + "]}";
}

TEST(AnalysisWindowTest, SampledCaptureWindowIsTheStepsWithOps) {
  auto t = ImportJsonText(EveryOtherStepProfiled());
  ASSERT_NE(t, nullptr);
  // Without the capture's word, every step is a steady step.
  AnalysisWindow all = ComputeAnalysisWindow(*t);
  EXPECT_EQ(all.steps, 8u);
  EXPECT_TRUE(all.unprofiled.empty());
  t->metadata["capture.torch_every"] = "2";
  EXPECT_EQ(TorchEvery(*t), 2);
  AnalysisWindow w = ComputeAnalysisWindow(*t);
  EXPECT_EQ(w.torch_every, 2);
  EXPECT_EQ(w.steps, 4u);
  EXPECT_DOUBLE_EQ(w.base_ns, 14.5e6);
  ASSERT_EQ(w.unprofiled.size(), 4u);
  EXPECT_DOUBLE_EQ(w.unprofiled_mean_ns, 10e6);
  EXPECT_EQ(w.warmup_only(), 0u);
  EXPECT_EQ(LengthOf(w.intervals), 58'000'000);
  EXPECT_FALSE(IntervalsContain(w.intervals, 5'000'000));  // inside step 1
  EXPECT_NE(w.Describe().find("ops recorded in 1 step in 2 (aiprof trace --torch-every 2): impacts are per "
                              "profiled step"),
            std::string::npos)
      << w.Describe();
  EXPECT_NE(w.Describe().find("4 steady steps without ops (mean 10.000 ms)"), std::string::npos) << w.Describe();
  MetricSet m;
  PublishAnalysisWindow(*t, w, &m);
  EXPECT_EQ(m.Get("impact_steps")->value, 4);
  EXPECT_EQ(m.Get("warmup_steps")->value, 0);
  ASSERT_EQ(m.Evidence("warmup").size(), 1u);
  EXPECT_NE(m.Evidence("warmup")[0].find("4 steady steps without ops"), std::string::npos) << m.Evidence("warmup")[0];
  // Op figures (attribution's steady steps) are over the profiled steps.
  AttributionResult a = ComputeAttribution(*t, &w);
  EXPECT_EQ(a.steps, 4u);
  EXPECT_EQ(a.wall_ns, 58'000'000);
  // The step time stays over every steady step.
  StepStats st = ComputeStepStats(*t, &w);
  EXPECT_EQ(st.count, 8u);
  EXPECT_DOUBLE_EQ(st.mean_ns, 12.25e6);
  // A merged part's key counts too.
  t->metadata.erase("capture.torch_every");
  t->metadata["rank1.capture.torch_every"] = "5";
  EXPECT_EQ(TorchEvery(*t), 5);
}

}  // namespace
}  // namespace aiprof
