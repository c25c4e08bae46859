// Hand-made op sequences (labelled as such: names are letters or made-up
// strings, times are chosen here). Real traces are checked end to end by
// test/e2e/periodic_steps_test.py against an independent Python search.
#include "src/model/periodic_steps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>

#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

// Hand-made: one op per letter of `names`, each `dur` ns long, `gap` ns
// apart; a '|' adds `wait` ns of idle time before the next op.
OpSequence Letters(const std::string& names, int64_t dur = 100, int64_t gap = 10, int64_t wait = 0) {
  OpSequence s;
  int64_t t = 0;
  for (char c : names) {
    if (c == '|') {
      t += wait;
      continue;
    }
    s.name.push_back(static_cast<uint32_t>(c));
    s.start_ns.push_back(t);
    s.end_ns.push_back(t + dur);
    t += dur + gap;
  }
  return s;
}

TEST(PeriodicSteps, FindsTheSmallestPeriodAfterAWarmUpPrefixAndBeforeATail) {
  // Hand-made: warm-up "xyz", 5 repetitions of "abcd", a partial "ab".
  OpSequence s = Letters("xyzabcdabcdabcdabcdabcdab");
  PeriodicPattern p = FindPeriodicPattern(s);
  ASSERT_TRUE(p.found());
  EXPECT_TRUE(p.exact);
  EXPECT_EQ(p.period, 4u);
  EXPECT_EQ(p.first, 3u);  // every gap is equal: the first phase
  ASSERT_EQ(p.steps.size(), 5u);
  for (size_t k = 0; k < 5; ++k) {
    EXPECT_EQ(p.steps[k].start_ns, s.start_ns[3 + 4 * k]);
    // Each step lasts until the next repetition starts (the last one
    // too: the partial "ab" continues the pattern).
    EXPECT_EQ(p.steps[k].dur_ns, 4 * 110);
  }
  EXPECT_EQ(p.covered_ns, 20 * 100);
  EXPECT_EQ(p.busy_ns, 25 * 100);
}

TEST(PeriodicSteps, LastStepEndsAtItsLastOpWithoutAPartialRepetition) {
  OpSequence s = Letters("abcabcabc");  // hand-made
  PeriodicPattern p = FindPeriodicPattern(s);
  ASSERT_TRUE(p.found());
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.steps[2].start_ns, s.start_ns[6]);
  EXPECT_EQ(p.steps[2].dur_ns, s.end_ns[8] - s.start_ns[6]);
}

TEST(PeriodicSteps, PhaseStartsAfterTheLongestIdleGap) {
  // Hand-made: the loop waits (1 ms) before 'c' in every iteration.
  OpSequence s = Letters("ab|cdab|cdab|cdab|cd", 100, 10, 1000000);
  PeriodicPattern p = FindPeriodicPattern(s);
  ASSERT_TRUE(p.found());
  EXPECT_EQ(p.period, 4u);
  EXPECT_EQ(p.first, 2u);  // 'c'
  // "cdab" x 3; the leading "ab" is a prefix, the trailing "cd" a partial repetition.
  EXPECT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.steps[0].start_ns, s.start_ns[2]);
}

TEST(PeriodicSteps, ADataLoaderCallOpensTheStep) {
  OpSequence s = Letters("ab|cdab|cdab|cdab|cd", 100, 10, 1000000);  // hand-made
  s.data_loader.assign(s.name.size(), 0);
  for (size_t i = 0; i < s.name.size(); ++i) s.data_loader[i] = s.name[i] == 'b';
  PeriodicPattern p = FindPeriodicPattern(s);
  ASSERT_TRUE(p.found());
  EXPECT_EQ(p.first, 1u);  // 'b', though the longest wait is before 'c'
  EXPECT_EQ(p.steps.size(), 3u);
}

TEST(PeriodicSteps, NoStepsWithoutRepetition) {
  // A single long op.
  EXPECT_FALSE(FindPeriodicPattern(Letters("a")).found());
  // Hand-made: all different names.
  EXPECT_FALSE(FindPeriodicPattern(Letters("abcdefghijklmnopqrstuvwxyz")).found());
  // Two repetitions are not enough.
  EXPECT_FALSE(FindPeriodicPattern(Letters("abcdabcd")).found());
  // Empty, and ops of no duration (no busy time to cover).
  EXPECT_FALSE(FindPeriodicPattern(OpSequence{}).found());
  EXPECT_FALSE(FindPeriodicPattern(Letters("abababab", 0)).found());
}

TEST(PeriodicSteps, NoStepsFromRandomNames) {
  // Hand-made: 20 000 ops whose names are drawn from 50, uniformly; fixed seed.
  std::mt19937 rng(12345);
  OpSequence s;
  for (int i = 0; i < 20000; ++i) {
    s.name.push_back(rng() % 50);
    s.start_ns.push_back(i * 100);
    s.end_ns.push_back(i * 100 + 50 + static_cast<int64_t>(rng() % 40));
  }
  EXPECT_FALSE(FindPeriodicPattern(s).found());
}

TEST(PeriodicSteps, CoverageBoundary) {
  // Hand-made: "ab" x 3 (600 ns of ops) then one op z. Accepted when the
  // repetitions hold more than half the busy time also without the longest
  // one: 600 - 200 > z.
  OpSequence s = Letters("abababz");
  s.end_ns[6] = s.start_ns[6] + 600;  // exactly half
  EXPECT_FALSE(FindPeriodicPattern(s).found());
  s.end_ns[6] = s.start_ns[6] + 400;
  EXPECT_FALSE(FindPeriodicPattern(s).found());
  s.end_ns[6] = s.start_ns[6] + 399;
  PeriodicPattern p = FindPeriodicPattern(s);
  ASSERT_TRUE(p.found());
  EXPECT_EQ(p.period, 2u);
  EXPECT_EQ(p.steps.size(), 3u);
}

TEST(PeriodicSteps, OneOutlierRepetitionDoesNotMakeAPattern) {
  // Hand-made: a loop of copies whose first op lasts 30 s (a first CUDA call),
  // then a long op that is not repeated: the repetitions cover more than half
  // the busy time only because of the outlier.
  OpSequence s = Letters("abababababz");
  s.end_ns[0] = s.start_ns[0] + 30'000'000'000;
  for (size_t i = 1; i < s.name.size(); ++i) {
    s.start_ns[i] += 30'000'000'000;
    s.end_ns[i] += 30'000'000'000;
  }
  s.end_ns[10] = s.start_ns[10] + 13'000'000'000;
  EXPECT_FALSE(FindPeriodicPattern(s).found());
}

TEST(PeriodicSteps, ApproximatePatternToleratesSmallDifferences) {
  // Hand-made: iterations of 20 ops, a DataLoader-like anchor 'D' first;
  // some iterations lack 'z' or have an extra 'y' (the profiler's own small
  // ops nesting differently from one iteration to the next).
  std::string loop;
  const std::string body = "|Dabcdefghijklmnopqr";
  for (int k = 0; k < 8; ++k) loop += body + (k % 3 == 0 ? "y" : "") + (k % 2 == 0 ? "z" : "");
  OpSequence s = Letters("wu" + loop, 100, 10, 5000);
  PeriodicPattern p = FindPeriodicPattern(s);
  ASSERT_TRUE(p.found());
  EXPECT_FALSE(p.exact);
  EXPECT_EQ(s.name[p.first], static_cast<uint32_t>('D'));
  EXPECT_EQ(p.steps.size(), 8u);
  EXPECT_NEAR(p.period, 20, 1);
  for (const StepSpanNs& st : p.steps) {
    const auto at = std::find(s.start_ns.begin(), s.start_ns.end(), st.start_ns) - s.start_ns.begin();
    EXPECT_EQ(s.name[at], static_cast<uint32_t>('D'));
  }
}

TEST(PeriodicSteps, ApproximatePatternNeedsSimilarSegments) {
  // Hand-made: an anchor every 10 ops, but the ops between differ entirely
  // from one segment to the next.
  std::string text;
  for (int k = 0; k < 6; ++k) {
    text += 'A';
    for (int i = 0; i < 9; ++i) text += static_cast<char>('a' + (k * 9 + i) % 60);
  }
  EXPECT_FALSE(FindPeriodicPattern(Letters(text)).found());
}

TEST(PeriodicSteps, LinearOnALongPeriodicSequence) {
  // Hand-made: 2 million ops, period 1000 (names 0..999), after 777 warm-up ops.
  OpSequence s;
  const int kN = 2'000'000;
  for (int i = 0; i < kN; ++i) {
    s.name.push_back(i < 777 ? 5000 + i : (i - 777) % 1000);
    s.start_ns.push_back(i * 10);
    s.end_ns.push_back(i * 10 + 5);
  }
  PeriodicPattern p = FindPeriodicPattern(s);
  ASSERT_TRUE(p.found());
  EXPECT_EQ(p.period, 1000u);
  EXPECT_EQ(p.steps.size(), static_cast<size_t>((kN - 777) / 1000));
}

TEST(PeriodicSteps, BoundedWorkOnALongRunThatHoldsTooLittle) {
  // Hand-made: a 300 us op, 1 million ops of one name (450 us in all: 1 ns
  // each for 450 000 of them, 0 for the rest), a 250 us op. The
  // run of "a" holds the busy-time median but 45% of the busy time, and every
  // period up to 10 000 matches it: without a bound on the work this would
  // grow the same run 10 000 times.
  OpSequence s;
  auto add = [&](uint32_t name, int64_t start, int64_t dur) {
    s.name.push_back(name);
    s.start_ns.push_back(start);
    s.end_ns.push_back(start + dur);
  };
  add(1, 0, 300'000);
  for (int i = 0; i < 1'000'000; ++i) add(2, 300'000 + i, i < 450'000 ? 1 : 0);
  add(3, 2'000'000, 250'000);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(FindPeriodicPattern(s).found());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

// Through the builder: a trace with no ProfilerStep#N gets steps from the
// pattern, named "periodic step #N", with the metadata saying so.
TEST(PeriodicSteps, TraceBuilderFallsBackToThePattern) {
  Trace t;
  TraceBuilder b(&t);
  const uint32_t host = b.ThreadTrack(IdValue::Num(1), IdValue::Num(7));
  const uint32_t side = b.ThreadTrack(IdValue::Num(1), IdValue::Num(8));
  const StringId cat = b.Intern("cpu_op");
  int64_t ts = 1000;
  for (const char* name : {"init", "load"}) {  // hand-made warm-up
    b.AddSlice(host, ts, 50, b.Intern(name), cat, kNoCorrelation, 0, 0);
    ts += 60;
  }
  for (int k = 0; k < 4; ++k) {
    ts += 500;  // idle before each iteration
    for (const char* name : {"fwd", "bwd", "opt"}) {
      b.AddSlice(host, ts, 100, b.Intern(name), cat, kNoCorrelation, 0, 0);
      b.AddSlice(host, ts + 10, 20, b.Intern("child"), cat, kNoCorrelation, 0, 0);  // nested: not outermost
      ts += 110;
    }
  }
  b.AddSlice(side, 1000, 5, b.Intern("x"), cat, kNoCorrelation, 0, 0);
  t.metadata["steps.from"] = "periodic pattern";  // a file's own value is not believed
  ASSERT_TRUE(b.Finalize().ok());
  ASSERT_EQ(t.steps.size(), 4u);
  EXPECT_EQ(t.Str(t.steps.name[0]), "periodic step #1");
  EXPECT_EQ(t.steps.number[3], 4);
  EXPECT_EQ(t.steps.track[0], host);
  EXPECT_EQ(t.steps.dur_ns[0], 3 * 110 + 500);  // to the next iteration's first op
  EXPECT_EQ(t.metadata["steps.from"], "periodic pattern");
  EXPECT_EQ(t.metadata["steps.period_ops"], "3");
  EXPECT_EQ(t.metadata["steps.thread"], "7");
  EXPECT_EQ(t.metadata["steps.exact"], "1");
}

TEST(PeriodicSteps, TraceBuilderKeepsMarkersAndDropsAFilesOwnStepKeys) {
  Trace t;
  TraceBuilder b(&t);
  const uint32_t host = b.ThreadTrack(IdValue::Num(1), IdValue::Num(7));
  const StringId cat = b.Intern("cpu_op");
  for (int k = 0; k < 4; ++k) {
    b.AddSlice(host, k * 1000, 900, b.Intern("ProfilerStep#" + std::to_string(k)), cat, kNoCorrelation, 0, 0);
    b.AddSlice(host, k * 1000 + 10, 100, b.Intern("fwd"), cat, kNoCorrelation, 0, 0);
  }
  t.metadata["steps.from"] = "periodic pattern";
  ASSERT_TRUE(b.Finalize().ok());
  ASSERT_EQ(t.steps.size(), 4u);
  EXPECT_EQ(t.Str(t.steps.name[0]), "ProfilerStep#0");
  EXPECT_EQ(t.metadata.count("steps.from"), 0u);
}

TEST(PeriodicSteps, APatternOnASideThreadIsNotTheTracesSteps) {
  // Hand-made: 5 short sync calls on one thread, one 1 s op on the main thread.
  Trace t;
  TraceBuilder b(&t);
  const uint32_t main = b.ThreadTrack(IdValue::Num(1), IdValue::Num(7));
  const uint32_t sync = b.ThreadTrack(IdValue::Num(1), IdValue::Num(9));
  b.AddSlice(main, 0, 1'000'000'000, b.Intern("run"), b.Intern("cpu_op"), kNoCorrelation, 0, 0);
  for (int k = 0; k < 5; ++k) {
    b.AddSlice(sync, k * 1000, 10, b.Intern("Context Sync"), b.Intern("cuda_sync"), kNoCorrelation, 0, 0);
  }
  ASSERT_TRUE(b.Finalize().ok());
  EXPECT_EQ(t.steps.size(), 0u);
  EXPECT_EQ(t.metadata.count("steps.from"), 0u);
}

TEST(PeriodicSteps, OneOpRepeatedIsNoStep) {
  // Hand-made: one op name over and over (the serve trial's 1.5 M-op trace
  // gave 1.5 M one-op "steps"): no period, neither 1 nor any multiple.
  EXPECT_FALSE(FindPeriodicPattern(Letters(std::string(60, 'a'))).found());
  // A warm-up op, then one op repeated: still none.
  EXPECT_FALSE(FindPeriodicPattern(Letters("x" + std::string(60, 'a'))).found());
  // Two names alternating is a pattern (period 2), and a repetition that
  // starts with a run of one name too.
  PeriodicPattern p = FindPeriodicPattern(Letters("abababababab"));
  ASSERT_TRUE(p.found());
  EXPECT_EQ(p.period, 2u);
  p = FindPeriodicPattern(Letters("aaabaaabaaabaaab"));
  ASSERT_TRUE(p.found());
  EXPECT_EQ(p.period, 4u);
}

}  // namespace
}  // namespace aiprof
