#include "src/serve/compare_timeline.h"

#include <algorithm>
#include <set>

#include "src/analysis/common/steps.h"
#include "src/analysis/window/analysis_window.h"
#include "src/render/escape.h"
#include "src/render/units.h"

namespace aiprof {

std::vector<AlignedStep> AlignableSteps(const Trace& trace) {
  const StepList list = FindSteps(trace);
  const AnalysisWindow window = ComputeAnalysisWindow(trace);
  const std::set<size_t> warmup(window.warmup.begin(), window.warmup.end());
  int32_t first_rank = 0;
  bool have_rank = false;
  for (const StepSpan& s : list.steps) {
    if (!s.has_start()) continue;
    if (!have_rank || s.rank < first_rank) first_rank = s.rank;
    have_rank = true;
  }
  std::vector<AlignedStep> out;
  for (size_t i = 0; i < list.steps.size(); ++i) {
    const StepSpan& s = list.steps[i];
    if (!s.has_start() || s.rank != first_rank || warmup.count(i) || s.dur_ns <= 0) continue;
    out.push_back({s.rank, s.number, s.start_ns, s.dur_ns});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const AlignedStep& x, const AlignedStep& y) { return x.start_ns < y.start_ns; });
  return out;
}

namespace {

// The tile of one step, re-based so its times count from the step's start.
Tile StepWindowTile(const Trace& trace, const TileIndex& index, const AlignedStep& step, uint32_t width) {
  const int64_t from = step.start_ns - index.start_ns;
  Tile tile = ComputeTile(trace, index, std::max<int64_t>(0, from), from + step.dur_ns, width);
  tile.origin_ns += tile.start_ns;
  tile.end_ns -= tile.start_ns;
  tile.start_ns = 0;
  return tile;
}

}  // namespace

std::vector<StepTile> AlignStepTiles(const Trace& trace_a, const TileIndex& index_a, const AlignedStep& a,
                                     const Trace& trace_b, const TileIndex& index_b, const AlignedStep& b,
                                     uint32_t width) {
  width = std::clamp<uint32_t>(width, 1, kMaxTileWidth);
  const double longest = static_cast<double>(std::max(a.dur_ns, b.dur_ns));
  auto bins = [&](const AlignedStep& s) {
    return std::max<uint32_t>(1, static_cast<uint32_t>(width * (static_cast<double>(s.dur_ns) / longest) + 0.5));
  };
  return {{a, StepWindowTile(trace_a, index_a, a, bins(a))}, {b, StepWindowTile(trace_b, index_b, b, bins(b))}};
}

std::string AlignedTilesToJson(const std::vector<const Trace*>& traces, const std::vector<int64_t>& ids,
                               const std::vector<StepTile>& tiles, size_t step, size_t steps) {
  std::string o = "{\"step\": " + std::to_string(step) + ", \"steps\": " + std::to_string(steps) + ", \"runs\": [";
  for (size_t i = 0; i < tiles.size(); ++i) {
    const StepTile& t = tiles[i];
    if (i) o += ", ";
    o += "{\"run\": " + std::to_string(ids[i]) + ", \"step_number\": " + std::to_string(t.step.number) +
         ", \"rank\": " + std::to_string(t.step.rank) + ", \"step_start_ns\": " + std::to_string(t.step.start_ns) +
         ", \"step_dur_ns\": " + std::to_string(t.step.dur_ns) + ", \"tile\": " + TileToJson(*traces[i], t.tile) + "}";
  }
  return o + "]}";
}

std::string AlignedTilesToHtml(const std::vector<const Trace*>& traces, const std::vector<int64_t>& ids,
                               const std::vector<StepTile>& tiles, size_t step, size_t steps) {
  const std::string a = std::to_string(ids[0]), b = std::to_string(ids[1]);
  const std::string base = "/compare?a=" + a + "&amp;b=" + b + "&amp;step=";
  std::string o = "<h2>Timeline aligned on steps</h2><p id=\"compare-timeline-nav\">Steady step " +
                  std::to_string(step + 1) + " of " + std::to_string(steps) +
                  " of each run, from the step's start, at the same time per pixel (" +
                  HtmlEscape(render::FormatQuantity(tiles[0].tile.bin_ns, render::Unit::kNs)) + "). ";
  if (step > 0) o += "<a href=\"" + base + std::to_string(step - 1) + "\">« previous step</a> ";
  if (step + 1 < steps) o += "<a href=\"" + base + std::to_string(step + 1) + "\">next step »</a> ";
  o += "<a href=\"/api/compare/timeline?a=" + a + "&amp;b=" + b + "&amp;step=" + std::to_string(step) +
       "\">JSON</a></p><div id=\"compare-timeline\">";
  const char* side[2] = {"before", "after"};
  for (size_t i = 0; i < 2 && i < tiles.size(); ++i) {
    const AlignedStep& st = tiles[i].step;
    std::string svg = TileToSvg(*traces[i], tiles[i].tile);
    const std::string id_attr = "<svg id=\"timeline\"";  // one id per drawing on the page
    if (svg.compare(0, id_attr.size(), id_attr) == 0) {
      svg.replace(0, id_attr.size(), std::string("<svg id=\"timeline-") + (i == 0 ? "a" : "b") + "\"");
    }
    o += "<h3>Run " + std::to_string(ids[i]) + " (" + side[i] + "): step " +
         (st.number >= 0 ? std::to_string(st.number) : std::string("?")) +
         (st.rank == kNoRank ? std::string() : ", rank " + std::to_string(st.rank)) + ", " +
         HtmlEscape(render::FormatQuantity(static_cast<double>(st.dur_ns), render::Unit::kNs)) + "</h3>" + svg;
  }
  return o + "</div>";
}

}  // namespace aiprof
