#include "src/analysis/whatif/whatif.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "src/analysis/whatif/whatif_test_traces.h"
#include "src/analysis/window/analysis_window.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportFixture;
using testing::ImportJsonText;

// Hand-made (µs): step [0, 100]; the data loader [0, 40]; cudaLaunchKernel
// [41, 42] → K [45, 95]; cudaStreamSynchronize [43, 97] waits for K.
// Removing data loading by hand: the loader takes 0, so everything after it
// moves 40 earlier: launch at 1, K [5, 55], the sync ends 2 after K at 57,
// the step's 3 µs tail ends it at 60: predicted step 60 µs (measured 100).
constexpr char kLoader[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
  {"ph":"X","cat":"user_annotation","name":"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__","pid":1,"tid":1,"ts":0,"dur":40},
  {"ph":"X","cat":"cpu_op","name":"aten::stack","pid":1,"tid":1,"ts":5,"dur":30},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":41,"dur":1,"args":{"correlation":1}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":43,"dur":54},
  {"ph":"X","cat":"kernel","name":"K","pid":0,"tid":7,"ts":45,"dur":50,"args":{"device":0,"stream":7,"correlation":1}}
]})json";

WhatIfResult MustPredict(const Trace& t, std::string_view text) {
  CriticalPathResult path = ComputeCriticalPath(t);
  StatusOr<Scenario> sc = ParseScenario(text);
  EXPECT_TRUE(sc.ok()) << sc.status().message();
  return PredictWhatIf(t, path, *sc);
}

TEST(WhatIfTest, HandMadeRemoveDataLoadingByHand) {
  auto t = ImportJsonText(kLoader);
  ASSERT_NE(t, nullptr);
  WhatIfResult r = MustPredict(*t, "remove-idle data_loading");
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].measured_ns, 100'000);
  EXPECT_EQ(r.steps[0].predicted_ns, 60'000);
  EXPECT_EQ(r.steady_steps, 1u);
  EXPECT_EQ(r.predicted_ns, 60'000);
  EXPECT_EQ(r.predicted_lo_ns, r.predicted_hi_ns);
  // Halving the kernel instead: K [45, 70], the sync ends at 72, the step at 75.
  WhatIfResult half = MustPredict(*t, "scale K 0.5");
  EXPECT_EQ(half.steps[0].predicted_ns, 75'000);
}

// Hand-made (µs), the predict trial's D1: the host launches four kernels K
// of 100 µs in 8 µs (launch calls [1+2k, 2+2k], k = 0..3); they queue on
// one stream, each `gap` after the one before; a sync [10, end] waits for
// the last; the step ends 2 µs after it. By hand, `scale K 0.5`: the first
// K starts 3 after its launch as measured, the others queue behind it at
// the same gap: step 3 + 4 x 50 + 3 x gap + 2 (the sync's overhead) ...
// measured with gap 0: 3 + 400 + 2 = 405 -> 205; gap 0.5 µs: 406.5 -> 206.5.
// Before, a kernel starting even 0.5 µs after the one before kept its whole
// measured lag from its launch (the queueing): 406.5 -> 406.5.
std::string QueuedKernels(double gap_us) {
  std::string e = R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":STEP})";
  double t = 4;  // the first K: 3 after its launch call started
  for (int k = 0; k < 4; ++k) {
    const std::string corr = std::to_string(k + 1);
    e += R"(,{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":)" +
         std::to_string(1 + 2 * k) + R"(,"dur":1,"args":{"correlation":)" + corr + "}}";
    e += R"(,{"ph":"X","cat":"kernel","name":"K","pid":0,"tid":7,"ts":)" + std::to_string(t) +
         R"(,"dur":100,"args":{"device":0,"stream":7,"correlation":)" + corr + "}}";
    t += 100 + gap_us;
  }
  const double last_end = t - gap_us;
  e += R"(,{"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":10,"dur":)" +
       std::to_string(last_end + 1 - 10) + "}";
  const size_t at = e.find("STEP");
  e.replace(at, 4, std::to_string(last_end + 2));
  return R"({"traceEvents":[)" + e + "]}";
}

TEST(WhatIfTest, QueuedKernelsFollowTheWorkAheadOfThem) {
  for (double gap : {0.0, 0.5}) {
    auto t = ImportJsonText(QueuedKernels(gap));
    ASSERT_NE(t, nullptr);
    WhatIfResult same = MustPredict(*t, "remove no_such_op");
    ASSERT_EQ(same.steps.size(), 1u);
    EXPECT_EQ(same.steps[0].predicted_ns, same.steps[0].measured_ns) << "gap " << gap;
    EXPECT_EQ(same.steps[0].measured_ns, static_cast<int64_t>((406 + 3 * gap) * 1000)) << "gap " << gap;
    WhatIfResult half = MustPredict(*t, "scale K 0.5");
    EXPECT_EQ(half.steps[0].predicted_ns, static_cast<int64_t>((206 + 3 * gap) * 1000)) << "gap " << gap;
    WhatIfResult twice = MustPredict(*t, "scale K 2");
    EXPECT_EQ(twice.steps[0].predicted_ns, static_cast<int64_t>((806 + 3 * gap) * 1000)) << "gap " << gap;
  }
}

// Hand-made (µs): a sync call [20, 30] linked to a kernel that ends at 40,
// after the call returned (a device clock off from the host's): it did not
// wait for it. A replay with nothing changed must leave the call where it
// was; before, it was bound to the kernel's end (HTA's MTIA trace: +328%).
TEST(WhatIfTest, SyncThatReturnedBeforeItsWorkIsNotBoundToIt) {
  auto t = ImportJsonText(R"json({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":50},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":1,"args":{"correlation":1}},
    {"ph":"X","cat":"kernel","name":"K","pid":0,"tid":7,"ts":5,"dur":35,"args":{"device":0,"stream":7,"correlation":1}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":20,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":31,"dur":19}
  ]})json");
  ASSERT_NE(t, nullptr);
  WhatIfResult same = MustPredict(*t, "remove no_such_op");
  ASSERT_EQ(same.steps.size(), 1u);
  EXPECT_EQ(same.steps[0].predicted_ns, same.steps[0].measured_ns);
}

// Hand-made (µs): two steps of 100, each A [0, 40] and B [45, 100] inside
// its ProfilerStep; the 5 between them is the step span's own time.
// `remove-idle other` takes it: one row for the steps' own spans (5 -> 0 per
// step), not one row per ProfilerStep#N each a half (the predict trial's
// D6). A clause whose pattern names nothing says so (D3).
TEST(WhatIfTest, StepSpansAreOneRowAndDeadClausesAreNoted) {
  std::string e;
  for (int step = 1; step <= 2; ++step) {
    const std::string at = R"(,"pid":1,"tid":1,"ts":)", t0 = std::to_string((step - 1) * 100);
    e += std::string(e.empty() ? "" : ",") + R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#)" +
         std::to_string(step) + "\"" + at + t0 + R"(,"dur":100})";
    e += R"(,{"ph":"X","cat":"cpu_op","name":"A")" + at + t0 + R"(,"dur":40})";
    e += R"(,{"ph":"X","cat":"cpu_op","name":"B")" + at + std::to_string((step - 1) * 100 + 45) + R"(,"dur":55})";
  }
  auto t = ImportJsonText(R"({"traceEvents":[)" + e + "]}");
  ASSERT_NE(t, nullptr);
  WhatIfResult r = MustPredict(*t, "remove-idle other; remove no_such_op; scale B 1");
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[0].predicted_ns, 95'000);
  size_t step_rows = 0;
  for (const WhatIfResult::Move& m : r.moved) {
    EXPECT_EQ(m.name.find("ProfilerStep#"), std::string::npos) << m.name;
    if (m.name == "(each step's own span)") {
      ++step_rows;
      EXPECT_DOUBLE_EQ(m.measured_ns, 5'000);
      EXPECT_DOUBLE_EQ(m.predicted_ns, 0);
    }
  }
  EXPECT_EQ(step_rows, 1u);
  size_t dead = 0;
  for (const std::string& n : r.notes) dead += n.find("'no_such_op' (clause 2)") != std::string::npos;
  EXPECT_EQ(dead, 1u);
  for (const std::string& n : r.notes) EXPECT_EQ(n.find("'B'"), std::string::npos) << n;
}

// Hand-made (µs): a step [0, 100] with A [10, 40] and B [45, 70] inside;
// its own time is 10 before A, 5 between, 30 after B. `remove-idle other`
// takes all of it: A [0, 30], B [30, 55], the step ends with B: 55. Before,
// the 30 after B stayed (85; the predict trial's D7, against docs/whatif.md's
// "a wrapper's own time ... become 0").
TEST(WhatIfTest, RemoveIdleOtherTakesAWrappersTailToo) {
  auto t = ImportJsonText(R"json({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":10,"dur":30},
    {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":45,"dur":25}
  ]})json");
  ASSERT_NE(t, nullptr);
  WhatIfResult r = MustPredict(*t, "remove-idle other");
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].measured_ns, 100'000);
  EXPECT_EQ(r.steps[0].predicted_ns, 55'000);
}

// The same trace, walked again on the replayed times (worked by hand): the
// measured path is the step's tail 3 + its gap after the loader 1
// (idle_other 4), the sync's overhead 2, K 50, the launch delay 4, and the
// loader with aten::stack inside it, all data loading (40): 100. Replayed:
// the loader and aten::stack take no time and leave the path, the rest is
// unchanged: 60.
TEST(WhatIfTest, HandMadeWhatMovedOnTheCriticalPath) {
  auto t = ImportJsonText(kLoader);
  ASSERT_NE(t, nullptr);
  WhatIfResult r = MustPredict(*t, "remove-idle data_loading");
  auto ns = [](const std::array<double, kPathClassCount>& a, PathClass c) { return a[static_cast<size_t>(c)]; };
  EXPECT_EQ(ns(r.measured_path_ns, PathClass::kIdleDataLoading), 40'000);
  EXPECT_EQ(ns(r.measured_path_ns, PathClass::kCompute), 50'000);
  EXPECT_EQ(ns(r.measured_path_ns, PathClass::kIdleHostBound), 4'000);
  EXPECT_EQ(ns(r.measured_path_ns, PathClass::kSync), 2'000);
  EXPECT_EQ(ns(r.measured_path_ns, PathClass::kIdleOther), 4'000);
  EXPECT_EQ(ns(r.predicted_path_ns, PathClass::kIdleDataLoading), 0);
  EXPECT_EQ(ns(r.predicted_path_ns, PathClass::kCompute), 50'000);
  EXPECT_EQ(ns(r.predicted_path_ns, PathClass::kIdleHostBound), 4'000);
  EXPECT_EQ(ns(r.predicted_path_ns, PathClass::kSync), 2'000);
  EXPECT_EQ(ns(r.predicted_path_ns, PathClass::kIdleOther), 4'000);
  ASSERT_EQ(r.moved.size(), 2u);
  EXPECT_EQ(r.moved[0].name, "aten::stack");
  EXPECT_EQ(r.moved[0].cls, PathClass::kIdleDataLoading);
  EXPECT_EQ(r.moved[0].measured_ns, 30'000);
  EXPECT_EQ(r.moved[0].predicted_ns, 0);
  EXPECT_EQ(r.moved[1].name, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
  EXPECT_EQ(r.moved[1].measured_ns, 10'000);
  EXPECT_EQ(r.moved[1].predicted_ns, 0);
}

// Hand-made (µs): four steps of 20 µs, each aten::mm 10 then checkpoint 10.
// `every 2 checkpoint` keeps the checkpoint on steps 2 and 4 only: 10, 20,
// 10, 20; `scale checkpoint 0.5` spreads it: 15 on every step.
using testing::CheckpointTrace;

TEST(WhatIfTest, HandMadeEveryNthStepKeepsTheWorkOnThoseSteps) {
  auto t = ImportJsonText(CheckpointTrace());
  ASSERT_NE(t, nullptr);
  WhatIfResult every = MustPredict(*t, "every 2 checkpoint");
  ASSERT_EQ(every.steps.size(), 4u);
  std::vector<int64_t> got;
  for (const StepPrediction& s : every.steps) got.push_back(s.predicted_ns);
  EXPECT_EQ(got, (std::vector<int64_t>{10'000, 20'000, 10'000, 20'000}));
  // The throughput figure, by hand: mean 15 µs of {10, 20, 10, 20}; s =
  // √(4·5²/3) = 5.7735 µs; Student's t(3) 97.5% = 3.18245; half-width
  // 3.18245 · 5.7735 / √4 = 9.1868 µs. Measured: every step 20 µs.
  ASSERT_EQ(every.steady_steps, 4u);
  EXPECT_DOUBLE_EQ(every.measured_mean_ns, 20'000);
  EXPECT_DOUBLE_EQ(every.predicted_mean_ns, 15'000);
  EXPECT_NEAR(every.predicted_mean_lo_ns, 15'000 - 9'186.8, 1.0);
  EXPECT_NEAR(every.predicted_mean_hi_ns, 15'000 + 9'186.8, 1.0);
  WhatIfResult spread = MustPredict(*t, "scale checkpoint 0.5");
  for (const StepPrediction& s : spread.steps) EXPECT_EQ(s.predicted_ns, 15'000);
  EXPECT_FALSE(ParseScenario("every 0 checkpoint").ok());
  EXPECT_FALSE(ParseScenario("every 10").ok());
}

// Hand-made (µs): the same four steps numbered 1, 3, 5, 7 (a profile that
// recorded every other step, as checkpoint_every_step's before run: #5, #7
// ... #27), a checkpoint on each. No number is a multiple of 2, so keeping
// the work on "the steps numbered a multiple of N" took it off every step
// (audit4: `every 10 checkpoint` equalled `scale checkpoint 0`). The numbers
// are not consecutive: one step in two by position, the 1st and 3rd (#1 and
// #5) keep it: 20, 10, 20, 10 µs, and a note names them. Consecutive numbers
// keep the program's own `step % N == 0` (above: steps 2 and 4).
TEST(WhatIfTest, HandMadeEveryNByPositionWhenStepNumbersSkip) {
  auto t = ImportJsonText(CheckpointTrace(1, 2));
  ASSERT_NE(t, nullptr);
  WhatIfResult every = MustPredict(*t, "every 2 checkpoint");
  ASSERT_EQ(every.steps.size(), 4u);
  std::vector<int64_t> numbers, got;
  for (const StepPrediction& s : every.steps) numbers.push_back(s.number), got.push_back(s.predicted_ns);
  ASSERT_EQ(numbers, (std::vector<int64_t>{1, 3, 5, 7}));
  EXPECT_EQ(got, (std::vector<int64_t>{20'000, 10'000, 20'000, 10'000}));
  EXPECT_DOUBLE_EQ(every.predicted_mean_ns, 15'000);
  auto note = std::find_if(every.notes.begin(), every.notes.end(),
                           [](const std::string& n) { return n.find("every 2 (clause 1)") != std::string::npos; });
  ASSERT_NE(note, every.notes.end());
  EXPECT_NE(note->find("#1, #5 (2 of 4)"), std::string::npos) << *note;
  EXPECT_NE(note->find("by position"), std::string::npos) << *note;
  // every 10: only the first of the four steps keeps it (by number: none).
  WhatIfResult ten = MustPredict(*t, "every 10 checkpoint");
  got.clear();
  for (const StepPrediction& s : ten.steps) got.push_back(s.predicted_ns);
  EXPECT_EQ(got, (std::vector<int64_t>{20'000, 10'000, 10'000, 10'000}));
  // Consecutive numbers: by number, and the note says so.
  auto consecutive = ImportJsonText(CheckpointTrace(1));
  ASSERT_NE(consecutive, nullptr);
  WhatIfResult by_number = MustPredict(*consecutive, "every 2 checkpoint");
  note = std::find_if(by_number.notes.begin(), by_number.notes.end(),
                      [](const std::string& n) { return n.find("every 2 (clause 1)") != std::string::npos; });
  ASSERT_NE(note, by_number.notes.end());
  EXPECT_NE(note->find("#2, #4 (2 of 4)"), std::string::npos) << *note;
  EXPECT_NE(note->find("numbered a multiple of 2"), std::string::npos) << *note;
}

// Hand-made (µs), the shape that pinned ResNet50's backward: aten::mm
// [41, 43] and a zero-length runtime call at 43, which the graph nests under
// aten::mm (it starts at its end). Its end must be replayed before aten::mm's,
// or aten::mm keeps its measured end and the step cannot move: with the
// loader removed everything after it moves 40 earlier, step 100 → 60.
constexpr char kZeroAtEnd[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
  {"ph":"X","cat":"user_annotation","name":"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__","pid":1,"tid":1,"ts":0,"dur":40},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":41,"dur":2},
  {"ph":"X","cat":"cuda_runtime","name":"cudaOccupancyMaxActiveBlocksPerMultiprocessor","pid":1,"tid":1,"ts":43,"dur":0},
  {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":44,"dur":53}
]})json";

TEST(WhatIfTest, HandMadeZeroLengthCallAtItsSiblingsEnd) {
  auto t = ImportJsonText(kZeroAtEnd);
  ASSERT_NE(t, nullptr);
  WhatIfResult r = MustPredict(*t, "remove-idle data_loading");
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].measured_ns, 100'000);
  EXPECT_EQ(r.steps[0].predicted_ns, 60'000);
  EXPECT_EQ(r.measured_fallbacks, 0u);
}

// Hand-made (µs): loader [0, 80] in a 100 µs step; the rest is 20 µs.
// overlap-data-loading N: the loading leaves the step (20 µs) but a step is
// never shorter than 80 / N: N = 1 → 80, N = 2 → 40, N = 8 → 20.
constexpr char kSlowLoader[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
  {"ph":"X","cat":"user_annotation","name":"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__","pid":1,"tid":1,"ts":0,"dur":80},
  {"ph":"X","cat":"cpu_op","name":"aten::stack","pid":1,"tid":1,"ts":5,"dur":70},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":80,"dur":20}
]})json";

TEST(WhatIfTest, HandMadeOverlapDataLoadingIsBoundedByTheWorkers) {
  auto t = ImportJsonText(kSlowLoader);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(MustPredict(*t, "remove-idle data_loading").steps.at(0).predicted_ns, 20'000);
  EXPECT_EQ(MustPredict(*t, "overlap-data-loading 1").steps.at(0).predicted_ns, 80'000);
  EXPECT_EQ(MustPredict(*t, "overlap-data-loading 2").steps.at(0).predicted_ns, 40'000);
  EXPECT_EQ(MustPredict(*t, "overlap-data-loading 8").steps.at(0).predicted_ns, 20'000);
  EXPECT_FALSE(ParseScenario("overlap-data-loading 0").ok());
  EXPECT_FALSE(ParseScenario("overlap-data-loading two").ok());
}

TEST(WhatIfTest, NoChangeReproducesMeasuredSteps) {
  auto t = ImportFixture("kineto/HolisticTraceAnalysis__tests__data__critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz");
  ASSERT_NE(t, nullptr);
  WhatIfResult r = MustPredict(*t, "remove no_op_has_this_name");
  ASSERT_FALSE(r.steps.empty());
  for (const StepPrediction& s : r.steps) EXPECT_EQ(s.predicted_ns, s.measured_ns) << "step " << s.number;
  EXPECT_EQ(r.slices_changed, 0u);
}

// Real trace (the ResNet50 num_workers=0 sample): under graph-launch the
// host no longer paces the device and runs ahead into the device's queue, so
// a step's wall time grows (it measured 199.3 against 189.1 ms); the period
// between step ends is the time base, and it cannot grow when host work is
// only removed.
TEST(WhatIfTest, GraphLaunchPredictsTheStepPeriod) {
  auto t = ImportFixture("kineto/kineto__tb_plugin__samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz");
  ASSERT_NE(t, nullptr);
  WhatIfResult r = MustPredict(*t, "graph-launch");
  EXPECT_EQ(r.time_base, WhatIfResult::TimeBase::kStepPeriod);
  ASSERT_GT(r.steady_steps, 2u);
  EXPECT_LT(r.predicted_ns, r.measured_ns);
  for (const StepPrediction& s : r.steps) {
    if (s.steady) {
      EXPECT_LE(s.predicted_ns, s.measured_ns + 1'000'000) << "step " << s.number;
    }
  }
  // remove-idle sync frees the host from the device too (docs/whatif.md).
  EXPECT_EQ(MustPredict(*t, "remove-idle sync").time_base, WhatIfResult::TimeBase::kStepPeriod);
  EXPECT_EQ(MustPredict(*t, "remove-idle host_bound").time_base, WhatIfResult::TimeBase::kStepWallTime);
}

TEST(WhatIfTest, ParseErrorsNameTheClause) {
  EXPECT_FALSE(ParseScenario("").ok());
  EXPECT_NE(ParseScenario("scale aten::mm x").status().message().find("'scale aten::mm x'"), std::string::npos);
  EXPECT_FALSE(ParseScenario("remove-idle lunch").ok());
  EXPECT_FALSE(ParseScenario("fly away").ok());
  StatusOr<Scenario> ok = ParseScenario("remove-idle host_bound; scale gemm 0.5 ; remove aten::copy_");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->clauses.size(), 3u);
  // Past 1e6 a factor only overflows (1e12 on ResNet50 predicted -63%).
  EXPECT_TRUE(ParseScenario("scale aten:: 1e6").ok());
  EXPECT_NE(ParseScenario("scale aten:: 1e12").status().message().find("from 0 to 1e6"), std::string::npos);
  EXPECT_FALSE(ParseScenario("scale aten:: 1e308").ok());
  // Decimal only (the trial's D5: "0x10" was read as 16, so a typo of "0x5"
  // for "0.5" was x5): hex, inf and nan are refused with the clause.
  for (const char* f : {"0x10", "0X.8p1", "inf", "nan", "+0.5", "1,5"}) {
    EXPECT_FALSE(ParseScenario(std::string("scale gemm ") + f).ok()) << f;
  }
  EXPECT_TRUE(ParseScenario("scale gemm .5").ok());
  EXPECT_TRUE(ParseScenario("scale gemm 2.5e-1").ok());
}

// Hand-made (µs): four steps of aten::mm 10 + checkpoint 10. A clause after
// 128 others is still itself (an int8 clause index capped at 127 made it
// act as clause 127, a `remove`, found by review), and 1e6 × a step's op
// stays a number of the model's range, never an overflow to a shorter step.
TEST(WhatIfTest, ManyClausesAndLargeFactorsKeepTheirMeaning) {
  auto t = ImportJsonText(CheckpointTrace());
  ASSERT_NE(t, nullptr);
  std::string text;
  for (int k = 0; k < 130; ++k) text += "remove nothing_matches_" + std::to_string(k) + "; ";
  text += "scale checkpoint 2";
  WhatIfResult r = MustPredict(*t, text);
  for (const StepPrediction& s : r.steps) EXPECT_EQ(s.predicted_ns, 30'000);  // mm 10 + checkpoint 20
  WhatIfResult big = MustPredict(*t, "scale checkpoint 1e6");
  for (const StepPrediction& s : big.steps) EXPECT_EQ(s.predicted_ns, 10'000 + 10'000'000'000);
}

}  // namespace
}  // namespace aiprof

namespace aiprof {
namespace {

// Hand-made (µs), remove-page-faults: step [0, 100]; A [10, 50] holding a1
// [20, 40]; B [60, 90]; page-fault instants as aiprof trace writes them,
// 5 µs each (capture.page_fault_cost_ns): 2 in a1 (25, 30), 1 in A's own
// time (45), 3 in B (70-72), 1 between A and B (55: no op, kept). By hand:
// a1 20 -> 10; A's self time 20 -> 15 (x 0.75: 10 before a1 -> 7.5, 10
// after -> 7.5), so A [10, 35] with a1 [17.5, 27.5]; the 10 µs gap to B
// kept: B [45, 60] (30 - 15); the step's 10 µs tail: the step ends at 70.
constexpr char kFaults[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
  {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":10,"dur":40},
  {"ph":"X","cat":"cpu_op","name":"a1","pid":1,"tid":1,"ts":20,"dur":20},
  {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":60,"dur":30},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":1,"tid":1,"ts":25},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":1,"tid":1,"ts":30},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":1,"tid":1,"ts":45},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":1,"tid":1,"ts":55},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":1,"tid":1,"ts":70},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":1,"tid":1,"ts":71},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":1,"tid":1,"ts":72}
]})json";

TEST(WhatIfTest, HandMadeRemovePageFaultsByHand) {
  auto t = ImportJsonText(kFaults);
  ASSERT_NE(t, nullptr);
  t->metadata["capture.page_faults"] = "on";
  t->metadata["capture.page_faults.period"] = "1";
  t->metadata["capture.page_fault_cost_ns"] = "5000";
  WhatIfResult r = MustPredict(*t, "remove-page-faults");
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].measured_ns, 100'000);
  EXPECT_EQ(r.steps[0].predicted_ns, 70'000);
  EXPECT_EQ(r.slices_changed, 3u);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.back().find("6 faults in the self time of 3 slices"), std::string::npos) << r.notes.back();
  EXPECT_NE(r.notes.back().find("1 faults outside any slice kept"), std::string::npos) << r.notes.back();
  // Without the measured cost nothing changes, and the note says why.
  t->metadata.erase("capture.page_fault_cost_ns");
  WhatIfResult unknown = MustPredict(*t, "remove-page-faults");
  EXPECT_EQ(unknown.steps[0].predicted_ns, 100'000);
  ASSERT_FALSE(unknown.notes.empty());
  EXPECT_NE(unknown.notes.back().find("cost unknown"), std::string::npos);
  EXPECT_FALSE(ParseScenario("remove-page-faults now").ok());
}

// A CPU trace without fault records gets the caveat that first-touch faults
// the change moves are not modelled; a trace with device work, a capture
// that recorded faults, or a change that matches nothing does not.
TEST(WhatIfTest, CpuTraceWithoutFaultRecordsSaysFaultsAreNotModelled) {
  constexpr char kCpu[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
  {"ph":"X","cat":"cpu_op","name":"aten::mul","pid":1,"tid":1,"ts":10,"dur":30},
  {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":50,"dur":30}
]})json";
  auto has_caveat = [](const WhatIfResult& r) {
    for (const std::string& n : r.notes) {
      if (n.find("first-touch faults that the change moves") != std::string::npos) return true;
    }
    return false;
  };
  auto t = ImportJsonText(kCpu);
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(has_caveat(MustPredict(*t, "remove aten::mul")));
  EXPECT_FALSE(has_caveat(MustPredict(*t, "remove aten::nothing_matches")));
  t->metadata["capture.page_faults"] = "on";
  EXPECT_FALSE(has_caveat(MustPredict(*t, "remove aten::mul")));
  auto gpu = ImportJsonText(kLoader);
  ASSERT_NE(gpu, nullptr);
  EXPECT_FALSE(has_caveat(MustPredict(*gpu, "scale K 0.5")));
  // The time base's end: the CPU step launched no device work (its wall
  // time ends on the host), the GPU step launched K.
  EXPECT_TRUE(MustPredict(*t, "remove aten::mul").host_only);
  EXPECT_FALSE(MustPredict(*gpu, "scale K 0.5").host_only);
  EXPECT_STREQ(StepEndText(true), "its end on the host");
}

// Slices that cross on one host thread (torch_npu traces): the replay keeps
// a crossing slice at its offset into its predecessor. Hand-made (µs), torch_npu's shape: the record_function range "Fwd" opens
// inside the Python frame __enter__ (during _record_function_enter_new) and
// closes inside __exit__; neither encloses the other.
//   step [0, 100]; __enter__ [10, 30] > _record_function_enter_new [12, 28];
//   Fwd [20, 80] > aten::mm [40, 60]; __exit__ [75, 90].
constexpr char kCrossingTrace[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
  {"ph":"X","cat":"python_function","name":"torch/autograd/profiler.py(630): __enter__","pid":1,"tid":1,"ts":10,"dur":20},
  {"ph":"X","cat":"python_function","name":"<built-in method _record_function_enter_new>","pid":1,"tid":1,"ts":12,"dur":16},
  {"ph":"X","cat":"user_annotation","name":"Fwd","pid":1,"tid":1,"ts":20,"dur":60},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":40,"dur":20},
  {"ph":"X","cat":"python_function","name":"torch/autograd/profiler.py(636): __exit__","pid":1,"tid":1,"ts":75,"dur":15}
]})json";

TEST(WhatIfCrossingTest, UnchangedReplayIsExact) {
  auto t = ImportJsonText(kCrossingTrace);
  ASSERT_NE(t, nullptr);
  WhatIfResult r = MustPredict(*t, "scale zzzz_nomatch 1");
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.slices_changed, 0u);
  EXPECT_EQ(r.steps[0].measured_ns, 100'000);
  EXPECT_EQ(r.steps[0].predicted_ns, 100'000);  // was 115'000: Fwd +10, __exit__ +5
  EXPECT_TRUE(r.moved.empty());
}

// __enter__ x2 (worked by hand): __enter__ [10, 50]; Fwd starts at its
// offset into it, 10 x 2: 30; mm [50, 70]; Fwd ends 90; __exit__ at its
// offset 55 into Fwd: [85, 100]; the step's tail 10: 110. (Ordering Fwd
// after __enter__'s end would give 135.)
TEST(WhatIfCrossingTest, ACrossingSliceKeepsItsOffsetIntoItsPredecessor) {
  auto t = ImportJsonText(kCrossingTrace);
  ASSERT_NE(t, nullptr);
  WhatIfResult r = MustPredict(*t, "scale __enter__ 2");
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].predicted_ns, 110'000);
}

// Hand-made (µs), no steps (nothing repeats, no ProfilerStep): start-up
// cudaDeviceGetStreamPriorityRange [0, 5000] (a known initialisation call,
// alone of its name, with the device idle: AnalysisWindow's start-up); then
// aten::mm [5000, 5100] launches K [5030, 5080] (cudaLaunchKernel [5010,
// 5020]) and waits for it (cudaStreamSynchronize [5020, 5090]); aten::relu
// [5100, 5200]. The analysis window (diagnose's per-trace base): span 5200
// minus start-up 5000 = 200 µs. Before, the what-if's "step" was the whole
// trace, 5200 µs, start-up included (the audit's item 6: AlexNet 43.43 s ->
// 43.43 s, +0.00%, 42.18 s of it start-up).
constexpr char kStartupNoSteps[] = R"json({"traceEvents":[
  {"ph":"X","cat":"cuda_runtime","name":"cudaDeviceGetStreamPriorityRange","pid":1,"tid":1,"ts":0,"dur":5000},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":5000,"dur":100},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":5010,"dur":10,"args":{"correlation":1}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":5020,"dur":70},
  {"ph":"X","cat":"kernel","name":"K","pid":0,"tid":7,"ts":5030,"dur":50,"args":{"device":0,"stream":7,"correlation":1}},
  {"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":5100,"dur":100}
]})json";

TEST(WhatIfPerTraceTest, NoStepsIsOnTheWindowsBaseStartupLeftOut) {
  auto t = ImportJsonText(kStartupNoSteps);
  ASSERT_NE(t, nullptr);
  const AnalysisWindow w = ComputeAnalysisWindow(*t);
  ASSERT_EQ(w.steps, 0u);
  ASSERT_EQ(w.startup_ns, 5'000'000);
  ASSERT_EQ(w.base_ns, 200'000);
  // Nothing changed: the window's base, measured and predicted alike.
  WhatIfResult same = MustPredict(*t, "scale zzzz_nomatch 1");
  ASSERT_EQ(same.steps.size(), 1u);
  EXPECT_TRUE(same.per_trace);
  EXPECT_EQ(same.startup_left_out_ns, 5'000'000);
  EXPECT_EQ(same.per_trace_base_ns, 200'000);
  EXPECT_EQ(same.steps[0].measured_ns, 200'000);  // was 5'200'000
  EXPECT_EQ(same.steps[0].predicted_ns, 200'000);
  ASSERT_FALSE(same.notes.empty());
  EXPECT_EQ(same.notes[0].rfind("per trace, start-up (5.00 ms) left out", 0), 0u) << same.notes[0];
  // By hand, `scale K 0.5`: K [5030, 5055]; the sync ends its 10 µs of
  // overhead after it, 5065; aten::mm its 10 µs tail after that, 5075;
  // aten::relu [5075, 5175]: 25 µs less, of the 200: 175 (before: 5200 ->
  // 5175, -0.5% of a base that was 96% start-up).
  WhatIfResult half = MustPredict(*t, "scale K 0.5");
  ASSERT_EQ(half.steps.size(), 1u);
  EXPECT_EQ(half.measured_ns, 200'000);
  EXPECT_EQ(half.predicted_ns, 175'000);
  EXPECT_EQ(half.predicted_mean_ns, 175'000);
  // A clause on the start-up call itself changes nothing of the base: its
  // time is left out of the prediction as of the baseline.
  WhatIfResult startup = MustPredict(*t, "scale cudaDeviceGetStreamPriorityRange 0.5");
  EXPECT_GT(startup.slices_changed, 0u);
  EXPECT_EQ(startup.steps[0].predicted_ns, 200'000);
}

// Traces with steps keep their step wall time (no per-trace base).
TEST(WhatIfPerTraceTest, StepsAreNotPerTrace) {
  auto t = ImportJsonText(kLoader);
  ASSERT_NE(t, nullptr);
  WhatIfResult r = MustPredict(*t, "scale K 0.5");
  EXPECT_FALSE(r.per_trace);
  EXPECT_EQ(r.startup_left_out_ns, 0);
  EXPECT_EQ(r.steps[0].measured_ns, 100'000);
}

// card --scenario's bottleneck: what the scenario changes most. On the
// checkpoint trace (hand-made: aten::mm 10 µs and checkpoint 10 µs a step),
// `scale checkpoint 0.1` changes the checkpoint region, 10 -> 1 µs a step;
// aten::mm, as long, is unchanged and not named (the audit's item 5: the
// card named op:aten::mm, the op that lost the most time between the runs).
TEST(ScenarioBottleneckTest, NamesWhatTheScenarioChanges) {
  auto t = ImportJsonText(testing::CheckpointTrace(1));
  ASSERT_NE(t, nullptr);
  WhatIfResult r = MustPredict(*t, "scale checkpoint 0.1");
  std::optional<ScenarioTarget> target = ScenarioBottleneck(r);
  ASSERT_TRUE(target.has_value());
  EXPECT_EQ(target->bottleneck, "op:checkpoint");
  EXPECT_EQ(target->name, "checkpoint");
  EXPECT_NEAR(target->measured_ns, 10'000, 1);
  EXPECT_NEAR(target->predicted_ns, 1'000, 1);
  WhatIfResult mm = MustPredict(*t, "remove aten::mm");
  ASSERT_TRUE(ScenarioBottleneck(mm).has_value());
  EXPECT_EQ(ScenarioBottleneck(mm)->bottleneck, "op:aten::mm");
  // A scenario that moves nothing names nothing.
  EXPECT_FALSE(ScenarioBottleneck(MustPredict(*t, "scale zzzz_nomatch 0.5")).has_value());
}

}  // namespace
}  // namespace aiprof
