#include "src/view/export/perfetto_export.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "src/view/export/chrome_json_export.h"
#include "src/view/export/perfetto_trace_subset.pb.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

namespace pb = perfetto::protos;
using testing::ImportJsonText;

// Hand-made: one thread with A [1, 11) µs holding B [2, 5); C [8, 15)
// overlaps A without nesting (lane 1); D [12, 13) starts after A ended, so
// lane 0 is free again and takes it. An instant, a counter series and an
// s/f flow A → E (E on another thread).
constexpr char kTrace[] = R"({"traceEvents":[
  {"ph":"M","name":"process_name","pid":1,"args":{"name":"proc"}},
  {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"main"}},
  {"ph":"X","name":"A","cat":"c","ts":1,"dur":10,"pid":1,"tid":2,"args":{"n":7,"s":"x"}},
  {"ph":"X","name":"B","cat":"c","ts":2,"dur":3,"pid":1,"tid":2},
  {"ph":"X","name":"C","cat":"c","ts":8,"dur":7,"pid":1,"tid":2},
  {"ph":"X","name":"D","cat":"c","ts":12,"dur":1,"pid":1,"tid":2},
  {"ph":"X","name":"E","cat":"c","ts":20,"dur":1,"pid":1,"tid":3},
  {"ph":"s","id":5,"name":"f","cat":"req","ts":1,"pid":1,"tid":2},
  {"ph":"f","id":5,"bp":"e","name":"f","cat":"req","ts":20,"pid":1,"tid":3},
  {"ph":"i","name":"mark","ts":4,"pid":1,"tid":2,"s":"t"},
  {"ph":"C","name":"queue","ts":3,"pid":1,"args":{"value":4.5}}
]})";

pb::Trace ExportAndParse(const Trace& t, PerfettoExportStats* stats) {
  StringViewSink sink;
  EXPECT_TRUE(ExportPerfetto(t, &sink, stats).ok());
  pb::Trace parsed;
  EXPECT_TRUE(parsed.ParseFromString(sink.str()));
  return parsed;
}

TEST(PerfettoExportTest, SlicesNestOverlapsGoToSiblingTracks) {
  auto t = ImportJsonText(kTrace);
  ASSERT_NE(t, nullptr);
  PerfettoExportStats stats;
  pb::Trace trace = ExportAndParse(*t, &stats);
  EXPECT_EQ(stats.slices, 5u);
  EXPECT_EQ(stats.overlap_tracks, 1u);
  EXPECT_EQ(stats.instants, 1u);
  EXPECT_EQ(stats.counter_values, 1u);
  EXPECT_EQ(stats.flows, 1u);
  EXPECT_EQ(stats.packets, static_cast<uint64_t>(trace.packet_size()));

  std::map<uint64_t, pb::TrackDescriptor> tracks;
  std::map<uint64_t, std::string> names;
  std::map<std::string, uint64_t> track_of_begin;
  std::map<std::string, uint64_t> begin_ts;
  std::vector<std::pair<uint64_t, uint64_t>> ends;  // (track, ts)
  const pb::TracePacket& first = trace.packet(0);
  ASSERT_TRUE(first.has_clock_snapshot());
  EXPECT_EQ(first.trace_packet_defaults().timestamp_clock_id(), kPerfettoTraceClockId);
  EXPECT_EQ(first.sequence_flags(), pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
  uint64_t flow_from = 0, flow_to = 0;
  std::map<uint64_t, std::string> arg_strings;
  for (const pb::TracePacket& p : trace.packet()) {
    for (const pb::EventName& n : p.interned_data().event_names()) names[n.iid()] = n.name();
    for (const pb::InternedString& v : p.interned_data().debug_annotation_string_values()) arg_strings[v.iid()] = v.str();
    if (p.has_track_descriptor()) tracks[p.track_descriptor().uuid()] = p.track_descriptor();
    if (!p.has_track_event()) continue;
    const pb::TrackEvent& e = p.track_event();
    ASSERT_TRUE(tracks.count(e.track_uuid())) << "event before its track";
    if (e.type() == pb::TrackEvent::TYPE_SLICE_BEGIN) {
      ASSERT_TRUE(names.count(e.name_iid())) << "name used before interned";
      const std::string& name = names[e.name_iid()];
      track_of_begin[name] = e.track_uuid();
      begin_ts[name] = p.timestamp();
      if (e.flow_ids_size()) flow_from = e.flow_ids(0);
      if (e.terminating_flow_ids_size()) flow_to = e.terminating_flow_ids(0);
      if (name == "A") {
        ASSERT_EQ(e.debug_annotations_size(), 2);
        EXPECT_EQ(e.debug_annotations(0).int_value(), 7);
        EXPECT_EQ(arg_strings[e.debug_annotations(1).string_value_iid()], "x");
      }
    } else if (e.type() == pb::TrackEvent::TYPE_SLICE_END) {
      ends.emplace_back(e.track_uuid(), p.timestamp());
    } else if (e.type() == pb::TrackEvent::TYPE_COUNTER) {
      EXPECT_DOUBLE_EQ(e.double_counter_value(), 4.5);
      EXPECT_TRUE(tracks[e.track_uuid()].has_counter());
      EXPECT_EQ(p.timestamp(), 3000u);
    }
  }
  EXPECT_EQ(begin_ts["A"], 1000u);
  EXPECT_EQ(begin_ts["C"], 8000u);
  EXPECT_EQ(track_of_begin["A"], track_of_begin["B"]);
  EXPECT_NE(track_of_begin["A"], track_of_begin["C"]);
  EXPECT_EQ(track_of_begin["A"], track_of_begin["D"]);
  EXPECT_EQ(tracks[track_of_begin["C"]].name(), "main (overlap 1)");
  EXPECT_TRUE(tracks[track_of_begin["A"]].has_thread());
  EXPECT_EQ(tracks[track_of_begin["A"]].thread().thread_name(), "main");
  EXPECT_EQ(ends.size(), 5u);
  EXPECT_NE(flow_from, 0u);
  EXPECT_EQ(flow_from, flow_to);
  // Ends on lane 0 in order: B at 5, A at 11, D at 13.
  std::vector<uint64_t> lane0;
  for (auto [track, ts] : ends) if (track == track_of_begin["A"]) lane0.push_back(ts);
  EXPECT_EQ(lane0, (std::vector<uint64_t>{5000, 11000, 13000}));
}

TEST(PerfettoExportTest, NegativeTimestampsShiftTheTrace) {
  auto t = ImportJsonText(R"({"traceEvents":[{"ph":"X","name":"A","ts":-2,"dur":1,"pid":1,"tid":1}]})");
  ASSERT_NE(t, nullptr);
  PerfettoExportStats stats;
  pb::Trace trace = ExportAndParse(*t, &stats);
  EXPECT_EQ(stats.shift_ns, 2000);
  uint64_t begin = UINT64_MAX;
  for (const pb::TracePacket& p : trace.packet()) {
    if (p.has_track_event() && p.track_event().type() == pb::TrackEvent::TYPE_SLICE_BEGIN) begin = p.timestamp();
  }
  EXPECT_EQ(begin, 0u);
}

TEST(ChromeJsonExportTest, MicrosAreExact) {
  std::string s;
  AppendMicros(&s, 1736408883704643212);
  EXPECT_EQ(s, "1736408883704643.212");
  s.clear();
  AppendMicros(&s, -1500);
  EXPECT_EQ(s, "-1.500");
  s.clear();
  AppendMicros(&s, 7);
  EXPECT_EQ(s, "0.007");
}

TEST(ChromeJsonExportTest, HandMadeTraceRoundTrips) {
  auto t = ImportJsonText(kTrace);
  ASSERT_NE(t, nullptr);
  StringViewSink sink;
  ChromeJsonExportStats stats;
  ASSERT_TRUE(ExportChromeJson(*t, &sink, &stats).ok());
  EXPECT_EQ(stats.slices, 5u);
  EXPECT_EQ(stats.flows, 1u);
  auto back = ImportJsonText(sink.str());
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->slices.size(), t->slices.size());
  EXPECT_EQ(back->flows.size(), t->flows.size());
  EXPECT_EQ(back->counters.size(), t->counters.size());
  EXPECT_EQ(back->instants.size(), t->instants.size());
  for (size_t i = 0; i < t->slices.size(); ++i) {
    EXPECT_EQ(back->slices.ts_ns[i], t->slices.ts_ns[i]);
    EXPECT_EQ(back->Str(back->slices.name[i]), t->Str(t->slices.name[i]));
  }
}

}  // namespace
}  // namespace aiprof
