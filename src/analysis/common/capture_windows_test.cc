#include "src/analysis/common/capture_windows.h"

#include <gtest/gtest.h>

#include <climits>

#include "src/analysis/launches/launch_stats.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportJsonText;

// Hand-made, by hand. Thread 1: a window [3, 9) us closed by its end call,
// then a begin at 20 (ends 21) interrupted by another begin at 30 (ends 31),
// which the thread's calls leave open. Thread 2: an end call at 5 that starts
// before its begin call [4, 6) ends: no window. Rank of both: the process's.
// Work launches: 1 before any window (not captured), 5 in [3, 9), 25 in the
// interrupted window, 40 in the open one: 3 of 4 captured on thread 1;
// thread 2's launch at 7 lies in no window.
constexpr const char* kCaptures = R"({"traceEvents":[
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":1,"args":{}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaStreamBeginCapture","pid":1,"tid":1,"ts":2,"dur":1,"args":{}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":5,"dur":1,"args":{}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaStreamEndCapture","pid":1,"tid":1,"ts":9,"dur":1,"args":{}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaStreamBeginCapture","pid":1,"tid":1,"ts":20,"dur":1,"args":{}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":25,"dur":1,"args":{}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaStreamBeginCapture","pid":1,"tid":1,"ts":30,"dur":1,"args":{}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":40,"dur":1,"args":{}},
  {"ph":"X","cat":"cuda_runtime","name":"hipStreamBeginCapture","pid":1,"tid":2,"ts":4,"dur":2,"args":{}},
  {"ph":"X","cat":"cuda_runtime","name":"hipStreamEndCapture","pid":1,"tid":2,"ts":5,"dur":3,"args":{}},
  {"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":2,"ts":7,"dur":1,"args":{}}
]})";

TEST(CaptureWindowsTest, ClosedInterruptedAndOpenWindowsPerThread) {
  auto t = ImportJsonText(kCaptures);
  ASSERT_NE(t, nullptr);
  const std::vector<CaptureWindow> w = FindCaptureWindows(*t);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].start_ns, 3'000);
  EXPECT_EQ(w[0].end_ns, 9'000);
  EXPECT_TRUE(w[0].closed);
  EXPECT_EQ(w[1].start_ns, 21'000);
  EXPECT_EQ(w[1].end_ns, 30'000);
  EXPECT_FALSE(w[1].closed);
  EXPECT_EQ(w[2].start_ns, 31'000);
  EXPECT_EQ(w[2].end_ns, INT64_MAX);
  EXPECT_FALSE(w[2].closed);
  EXPECT_EQ(w[0].track, w[2].track);

  // Only closed, non-empty windows are time the host spent capturing.
  const std::map<int32_t, Intervals> by_rank = CaptureWindowsByRank(*t, w);
  ASSERT_EQ(by_rank.size(), 1u);
  EXPECT_EQ(by_rank.begin()->second, (Intervals{{3'000, 9'000}}));
}

TEST(CaptureWindowsTest, LaunchStatsCountTheSameWindows) {
  auto t = ImportJsonText(kCaptures);
  ASSERT_NE(t, nullptr);
  const LaunchStats st = ComputeLaunchStats(*t);
  EXPECT_EQ(st.capture_windows, 1u);
  EXPECT_EQ(st.capture_ns, 6'000);
  EXPECT_EQ(st.work_launch_calls, 5u);
  EXPECT_EQ(st.captured_launch_calls, 3u);
}

}  // namespace
}  // namespace aiprof
