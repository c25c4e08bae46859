// Slices that cross on one host thread (torch_npu traces): the replay keeps
// a crossing slice at its offset into its predecessor.
#include <gtest/gtest.h>

#include "src/analysis/whatif/whatif.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportJsonText;

// Hand-made (µs), torch_npu's shape: the record_function range "Fwd" opens
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

WhatIfResult PredictCrossing(const Trace& t, std::string_view text) {
  CriticalPathResult path = ComputeCriticalPath(t);
  StatusOr<Scenario> sc = ParseScenario(text);
  EXPECT_TRUE(sc.ok());
  return PredictWhatIf(t, path, *sc);
}

TEST(WhatIfCrossingTest, UnchangedReplayIsExact) {
  auto t = ImportJsonText(kCrossingTrace);
  ASSERT_NE(t, nullptr);
  WhatIfResult r = PredictCrossing(*t, "scale zzzz_nomatch 1");
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
  WhatIfResult r = PredictCrossing(*t, "scale __enter__ 2");
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].predicted_ns, 110'000);
}

}  // namespace
}  // namespace aiprof
