#include "src/serve/timeline_tiles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "src/importers/common/importer_registry.h"
#include "src/model/page_fault_records.h"
#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

// Brute force over every slice: how many start in [a, b) and how much time
// all of them cover inside it.
void Oracle(const Trace& t, int64_t a, int64_t b, uint64_t* starting, int64_t* covered) {
  *starting = 0;
  *covered = 0;
  for (size_t i = 0; i < t.slices.size(); ++i) {
    const int64_t ts = t.slices.ts_ns[i], end = ts + t.slices.dur_ns[i];
    if (ts >= a && ts < b) ++*starting;
    *covered += std::max<int64_t>(0, std::min(end, b) - std::max(ts, a));
  }
}

// Listed slices plus bin counts are the slices starting in the tile; listed
// slices' clipped time plus bin time is the time all slices cover in it.
void CheckConservation(const Trace& trace, int64_t start, int64_t end, uint32_t width) {
  const TileIndex index = BuildTileIndex(trace);
  const Tile tile = ComputeTile(trace, index, start, end, width);
  uint64_t bins = 0, listed_inside = 0;
  int64_t covered = 0;
  const int64_t a = index.start_ns + tile.start_ns, b = index.start_ns + tile.end_ns;
  for (const TileTrack& t : tile.tracks) {
    for (const TileBin& bin : t.bins) {
      bins += bin.count;
      covered += bin.busy_ns;
      EXPECT_LT(bin.bin, tile.width);
    }
    for (uint32_t i : t.slices) {
      const int64_t ts = trace.slices.ts_ns[i], e = ts + trace.slices.dur_ns[i];
      listed_inside += ts >= a && ts < b;
      covered += std::max<int64_t>(0, std::min(e, b) - std::max(ts, a));
      EXPECT_GE(static_cast<double>(trace.slices.dur_ns[i]), tile.bin_ns);
    }
  }
  uint64_t want_starting = 0;
  int64_t want_covered = 0;
  Oracle(trace, a, b, &want_starting, &want_covered);
  EXPECT_EQ(tile.listed, listed_inside);
  EXPECT_EQ(tile.merged, bins);
  EXPECT_EQ(listed_inside + bins, want_starting) << "window " << start << ".." << end << " width " << width;
  EXPECT_EQ(covered, want_covered) << "window " << start << ".." << end << " width " << width;
}

TEST(TimelineTilesTest, HandMadeTraceCountsAndBins) {
  // Hand-made: one thread, a 100 ns parent with two 10 ns children and a
  // 1 ns slice; a 4-bin tile of 0..100 (25 ns bins) lists the parent and
  // merges the rest: a child in bin 0, one from bin 1 into bin 2 (5 ns
  // each), the 1 ns slice in bin 3.
  Trace trace;
  TraceBuilder b(&trace);
  const uint32_t track = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  const StringId cat = b.Intern("cpu_op");
  auto add = [&](int64_t ts, int64_t dur, const char* name) { b.AddSlice(track, ts, dur, b.Intern(name), cat, kNoCorrelation, 0, 0); };
  add(1000, 100, "parent");
  add(1005, 10, "child <a>");
  add(1045, 10, "child b");  // spills from bin 1 into bin 2
  add(1090, 1, "tiny");
  ASSERT_TRUE(b.Finalize().ok());
  const TileIndex index = BuildTileIndex(trace);
  const Tile tile = ComputeTile(trace, index, 0, 100, 4);
  ASSERT_EQ(tile.tracks.size(), 1u);
  EXPECT_EQ(tile.tracks[0].slices.size(), 1u);
  EXPECT_EQ(tile.listed, 1u);
  EXPECT_EQ(tile.merged, 3u);
  std::vector<std::tuple<uint32_t, uint32_t, uint32_t, int64_t>> got;
  for (const TileBin& bin : tile.tracks[0].bins) got.emplace_back(bin.depth, bin.bin, bin.count, bin.busy_ns);
  const std::vector<std::tuple<uint32_t, uint32_t, uint32_t, int64_t>> want = {{1, 0, 1, 10}, {1, 1, 1, 5}, {1, 2, 0, 5}, {1, 3, 1, 1}};
  EXPECT_EQ(got, want);
  const std::string svg = TileToSvg(trace, tile);
  EXPECT_EQ(svg.find("<a>"), std::string::npos);
  EXPECT_NE(TileToJson(trace, tile).find("\"listed\": 1"), std::string::npos);
  CheckConservation(trace, 0, 100, 4);
  CheckConservation(trace, 3, 57, 7);
}

// Counters and flows: a counter's value in effect at the window's start and
// its samples per bin (count, min, max, last); flows whose source starts in
// the window, listed with both ends.
TEST(TimelineTilesTest, CountersAndFlowsInATile) {
  Trace trace;
  TraceBuilder b(&trace);
  const uint32_t host = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  const uint32_t other = b.ThreadTrack(IdValue::Num(1), IdValue::Num(2));
  const StringId cat = b.Intern("cpu_op");
  const uint32_t launch1 = b.AddSlice(host, 1000, 10, b.Intern("launch"), cat, kNoCorrelation, 0, 0);
  const uint32_t launch2 = b.AddSlice(host, 1060, 10, b.Intern("launch"), cat, kNoCorrelation, 0, 0);
  const uint32_t work1 = b.AddSlice(other, 1020, 30, b.Intern("work <1>"), cat, kNoCorrelation, 0, 0);
  const uint32_t work2 = b.AddSlice(other, 1080, 20, b.Intern("work 2"), cat, kNoCorrelation, 0, 0);
  b.AddSliceFlow(launch1, work1, 1, b.Intern("ac2g"));
  b.AddSliceFlow(launch2, work2, 2, b.Intern("ac2g"));
  const uint32_t mem = b.CounterTrack(IdValue::Num(1), b.Intern("memory <MB>"), kHostDevice);
  // Out of order, as an importer may append them.
  for (auto [ts, v] : std::vector<std::pair<int64_t, double>>{{1030, 7}, {990, 5}, {1005, 9}, {1008, 3}, {1090, 4}}) {
    b.AddCounter(mem, ts, v);
  }
  ASSERT_TRUE(b.Finalize().ok());
  const TileIndex index = BuildTileIndex(trace);
  ASSERT_EQ(index.counter_tracks.size(), 1u);
  // [1000, 1050) in 5 bins of 10 ns: counter 5 before; bin 0 has 9 then 3,
  // bin 3 has 7; only launch 1's flow starts inside.
  Tile tile = ComputeTile(trace, index, 0, 50, 5);
  ASSERT_EQ(tile.counters.size(), 1u);
  const TileCounter& c = tile.counters[0];
  EXPECT_TRUE(c.has_before);
  EXPECT_EQ(c.before, 5);
  ASSERT_EQ(c.bins.size(), 2u);
  EXPECT_EQ(c.bins[0].bin, 0u);
  EXPECT_EQ(c.bins[0].count, 2u);
  EXPECT_EQ(c.bins[0].min, 3);
  EXPECT_EQ(c.bins[0].max, 9);
  EXPECT_EQ(c.bins[0].last, 3);
  EXPECT_EQ(c.bins[1].bin, 3u);
  EXPECT_EQ(c.bins[1].last, 7);
  EXPECT_EQ(tile.flow_count, 1u);
  ASSERT_EQ(tile.flows.size(), 1u);
  const std::string json = TileToJson(trace, tile);
  EXPECT_NE(json.find("\"label\": \"memory \\u003cMB\\u003e\", \"before\": 5, \"bins\": [[0, 2, 3, 9, 3], [3, 1, 7, 7, 7]]"),
            std::string::npos) << json;
  EXPECT_NE(json.find("\"flows\": {\"count\": 1, \"listed\": [{\"from_track\": "), std::string::npos) << json;
  EXPECT_NE(json.find("\"from_ts_ns\": 0, \"to_track\": "), std::string::npos) << json;
  EXPECT_NE(json.find("\"to_ts_ns\": 20, \"category\": \"ac2g\"}], \"bins\": []}"), std::string::npos) << json;
  const std::string svg = TileToSvg(trace, tile);
  EXPECT_NE(svg.find("class=\"flow\""), std::string::npos);
  EXPECT_NE(svg.find("memory &lt;MB&gt;: 2 sample(s), 3 to 9, last 3"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("<MB>"), std::string::npos);
  // The whole run: both flows; the window after the last sample still
  // shows the counter's value (4) from its left edge.
  tile = ComputeTile(trace, index, 0, 100, 10);
  EXPECT_EQ(tile.flow_count, 2u);
  tile = ComputeTile(trace, index, 95, 100, 5);
  ASSERT_EQ(tile.counters.size(), 1u);
  EXPECT_TRUE(tile.counters[0].bins.empty());
  EXPECT_EQ(tile.counters[0].before, 4);
  EXPECT_EQ(tile.flow_count, 0u);
}

// On a real GPU trace: the flows counted in a tile (listed or binned) are
// those whose source slice starts in it, checked by brute force.
TEST(TimelineTilesTest, RealTraceFlowsCountedPerTile) {
  auto trace = ImportTrace(std::string(AIPROF_TEST_DATA_DIR) + "/resnet50_num_workers_0.pt.trace.json.gz");
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const Trace& t = **trace;
  ASSERT_GT(t.flows.size(), kMaxTileFlows);
  const TileIndex index = BuildTileIndex(t);
  const int64_t span = index.end_ns - index.start_ns;
  for (auto [a, b] : std::vector<std::pair<int64_t, int64_t>>{{0, span}, {span / 3, span / 3 + span / 200}, {span / 2, span / 2 + span / 7}}) {
    const Tile tile = ComputeTile(t, index, a, b, 1000);
    uint64_t want = 0;
    for (size_t f = 0; f < t.flows.size(); ++f) {
      const int64_t ts = t.slices.ts_ns[t.flows.from_slice[f]] - index.start_ns;
      want += ts >= tile.start_ns && ts < tile.end_ns;
    }
    EXPECT_EQ(tile.flow_count, want);
    uint64_t got = tile.flows.size();
    for (const auto& [bin, n] : tile.flow_bins) {
      got += n;
      EXPECT_LT(bin, tile.width);
    }
    EXPECT_EQ(got, want) << a << ".." << b;
    EXPECT_TRUE(tile.flows.empty() || tile.flow_bins.empty());
  }
}

// A span over the whole run (as Kineto's "PyTorch Profiler" span) is kept
// apart from the track's short slices, so a window is found from those;
// tiles still count it and cover its time.
TEST(TimelineTilesTest, AWholeRunSpanIsVisitedApart) {
  Trace trace;
  TraceBuilder b(&trace);
  const uint32_t track = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  const StringId cat = b.Intern("cpu_op");
  b.AddSlice(track, 0, 100000, b.Intern("profiler span"), cat, kNoCorrelation, 0, 0);
  for (int k = 0; k < 1000; ++k) b.AddSlice(track, k * 100, 10 + k % 7, b.Intern("op"), cat, kNoCorrelation, 0, 0);
  ASSERT_TRUE(b.Finalize().ok());
  const TileIndex index = BuildTileIndex(trace);
  ASSERT_EQ(index.tracks.size(), 1u);
  EXPECT_EQ(index.tracks[0].long_rows.size(), 1u);
  EXPECT_EQ(index.tracks[0].max_dur_ns, 16);
  CheckConservation(trace, 0, 100000, 1000);
  CheckConservation(trace, 50003, 50997, 100);
  CheckConservation(trace, 99990, 100000, 10);
  const Tile tile = ComputeTile(trace, index, 70000, 70100, 10);
  ASSERT_EQ(tile.tracks.size(), 1u);
  ASSERT_FALSE(tile.tracks[0].slices.empty());
  EXPECT_EQ(trace.Str(trace.slices.name[tile.tracks[0].slices[0]]), "profiler span");
}

TEST(TimelineTilesTest, RealTracesConserveCountsAndTimeAtEveryZoom) {
  for (const char* name : {"convnet_bs8_channels_last.kineto.json"}) {
    auto trace = ImportTrace(std::string(AIPROF_TEST_DATA_DIR) + "/" + name);
    ASSERT_TRUE(trace.ok()) << trace.status().message();
    const TileIndex index = BuildTileIndex(**trace);
    const int64_t span = index.end_ns - index.start_ns;
    CheckConservation(**trace, 0, span, 1000);
    CheckConservation(**trace, span / 3, span / 3 + span / 50, 800);
    CheckConservation(**trace, span / 2, span / 2 + 20000, 400);  // 50 ns bins
    CheckConservation(**trace, span - 1000, span, 3);
  }
}

// Thread instants in a tile, on a real trace (ResNet50's 12.8 k `[memory]`
// instants, two global ones): per track, the instants the tile carries
// (listed, or in bins when over the budget) are those of the trace in the
// window, counted by brute force over the instant table; each bin holds
// the instants of its [start + b w, start + (b + 1) w); global ones are
// counted, not drawn; the SVG draws a strip of ticks whose counts add up.
TEST(TimelineTilesTest, RealTraceInstantsCountedPerTile) {
  auto trace = ImportTrace(std::string(AIPROF_TEST_DATA_DIR) + "/resnet50_num_workers_0.pt.trace.json.gz");
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const Trace& t = **trace;
  const TileIndex index = BuildTileIndex(t);
  const int64_t span = index.end_ns - index.start_ns;
  for (size_t budget : {kMaxTileInstants, size_t{100}}) {
    for (auto [a, b, width] : std::vector<std::tuple<int64_t, int64_t, uint32_t>>{
             {0, span, 1000}, {span / 3, span / 3 + span / 40, 700}, {span / 2, span / 2 + 30000, 300}}) {
      const Tile tile = ComputeTile(t, index, a, b, width, budget);
      const int64_t lo = index.start_ns + tile.start_ns, hi = index.start_ns + tile.end_ns;
      std::map<uint32_t, uint64_t> want;
      uint64_t want_total = 0, want_unscoped = 0;
      for (size_t i = 0; i < t.instants.size(); ++i) {
        if (t.instants.ts_ns[i] < lo || t.instants.ts_ns[i] >= hi) continue;
        if (t.instants.scope[i] != 't') {
          ++want_unscoped;
          continue;
        }
        ++want[t.instants.track[i].raw()];
        ++want_total;
      }
      const std::string where = std::to_string(a) + ".." + std::to_string(b) + " budget " + std::to_string(budget);
      EXPECT_EQ(tile.instant_count, want_total) << where;
      EXPECT_EQ(tile.instant_unscoped, want_unscoped) << where;
      EXPECT_EQ(tile.instant_budget, std::min(budget, kTileInstantsPerPixel * width)) << where;
      EXPECT_EQ(tile.instants_binned, want_total > tile.instant_budget) << where;
      std::map<uint32_t, uint64_t> got;
      for (const TileTrack& tr : tile.tracks) {
        for (const InstantGroup& g : tr.instants) {
          got[tr.track] += g.total;
          uint64_t inside = g.shown.size();
          for (uint32_t i : g.shown) {
            EXPECT_EQ(t.instants.track[i].raw(), tr.track);
            EXPECT_TRUE(t.instants.ts_ns[i] >= lo && t.instants.ts_ns[i] < hi);
          }
          if (tile.instants_binned) {
            ASSERT_EQ(g.lod.size(), 1u);
            const int64_t w = tile.instant_bin_ns;
            EXPECT_GE(static_cast<double>(w), tile.bin_ns);
            for (size_t k = 0; k < g.lod[0].bin.size(); ++k) {
              const int64_t b0 = lo + g.lod[0].bin[k] * w, b1 = std::min(hi, b0 + w);
              uint64_t n = 0;
              for (size_t i = 0; i < t.instants.size(); ++i) {
                n += t.instants.track[i].raw() == tr.track && t.instants.scope[i] == 't' &&
                     t.instants.ts_ns[i] >= b0 && t.instants.ts_ns[i] < b1 &&
                     tile.instant_kinds[g.kind].name == t.instants.name[i] &&
                     tile.instant_kinds[g.kind].category == t.instants.category[i];
              }
              EXPECT_EQ(g.lod[0].count[k], n) << where << " bin " << g.lod[0].bin[k];
              EXPECT_LE(g.lod[0].bin[k], int64_t(tile.width));
              inside += g.lod[0].count[k];
            }
          }
          EXPECT_EQ(inside, g.total) << where;
        }
      }
      EXPECT_EQ(got, want) << where;
      if (want_total > 0) {
        // The drawing: one tick per pixel column with instants, data-n its count; they add up.
        const std::string svg = TileToSvg(t, tile);
        uint64_t drawn = 0;
        for (size_t at = svg.find("class=\"instant"); at != std::string::npos; at = svg.find("class=\"instant", at + 1)) {
          const size_t n = svg.find("data-n=\"", at) + 8;
          drawn += std::stoull(svg.substr(n, svg.find('"', n) - n));
        }
        EXPECT_EQ(drawn, want_total) << where;
        EXPECT_NE(TileToJson(t, tile).find("\"instants\": {\"count\": " + std::to_string(want_total)), std::string::npos);
      }
    }
  }
}

// Instant names and categories are markup-free in the tile's SVG and JSON,
// and page fault records give faults (records × period) and an estimate.
TEST(TimelineTilesTest, InstantsHostileNamesAndFaultFigures) {
  Trace trace;
  TraceBuilder b(&trace);
  const uint32_t track = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  b.AddSlice(track, 0, 1000, b.Intern("op"), b.Intern("cpu_op"), kNoCorrelation, 0, 0);
  ASSERT_TRUE(b.Finalize().ok());
  const std::string hostile = "</script><img src=x onerror=alert(1)>";
  const StringId fault_cat = trace.strings.Intern(kPageFaultCategory), fault_name = trace.strings.Intern(kPageFaultName);
  for (int64_t ts : {100, 110, 120, 600}) {
    trace.instants.Append({.ts_ns = ts, .name = fault_name, .category = fault_cat, .track = TrackId{track}, .scope = 't',
                           .arg_begin = 0, .arg_count = 0});
  }
  trace.instants.Append({.ts_ns = 300, .name = trace.strings.Intern(hostile), .category = trace.strings.Intern("<b>" + hostile),
                         .track = TrackId{track}, .scope = 't', .arg_begin = 0, .arg_count = 0});
  trace.metadata[kPageFaultPeriodMeta] = "4";
  trace.metadata[kPageFaultCostMeta] = "1000";
  const TileIndex index = BuildTileIndex(trace);
  const Tile tile = ComputeTile(trace, index, 0, 1000, 10);
  EXPECT_EQ(tile.instant_count, 5u);
  EXPECT_EQ(tile.faults.period, 4u);
  const std::string svg = TileToSvg(trace, tile), json = TileToJson(trace, tile);
  EXPECT_EQ(svg.find("<img"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_EQ(json.find("<img"), std::string::npos);
  // Columns of 100 ns: 3 records in column 1 (12 faults, ≈ 12 µs), 1 in column 6.
  EXPECT_NE(svg.find("3 page fault records: 12 page faults (3 records × 4 faults each); estimated fault time ≈ 12"),
            std::string::npos) << svg;
  EXPECT_NE(svg.find("data-n=\"1\"><title>1 page fault records: 4 page faults"), std::string::npos);
  EXPECT_NE(json.find("\"fault_period\": 4"), std::string::npos);
  EXPECT_NE(json.find("\"fault_cost_ns\": 1000"), std::string::npos);
  // Without a cost: unknown, not a number.
  trace.metadata.erase(kPageFaultCostMeta);
  const std::string svg2 = TileToSvg(trace, ComputeTile(trace, index, 0, 1000, 10));
  EXPECT_NE(svg2.find("estimated fault time unknown"), std::string::npos);
}

// Trace strings are cut in a tile's drawing and JSON however often the
// tile repeats them: a track's label is in the title of each column of its
// instant strip, a counter's in each bin's. Hand-made: a 32 KiB thread
// name, instant kind, counter name and flow category (each stored once, as
// a native or Perfetto file may intern them), 1000 instants and counter
// samples a column apart. Before the cut the drawing was 132 MB (a 1 MiB
// thread name: a 1 GB page from serve, from a 1.1 MB upload).
TEST(TimelineTilesTest, LongNamesAreCutHoweverOftenATileRepeatsThem) {
  Trace trace;
  TraceBuilder b(&trace);
  const std::string big = "<b>" + std::string(32 << 10, 'x');
  const uint32_t track = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  const uint32_t other = b.ThreadTrack(IdValue::Num(1), IdValue::Num(2));
  b.SetThreadName(track, b.Intern(big + "thread"));
  const StringId cat = b.Intern("cpu_op");
  const uint32_t from = b.AddSlice(track, 0, 1'000'000, b.Intern("op"), cat, kNoCorrelation, 0, 0);
  const uint32_t to = b.AddSlice(other, 10, 100, b.Intern("work"), cat, kNoCorrelation, 0, 0);
  b.AddSliceFlow(from, to, 1, b.Intern(big + "flow"));
  const uint32_t counter = b.CounterTrack(IdValue::Num(1), b.Intern(big + "counter"), kHostDevice);
  for (int64_t i = 0; i < 1000; ++i) b.AddCounter(counter, i * 1000 + 1, static_cast<double>(i));
  ASSERT_TRUE(b.Finalize().ok());
  const StringId kind = trace.strings.Intern(big + "instant");
  for (int64_t i = 0; i < 1000; ++i) {
    trace.instants.Append({.ts_ns = i * 1000 + 1,
                           .name = kind,
                           .category = kind,
                           .track = TrackId{track},
                           .scope = 't',
                           .arg_begin = 0,
                           .arg_count = 0});
  }
  const TileIndex index = BuildTileIndex(trace);
  const Tile tile = ComputeTile(trace, index, 0, 1'000'000, 1000);
  ASSERT_EQ(tile.instant_count, 1000u);
  ASSERT_EQ(tile.counters.size(), 1u);
  EXPECT_EQ(tile.counters[0].bins.size(), 1000u);
  EXPECT_EQ(tile.flow_count, 1u);
  const std::string svg = TileToSvg(trace, tile), json = TileToJson(trace, tile);
  // 1000 instant columns and 1000 counter bins, each title holding at most
  // a few cut strings (200 bytes each): well under 2 MB.
  EXPECT_LT(svg.size(), size_t{2} << 20);
  EXPECT_LT(json.size(), size_t{1} << 20);
  EXPECT_EQ(svg.find(std::string(1000, 'x')), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;b&gt;xxxx"), std::string::npos);
  EXPECT_NE(svg.find("bytes in all)"), std::string::npos);
  EXPECT_EQ(json.find(std::string(2000, 'x')), std::string::npos);
  EXPECT_NE(json.find("bytes in all)"), std::string::npos);
}

// Thread instants extend the run's span (a capture's page faults start
// before its first traced op): the whole tile reaches one 500 ns before the
// first slice and one after the last; a global one does not extend it.
TEST(TimelineTilesTest, ThreadInstantsExtendTheSpan) {
  Trace trace;
  TraceBuilder b(&trace);
  const uint32_t track = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  b.AddSlice(track, 1000, 1000, b.Intern("op"), b.Intern("cpu_op"), kNoCorrelation, 0, 0);
  ASSERT_TRUE(b.Finalize().ok());
  const StringId name = trace.strings.Intern("mark");
  for (auto [ts, scope] : std::vector<std::pair<int64_t, char>>{{500, 't'}, {1500, 't'}, {2500, 't'}, {9000, 'g'}}) {
    trace.instants.Append({.ts_ns = ts, .name = name, .category = name, .track = TrackId{track}, .scope = scope,
                           .arg_begin = 0, .arg_count = 0});
  }
  const TileIndex index = BuildTileIndex(trace);
  EXPECT_EQ(index.start_ns, 500);
  EXPECT_EQ(index.end_ns, 2501);
  const Tile tile = ComputeTile(trace, index, 0, index.end_ns - index.start_ns, 100);
  EXPECT_EQ(tile.instant_count, 3u);
  ASSERT_EQ(tile.tracks.size(), 1u);
  ASSERT_EQ(tile.tracks[0].instants.size(), 1u);
  EXPECT_EQ(tile.tracks[0].instants[0].shown.size(), 3u);
  EXPECT_EQ(tile.listed + tile.merged, 1u);
}

}  // namespace
}  // namespace aiprof
