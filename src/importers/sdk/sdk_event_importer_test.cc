#include "src/importers/sdk/sdk_event_importer.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "src/importers/common/importer_registry.h"
#include "src/model/trace_builder.h"
#include "src/sdk/event_stream.h"
#include "test/util/compress.h"
#include "test/util/temp_file.h"

namespace aiprof {
namespace {

using namespace sdkrt;  // event types

// Writes the SDK's event file layout (event_stream.h) for hand-made events;
// the clock is nanoseconds from base 1000.
class EventFileBuilder {
 public:
  EventFileBuilder& Thread(int64_t tid, const std::string& name, uint64_t overwritten = 0) {
    threads_.push_back({tid, name, overwritten, {}});
    return *this;
  }
  // An event of the last thread at `ticks`; `name` (if any) becomes the payload.
  EventFileBuilder& Ev(uint8_t type, int64_t ticks, uint64_t payload = 0) {
    threads_.back().events.push_back(Event{(static_cast<uint64_t>(ticks) << kTypeBits) | type, payload});
    return *this;
  }
  EventFileBuilder& Named(uint8_t type, int64_t ticks, const std::string& name) { return Ev(type, ticks, Str(name)); }
  uint64_t Str(const std::string& s) {
    auto [it, added] = index_.try_emplace(s, strings_.size());
    if (added) strings_.push_back(s);
    return it->second;
  }
  uint32_t version = kEventFileVersion;

  std::string Bytes() const {
    std::string out(kEventFileMagic, sizeof(kEventFileMagic));
    Put<uint32_t>(&out, version);
    Put<uint32_t>(&out, sizeof(Event));
    Put<int64_t>(&out, 4242);  // pid
    Put<int32_t>(&out, 3);     // rank
    Put<uint32_t>(&out, 0);    // clock: nanoseconds
    Put<int64_t>(&out, 1000);  // base ns
    Put<uint64_t>(&out, uint64_t{1} << 32);
    Put<double>(&out, 1.0);
    Put<double>(&out, 0.0);
    PutStr(&out, "server");
    PutStr(&out, "record");
    Put<uint64_t>(&out, threads_.size());
    for (const ThreadEvents& t : threads_) {
      Put<int64_t>(&out, t.tid);
      Put<uint64_t>(&out, t.events.size() + t.overwritten);
      Put<uint64_t>(&out, t.overwritten);
      PutStr(&out, t.name);
      Put<uint64_t>(&out, t.events.size());
      out.append(reinterpret_cast<const char*>(t.events.data()), t.events.size() * sizeof(Event));
    }
    Put<uint64_t>(&out, strings_.size());
    for (const std::string& s : strings_) PutStr(&out, s);
    out.append(kEventFileEnd, sizeof(kEventFileEnd));
    return out;
  }

 private:
  struct ThreadEvents {
    int64_t tid;
    std::string name;
    uint64_t overwritten;
    std::vector<Event> events;
  };
  template <typename T>
  static void Put(std::string* out, T v) {
    out->append(reinterpret_cast<const char*>(&v), sizeof(v));
  }
  static void PutStr(std::string* out, const std::string& s) {
    Put<uint64_t>(out, s.size());
    out->append(s);
  }
  std::vector<ThreadEvents> threads_;
  std::vector<std::string> strings_;
  std::map<std::string, uint64_t> index_;
};

// Two threads (hand-made): "main" opens outer [0, 90], a request (id 7) at
// 10, node "stage" [20, 40], a counter at 30, a mark at 50, iteration 3
// [60, 80] with "inner" opened at 70 and left open (closed by the iteration's
// end), an end without a begin at 95 and a span left open at 100; "worker"
// has span "work" [5, 45] holding the request's end at 40, an end for an
// unknown request, and a request still in flight.
EventFileBuilder TwoThreads() {
  EventFileBuilder b;
  b.Thread(11, "main")
      .Named(kSpanBegin, 0, "outer")
      .Ev(kRequestBegin, 10, 7)
      .Named(kExtName, 10, "req")
      .Named(kNodeBegin, 20, "stage")
      .Ev(kCounter, 30, std::bit_cast<uint64_t>(2.5))
      .Named(kExtName, 30, "queue")
      .Ev(kNodeEnd, 40)
      .Named(kMark, 50, "tick")
      .Ev(kIterStart, 60, 3)
      .Named(kSpanBegin, 70, "inner")
      .Ev(kIterEnd, 80)
      .Ev(kSpanEnd, 90)
      .Ev(kSpanEnd, 95)
      .Named(kSpanBegin, 100, "open");
  b.Thread(12, "worker")
      .Named(kSpanBegin, 5, "work")
      .Ev(kRequestEnd, 40, 7)
      .Ev(kSpanEnd, 45)
      .Ev(kRequestEnd, 50, 99)
      .Ev(kRequestBegin, 55, 8)
      .Named(kExtName, 55, "req")
      .Ev(kCounter, 60, std::bit_cast<uint64_t>(1.0))
      .Named(kExtName, 60, "queue");
  return b;
}

StatusOr<std::unique_ptr<Trace>> Import(const std::string& bytes, testing::TempDir* dir) {
  return ImportTrace(dir->Write("events.aiprof", bytes));
}

TEST(SdkEventImporter, HandMadeStreamBecomesTheModel) {
  testing::TempDir dir;
  auto r = Import(TwoThreads().Bytes(), &dir);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& t = **r;
  // Tracks: the threads, one request lane, one counter; all of the process.
  ASSERT_EQ(t.tracks.size(), 4u);
  EXPECT_EQ(t.Str(t.tracks.name[0]), "main");
  EXPECT_EQ(t.tracks.tid[1], 12);
  EXPECT_EQ(t.tracks.kind[2], TrackKind::kSpans);
  EXPECT_EQ(t.Str(t.tracks.name[2]), "requests");
  EXPECT_EQ(t.tracks.kind[3], TrackKind::kCounter);
  EXPECT_EQ(t.Str(t.tracks.name[3]), "queue");
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(t.tracks.layer[i], Layer::kApplication) << i;
    EXPECT_EQ(t.tracks.pid[i], 4242) << i;
    EXPECT_EQ(t.tracks.rank[i], 3) << i;
    EXPECT_EQ(t.Str(t.tracks.process_name[i]), "server") << i;
  }
  // Slices sorted by (track, start), with depth; "open" is left out.
  struct Want {
    const char* name;
    uint32_t track;
    int64_t ts, dur;
    uint16_t depth;
  } want[] = {{"outer", 0, 1000, 90, 0},         {"node:stage", 0, 1020, 20, 1}, {"ProfilerStep#3", 0, 1060, 20, 1},
              {"inner", 0, 1070, 10, 2},         {"work", 1, 1005, 40, 0},       {"req", 2, 1010, 30, 0}};
  ASSERT_EQ(t.slices.size(), std::size(want));
  for (size_t i = 0; i < std::size(want); ++i) {
    EXPECT_EQ(t.Str(t.slices.name[i]), want[i].name) << i;
    EXPECT_EQ(t.slices.track[i], want[i].track) << i;
    EXPECT_EQ(t.slices.ts_ns[i], want[i].ts) << i;
    EXPECT_EQ(t.slices.dur_ns[i], want[i].dur) << i;
    EXPECT_EQ(t.slices.depth[i], want[i].depth) << i;
    EXPECT_EQ(t.slices.kind[i], EventKind::kUserAnnotation) << i;
  }
  ASSERT_EQ(t.slices.arg_count[5], 1u);
  EXPECT_EQ(t.args[t.slices.arg_begin[5]].u, 7u);
  // The request's flow: from "outer" (open on main at its begin) to "work"
  // (open on worker at its end).
  ASSERT_EQ(t.flows.size(), 1u);
  EXPECT_EQ(t.flows.from_slice[0], 0u);
  EXPECT_EQ(t.flows.to_slice[0], 4u);
  EXPECT_EQ(t.flows.flow_id[0], 7u);
  EXPECT_EQ(t.Str(t.flows.category[0]), "request");
  // The iteration is a step (by the builder, as for every format).
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps.number[0], 3);
  EXPECT_EQ(t.steps.ts_ns[0], 1060);
  EXPECT_EQ(t.steps.rank[0], 3);
  ASSERT_EQ(t.counters.size(), 2u);
  EXPECT_EQ(t.counters.value[0], 2.5);
  EXPECT_EQ(t.counters.ts_ns[1], 1060);
  ASSERT_EQ(t.instants.size(), 1u);
  EXPECT_EQ(t.Str(t.instants.name[0]), "tick");
  EXPECT_EQ(t.instants.ts_ns[0], 1050);
  const auto& d = t.diagnostics.entries();
  EXPECT_EQ(d.at("sdk_unmatched_end").count, 1u);
  EXPECT_EQ(d.at("sdk_unclosed_span").count, 1u);
  EXPECT_EQ(d.at("sdk_request_unmatched_end").count, 1u);
  EXPECT_EQ(d.count("sdk_request_duplicate_end"), 0u);
  EXPECT_EQ(t.metadata.at("source_format"), "aiprof_sdk");
  EXPECT_EQ(t.metadata.at("sdk.open_spans"), "1");
  EXPECT_EQ(t.metadata.at("sdk.requests_in_flight"), "1");
  EXPECT_EQ(t.metadata.at("sdk.events_written"), "22");
}

// Overlapping requests take separate lanes; a lane is reused once free.
TEST(SdkEventImporter, RequestsTakeTheLaneFreeLongest) {
  EventFileBuilder b;
  b.Thread(1, "t")
      .Ev(kRequestBegin, 0, 1).Named(kExtName, 0, "r")
      .Ev(kRequestBegin, 5, 2).Named(kExtName, 5, "r")
      .Ev(kRequestEnd, 10, 1)
      .Ev(kRequestBegin, 12, 3).Named(kExtName, 12, "r")
      .Ev(kRequestEnd, 20, 2)
      .Ev(kRequestEnd, 30, 3);
  testing::TempDir dir;
  auto r = Import(b.Bytes(), &dir);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& t = **r;
  ASSERT_EQ(t.tracks.size(), 3u);  // the thread, "requests", "requests 2"
  EXPECT_EQ(t.Str(t.tracks.name[2]), "requests 2");
  ASSERT_EQ(t.slices.size(), 3u);
  // Request 3 starts at 12: lane 1 (free since 10) rather than lane 2.
  EXPECT_EQ(t.slices.track[0], 1u);
  EXPECT_EQ(t.slices.ts_ns[1], 1012);
  EXPECT_EQ(t.slices.track[1], 1u);
  EXPECT_EQ(t.slices.track[2], 2u);
  EXPECT_EQ(t.flows.size(), 0u);  // no span open at either end
}

// Clock ties reorder slices (longest first): a request's flow still joins
// the spans that were open, at their places after the sort. Hand-made: A
// [10, 10] (empty), B [10, 30] holding the request's begin at 15, C [20, 25]
// holding its end at 22; begin order A, B, C, sorted B, A, C.
TEST(SdkEventImporter, RequestFlowsFollowTheirSlicesThroughTheSort) {
  EventFileBuilder b;
  b.Thread(1, "t")
      .Named(kSpanBegin, 10, "A").Ev(kSpanEnd, 10)
      .Named(kSpanBegin, 10, "B")
      .Ev(kRequestBegin, 15, 5).Named(kExtName, 15, "r")
      .Named(kSpanBegin, 20, "C")
      .Ev(kRequestEnd, 22, 5)
      .Ev(kSpanEnd, 25)
      .Ev(kSpanEnd, 30);
  testing::TempDir dir;
  auto r = Import(b.Bytes(), &dir);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& t = **r;
  ASSERT_EQ(t.slices.size(), 4u);
  EXPECT_EQ(t.Str(t.slices.name[0]), "B");
  EXPECT_EQ(t.Str(t.slices.name[1]), "A");
  EXPECT_EQ(t.Str(t.slices.name[2]), "C");
  ASSERT_EQ(t.flows.size(), 1u);
  EXPECT_EQ(t.flows.from_slice[0], 0u);  // B
  EXPECT_EQ(t.flows.to_slice[0], 2u);    // C
}

// The records of a thread's slices are freed a block (65,536) at a time as
// they are added, and requests find the slices they were anchored to by
// begin order: anchors past the first block, and one on a span left open
// (no slice: the request's own slice takes its place). Hand-made: "open"
// from 0, never closed; 70,000 spans "s"; then request 2 begins with only
// "open" on the stack, request 1 inside B, both end inside C.
TEST(SdkEventImporter, RequestAnchorsPastTheFirstBlockAndOnAnOpenSpan) {
  EventFileBuilder b;
  b.Thread(1, "t").Named(kSpanBegin, 0, "open");
  constexpr int64_t kSpans = 70000, t0 = 10 + 3 * kSpans;
  for (int64_t i = 0; i < kSpans; ++i) b.Named(kSpanBegin, 10 + 3 * i, "s").Ev(kSpanEnd, 11 + 3 * i);
  b.Ev(kRequestBegin, t0, 2)
      .Named(kExtName, t0, "r2")
      .Named(kSpanBegin, t0 + 10, "B")
      .Ev(kRequestBegin, t0 + 15, 1)
      .Named(kExtName, t0 + 15, "r1")
      .Named(kSpanBegin, t0 + 20, "C")
      .Ev(kRequestEnd, t0 + 22, 1)
      .Ev(kRequestEnd, t0 + 23, 2)
      .Ev(kSpanEnd, t0 + 25)
      .Ev(kSpanEnd, t0 + 30);
  testing::TempDir dir;
  auto r = Import(b.Bytes(), &dir);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& t = **r;
  ASSERT_EQ(t.slices.size(), static_cast<size_t>(kSpans + 4));
  EXPECT_EQ(t.slices.ts_ns[kSpans - 1], 1000 + 11 + 3 * (kSpans - 1) - 1);
  const uint32_t B = kSpans, C = kSpans + 1, r2 = kSpans + 2, r1 = kSpans + 3;
  EXPECT_EQ(t.Str(t.slices.name[B]), "B");
  EXPECT_EQ(t.Str(t.slices.name[C]), "C");
  EXPECT_EQ(t.Str(t.slices.name[r2]), "r2");
  EXPECT_EQ(t.Str(t.slices.name[r1]), "r1");
  std::map<uint64_t, std::pair<uint32_t, uint32_t>> flows;  // id -> (from, to)
  for (size_t i = 0; i < t.flows.size(); ++i) flows[t.flows.flow_id[i]] = {t.flows.from_slice[i], t.flows.to_slice[i]};
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_EQ(flows[1], std::make_pair(B, C));
  EXPECT_EQ(flows[2], std::make_pair(r2, C));  // begun under "open" only: from its own slice
  EXPECT_EQ(t.metadata.at("sdk.open_spans"), "1");
}

// 20,000 threads of one span each (hand-made; the shape of a program that
// starts a thread per task, SdkFile.ThreadChurn*): the import touches memory
// in proportion to the slices, not a fixed block per thread. A 1.5 MiB block
// constructed at each thread's first slice (c8bbbf4) touched 30 GB here
// (7.3 M minor faults); the bound, 64 KiB of touched pages per thread, is
// 20x the whole trace's need and 1/24 of that.
TEST(SdkEventImporter, ManyShortThreadsTouchMemoryPerSliceNotPerThread) {
  EventFileBuilder b;
  constexpr int kThreads = 20000;
  for (int i = 0; i < kThreads; ++i) b.Thread(100 + i, "t").Named(kSpanBegin, 10 * i, "s").Ev(kSpanEnd, 10 * i + 5);
  testing::TempDir dir;
  const std::string bytes = b.Bytes();
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  auto r = Import(bytes, &dir);
  getrusage(RUSAGE_SELF, &after);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->slices.size(), static_cast<size_t>(kThreads));
  const long faults = after.ru_minflt - before.ru_minflt;
  EXPECT_LT(faults, kThreads * 16L) << "minor faults while importing " << kThreads << " one-span threads";
}

TEST(SdkEventImporter, BadFilesAreClearErrors) {
  testing::TempDir dir;
  std::string good = TwoThreads().Bytes();
  auto truncated = Import(good.substr(0, good.size() - 1), &dir);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("events.aiprof: corrupt SDK event file at byte"), std::string::npos)
      << truncated.status().message();

  EventFileBuilder bad_name;
  bad_name.Thread(1, "t").Ev(kSpanBegin, 0, 5).Ev(kSpanEnd, 1);
  auto named = Import(bad_name.Bytes(), &dir);
  ASSERT_FALSE(named.ok());
  EXPECT_NE(named.status().message().find("names string 5 of 0"), std::string::npos) << named.status().message();

  EventFileBuilder newer = TwoThreads();
  newer.version = kEventFileVersion + 1;
  auto version = Import(newer.Bytes(), &dir);
  ASSERT_FALSE(version.ok());
  EXPECT_NE(version.status().message().find("is not supported"), std::string::npos) << version.status().message();

  // A thread claiming more events than the file holds.
  std::string huge = good;
  size_t count_at = good.find("main") + 4;  // the name, then u64 event count
  uint64_t lots = uint64_t{1} << 60;
  std::memcpy(huge.data() + count_at, &lots, sizeof(lots));
  auto runs_past = Import(huge, &dir);
  ASSERT_FALSE(runs_past.ok());
  EXPECT_NE(runs_past.status().message().find("run past the end"), std::string::npos) << runs_past.status().message();
}

// Hand-made (input trial, 'in'): aiprof_counter() given NaN and +inf was
// kept as samples (NULL in query, Infinity in totals); they are skipped and
// counted, the finite sample kept. A gzip of a good file was "corrupt SDK
// event file at byte 0"; it imports as the file does now.
TEST(SdkEventImporter, NonFiniteCountersAreCountedAndCompressedFilesRead) {
  testing::TempDir dir;
  EventFileBuilder b;
  b.Thread(1, "t")
      .Named(kSpanBegin, 0, "s")
      .Ev(kCounter, 1, std::bit_cast<uint64_t>(std::nan("")))
      .Named(kExtName, 1, "q")
      .Ev(kCounter, 2, std::bit_cast<uint64_t>(HUGE_VAL))
      .Named(kExtName, 2, "q")
      .Ev(kCounter, 3, std::bit_cast<uint64_t>(4.0))
      .Named(kExtName, 3, "q")
      .Ev(kSpanEnd, 4);
  auto t = Import(b.Bytes(), &dir);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ((*t)->counters.size(), 1u);
  EXPECT_EQ((*t)->counters.value[0], 4.0);
  const auto& d = (*t)->diagnostics.entries();
  ASSERT_TRUE(d.count("sdk_counter_not_finite"));
  EXPECT_EQ(d.at("sdk_counter_not_finite").count, 2u);

  const std::string gz = testing::GzipBytes(b.Bytes());
  // Read through a decompressed copy now (was "decompress it first"); the
  // importer itself still says so when handed the compressed bytes.
  const std::string gz_path = dir.Write("events.aiprof.gz", gz);
  auto compressed = ImportTrace(gz_path);
  ASSERT_TRUE(compressed.ok()) << compressed.status().message();
  ASSERT_EQ((*compressed)->counters.size(), 1u);
  EXPECT_EQ((*compressed)->counters.value[0], 4.0);
  EXPECT_EQ((*compressed)->diagnostics.entries().at("sdk_counter_not_finite").count, 2u);
  EXPECT_EQ((*compressed)->metadata.at("compression"), "gzip");
  EXPECT_EQ((*compressed)->metadata.at("source_path"), gz_path);
  Trace direct;
  TraceBuilder builder(&direct);
  Status in_place = ImportSdkEventFile(gz_path, &builder);
  EXPECT_NE(in_place.message().find("events.aiprof.gz: a compressed SDK event file (gzip)"), std::string::npos)
      << in_place.message();
}

// A file an SDK wrote before the event file existed (the native layout,
// version 5, written by the main branch's SDK: `sdk_c_program requests 8`)
// still loads.
TEST(SdkEventImporter, OlderSdkNativeFilesStillLoad) {
  auto r = ImportTrace(std::string(AIPROF_TEST_DATA_DIR) + "/sdk/requests_native_v5.aiprof");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& t = **r;
  EXPECT_EQ(t.metadata.at("source_format"), "aiprof_sdk");
  size_t requests = 0;
  for (size_t i = 0; i < t.slices.size(); ++i) requests += t.Str(t.slices.name[i]) == "request";
  EXPECT_EQ(requests, 8u);
  EXPECT_GT(t.flows.size(), 0u);
}

}  // namespace
}  // namespace aiprof

namespace aiprof {
namespace {

using namespace sdkrt;  // NOLINT: event types and the spill layout

// A spill file (event_stream.h) as a process that died mid-way leaves it:
// one buffer of two chunks (the second cut after a torn event: payload
// stored, head not), a name journal, a thread that exited (its exit marker
// and name) and the owner after it. Read up to the last whole event.
class SpillBuilder {
 public:
  SpillBuilder() : bytes_(sdkrt::kSpillHeaderBytes, '\0') {
    sdkrt::SpillHeader h{};
    std::memcpy(h.magic, sdkrt::kSpillMagic, sizeof(h.magic));
    h.version = sdkrt::kSpillVersion;
    h.bytes_per_event = 16;
    h.pid = 99;
    h.rank = -1;
    h.tsc = 0;
    h.base_ns = 1000;
    h.mult = uint64_t{1} << 32;
    h.ns_per_tick = 1;
    std::snprintf(h.process_name, sizeof(h.process_name), "worker");
    std::memcpy(bytes_.data(), &h, sizeof(h));
  }
  // A 64 KiB chunk; returns its offset.
  size_t Chunk(uint32_t kind, uint32_t buffer, uint32_t seq, int64_t owner = 0, const char* owner_name = "") {
    size_t off = bytes_.size();
    bytes_.resize(off + (64 << 10), '\0');
    sdkrt::SpillChunk c{};
    c.capacity = kind == sdkrt::kSpillNames ? (64 << 10) - sizeof(c) : ((64 << 10) - sizeof(c)) / 16;
    c.magic = sdkrt::kSpillChunkMagic;
    c.kind = kind;
    c.buffer = buffer;
    c.seq = seq;
    c.bytes = 64 << 10;
    c.owner_tid = owner;
    std::snprintf(c.owner_name, sizeof(c.owner_name), "%s", owner_name);
    std::memcpy(bytes_.data() + off, &c, sizeof(c));
    cursor_[off] = off + sizeof(c);
    return off;
  }
  void Name(size_t chunk, uint64_t address, const std::string& text) {
    size_t& at = cursor_[chunk];
    uint64_t len = text.size();
    std::memcpy(bytes_.data() + at, &address, 8);
    std::memcpy(bytes_.data() + at + 8, &len, 8);
    std::memcpy(bytes_.data() + at + 16, text.data(), len);
    at += 16 + ((len + 7) & ~uint64_t{7});
  }
  void Ev(size_t chunk, uint8_t type, int64_t ticks, uint64_t payload) {
    size_t& at = cursor_[chunk];
    Event e{(static_cast<uint64_t>(ticks) << kTypeBits) | type, payload};
    std::memcpy(bytes_.data() + at, &e, sizeof(e));
    at += sizeof(e);
  }
  // Fills chunk `chunk` up to its capacity with span begin/end pairs.
  void Fill(size_t chunk, uint64_t name, int64_t* ticks) {
    const size_t end = chunk + (64 << 10);
    for (bool begin = true; cursor_[chunk] + 16 <= end; begin = !begin) {
      Ev(chunk, begin ? kSpanBegin : kSpanEnd, (*ticks)++, begin ? name : 0);
    }
  }
  std::string bytes_;
  std::map<size_t, size_t> cursor_;
};

TEST(SdkEventImporter, SpillFileOfADeadProcessIsReadToItsLastWholeEvent) {
  SpillBuilder b;
  const size_t names = b.Chunk(kSpillNames, 0, 0);
  b.Name(names, 0x1000, "step_work");
  b.Name(names, 0x2000, "exited_thread_span");
  b.Name(names, 0x3000, "req");
  // Buffer 0: thread 501 records a span and exits (marker, name "old"), then
  // thread 502 (the owner now, "main") fills the chunk with step_work spans
  // and goes on in chunk 1: a request whose name event was never stored,
  // then a torn event.
  const size_t c0 = b.Chunk(kSpillEvents, 0, 0, 502, "main");
  int64_t ticks = 0;
  b.Ev(c0, kSpanBegin, ticks++, 0x2000);
  b.Ev(c0, kSpanEnd, ticks++, 0);
  b.Ev(c0, kThreadExit, ticks++, 501);
  uint64_t old_name = 0;
  std::memcpy(&old_name, "old", 3);
  b.Ev(c0, kThreadName, 0, old_name);
  b.Fill(c0, 0x1000, &ticks);  // (4088 - 4) / 2 = 2042 spans (4,088 events a 64 KiB chunk)
  const size_t c1 = b.Chunk(kSpillEvents, 0, 1);
  b.Ev(c1, kSpanBegin, ticks++, 0x1000);
  b.Ev(c1, kSpanEnd, ticks++, 0);
  b.Ev(c1, kRequestBegin, ticks++, 5);  // its kExtName never written
  b.Ev(c1, 0, 0, 0x3000);               // torn: payload stored, head not
  testing::TempDir dir;
  auto t = ImportTrace(dir.Write("aiprof-99.aiprof.part", b.bytes_));
  ASSERT_TRUE(t.ok()) << t.status().message();
  const Trace& tr = **t;
  std::map<std::string, uint64_t> per_thread;
  for (uint32_t i = 0; i < tr.slices.size(); ++i) {
    per_thread[std::string(tr.Str(tr.tracks.name[tr.slices.track[i]])) + "/" + std::string(tr.Str(tr.slices.name[i]))]++;
  }
  EXPECT_EQ(per_thread, (std::map<std::string, uint64_t>{{"main/step_work", 2043}, {"old/exited_thread_span", 1}}));
  EXPECT_EQ(tr.metadata.at("sdk.source"), "spill");
  EXPECT_EQ(tr.metadata.at("sdk.requests_in_flight"), "0");  // the nameless begin is dropped
  EXPECT_EQ(tr.metadata.at("process_name"), "worker");
  EXPECT_EQ(tr.metadata.at("pid"), "99");
  EXPECT_EQ(tr.diagnostics.entries().at("sdk_stream_unterminated").count, 1u);
  EXPECT_FALSE(tr.diagnostics.entries().count("sdk_spill_incomplete"));
  // Times: nanoseconds from base 1000.
  EXPECT_EQ(tr.slices.ts_ns[0] >= 1000, true);

  // A chunk missing from the sequence (kept in memory on a full disk): the
  // buffer stops at the gap, counted; an unjournaled name is named so, counted.
  SpillBuilder g;
  const size_t gn = g.Chunk(kSpillNames, 0, 0);
  g.Name(gn, 0x1000, "a");
  const size_t g0 = g.Chunk(kSpillEvents, 0, 0, 7, "t");
  ticks = 0;
  g.Fill(g0, 0x4000, &ticks);  // a name the journal lacks
  const size_t g2 = g.Chunk(kSpillEvents, 0, 2);
  g.Ev(g2, kSpanBegin, ticks++, 0x1000);
  g.Ev(g2, kSpanEnd, ticks++, 0);
  auto gt = ImportTrace(dir.Write("gap.aiprof.part", g.bytes_));
  ASSERT_TRUE(gt.ok()) << gt.status().message();
  EXPECT_EQ((*gt)->slices.size(), 2044u);
  EXPECT_EQ((*gt)->Str((*gt)->slices.name[0]), "<name not journaled>");
  EXPECT_EQ((*gt)->diagnostics.entries().at("sdk_spill_incomplete").count, 1u + 2044u);
}

}  // namespace
}  // namespace aiprof
