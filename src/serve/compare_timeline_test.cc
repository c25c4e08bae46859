#include "src/serve/compare_timeline.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "src/analysis/window/analysis_window.h"
#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

// A hand-made trace: one host thread with ProfilerStep#1.. of the given
// durations (ns) back to back from t0 + 1000, each with one op "work_N"
// from 100 ns after its start lasting half the step.
std::unique_ptr<Trace> StepTrace(int64_t t0, const std::vector<int64_t>& durs) {
  auto trace = std::make_unique<Trace>();
  TraceBuilder b(trace.get());
  const uint32_t track = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  int64_t ts = t0 + 1000;
  b.AddSlice(track, t0, 10, b.Intern("setup"), b.Intern("cpu_op"), kNoCorrelation, b.ArgCursor(), 0);
  for (size_t i = 0; i < durs.size(); ++i) {
    b.AddSlice(track, ts, durs[i], b.Intern("ProfilerStep#" + std::to_string(i + 1)), b.Intern("user_annotation"),
               kNoCorrelation, b.ArgCursor(), 0);
    b.AddSlice(track, ts + 100, durs[i] / 2, b.Intern("work_" + std::to_string(i + 1)), b.Intern("cpu_op"),
               kNoCorrelation, b.ArgCursor(), 0);
    ts += durs[i];
  }
  EXPECT_TRUE(b.Finalize().ok());
  return trace;
}

// The steps a run's session aligns (its window, computed here once).
std::vector<AlignedStep> Steps(const Trace& t) { return AlignableSteps(t, ComputeAnalysisWindow(t)); }

// A leading step far slower than the rest is warm-up (the analysis window
// leaves it out, as the structural diff does): steady step 0 of A is its
// ProfilerStep#2.
TEST(CompareTimeline, SteadyStepsLeaveOutWarmup) {
  auto a = StepTrace(0, {100000, 10000, 10000, 10000});
  const std::vector<AlignedStep> steps = Steps(*a);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].number, 2);
  EXPECT_EQ(steps[0].start_ns, 1000 + 100000);
  EXPECT_EQ(steps[0].dur_ns, 10000);
  EXPECT_EQ(steps[2].number, 4);
  auto none = StepTrace(0, {});
  EXPECT_TRUE(Steps(*none).empty());
}

// Step k of A and step k of B at one scale: the longer gets the width, the
// shorter proportionally fewer bins of the same length; times count from
// each step's start, so each run's op starts at 100 ns.
TEST(CompareTimeline, TilesShareTheTimePerPixelFromEachStepsStart) {
  auto a = StepTrace(5'000'000, {100000, 10000, 10000, 10000});
  auto b = StepTrace(0, {20000, 20000, 20000});
  const std::vector<AlignedStep> sa = Steps(*a), sb = Steps(*b);
  ASSERT_EQ(sa.size(), 3u);
  ASSERT_EQ(sb.size(), 3u);
  const TileIndex ia = BuildTileIndex(*a), ib = BuildTileIndex(*b);
  const std::vector<StepTile> tiles = AlignStepTiles(*a, ia, sa[1], *b, ib, sb[1], 1000);
  ASSERT_EQ(tiles.size(), 2u);
  EXPECT_EQ(tiles[0].tile.width, 500u);   // 10 us of 20 us
  EXPECT_EQ(tiles[1].tile.width, 1000u);
  EXPECT_DOUBLE_EQ(tiles[0].tile.bin_ns, 20.0);
  EXPECT_DOUBLE_EQ(tiles[1].tile.bin_ns, 20.0);
  EXPECT_EQ(tiles[0].tile.start_ns, 0);
  EXPECT_EQ(tiles[0].tile.end_ns, 10000);
  EXPECT_EQ(tiles[1].tile.end_ns, 20000);
  EXPECT_EQ(tiles[0].tile.origin_ns, sa[1].start_ns);
  EXPECT_EQ(tiles[1].tile.origin_ns, sb[1].start_ns);
  // Each window holds its step and its op (both listed: longer than a bin).
  for (const StepTile& t : tiles) {
    EXPECT_EQ(t.tile.listed, 2u);
    EXPECT_EQ(t.tile.merged, 0u);
  }
  const CompareWindow whole = *ClampCompareWindow(sa[1], sb[1], 0, -1);
  EXPECT_EQ(whole.start_ns, 0);
  EXPECT_EQ(whole.end_ns, 20000);
  EXPECT_EQ(whole.span_ns, 20000);
  const std::string json = AlignedTilesToJson({a.get(), b.get()}, {7, 9}, tiles, 1, 3, whole);
  EXPECT_NE(json.find("\"step\": 1, \"steps\": 3, \"start_ns\": 0, \"end_ns\": 20000, \"span_ns\": 20000"),
            std::string::npos) << json;
  EXPECT_NE(json.find("\"run\": 7, \"step_number\": 3"), std::string::npos) << json;
  EXPECT_NE(json.find("\"ts_ns\": 100, \"dur_ns\": 5000"), std::string::npos) << json;   // A's work_3
  EXPECT_NE(json.find("\"ts_ns\": 100, \"dur_ns\": 10000"), std::string::npos) << json;  // B's work_2
  const std::string html = AlignedTilesToHtml({a.get(), b.get()}, {7, 9}, tiles, 1, 3, whole, 1000);
  EXPECT_NE(html.find("<svg id=\"timeline-a\""), std::string::npos);
  EXPECT_NE(html.find("<svg id=\"timeline-b\""), std::string::npos);
  EXPECT_EQ(html.find("<svg id=\"timeline\""), std::string::npos);
  EXPECT_NE(html.find("Run 7 (before): step 3"), std::string::npos) << html.substr(0, 600);
  EXPECT_NE(html.find("step=0\">« previous step"), std::string::npos);
  EXPECT_NE(html.find("step=2\">next step »"), std::string::npos);
  // Zoom links over the window, the zoom script's data on the navigation.
  EXPECT_NE(html.find("data-zoom-base=\"/compare?a=7&amp;b=9&amp;step=1&amp;\" data-start=\"0\" data-end=\"20000\" "
                      "data-span=\"20000\" data-px=\"1000\""),
            std::string::npos)
      << html.substr(0, 800);
  EXPECT_NE(html.find("step=1&amp;start=5000&amp;end=15000\">zoom in"), std::string::npos) << html.substr(0, 1200);
  // A named fix is kept by every link, encoded.
  const std::string with_fix = AlignedTilesToHtml({a.get(), b.get()}, {7, 9}, tiles, 1, 3, whole, 1000, "x y&<\"");
  EXPECT_NE(with_fix.find("/compare?a=7&amp;b=9&amp;fix=x%20y%26%3C%22&amp;step=1&amp;start=5000&amp;end=15000\">zoom in"),
            std::string::npos)
      << with_fix.substr(0, 1200);
  EXPECT_NE(with_fix.find("fix=x%20y%26%3C%22&amp;step=2\">next step"), std::string::npos);
  EXPECT_EQ(with_fix.find("x y&<"), std::string::npos);
}

// A zoomed window is the same time range from each step's start, at one
// time per pixel: B's 20 us step shows [4 us, 16 us) in 1000 bins of 12 ns,
// A's 10 us step only [4 us, 10 us) in 500 bins of the same length; a
// window past A's end has no tile for A.
TEST(CompareTimeline, ZoomedWindowIsTheSameTimeRangeOfBothSteps) {
  auto a = StepTrace(5'000'000, {100000, 10000, 10000, 10000});
  auto b = StepTrace(0, {20000, 20000, 20000});
  const std::vector<AlignedStep> sa = Steps(*a), sb = Steps(*b);
  const TileIndex ia = BuildTileIndex(*a), ib = BuildTileIndex(*b);
  const std::optional<CompareWindow> w = ClampCompareWindow(sa[0], sb[0], 4000, 16000);
  ASSERT_TRUE(w.has_value());
  std::vector<StepTile> tiles = AlignStepTiles(*a, ia, sa[0], *b, ib, sb[0], 1000, w);
  ASSERT_EQ(tiles.size(), 2u);
  ASSERT_TRUE(tiles[0].in_window && tiles[1].in_window);
  EXPECT_EQ(tiles[0].tile.width, 500u);
  EXPECT_EQ(tiles[1].tile.width, 1000u);
  EXPECT_DOUBLE_EQ(tiles[0].tile.bin_ns, 12.0);
  EXPECT_DOUBLE_EQ(tiles[1].tile.bin_ns, 12.0);
  EXPECT_EQ(tiles[0].tile.start_ns, 4000);
  EXPECT_EQ(tiles[0].tile.end_ns, 10000);
  EXPECT_EQ(tiles[1].tile.start_ns, 4000);
  EXPECT_EQ(tiles[1].tile.end_ns, 16000);
  EXPECT_EQ(tiles[0].tile.origin_ns, sa[0].start_ns);
  // In the window: no slice starts there (the step and its op started
  // before it), both are listed as overlapping it.
  for (const StepTile& t : tiles) {
    EXPECT_EQ(t.tile.listed + t.tile.merged, 0u);
    ASSERT_EQ(t.tile.tracks.size(), 1u);
    EXPECT_EQ(t.tile.tracks[0].slices.size(), 2u);
  }
  const std::string json = AlignedTilesToJson({a.get(), b.get()}, {7, 9}, tiles, 0, 3, *w);
  EXPECT_NE(json.find("\"start_ns\": 4000, \"end_ns\": 16000, \"span_ns\": 20000"), std::string::npos) << json;
  EXPECT_NE(json.find("\"ts_ns\": 100, \"dur_ns\": 5000"), std::string::npos) << json;  // from the step's start
  // Past A's 10 us: A has nothing to draw.
  const std::optional<CompareWindow> late = ClampCompareWindow(sa[0], sb[0], 12000, 30000);
  ASSERT_TRUE(late.has_value());
  EXPECT_EQ(late->end_ns, 20000);  // clamped to the longer step
  tiles = AlignStepTiles(*a, ia, sa[0], *b, ib, sb[0], 1000, late);
  EXPECT_FALSE(tiles[0].in_window);
  EXPECT_TRUE(tiles[1].in_window);
  EXPECT_EQ(tiles[1].tile.width, 1000u);
  EXPECT_NE(AlignedTilesToJson({a.get(), b.get()}, {7, 9}, tiles, 0, 3, *late).find("\"tile\": null"), std::string::npos);
  const std::string html = AlignedTilesToHtml({a.get(), b.get()}, {7, 9}, tiles, 0, 3, *late, 1000);
  EXPECT_NE(html.find("This step ended 2.0 µs before the window starts"), std::string::npos) << html;
  EXPECT_EQ(html.find("timeline-a"), std::string::npos);
  EXPECT_NE(html.find("<svg id=\"timeline-b\""), std::string::npos);
  EXPECT_FALSE(ClampCompareWindow(sa[0], sb[0], 20000, 30000).has_value());
  EXPECT_FALSE(ClampCompareWindow(sa[0], sb[0], 5000, 5000).has_value());
}

// Zoom links keep a window's length when it is panned against an end.
TEST(CompareTimeline, ZoomLinksStayInsideTheSpan) {
  EXPECT_EQ(FitWindow(-50, 100, 1000), (std::pair<int64_t, int64_t>{0, 100}));
  EXPECT_EQ(FitWindow(950, 100, 1000), (std::pair<int64_t, int64_t>{900, 1000}));
  EXPECT_EQ(FitWindow(10, 5000, 1000), (std::pair<int64_t, int64_t>{0, 1000}));
  EXPECT_EQ(FitWindow(10, 0, 1000), (std::pair<int64_t, int64_t>{10, 11}));
  const std::string links = ZoomLinks("/x?", 0, 400, 1000, "whole");
  EXPECT_NE(links.find("start=0&amp;end=400\">« pan"), std::string::npos) << links;
  EXPECT_NE(links.find("start=100&amp;end=300\">zoom in"), std::string::npos) << links;
  EXPECT_NE(links.find("start=0&amp;end=800\">zoom out"), std::string::npos) << links;
  EXPECT_NE(links.find("start=200&amp;end=600\">pan »"), std::string::npos) << links;
  EXPECT_NE(links.find("start=0&amp;end=1000\">whole"), std::string::npos) << links;
}

}  // namespace
}  // namespace aiprof
