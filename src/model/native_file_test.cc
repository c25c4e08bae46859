#include "src/model/native_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "src/base/mapped_inputs.h"
#include "src/model/graph_capture_tracks.h"
#include "src/model/op_stats.h"
#include "src/model/trace_builder.h"
#include "test/util/temp_file.h"

namespace aiprof {
namespace {

std::unique_ptr<Trace> SmallTrace() {
  auto t = std::make_unique<Trace>();
  TraceBuilder b(t.get());
  uint32_t host = b.ThreadTrack(IdValue::Num(10), IdValue::Num(11));
  uint32_t dev = b.ThreadTrack(IdValue::Num(0), IdValue::Num(7));
  uint64_t a = b.ArgCursor();
  Arg arg{};
  arg.key = b.Intern("External id");
  arg.type = ArgType::kInt;
  arg.i = 42;
  b.AddArg(arg);
  b.AddSlice(host, 1000, 500, b.Intern("cudaLaunchKernel"), b.Intern("cuda_runtime"), 9, a, 1);
  b.AddSlice(dev, 1600, 800, b.Intern("gemm"), b.Intern("kernel"), 9, 0, 0);
  b.AddSlice(host, 0, 5000, b.Intern("ProfilerStep#1"), b.Intern("user_annotation"), kNoCorrelation, 0, 0);
  b.AddCounter(b.CounterTrack(IdValue::Num(10), b.Intern("mem"), kHostDevice), 5, 1.5);
  b.Diagnose("bad_ts", "x:byte 1", "test");
  t->metadata["k"] = "v";
  EXPECT_TRUE(b.Finalize().ok());
  return t;
}

TEST(NativeFileTest, RoundTripsEveryTable) {
  testing::TempDir dir;
  auto t = SmallTrace();
  std::string path = dir.Path("t.aiprof");
  ASSERT_TRUE(WriteNativeFile(*t, path).ok());
  auto r = ReadNativeFile(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& u = *r.value();
  ASSERT_EQ(u.slices.size(), t->slices.size());
  for (size_t i = 0; i < u.slices.size(); ++i) {
    EXPECT_EQ(u.slices.ts_ns[i], t->slices.ts_ns[i]);
    EXPECT_EQ(u.slices.dur_ns[i], t->slices.dur_ns[i]);
    EXPECT_EQ(u.Str(u.slices.name[i]), t->Str(t->slices.name[i]));
    EXPECT_EQ(u.slices.depth[i], t->slices.depth[i]);
    EXPECT_EQ(u.slices.kind[i], t->slices.kind[i]);
  }
  EXPECT_EQ(u.flows.size(), 1u);
  EXPECT_EQ(u.steps.size(), 1u);
  EXPECT_EQ(u.counters.value[0], 1.5);
  EXPECT_EQ(u.args.size(), 1u);
  EXPECT_EQ(u.args[0].i, 42);
  EXPECT_EQ(u.metadata.at("k"), "v");
  EXPECT_EQ(u.diagnostics.entries().at("bad_ts").count, 1u);
  EXPECT_EQ(u.tracks.kind[u.slices.track[u.flows.to_slice[0]]], TrackKind::kDeviceStream);
}

// SmallTrace with a track as a graph-capture merge appends one (negative
// tid, "graph capture N"), holding a copied op and its launch.
std::unique_ptr<Trace> TraceWithGraphCaptureCopies() {
  auto t = SmallTrace();
  TrackTable::Row tr;
  tr.kind = TrackKind::kThread;
  tr.pid = t->tracks.pid[0];
  tr.tid = -1;
  tr.pid_label = t->tracks.pid_label[0];
  tr.tid_label = t->strings.Intern(std::string(kGraphCaptureTrackLabel) + "1");
  tr.name = tr.tid_label;
  tr.process_name = t->tracks.process_name[0];
  tr.rank = t->tracks.rank[0];
  tr.device = t->tracks.device[0];
  const uint32_t track = static_cast<uint32_t>(t->tracks.size());
  t->tracks.Append(tr);
  struct Copy {
    int64_t ts, dur;
    uint16_t depth;
    const char* name;
  };
  for (const Copy& c : {Copy{1600, 800, 0, "aten::mm"}, Copy{1600, 10, 1, "cudaLaunchKernel"}}) {
    SliceTable::Row row;
    row.ts_ns = c.ts;
    row.dur_ns = c.dur;
    row.track = TrackId{track};
    row.depth = c.depth;
    row.correlation = kNoCorrelation;
    row.arg_begin = t->args.size();
    row.arg_count = 0;
    row.name = t->strings.Intern(c.name);
    row.category = t->strings.Intern("cpu_op");
    row.kind = EventKind::kCpuOp;
    t->slices.Append(row);
  }
  EXPECT_TRUE(IsGraphCaptureTrack(*t, track));
  return t;
}

// Found by a documentation trial: a replay imported with its graph capture
// wrote a file the reader refused ("op statistics do not cover the slice
// table"), as the statistics leave the copies out and the check counted
// them. The stored statistics are ComputeOpStats' of the written trace.
TEST(NativeFileTest, OpStatisticsLeaveOutGraphCaptureCopiesAndLoadBack) {
  testing::TempDir dir;
  auto t = TraceWithGraphCaptureCopies();
  ASSERT_EQ(t->slices.size(), 5u);
  EXPECT_EQ(OpStatsCountedSlices(*t), 3u);
  std::string path = dir.Path("g.aiprof");
  ASSERT_TRUE(WriteNativeFile(*t, path).ok());
  auto r = ReadNativeFile(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& u = *r.value();
  ASSERT_TRUE(OpStatsCurrent(u));
  OpStatTable want = ComputeOpStats(*t);
  ASSERT_EQ(u.op_stats.size(), want.size());
  uint64_t counted = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(u.Str(u.op_stats.name[i]), t->Str(want.name[i]));
    EXPECT_EQ(u.op_stats.count[i], want.count[i]);
    EXPECT_EQ(u.op_stats.total_ns[i], want.total_ns[i]);
    counted += u.op_stats.count[i];
  }
  EXPECT_EQ(counted, 3u);
  // Written again from the loaded trace (its stored statistics reused).
  std::string again = dir.Path("g2.aiprof");
  ASSERT_TRUE(WriteNativeFile(u, again).ok());
  auto r2 = ReadNativeFile(again);
  ASSERT_TRUE(r2.ok()) << r2.status().message();
  EXPECT_EQ(r2.value()->op_stats.size(), want.size());
}

// Statistics that count the copies too (what a version-5 writer stored
// before they were left out) are dropped, to be computed again on use;
// ones that count neither the copies' total nor the slices' are refused.
TEST(NativeFileTest, OpStatisticsCountingGraphCaptureCopiesAreDroppedOthersRefused) {
  testing::TempDir dir;
  for (uint64_t extra : {2u, 1u}) {
    auto t = TraceWithGraphCaptureCopies();
    t->op_stats = ComputeOpStats(*t);
    t->op_stats.count[0] += extra;
    t->op_stats_slices = t->slices.size();
    ASSERT_TRUE(OpStatsCurrent(*t));  // written as they are
    std::string path = dir.Path("s" + std::to_string(extra) + ".aiprof");
    ASSERT_TRUE(WriteNativeFile(*t, path).ok());
    auto r = ReadNativeFile(path);
    if (extra == 2) {
      ASSERT_TRUE(r.ok()) << r.status().message();
      EXPECT_EQ(r.value()->op_stats.size(), 0u);
      EXPECT_FALSE(OpStatsCurrent(*r.value()));
    } else {
      ASSERT_FALSE(r.ok());
      EXPECT_NE(r.status().message().find("op statistics do not cover the slice table"), std::string::npos)
          << r.status().message();
    }
  }
}

TEST(NativeFileTest, TruncatedOrCorruptFilesAreErrorsNotCrashes) {
  testing::TempDir dir;
  auto t = SmallTrace();
  std::string path = dir.Path("t.aiprof");
  ASSERT_TRUE(WriteNativeFile(*t, path).ok());
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  for (size_t cut = 0; cut < bytes.size(); cut += 7) {
    auto r = ReadNativeFile(dir.Write("cut.aiprof", bytes.substr(0, cut)));
    EXPECT_FALSE(r.ok()) << cut;
  }
  for (size_t pos = 12; pos < bytes.size(); pos += 5) {
    std::string flipped = bytes;
    flipped[pos] = static_cast<char>(flipped[pos] ^ 0xff);
    auto r = ReadNativeFile(dir.Write("flip.aiprof", flipped));
    (void)r;  // may load (a changed timestamp) or fail; must not crash or read out of bounds
  }
  std::string wrong_version = bytes;
  wrong_version[8] = 99;
  auto r = ReadNativeFile(dir.Write("v.aiprof", wrong_version));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("version 99"), std::string::npos);
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every byte of a small file changed, one at a time (all bits, then the low
// bit): each mutant is refused with an error naming the file, or loads a
// trace identical to the original (written again, the same bytes), never a
// trace with silently different figures (found by a tester: three changed
// bytes gave an op self time 138 times its total and a span 17 times too long).
TEST(NativeFileTest, EveryChangedByteIsRefusedOrChangesNothing) {
  testing::TempDir dir;
  auto t = SmallTrace();
  std::string path = dir.Path("t.aiprof");
  ASSERT_TRUE(WriteNativeFile(*t, path).ok());
  std::string bytes = ReadBytes(path);
  size_t refused = 0, loaded = 0;
  std::vector<size_t> differ;
  for (uint8_t mask : {uint8_t{0xff}, uint8_t{0x01}}) {
    for (size_t pos = 0; pos < bytes.size(); ++pos) {
      std::string flipped = bytes;
      flipped[pos] = static_cast<char>(flipped[pos] ^ mask);
      std::string mutant = dir.Write("flip.aiprof", flipped);
      auto r = ReadNativeFile(mutant);
      if (!r.ok()) {
        ++refused;
        EXPECT_NE(r.status().message().find(mutant), std::string::npos) << r.status().message();
        continue;
      }
      ++loaded;
      ASSERT_TRUE(WriteNativeFile(*r.value(), dir.Path("again.aiprof")).ok());
      if (ReadBytes(dir.Path("again.aiprof")) != bytes) differ.push_back(pos);
    }
  }
  EXPECT_TRUE(differ.empty()) << differ.size() << " of " << 2 * bytes.size()
                              << " mutants load with different content, first at byte " << differ[0];
  EXPECT_EQ(refused + loaded, 2 * bytes.size());
}

// A changed value is named by its block and byte range, before any check of
// what it means (the duration stays a plausible one).
TEST(NativeFileTest, ChecksumMismatchNamesTheBlockAndItsBytes) {
  testing::TempDir dir;
  auto t = SmallTrace();
  std::string path = dir.Path("t.aiprof");
  ASSERT_TRUE(WriteNativeFile(*t, path).ok());
  std::string bytes = ReadBytes(path);
  const int64_t durs[] = {5000, 500, 800};  // slices by (track, ts)
  size_t at = bytes.find(std::string_view(reinterpret_cast<const char*>(durs), sizeof(durs)));
  ASSERT_NE(at, std::string::npos);
  bytes[at + 8] = static_cast<char>(0xf5);  // 500 -> 501
  std::string bad = dir.Write("bad.aiprof", bytes);
  auto r = ReadNativeFile(bad);
  ASSERT_FALSE(r.ok());
  std::string m = r.status().message();
  EXPECT_EQ(m.find(bad + ": corrupt .aiprof file at byte "), 0u) << m;
  EXPECT_NE(m.find("(column dur_ns of the slice table) do not match their checksum"), std::string::npos) << m;
  // Without the comparison (the fuzzer's second read) the same file loads, with the changed value.
  auto unchecked = ReadNativeFile(bad, NativeReadOptions{.verify_checksums = false});
  ASSERT_TRUE(unchecked.ok()) << unchecked.status().message();
  EXPECT_EQ(unchecked.value()->slices.dur_ns[1], 501);
}

TEST(NativeFileTest, BytesAfterTheEndMarkerAreAnError) {
  testing::TempDir dir;
  auto t = SmallTrace();
  std::string path = dir.Path("t.aiprof");
  ASSERT_TRUE(WriteNativeFile(*t, path).ok());
  auto r = ReadNativeFile(dir.Write("trail.aiprof", ReadBytes(path) + "junk"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("4 bytes after the end marker"), std::string::npos) << r.status().message();
}

// Version 5 (no checksums; an earlier SDK's file) still loads, with a
// diagnostic saying it was not checked; written again it is version 6,
// checked, and the diagnostic is gone.
TEST(NativeFileTest, Version5FilesLoadUncheckedWithADiagnostic) {
  std::string v5 = std::string(AIPROF_TEST_DATA_DIR) + "/sdk/requests_native_v5.aiprof";
  auto r = ReadNativeFile(v5);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& diags = r.value()->diagnostics.entries();
  auto it = diags.find(std::string(kNativeUncheckedDiagnostic));
  ASSERT_NE(it, diags.end());
  EXPECT_EQ(it->second.first_where, v5);
  EXPECT_NE(it->second.description.find("no checksums"), std::string::npos);
  testing::TempDir dir;
  std::string again = dir.Path("again.aiprof");
  ASSERT_TRUE(WriteNativeFile(*r.value(), again).ok());
  std::string bytes = ReadBytes(again);
  EXPECT_EQ(bytes[8], static_cast<char>(kNativeVersion));
  auto u = ReadNativeFile(again);
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u.value()->diagnostics.entries().count(std::string(kNativeUncheckedDiagnostic)), 0u);
  EXPECT_EQ(u.value()->slices.size(), r.value()->slices.size());
  auto trail = ReadNativeFile(dir.Write("trail.aiprof", ReadBytes(v5) + "x"));
  ASSERT_FALSE(trail.ok());
  EXPECT_NE(trail.status().message().find("1 bytes after the end marker"), std::string::npos);
}

// Stack samples and their callsite tree survive the file; the builder
// shares call sites between samples and orders samples by (track, ts).
// A file (the SDK writes its own) whose slice times would overflow an end is
// corrupt: an error naming the slice, not a negative busy time later.
TEST(NativeFileTest, ImpossibleSliceTimesAreErrors) {
  testing::TempDir dir;
  for (auto [ts, dur] : {std::pair<int64_t, int64_t>{INT64_MIN, 10}, {0, int64_t{1} << 62}, {5, -1}}) {
    Trace t;
    TraceBuilder b(&t);
    uint32_t track = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
    b.AddSlice(track, 0, 10, b.Intern("ok"), b.Intern("c"), kNoCorrelation, 0, 0);
    b.AddSlice(track, 20, 10, b.Intern("bad"), b.Intern("c"), kNoCorrelation, 0, 0);
    ASSERT_TRUE(b.Finalize().ok());
    t.slices.ts_ns[1] = ts;  // as a foreign writer could
    t.slices.dur_ns[1] = dur;
    std::string path = dir.Path("bad.aiprof");
    ASSERT_TRUE(WriteNativeFile(t, path).ok());
    auto r = ReadNativeFile(path);
    ASSERT_FALSE(r.ok()) << ts << " " << dur;
    EXPECT_NE(r.status().message().find("slice 1 has ts"), std::string::npos) << r.status().message();
  }
}

// The other tables' times and the slices' order are checked as well (found
// by review: a step of ts = dur = INT64_MAX overflowed a dozen analyses;
// reordered slices moved op coverage from 75% to 0%).
TEST(NativeFileTest, ImpossibleStepCounterTimesAndSliceOrderAreErrors) {
  testing::TempDir dir;
  struct Case {
    const char* what;
    void (*spoil)(Trace*);
  } cases[] = {
      {"step 0 has ts", [](Trace* t) { t->steps.ts_ns[0] = t->steps.dur_ns[0] = INT64_MAX; }},
      {"step 0 has ts", [](Trace* t) { t->steps.dur_ns[0] = INT64_MIN; }},
      {"counter row 0 has ts", [](Trace* t) { t->counters.ts_ns[0] = INT64_MIN; }},
      {"slice 2 is out of order", [](Trace* t) { t->slices.ts_ns[2] = 0; }},
  };
  for (const Case& c : cases) {
    Trace t;
    TraceBuilder b(&t);
    uint32_t track = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
    b.AddSlice(track, 0, 100, b.Intern("ProfilerStep#1"), b.Intern("user_annotation"), kNoCorrelation, 0, 0);
    b.AddSlice(track, 10, 10, b.Intern("a"), b.Intern("cpu_op"), kNoCorrelation, 0, 0);
    b.AddSlice(track, 30, 10, b.Intern("b"), b.Intern("cpu_op"), kNoCorrelation, 0, 0);
    b.AddCounter(b.CounterTrack(IdValue::Num(1), b.Intern("mem"), -1), 5, 1.0);
    ASSERT_TRUE(b.Finalize().ok());
    ASSERT_EQ(t.steps.size(), 1u);
    c.spoil(&t);
    std::string path = dir.Path("bad.aiprof");
    ASSERT_TRUE(WriteNativeFile(t, path).ok());
    auto r = ReadNativeFile(path);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_NE(r.status().message().find(c.what), std::string::npos) << r.status().message();
  }
}

// Every reference column (tables.h: its ColumnRef) and every enum column is
// checked without per-table code: one bad value in each kind of column is an
// error naming the table, row, column and value.
TEST(NativeFileTest, EveryReferenceAndEnumColumnIsChecked) {
  testing::TempDir dir;
  struct Case {
    const char* what;
    void (*spoil)(Trace*);
  } cases[] = {
      {"track 1: layer = 200 is not one of its values", [](Trace* t) { t->tracks.layer[1] = static_cast<Layer>(200); }},
      {"slice 0: kind = 99 is not one of its values", [](Trace* t) { t->slices.kind[0] = static_cast<EventKind>(99); }},
      {"flow 0: to_slice = 3 refers outside its table", [](Trace* t) { t->flows.to_slice[0] = SliceId{3}; }},
      {"step 0: track = 9 refers outside its table", [](Trace* t) { t->steps.track[0] = TrackId{9}; }},
      {"counter 0: track = 7 refers outside its table", [](Trace* t) { t->counters.track[0] = TrackId{7}; }},
      {"track 2: process_name = 999 refers outside its table",
       [](Trace* t) { t->tracks.process_name[2] = StringId{999}; }},
  };
  for (const Case& c : cases) {
    auto t = SmallTrace();
    c.spoil(t.get());
    std::string path = dir.Path("bad.aiprof");
    ASSERT_TRUE(WriteNativeFile(*t, path).ok());
    auto r = ReadNativeFile(path);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_NE(r.status().message().find(c.what), std::string::npos) << r.status().message();
  }
}

TEST(NativeFileTest, RoundTripsStackSamples) {
  Trace t;
  TraceBuilder b(&t);
  uint32_t th = b.ThreadTrack(IdValue::Num(10), IdValue::Num(11));
  StringId exe = b.Intern("/usr/bin/app");
  uint32_t main_cs = b.InternCallsite(kNoCallsite, b.Intern("main"), exe, FrameKind::kNative);
  uint32_t work = b.InternCallsite(main_cs, b.Intern("work"), exe, FrameKind::kNative);
  EXPECT_EQ(b.InternCallsite(main_cs, b.Intern("work"), exe, FrameKind::kNative), work);
  uint32_t py = b.InternCallsite(work, b.Intern("forward"), b.Intern("[python]"), FrameKind::kPython);
  b.AddStackSample(th, 3000, py, 1000);
  b.AddStackSample(th, 1000, work, 1000);
  b.AddStackSample(th, 2000, kNoCallsite, 1000);
  ASSERT_TRUE(b.Finalize().ok());
  ASSERT_EQ(t.callsites.size(), 3u);
  EXPECT_EQ(t.callsites.depth[py], 2u);
  testing::TempDir dir;
  std::string path = dir.Path("s.aiprof");
  ASSERT_TRUE(WriteNativeFile(t, path).ok());
  auto r = ReadNativeFile(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& u = *r.value();
  ASSERT_EQ(u.samples.size(), 3u);
  EXPECT_EQ(u.samples.ts_ns[0], 1000);
  EXPECT_EQ(u.samples.callsite[0], work);
  EXPECT_EQ(u.samples.callsite[1], kNoCallsite);
  EXPECT_EQ(u.samples.callsite[2], py);
  EXPECT_EQ(u.callsites.parent[py], work);
  EXPECT_EQ(u.Str(u.callsites.frame[py]), "forward");
  EXPECT_EQ(u.callsites.kind[py], FrameKind::kPython);
  EXPECT_EQ(u.Str(u.callsites.module[main_cs]), "/usr/bin/app");
}

// An .aiprof file is read in place: its columns are the mapping. Truncated
// by another program while a command reads it, a column read raised SIGBUS
// ("Bus error", exit 135). The mapping is registered; with the command
// line's handler the file is named and the exit is 1.
TEST(NativeFileDeathTest, FileTruncatedWhileMappedIsNamedAndExits1) {
  testing::TempDir dir;
  const std::string path = dir.Path("shrinks.aiprof");
  ASSERT_TRUE(WriteNativeFile(*SmallTrace(), path).ok());
  EXPECT_EXIT(
      {
        InstallMappedInputBusHandler();
        auto t = ReadNativeFile(path);
        if (!t.ok() || ::truncate(path.c_str(), 0) != 0) std::_Exit(3);
        volatile int64_t ts = (*t)->slices.ts_ns[(*t)->slices.size() - 1];
        (void)ts;
        std::_Exit(4);
      },
      ::testing::ExitedWithCode(1), "shrinks.aiprof: the file shrank while it was read");
}

}  // namespace
}  // namespace aiprof
