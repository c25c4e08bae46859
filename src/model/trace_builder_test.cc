#include "src/model/trace_builder.h"

#include <gtest/gtest.h>

#include <string>

#include "src/base/import_budget.h"
#include "src/model/trace.h"

namespace aiprof {
namespace {

// Every track takes the last name its process was given, for numeric and
// string pids alike; a name for a pid with no track names nothing.
// Each event counts once against the thread's import budget (serve's
// --max-convert-events): a B/E pair became a slice at Finalize and counted
// a second time (a B/E trace met the limit at half its size); a batch
// below kBudgetBatch is added at Finalize. Hand-made: 3 pairs, 2 slices.
TEST(TraceBuilderTest, EachEventCountsOnceAgainstTheImportBudget) {
  ImportBudget budget;
  ScopedImportBudget scope(&budget);
  Trace trace;
  TraceBuilder b(&trace);
  const StringId op = b.Intern("op"), cat = b.Intern("cpu_op");
  const uint32_t t = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  for (int i = 0; i < 3; ++i) {
    b.AddBegin(t, i * 100, op, cat, 0, 0);
    b.AddEnd(t, i * 100 + 50);
  }
  b.AddSlice(t, 400, 10, op, cat, kNoCorrelation, 0, 0);
  b.AddSlice(t, 500, 10, op, cat, kNoCorrelation, 0, 0);
  ASSERT_TRUE(b.Finalize().ok());
  EXPECT_EQ(trace.slices.size(), 5u);
  EXPECT_EQ(budget.events.load(), 5u);
}

TEST(TraceBuilderTest, ProcessNamesTheLastOneWinsPerPid) {
  Trace trace;
  TraceBuilder b(&trace);
  const StringId spans = b.Intern("Spans");
  uint32_t a1 = b.ThreadTrack(IdValue::Num(1001), IdValue::Num(1));
  uint32_t a2 = b.ThreadTrack(IdValue::Num(1001), IdValue::Num(2));
  uint32_t c = b.ThreadTrack(IdValue::Num(1002), IdValue::Num(1));
  uint32_t s = b.ThreadTrack(IdValue::Str(spans), IdValue::Num(1));
  uint32_t n = b.ThreadTrack(IdValue::Num(spans.raw), IdValue::Num(1));
  uint32_t unnamed = b.ThreadTrack(IdValue::Num(1003), IdValue::Num(1));
  b.SetProcessName(IdValue::Num(1001), b.Intern("first"));
  b.SetProcessName(IdValue::Num(1002), b.Intern("two"));
  b.SetProcessName(IdValue::Num(1001), b.Intern("second"));
  b.SetProcessName(IdValue::Str(spans), b.Intern("spans process"));
  // A numeric pid equal to the string's id is another process.
  b.SetProcessName(IdValue::Num(spans.raw), b.Intern("not the spans"));
  b.SetProcessName(IdValue::Num(99), b.Intern("no track"));
  ASSERT_TRUE(b.Finalize().ok());
  EXPECT_EQ(trace.Str(trace.tracks.process_name[a1]), "second");
  EXPECT_EQ(trace.Str(trace.tracks.process_name[a2]), "second");
  EXPECT_EQ(trace.Str(trace.tracks.process_name[c]), "two");
  EXPECT_EQ(trace.Str(trace.tracks.process_name[s]), "spans process");
  EXPECT_EQ(trace.Str(trace.tracks.process_name[n]), "not the spans");
  EXPECT_TRUE(trace.tracks.process_name[unnamed].empty());
}

// D4 of the input trial: applying the names was a pass over every track per
// process_name event, O(events x tracks): 200k threads of one process with
// the event repeated per thread took 80 s. Here 40k processes of one thread
// (each named twice) and one process of 40k threads named 40k times: 120k
// events x 80k tracks, about 10^10 steps the old way (tens of seconds), a
// few milliseconds as one map and one pass. No time is asserted; every
// track's name is.
TEST(TraceBuilderTest, ManyProcessNamesAndTracksAreAppliedInOnePass) {
  constexpr int kProcesses = 40000, kThreads = 40000;
  Trace trace;
  TraceBuilder b(&trace);
  const StringId early = b.Intern("early"), big = b.Intern("big");
  const StringId name = b.Intern("op"), cat = b.Intern("cpu_op");
  for (int p = 0; p < kProcesses; ++p) {
    uint32_t track = b.ThreadTrack(IdValue::Num(10 + p), IdValue::Num(1));
    b.AddSlice(track, p, 1, name, cat, kNoCorrelation, b.ArgCursor(), 0);
    b.SetProcessName(IdValue::Num(10 + p), early);
  }
  for (int p = 0; p < kProcesses; ++p) b.SetProcessName(IdValue::Num(10 + p), b.Intern("p" + std::to_string(p)));
  for (int t = 0; t < kThreads; ++t) {
    uint32_t track = b.ThreadTrack(IdValue::Num(1), IdValue::Num(t));
    b.AddSlice(track, t, 1, name, cat, kNoCorrelation, b.ArgCursor(), 0);
    b.SetProcessName(IdValue::Num(1), big);
  }
  ASSERT_TRUE(b.Finalize().ok());
  ASSERT_EQ(trace.tracks.size(), size_t{kProcesses + kThreads});
  for (size_t i = 0; i < trace.tracks.size(); ++i) {
    const int64_t pid = trace.tracks.pid[i];
    const std::string want = pid == 1 ? "big" : "p" + std::to_string(pid - 10);
    ASSERT_EQ(trace.Str(trace.tracks.process_name[i]), want) << "track " << i;
  }
}

// D6 of the input trial: a device pid beyond 32 bits was cut to 32 bits, so
// kernels on pid 2^32 landed on device 0 (hidden by its overlap) with no
// diagnostic. Each such pid is its own device now, past the largest one, and
// each of its tracks is counted.
TEST(TraceBuilderTest, DevicePidsBeyond32BitsAreKeptApartAndCounted) {
  Trace trace;
  TraceBuilder b(&trace);
  const StringId kernel = b.Intern("kernel"), gemm = b.Intern("gemm");
  const int64_t kWide = int64_t{1} << 32;
  auto add = [&](int64_t pid, int64_t tid) {
    uint32_t track = b.ThreadTrack(IdValue::Num(pid), IdValue::Num(tid));
    b.AddSlice(track, 0, 100, gemm, kernel, kNoCorrelation, b.ArgCursor(), 0);
    return track;
  };
  uint32_t d0 = add(0, 7), d3 = add(3, 7), wide = add(kWide, 7), wide2 = add(kWide, 8), wide1 = add(kWide + 1, 7);
  uint32_t negative = add(-1, 7);
  ASSERT_TRUE(b.Finalize().ok());
  const TrackTable& t = trace.tracks;
  EXPECT_EQ(t.device[d0], 0);
  EXPECT_EQ(t.device[d3], 3);
  EXPECT_EQ(t.device[wide], 4);
  EXPECT_EQ(t.device[wide2], 4);  // the same pid, another stream: the same device
  EXPECT_EQ(t.device[wide1], 5);
  EXPECT_EQ(t.device[negative], 6);  // not kHostDevice
  for (uint32_t track : {wide, wide2, wide1, negative}) EXPECT_EQ(t.kind[track], TrackKind::kDeviceStream);
  ASSERT_EQ(trace.diagnostics.Count("device_id_out_of_range"), 4u);
  EXPECT_NE(trace.diagnostics.entries().at("device_id_out_of_range").first_where.find("pid 4294967296, tid 7"),
            std::string::npos);
}

// A slice that starts inside another on its track and ends after it is
// counted as slice_partial_overlap, naming the file, the track and both
// slices; it keeps its depth (a row below the innermost slice open at its start). Hand-made:
// torch's shape, _record_function_enter_new [1000, 1107) and ProfilerStep#6
// starting inside it at 1007 and ending at 5426, on one thread; a properly
// nested pair on another counts nothing.
TEST(TraceBuilderTest, PartiallyOverlappingSlicesAreCounted) {
  Trace trace;
  TraceBuilder b(&trace);
  b.AddSource("hand_made.json");
  const StringId cat = b.Intern("cpu_op");
  const uint32_t host = b.ThreadTrack(IdValue::Num(1), IdValue::Num(2));
  b.AddSlice(host, 1000, 107, b.Intern("_record_function_enter_new"), cat, kNoCorrelation, b.ArgCursor(), 0);
  b.AddSlice(host, 1007, 4419, b.Intern("ProfilerStep#6"), cat, kNoCorrelation, b.ArgCursor(), 0);
  b.AddSlice(host, 2000, 100, b.Intern("aten::mm"), cat, kNoCorrelation, b.ArgCursor(), 0);
  const uint32_t other = b.ThreadTrack(IdValue::Num(1), IdValue::Num(3));
  b.AddSlice(other, 0, 100, b.Intern("outer"), cat, kNoCorrelation, b.ArgCursor(), 0);
  b.AddSlice(other, 10, 90, b.Intern("inner"), cat, kNoCorrelation, b.ArgCursor(), 0);
  b.AddSlice(other, 100, 5, b.Intern("next"), cat, kNoCorrelation, b.ArgCursor(), 0);
  ASSERT_TRUE(b.Finalize().ok());
  ASSERT_EQ(trace.diagnostics.Count("slice_partial_overlap"), 1u);
  EXPECT_EQ(trace.diagnostics.entries().at("slice_partial_overlap").first_where,
            "hand_made.json: track 0 (pid 1, tid 2): 'ProfilerStep#6' [1007, 5426) ns starts inside "
            "'_record_function_enter_new' [1000, 1107) ns and ends after it");
  const SliceTable& s = trace.slices;
  ASSERT_EQ(s.size(), 6u);
  // Sorted by (track, ts): each slice is a row below the innermost one
  // open at its start (drawn below it, never on its row).
  EXPECT_EQ(s.depth[0], 0);
  EXPECT_EQ(s.depth[1], 1);
  EXPECT_EQ(s.depth[2], 2);  // aten::mm, one below ProfilerStep#6
  EXPECT_EQ(s.depth[4], 1);
}

// torch's legacy export_chrome_trace (Debian's torch 1.13) writes every op
// with "pid": "CPU functions": a process named by a label that holds ops is
// a host thread (what-if, launches and gaps read host threads; what-if
// changed nothing on such a trace), and so are its annotation-only threads
// (gloo's workers); a labelled process of annotations alone stays a lane of
// spans. Hand-made, the legacy export's shape.
TEST(TraceBuilderTest, ALabelledProcessHoldingOpsIsAHostThread) {
  Trace trace;
  TraceBuilder b(&trace);
  const uint32_t ops = b.ThreadTrack(IdValue::Str(b.Intern("CPU functions")), IdValue::Num(1));
  b.AddSlice(ops, 0, 100, b.Intern("ProfilerStep#1"), b.Intern("user_annotation"), kNoCorrelation, b.ArgCursor(), 0);
  b.AddSlice(ops, 10, 50, b.Intern("aten::addmm"), b.Intern("cpu_op"), kNoCorrelation, b.ArgCursor(), 0);
  // gloo's worker thread of that process: only record_function labels.
  const uint32_t gloo = b.ThreadTrack(IdValue::Str(b.Intern("CPU functions")), IdValue::Num(2));
  b.AddSlice(gloo, 20, 30, b.Intern("gloo:all_reduce"), b.Intern("user_annotation"), kNoCorrelation, b.ArgCursor(), 0);
  const uint32_t lane = b.ThreadTrack(IdValue::Str(b.Intern("Spans")), IdValue::Num(1));
  b.AddSlice(lane, 0, 100, b.Intern("request 1"), b.Intern("user_annotation"), kNoCorrelation, b.ArgCursor(), 0);
  ASSERT_TRUE(b.Finalize().ok());
  EXPECT_EQ(trace.tracks.kind[ops], TrackKind::kThread);
  EXPECT_EQ(trace.tracks.layer[ops], Layer::kFramework);
  EXPECT_EQ(trace.Str(trace.tracks.pid_label[ops]), "CPU functions");
  EXPECT_EQ(trace.tracks.kind[gloo], TrackKind::kThread);
  EXPECT_EQ(trace.tracks.kind[lane], TrackKind::kSpans);
  EXPECT_EQ(trace.tracks.layer[lane], Layer::kApplication);
}

// torch's legacy export rounds each start and duration to whole
// microseconds, so a child can end 1 us after its parent (convnet_bs8_mixed:
// aten::convolution [11791, 13628) us inside aten::conv2d [11787, 13627)).
// Such a slice is the parent's child, cut to its end, and counted as
// slice_end_rounded; 2 us past, or 0.5 us past on nanoseconds, stays a
// partial overlap. Hand-made.
TEST(TraceBuilderTest, AChildOneRoundedMicrosecondPastItsParentNests) {
  Trace trace;
  TraceBuilder b(&trace);
  const StringId cat = b.Intern("cpu_op");
  const uint32_t t = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  b.AddSlice(t, 11787000, 1840000, b.Intern("aten::conv2d"), cat, kNoCorrelation, b.ArgCursor(), 0);
  b.AddSlice(t, 11791000, 1837000, b.Intern("aten::convolution"), cat, kNoCorrelation, b.ArgCursor(), 0);
  b.AddSlice(t, 20000000, 1000000, b.Intern("outer"), cat, kNoCorrelation, b.ArgCursor(), 0);
  b.AddSlice(t, 20500000, 502000, b.Intern("two past"), cat, kNoCorrelation, b.ArgCursor(), 0);
  b.AddSlice(t, 30000000, 1000000, b.Intern("outer ns"), cat, kNoCorrelation, b.ArgCursor(), 0);
  b.AddSlice(t, 30500000, 500500, b.Intern("half past"), cat, kNoCorrelation, b.ArgCursor(), 0);
  ASSERT_TRUE(b.Finalize().ok());
  const SliceTable& s = trace.slices;
  ASSERT_EQ(s.size(), 6u);
  EXPECT_EQ(s.depth[1], 1);
  EXPECT_EQ(s.ts_ns[1] + s.dur_ns[1], 13627000);  // cut to aten::conv2d's end
  EXPECT_EQ(s.dur_ns[3], 502000);                 // left as written
  EXPECT_EQ(s.dur_ns[5], 500500);
  EXPECT_EQ(trace.diagnostics.Count("slice_end_rounded"), 1u);
  EXPECT_EQ(trace.diagnostics.Count("slice_partial_overlap"), 2u);
  EXPECT_NE(trace.diagnostics.entries().at("slice_end_rounded").first_where.find("[11791000, 13628000) ns"),
            std::string::npos);
}

}  // namespace
}  // namespace aiprof
