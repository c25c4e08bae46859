// Importer tests on small hand-made traces (labelled as such: each is written
// here to exercise one format variant or one kind of bad input).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>

#include "src/importers/common/byte_source.h"
#include "src/importers/common/importer_registry.h"
#include "src/importers/json/chrome_json_parser.h"
#include "src/importers/json/chrome_json_tokenizer.h"
#include "src/model/trace_builder.h"
#include "test/util/compress.h"
#include "test/util/temp_file.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::TempDir;

using testing::ImportError;
using testing::MustImport;

TEST(ChromeJsonImporterTest, KinetoLayoutWithBaseTimeAtTheEnd) {
  TempDir dir;
  std::string path = dir.Write("t.json", R"({
  "schemaVersion": 1,
  "traceEvents": [
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11,
   "ts": 100.5, "dur": 2.25, "args": {"correlation": 7, "External id": 3}},
  {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 103.001, "dur": "4.000",
   "args": {"correlation": 7, "stream": 7}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "pid": 10, "tid": 11, "ts": 100, "dur": 10},
  {"ph": "s", "id": 7, "pid": 10, "tid": 11, "ts": 100.5, "cat": "ac2g", "name": "ac2g"},
  {"ph": "f", "id": 7, "pid": 0, "tid": 7, "ts": 103.001, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "M", "name": "thread_name", "pid": 10, "tid": 11, "args": {"name": "main"}},
  {"ph": "M", "name": "process_name", "pid": 10, "tid": 0, "args": {"name": "python"}}
  ],
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
  "baseTimeNanoseconds": 1711964646000000000
})");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  ASSERT_EQ(t->slices.size(), 3u);
  // Sorted by track, then start; the runtime call's track was created first.
  int64_t base = 1711964646000000000;
  EXPECT_EQ(t->slices.ts_ns[0], base + 100000);   // ProfilerStep#4 (longest first at track start)
  EXPECT_EQ(t->slices.ts_ns[1], base + 100500);
  EXPECT_EQ(t->slices.dur_ns[1], 2250);
  EXPECT_EQ(t->slices.depth[1], 1);
  EXPECT_EQ(t->slices.ts_ns[2], base + 103001);
  EXPECT_EQ(t->slices.dur_ns[2], 4000);
  EXPECT_EQ(t->slices.kind[2], EventKind::kKernel);
  uint32_t kernel_track = t->slices.track[2];
  EXPECT_EQ(t->tracks.kind[kernel_track], TrackKind::kDeviceStream);
  EXPECT_EQ(t->tracks.device[kernel_track], 0);
  EXPECT_EQ(t->tracks.rank[kernel_track], 3);
  EXPECT_EQ(t->Str(t->tracks.name[t->slices.track[1]]), "main");
  EXPECT_EQ(t->Str(t->tracks.process_name[t->slices.track[1]]), "python");
  // One flow: correlation and ac2g describe the same launch.
  ASSERT_EQ(t->flows.size(), 1u);
  EXPECT_EQ(t->flows.from_slice[0], 1u);
  EXPECT_EQ(t->flows.to_slice[0], 2u);
  ASSERT_EQ(t->steps.size(), 1u);
  EXPECT_EQ(t->steps.number[0], 4);
  EXPECT_EQ(t->steps.dur_ns[0], 10000);
  EXPECT_EQ(t->metadata["world_size"], "8");
  EXPECT_TRUE(t->diagnostics.empty());
}

TEST(ChromeJsonImporterTest, BareArrayLegacyFloatsAndBeginEnd) {
  TempDir dir;
  std::string path = dir.Write("legacy.json", R"([
{"name": "aten::conv2d", "ph": "X", "ts": 237.481, "dur": 25.118000000000052, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "outer", "ph": "B", "ts": 300, "tid": 1, "pid": "CPU functions"},
{"name": "inner", "ph": "B", "ts": 301, "tid": 1, "pid": "CPU functions"},
{"ph": "E", "ts": 302, "tid": 1, "pid": "CPU functions"},
{"ph": "E", "ts": 310, "tid": 1, "pid": "CPU functions"}
])");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  ASSERT_EQ(t->slices.size(), 3u);
  EXPECT_EQ(t->slices.ts_ns[0], 237481);
  EXPECT_EQ(t->slices.dur_ns[0], 25118);
  EXPECT_EQ(t->Str(t->slices.name[1]), "outer");
  EXPECT_EQ(t->slices.dur_ns[1], 10000);
  EXPECT_EQ(t->Str(t->slices.name[2]), "inner");
  EXPECT_EQ(t->slices.dur_ns[2], 1000);
  EXPECT_EQ(t->slices.depth[2], 1);
}

// torch's legacy autograd-profiler export (no Kineto: Debian's torch 1.13)
// writes operators without "cat" under the process "CPU functions": they are
// CPU ops when named like one ("::", autograd nodes), else record_function ranges (user
// annotations); a "cat" of their own wins, no-cat events elsewhere stay "other".
TEST(ChromeJsonImporterTest, LegacyCpuFunctionsAreCpuOps) {
  TempDir dir;
  std::string path = dir.Write("legacy.json", R"([
{"name": "aten::conv2d", "ph": "X", "ts": 1, "dur": 5, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "outer", "ph": "B", "ts": 10, "tid": 1, "pid": "CPU functions"},
{"ph": "E", "ts": 12, "tid": 1, "pid": "CPU functions"},
{"name": "mine", "cat": "user_annotation", "ph": "X", "ts": 20, "dur": 1, "tid": 1, "pid": "CPU functions"},
{"name": "x", "ph": "X", "ts": 30, "dur": 1, "tid": 1, "pid": "Other functions"},
{"name": "y", "ph": "X", "ts": 40, "dur": 1, "tid": 1, "pid": 7},
{"name": "AddmmBackward0", "ph": "X", "ts": 50, "dur": 1, "tid": 1, "pid": "CPU functions"},
{"name": "ReluBackward", "ph": "X", "ts": 52, "dur": 1, "tid": 1, "pid": "CPU functions"},
{"name": "detach", "ph": "X", "ts": 54, "dur": 1, "tid": 1, "pid": "CPU functions"},
{"name": "## backward ##", "ph": "X", "ts": 56, "dur": 1, "tid": 1, "pid": "CPU functions"},
{"name": "Backward", "ph": "X", "ts": 58, "dur": 1, "tid": 1, "pid": "CPU functions"}
])");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  ASSERT_EQ(t->slices.size(), 10u);
  std::map<std::string, EventKind> kind;
  for (uint32_t i = 0; i < t->slices.size(); ++i) kind[std::string(t->Str(t->slices.name[i]))] = t->slices.kind[i];
  EXPECT_EQ(kind["aten::conv2d"], EventKind::kCpuOp);
  EXPECT_EQ(kind["outer"], EventKind::kUserAnnotation);  // no "::": a record_function range
  EXPECT_EQ(kind["mine"], EventKind::kUserAnnotation);
  EXPECT_EQ(kind["x"], EventKind::kOther);
  EXPECT_EQ(kind["y"], EventKind::kOther);
  // Autograd nodes and detach are written without a namespace: operators, as
  // Kineto files them (fixture torch-cpu/mlp_train_bs32.legacy.json has both).
  EXPECT_EQ(kind["AddmmBackward0"], EventKind::kCpuOp);
  EXPECT_EQ(kind["ReluBackward"], EventKind::kCpuOp);
  EXPECT_EQ(kind["detach"], EventKind::kCpuOp);
  EXPECT_EQ(kind["## backward ##"], EventKind::kUserAnnotation);
  EXPECT_EQ(kind["Backward"], EventKind::kUserAnnotation);
}

TEST(ChromeJsonImporterTest, EventsInAnyOrderGiveTheSameModel) {
  TempDir dir;
  std::string a = dir.Write("a.json", R"([
{"ph":"X","name":"p","pid":1,"tid":1,"ts":0,"dur":10},
{"ph":"X","name":"c","pid":1,"tid":1,"ts":2,"dur":3},
{"ph":"X","name":"d","pid":1,"tid":1,"ts":6,"dur":1}])");
  std::string b = dir.Write("b.json", R"([
{"ph":"X","name":"d","pid":1,"tid":1,"ts":6,"dur":1},
{"ph":"X","name":"c","pid":1,"tid":1,"ts":2,"dur":3},
{"ph":"X","name":"p","pid":1,"tid":1,"ts":0,"dur":10}])");
  auto ta = MustImport(a), tb = MustImport(b);
  ASSERT_TRUE(ta && tb);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(ta->Str(ta->slices.name[i]), tb->Str(tb->slices.name[i]));
    EXPECT_EQ(ta->slices.depth[i], tb->slices.depth[i]);
  }
  EXPECT_EQ(ta->slices.depth[1], 1);
  EXPECT_EQ(ta->slices.depth[2], 1);
}

TEST(ChromeJsonImporterTest, MemoryEventsBecomeInstantsAndCounters) {
  TempDir dir;
  std::string path = dir.Write("m.json", R"({"traceEvents": [
{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 10,
 "args": {"Device Type": 1, "Device Id": 2, "Addr": 123, "Bytes": 4096, "Total Allocated": 8192, "Total Reserved": 20000}},
{"ph": "C", "name": "util", "pid": 5, "ts": 11, "args": {"value": 0.5}}
]})");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->instants.size(), 1u);
  EXPECT_EQ(t->instants.arg_count[0], 6);
  ASSERT_EQ(t->counters.size(), 3u);
  EXPECT_EQ(t->counters.value[0], 8192);
  EXPECT_EQ(t->Str(t->tracks.name[t->counters.track[0]]), "Total Allocated (device 2)");
  EXPECT_EQ(t->counters.value[2], 0.5);
}

// Hand-made hostile ids (input trial, 'in'): Device Id 2^32 was cut to
// device 0 and -1 became the host's memory ("Total Allocated (CPU)"); both
// are counted as bad_device_id now, their totals skipped, the instant kept.
TEST(ChromeJsonImporterTest, MemoryEventWithDeviceIdOutOfRangeIsCounted) {
  TempDir dir;
  std::string path = dir.Write("m.json", R"({"traceEvents": [
{"ph": "i", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 10,
 "args": {"Device Type": 1, "Device Id": 4294967296, "Total Allocated": 100, "Total Reserved": 200}},
{"ph": "i", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 11,
 "args": {"Device Type": 1, "Device Id": -1, "Total Allocated": 300, "Total Reserved": 400}},
{"ph": "i", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 12,
 "args": {"Device Type": 1, "Device Id": 18446744073709551615, "Total Allocated": 500, "Total Reserved": 600}},
{"ph": "i", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 13,
 "args": {"Device Type": 1, "Device Id": 3, "Total Allocated": 700, "Total Reserved": 800}}
]})");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->instants.size(), 4u);
  ASSERT_EQ(t->counters.size(), 2u);
  EXPECT_EQ(t->counters.value[0], 700);
  EXPECT_EQ(t->Str(t->tracks.name[t->counters.track[0]]), "Total Allocated (device 3)");
  const auto& d = t->diagnostics.entries();
  ASSERT_TRUE(d.count("bad_device_id"));
  EXPECT_EQ(d.at("bad_device_id").count, 3u);
  EXPECT_NE(d.at("bad_device_id").first_where.find("m.json:byte "), std::string::npos);
}

TEST(ChromeJsonImporterTest, MalformedRecordsAreCountedAndImportGoesOn) {
  TempDir dir;
  std::string path = dir.Write("bad.json", R"({"traceEvents": [
{"ph": "X", "name": "ok", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
{"ph": "X", "name": "neg", "pid": 1, "tid": 1, "ts": 1, "dur": -5},
{"ph": "X", "name": "nots", "pid": 1, "tid": 1, "dur": 5},
{"ph": "X", "name": "badts", "pid": 1, "tid": 1, "ts": "soon", "dur": 5},
{"ph": "Q", "name": "unknown", "pid": 1, "tid": 1, "ts": 1},
{"ph": "E", "pid": 1, "tid": 2, "ts": 1},
{"ph": "B", "name": "open", "pid": 1, "tid": 3, "ts": 1},
{"ph": "X", "name": "bad utf8 )" "\xff\xfe" R"(", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
{"ph": "X", "name": 12, "pid": 1, "tid": 1, "ts": 2, "dur": 1},
{"ph": "X", "name": "wrong types", "pid": 1, "tid": 1, "ts": [1], "dur": {}},
"not an object",
{"ph": "X", "name": "ok2", "pid": 1, "tid": 1, "ts": 3, "dur": 1}
]})");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->slices.size(), 3u);  // ok, ok2 and the unnamed one
  EXPECT_EQ(t->diagnostics.Count("negative_duration"), 1u);
  EXPECT_EQ(t->diagnostics.Count("missing_ts"), 1u);
  EXPECT_EQ(t->diagnostics.Count("bad_ts"), 2u);
  EXPECT_EQ(t->diagnostics.Count("unsupported_phase"), 1u);
  EXPECT_EQ(t->diagnostics.Count("unmatched_end"), 1u);
  EXPECT_EQ(t->diagnostics.Count("unterminated_begin"), 1u);
  EXPECT_EQ(t->diagnostics.Count("invalid_event_json"), 2u);  // invalid UTF-8, not an object
  EXPECT_EQ(t->diagnostics.Count("name_not_string"), 1u);
  EXPECT_NE(t->diagnostics.entries().at("negative_duration").first_where.find("bad.json:byte "), std::string::npos);
}

// An E closes the last open B on its thread, whatever its name (Chrome's
// rule): B x, B y, E x closes y, and says so; an unnamed E says nothing.
TEST(ChromeJsonImporterTest, EndNamingAnotherSliceIsSaid) {
  TempDir dir;
  std::string path = dir.Write("be.json", R"({"traceEvents": [
{"ph": "B", "name": "x", "pid": 1, "tid": 1, "ts": 1},
{"ph": "B", "name": "y", "pid": 1, "tid": 1, "ts": 2},
{"ph": "E", "name": "x", "pid": 1, "tid": 1, "ts": 3},
{"ph": "E", "pid": 1, "tid": 1, "ts": 4}
]})");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->slices.size(), 2u);
  EXPECT_EQ(t->diagnostics.Count("end_name_mismatch"), 1u);
}

// Pairing B with E, and binding flow events, happen at Finalize, after
// every file is read; their diagnostics still name the file and the event's
// byte (they named only the time or the flow id), here the '{' of each
// event, found in the text independently.
TEST(ChromeJsonImporterTest, PairingDiagnosticsNameFileAndByte) {
  TempDir dir;
  const std::string text = R"({"traceEvents": [
{"ph": "E", "pid": 1, "tid": 2, "ts": 1},
{"ph": "B", "name": "x", "pid": 1, "tid": 1, "ts": 1},
{"ph": "B", "name": "y", "pid": 1, "tid": 1, "ts": 2},
{"ph": "E", "name": "x", "pid": 1, "tid": 1, "ts": 3},
{"ph": "E", "pid": 1, "tid": 1, "ts": 4},
{"ph": "B", "name": "open", "pid": 1, "tid": 3, "ts": 5},
{"ph": "s", "id": 7, "cat": "c", "name": "c", "pid": 1, "tid": 9, "ts": 6},
{"ph": "f", "id": 7, "cat": "c", "name": "c", "pid": 1, "tid": 1, "ts": 2, "bp": "e"}
]})";
  std::string path = dir.Write("be.json", text);
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  auto where = [&](const char* kind) { return t->diagnostics.entries().at(kind).first_where; };
  auto at = [&](const char* event, int64_t ts_ns) {
    return path + ":byte " + std::to_string(text.find(event)) + " (ts_ns " + std::to_string(ts_ns) + ")";
  };
  EXPECT_EQ(where("unmatched_end"), at(R"({"ph": "E", "pid": 1, "tid": 2)", 1000));
  EXPECT_EQ(where("end_name_mismatch"), at(R"({"ph": "E", "name": "x")", 3000));
  EXPECT_EQ(where("unterminated_begin"), at(R"({"ph": "B", "name": "open")", 5000));
  EXPECT_EQ(t->diagnostics.Count("unterminated_begin"), 1u);
  EXPECT_EQ(where("flow_unbound"), at(R"({"ph": "s", "id": 7)", 6000) + ", id 7");
  EXPECT_EQ(t->diagnostics.Count("flow_unbound"), 1u);
}

// A counter value that is not a number is counted with its place (was
// dropped without a word); the numeric series of the same event stay.
TEST(ChromeJsonImporterTest, CounterValueThatIsNotANumberIsCounted) {
  TempDir dir;
  std::string path = dir.Write("c.json", R"({"traceEvents": [
{"ph": "C", "name": "mem", "pid": 1, "tid": 1, "ts": 1, "args": {"bytes": "NaN", "pages": 3}},
{"ph": "C", "name": "mem", "pid": 1, "tid": 1, "ts": 2, "args": {"bytes": 5, "pages": 4}}
]})");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->counters.size(), 3u);
  EXPECT_EQ(t->diagnostics.Count("counter_bad_value"), 1u);
  EXPECT_NE(t->diagnostics.entries().at("counter_bad_value").first_where.find("c.json:byte "), std::string::npos);
}

// Times past +-2^61 ns (2.3e15 us) would overflow an end, a difference or the
// time base: skipped and counted with the byte offset, never summed.
TEST(ChromeJsonImporterTest, TimesOutOfRangeAreCountedNotSummed) {
  TempDir dir;
  std::string path = dir.Write("far.json", R"({"traceEvents": [
{"ph": "X", "name": "ok", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
{"ph": "X", "name": "far", "pid": 1, "tid": 1, "ts": 3000000000000000, "dur": 1},
{"ph": "X", "name": "long", "pid": 1, "tid": 1, "ts": 2, "dur": 4611686018427387.904},
{"ph": "X", "name": "edge", "pid": 1, "tid": 1, "ts": 2, "dur": 2305843009213693.952},
{"ph": "i", "name": "early", "pid": 1, "tid": 1, "ts": -3000000000000000, "s": "t"},
{"ph": "B", "name": "b", "pid": 1, "tid": 2, "ts": 9000000000000000},
{"ph": "E", "pid": 1, "tid": 2, "ts": 9000000000000001}
]})");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->slices.size(), 2u);  // ok and edge (exactly 2^61 ns long)
  EXPECT_EQ(t->instants.size(), 0u);
  EXPECT_EQ(t->diagnostics.Count("time_out_of_range"), 5u);  // far, long, early, B, E
  EXPECT_NE(t->diagnostics.entries().at("time_out_of_range").first_where.find("far.json:byte "), std::string::npos);
  // A time base that would push every time past the range is ignored and counted.
  std::string base = dir.Write("base.json", R"({"traceEvents": [
{"ph": "X", "name": "ok", "pid": 1, "tid": 1, "ts": 1, "dur": 1}
], "baseTimeNanoseconds": 9000000000000000000})");
  auto b = MustImport(base);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->slices.size(), 1u);
  EXPECT_EQ(b->slices.ts_ns[0], 1000);
  EXPECT_EQ(b->diagnostics.Count("time_out_of_range"), 1u);
}

// Hand-made from the input libFuzzer found (CI, stop 31): a tid past the
// range of int64 as a double was an undefined cast; now a malformed id (the
// slice keeps its pid's default thread), and a 64-bit unsigned id keeps its bits.
TEST(ChromeJsonImporterTest, IdsOutOfInt64RangeAreNotAnUndefinedCast) {
  TempDir dir;
  std::string path = dir.Write("ids.json", R"({"traceEvents": [
{"ph": "X", "name": "huge", "pid": 1, "tid": 2.56851e+19, "ts": 1, "dur": 1},
{"ph": "X", "name": "nan-ish", "pid": -1e300, "tid": 1, "ts": 2, "dur": 1},
{"ph": "X", "name": "u64", "pid": 1, "tid": 18446744073709551615, "ts": 3, "dur": 1},
{"ph": "X", "name": "frac", "pid": 1, "tid": 7.9, "ts": 4, "dur": 1}
]})");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->slices.size(), 4u);
  // Each keeps a thread of its own: none dropped to 0 or truncated (7.9 is
  // not thread 7), so no false parent between unrelated events.
  std::set<uint32_t> tracks;
  for (size_t i = 0; i < t->slices.size(); ++i) tracks.insert(t->slices.track[i]);
  EXPECT_EQ(tracks.size(), 4u);
  for (size_t i = 0; i < t->slices.size(); ++i) EXPECT_EQ(t->slices.depth[i], 0) << i;
  std::string seven = dir.Write("seven.json", R"({"traceEvents": [
{"ph": "X", "name": "a", "pid": 1, "tid": 7, "ts": 1, "dur": 10},
{"ph": "X", "name": "b", "pid": 1, "tid": 7.9, "ts": 2, "dur": 1},
{"ph": "X", "name": "c", "pid": 1, "tid": 1.5e3, "ts": 2, "dur": 1}
]})");
  auto s = MustImport(seven);
  ASSERT_TRUE(s);
  EXPECT_NE(s->slices.track[0], s->slices.track[1]) << "7.9 is not thread 7";
  EXPECT_EQ(s->tracks.tid[s->slices.track[2]], 1500) << "1.5e3 is thread 1500";
}

// Hand-made: a pid or tid that is null, a boolean or an object put the
// event on pid 0 / tid 0 without a word (beside Kineto's GPU 0, whose pid
// is 0), and 1e400 (past a double) did the same. Now the first are counted
// (bad_pid_tid, file and byte) and 1e400 is a thread of its own, as 1e30 is.
TEST(ChromeJsonImporterTest, PidOrTidOfAnotherTypeIsCountedNotPutOnZeroUnsaid) {
  TempDir dir;
  std::string path = dir.Write("ids.json", R"({"traceEvents": [
{"ph": "X", "name": "ok", "pid": 0, "tid": 0, "ts": 1, "dur": 10},
{"ph": "X", "name": "null", "pid": null, "tid": 0, "ts": 2, "dur": 1},
{"ph": "X", "name": "obj", "pid": 0, "tid": {"a": 1}, "ts": 3, "dur": 1},
{"ph": "X", "name": "bool", "pid": true, "tid": 0, "ts": 4, "dur": 1},
{"ph": "X", "name": "huge", "pid": 0, "tid": 1e400, "ts": 5, "dur": 1}
]})");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->slices.size(), 5u);
  const auto& d = t->diagnostics.entries();
  ASSERT_TRUE(d.count("bad_pid_tid"));
  EXPECT_EQ(d.at("bad_pid_tid").count, 3u);
  EXPECT_NE(d.at("bad_pid_tid").first_where.find("ids.json:byte "), std::string::npos)
      << d.at("bad_pid_tid").first_where;
  for (size_t i = 0; i < t->slices.size(); ++i) {
    if (t->Str(t->slices.name[i]) == "huge") {
      EXPECT_EQ(t->slices.depth[i], 0) << "1e400 is not tid 0";
    }
  }
}

// Hand-made from the input libFuzzer found (scripts/fuzz.sh 600, session 13):
// a distributedInfo whose rank has no value made simdjson abandon its
// iterator while the next lookup skipped it, and the lookup after that
// dereferenced the iterator's null parser (a segfault in release builds).
// Now nothing past the malformed value is read (diagnosed); a value of
// another type (rank as a string) still lets the other fields be read.
TEST(ChromeJsonImporterTest, MalformedDistributedInfoIsNotReadPastTheError) {
  TempDir dir;
  std::string bad = dir.Write("bad.json", R"({"distributedInfo": {"rank":, "world_size": 8, "backend": "nccl"},
"traceEvents": [{"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]})");
  auto t = MustImport(bad);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->slices.size(), 1u);
  EXPECT_EQ(t->metadata.count("rank"), 0u);
  EXPECT_EQ(t->metadata.count("world_size"), 0u);
  EXPECT_EQ(t->metadata.count("backend"), 0u);
  EXPECT_EQ(t->diagnostics.Count("invalid_top_level_json"), 1u);

  std::string typed = dir.Write("typed.json", R"({"distributedInfo": {"rank": "3", "world_size": 8, "backend": "nccl"},
"traceEvents": [{"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]})");
  t = MustImport(typed);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->metadata.count("rank"), 0u);
  EXPECT_EQ(t->metadata["world_size"], "8");
  EXPECT_EQ(t->metadata["backend"], "nccl");
  EXPECT_EQ(t->diagnostics.Count("invalid_top_level_json"), 0u);
}

// Hand-made from the input libFuzzer found (scripts/fuzz.sh 600, session 13):
// an event with "args" twice kept the first one's count while its start
// moved to the second, so the merge read past the event's args (another
// event's, or stale ones with ids of an earlier batch: a SEGV through the
// one-event batches of the serial path). Now the last "args" counts, as
// JSON.parse reads it, and the duplicate is diagnosed. Both the parallel
// import and the serial path (the fuzzer's) are checked; the event before
// leaves many args and strings behind.
TEST(ChromeJsonImporterTest, DuplicateArgsKeepTheLastOne) {
  TempDir dir;
  std::string many;
  for (int i = 0; i < 300; ++i) {
    many += (i ? ", " : "") + std::string("\"key") + std::to_string(i) + std::string(40, 'x') + "\": \"v" +
            std::to_string(i) + "\"";
  }
  std::string path = dir.Write("dup.json", R"({"traceEvents": [
{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {)" + many + R"(}},
{"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "args": {"x": 1, "y": 2, "correlation": 5}, "args": {"z": 3}}
]})");
  auto check = [](const Trace& t, const char* how) {
    SCOPED_TRACE(how);
    ASSERT_EQ(t.slices.size(), 2u);
    size_t b = t.Str(t.slices.name[0]) == "b" ? 0 : 1;
    ASSERT_EQ(t.Str(t.slices.name[b]), "b");
    ASSERT_EQ(t.slices.arg_count[b], 1);
    const Arg& arg = t.args[t.slices.arg_begin[b]];
    EXPECT_EQ(t.Str(arg.key), "z");
    EXPECT_EQ(arg.type, ArgType::kInt);
    EXPECT_EQ(arg.i, 3);
    EXPECT_EQ(t.slices.arg_count[1 - b], 300);
    EXPECT_EQ(t.diagnostics.Count("duplicate_args"), 1u);
  };
  auto parallel = MustImport(path);
  ASSERT_TRUE(parallel);
  check(*parallel, "parallel import");

  Trace serial;
  TraceBuilder builder(&serial);
  auto source = ByteSource::Open(path);
  ASSERT_TRUE(source.ok());
  ChromeJsonParser parser(path, &builder);
  ChromeJsonTokenizer tokenizer(source.value().get(), &parser, /*threaded=*/false);
  ASSERT_TRUE(tokenizer.Run().ok());
  ASSERT_TRUE(builder.Finalize().ok());
  check(serial, "serial path");
}

// The scanner keeps no recursion stack, and simdjson's On-Demand API does not
// descend into an arg it only copies, so 100k levels import as one JSON arg.
TEST(ChromeJsonImporterTest, DeeplyNestedArgsImportWithoutRecursion) {
  TempDir dir;
  std::string nested(100000, '[');
  nested += std::string(100000, ']');
  std::string path = dir.Write("deep.json", "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{\"x\":" +
                                                nested + "}},{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1}]");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  ASSERT_EQ(t->slices.size(), 2u);
  ASSERT_EQ(t->slices.arg_count[0], 1);
  const Arg& arg = t->args[t->slices.arg_begin[0]];
  EXPECT_EQ(arg.type, ArgType::kJson);
  EXPECT_EQ(t->Str(StringId{arg.str}), nested);
  EXPECT_TRUE(t->diagnostics.empty());
}

TEST(ChromeJsonImporterTest, HugeStringInsideAnEventIsSkippedAndCounted) {
  TempDir dir;
  std::string huge(70 << 20, 'x');  // over the 64 MiB per-event limit
  std::string path = dir.Write("huge.json", "[{\"ph\":\"X\",\"name\":\"" + huge +
                                                "\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},"
                                                "{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1}]");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->slices.size(), 1u);
  EXPECT_EQ(t->diagnostics.Count("value_too_large"), 1u);
}

TEST(ChromeJsonImporterTest, UnusableFilesAreErrorsNamingFileAndPosition) {
  TempDir dir;
  EXPECT_NE(ImportError(dir.Write("empty.json", "")).find("empty"), std::string::npos);
  EXPECT_NE(ImportError(dir.Write("spaces.json", "   \n")).find("unrecognised format"), std::string::npos);
  EXPECT_NE(ImportError(dir.Write("text.json", "hello world")).find("unrecognised format"), std::string::npos);
  std::string e = ImportError(dir.Write("noevents.json", R"({"schemaVersion": 1})"));
  EXPECT_NE(e.find("no traceEvents"), std::string::npos) << e;
  e = ImportError(dir.Write("trailing.json", R"([{"ph":"X","ts":1,"dur":1}] garbage)"));
  EXPECT_NE(e.find("trailing.json: unexpected data after the end of the JSON at byte 28"), std::string::npos) << e;
  e = ImportError(dir.Write("wrongtype.json", R"({"traceEvents": 5})"));
  EXPECT_NE(e.find("expected '['"), std::string::npos) << e;
  e = ImportError(dir.Path("missing.json"));
  EXPECT_NE(e.find("missing.json"), std::string::npos) << e;
}

TEST(ChromeJsonImporterTest, TruncationAtEveryByteIsAnErrorOrCountedNeverACrash) {
  TempDir dir;
  std::string full = R"({"traceEvents": [{"ph": "X", "name": "a\"b", "pid": 1, "tid": 1, "ts": 1.5, "dur": 2, "args": {"k": [1, {"z": "}"}]}}, {"ph": "i", "name": "m", "pid": 1, "tid": 1, "ts": 3}], "baseTimeNanoseconds": 1000})";
  for (size_t cut = 0; cut < full.size(); ++cut) {
    std::string path = dir.Write("cut.json", full.substr(0, cut));
    auto r = ImportTrace(path);
    ASSERT_FALSE(r.ok()) << "cut at " << cut;
    EXPECT_NE(r.status().message().find("cut.json"), std::string::npos) << r.status().message();
  }
  EXPECT_TRUE(ImportTrace(dir.Write("full.json", full)).ok());
}

TEST(ChromeJsonImporterTest, RandomBytesNeverCrash) {
  TempDir dir;
  std::mt19937 rng(42);
  std::string alphabet = "{}[]\":,0123456789.eE-+ abcXBEphtsdur\\\n";
  for (int i = 0; i < 300; ++i) {
    std::string s = i % 2 ? "[" : "{\"traceEvents\":[";
    size_t n = rng() % 200;
    for (size_t k = 0; k < n; ++k) s.push_back(alphabet[rng() % alphabet.size()]);
    auto r = ImportTrace(dir.Write("r.json", s));
    (void)r;  // either outcome is fine; the process must survive (ASan checks the rest)
  }
}

TEST(ChromeJsonImporterTest, GzipIsDetectedByContentAndCorruptionIsAnError) {
  TempDir dir;
  std::string json = R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1}])";
  std::string gz = testing::GzipBytes(json);
  auto t = MustImport(dir.Write("no_extension", gz));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->slices.size(), 1u);
  std::string corrupt = gz;
  corrupt[corrupt.size() / 2] ^= 0x5a;
  corrupt[corrupt.size() / 2 + 1] ^= 0x33;
  std::string e = ImportError(dir.Write("corrupt.json.gz", corrupt));
  EXPECT_NE(e.find("corrupt.json.gz"), std::string::npos) << e;
  e = ImportError(dir.Write("short.json.gz", gz.substr(0, gz.size() - 12)));
  EXPECT_NE(e.find("short.json.gz"), std::string::npos) << e;
}

TEST(ChromeJsonImporterTest, FlowIdsBeyond2Pow53StayExact) {
  TempDir dir;
  std::string path = dir.Write("f.json", R"([
{"ph":"X","name":"host","pid":1,"tid":1,"ts":1,"dur":5},
{"ph":"X","name":"dev","pid":1,"tid":2,"ts":7,"dur":5},
{"ph":"s","id":18446744073709551557,"pid":1,"tid":1,"ts":2,"cat":"async_npu","name":"x"},
{"ph":"f","id":"18446744073709551557","pid":1,"tid":2,"ts":7,"cat":"async_npu","name":"x","bp":"e"}])");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  ASSERT_EQ(t->flows.size(), 1u);
  EXPECT_EQ(t->flows.flow_id[0], 18446744073709551557ull);
}

}  // namespace
}  // namespace aiprof

namespace aiprof {
namespace {

// Hand-made: a flow whose decimal id exceeds 64 bits (as torch_npu writes
// HostToDevice ids) still links its two ends, and is counted.
TEST(ChromeJsonImporterTest, FlowIdsBeyond64BitsAreHashedAndStillLink) {
  testing::TempDir dir;
  std::string path = dir.Write("t.json", R"({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "launch", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
  {"ph": "X", "cat": "kernel", "name": "k", "pid": 2, "tid": 7, "ts": 20, "dur": 5},
  {"ph": "s", "id": "40004068119343529983", "pid": 1, "tid": 1, "ts": 11, "cat": "HostToDevice", "name": "f"},
  {"ph": "f", "id": 40004068119343529983, "pid": 2, "tid": 7, "ts": 20, "cat": "HostToDevice", "name": "f", "bp": "e"},
  {"ph": "s", "id": "40004068119343529984", "pid": 1, "tid": 1, "ts": 12, "cat": "HostToDevice", "name": "g"}
  ]})");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  ASSERT_EQ(t->flows.size(), 1u);
  EXPECT_EQ(t->Str(t->slices.name[t->flows.from_slice[0]]), "launch");
  EXPECT_EQ(t->Str(t->slices.name[t->flows.to_slice[0]]), "k");
  EXPECT_EQ(t->metadata["hashed_flow_ids"], "3");
  EXPECT_EQ(t->diagnostics.Count("flow_without_id"), 0u);
}

// torch 1.13's export_chrome_trace (and libkineto) write names and call
// stacks raw: a record_function name with a quote, a backslash or a tab made
// the event invalid JSON, and it was skipped (a quote left odd made the file
// unreadable: JsonValueScannerTest.RawQuotesAndBackslashesInANameKeepTheCut).
// Such strings are read as written, each event said once; valid escapes and
// other malformed events are read as before.
TEST(ChromeJsonImporterTest, NamesWrittenRawAreReadAsWritten) {
  TempDir dir;
  // torch's legacy layout: {"name": NAME, "ph": "X", "ts": TS, "dur": 1, "tid": 1, "pid": "CPU functions", ...}
  auto legacy = [](std::string_view name, int ts) {
    return "{\"name\": " + std::string(name) + ", \"ph\": \"X\", \"ts\": " + std::to_string(ts) +
           ", \"dur\": 1, \"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}}, ";
  };
  std::string events = legacy(R"("say "hi")", 1) + legacy(R"("dir\")", 10) + legacy(R"("C:\data\x")", 20) +
                       legacy("\"tab\tsep\"", 30) + legacy(R"("ends with quote"")", 40) +
                       R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 50, "dur": 1,)"
                       R"( "args": {"Call stack": "C:\a\b.py(3): f;<lambda "x">;", "External id": 4}}, )" +
                       legacy(R"("escaped \"q\" \\ \n")", 60) + legacy("12", 70) +
                       legacy("\"bad utf8 \xff\xfe\"", 80) + legacy(R"("last")", 90);
  events.resize(events.size() - 2);  // the last ", "
  std::string path = dir.Write("raw.json", "[" + events + "]");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  std::map<std::string, int64_t> start_by_name;
  for (uint32_t i = 0; i < t->slices.size(); ++i) {
    start_by_name[std::string(t->Str(t->slices.name[i]))] = t->slices.ts_ns[i];
  }
  EXPECT_EQ(start_by_name, (std::map<std::string, int64_t>{{"say \"hi", 1000},
                                                           {"dir\\", 10000},
                                                           {"C:\\data\\x", 20000},
                                                           {"tab\tsep", 30000},
                                                           {"ends with quote\"", 40000},
                                                           {"aten::mm", 50000},
                                                           {"escaped \"q\" \\ \n", 60000},
                                                           {"", 70000},
                                                           {"last", 90000}}));
  uint32_t mm = 0;
  while (mm < t->slices.size() && t->Str(t->slices.name[mm]) != "aten::mm") ++mm;
  ASSERT_LT(mm, t->slices.size());
  std::map<std::string, std::string> args;
  for (uint32_t a = t->slices.arg_begin[mm]; a < t->slices.arg_begin[mm] + t->slices.arg_count[mm]; ++a) {
    const Arg& arg = t->args[a];
    if (arg.type == ArgType::kString) args[std::string(t->Str(arg.key))] = t->Str(StringId{arg.str});
  }
  EXPECT_EQ(args["Call stack"], "C:\\a\\b.py(3): f;<lambda \"x\">;");
  EXPECT_EQ(t->diagnostics.Count("unescaped_string"), 6u);
  EXPECT_EQ(t->diagnostics.Count("name_not_string"), 1u);     // 12
  EXPECT_EQ(t->diagnostics.Count("invalid_event_json"), 1u);  // invalid UTF-8
}

// torch's legacy export has no "cat". A custom torch.autograd.Function's
// forward is recorded under its class name and its backward node as
// "<class>Backward": the forward is a cpu_op, as Kineto files it (before, a
// user_annotation, a region the program marks). So is "<forked function>"
// (a torch.jit.fork task). A record_function range stays one, even one named
// like an autograd node's prefix without the node in the trace.
TEST(ChromeJsonImporterTest, LegacyAutogradFunctionForwardIsACpuOp) {
  TempDir dir;
  auto legacy = [](std::string_view name, int ts, int dur, int tid) {
    return "{\"name\": \"" + std::string(name) + "\", \"ph\": \"X\", \"ts\": " + std::to_string(ts) +
           ", \"dur\": " + std::to_string(dur) + ", \"tid\": " + std::to_string(tid) +
           ", \"pid\": \"CPU functions\", \"args\": {}}";
  };
  std::string path = dir.Write(
      "fn.json", "[" + legacy("## forward ##", 0, 100, 1) + ", " + legacy("Scaled", 10, 20, 1) + ", " +
                     legacy("aten::mul", 12, 5, 1) + ", " + legacy("Lonely", 40, 10, 1) + ", " +
                     legacy("<forked function>", 50, 30, 2) + ", " + legacy("aten::mm", 55, 20, 2) + ", " +
                     legacy("ScaledBackward", 200, 10, 1) + ", " + legacy("aten::mul", 202, 5, 1) + "]");
  auto t = MustImport(path);
  ASSERT_TRUE(t);
  std::map<std::string, std::string> category;
  for (uint32_t i = 0; i < t->slices.size(); ++i) {
    category[std::string(t->Str(t->slices.name[i]))] = t->Str(t->slices.category[i]);
  }
  EXPECT_EQ(category, (std::map<std::string, std::string>{{"## forward ##", "user_annotation"},
                                                          {"Scaled", "cpu_op"},
                                                          {"ScaledBackward", "cpu_op"},
                                                          {"Lonely", "user_annotation"},
                                                          {"<forked function>", "cpu_op"},
                                                          {"aten::mul", "cpu_op"},
                                                          {"aten::mm", "cpu_op"}}));
  for (uint32_t i = 0; i < t->slices.size(); ++i) {
    if (t->Str(t->slices.name[i]) == "Scaled") {
      EXPECT_EQ(t->slices.kind[i], EventKind::kCpuOp);
    }
  }
}

}  // namespace
}  // namespace aiprof
