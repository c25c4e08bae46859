#include "src/serve/compare_timeline.h"

#include <algorithm>
#include <set>

#include "src/analysis/common/steps.h"
#include "src/analysis/window/analysis_window.h"
#include "src/base/http_server.h"
#include "src/render/escape.h"
#include "src/render/units.h"

namespace aiprof {

std::vector<AlignedStep> AlignableSteps(const Trace& trace, const AnalysisWindow& window) {
  // The steps with starts are the timeline's, Trace::steps, whose rows are
  // FindSteps' steps and so the indices of the window's warm-up list; a
  // trace with breakdown steps only has none with a start.
  const StepTable& st = trace.steps;
  const std::set<size_t> warmup(window.warmup.begin(), window.warmup.end());
  auto has_start = [&](size_t i) { return st.ts_ns[i] != kUnknownStart; };  // as StepSpan::has_start
  int32_t first_rank = 0;
  bool have_rank = false;
  for (size_t i = 0; i < st.size(); ++i) {
    if (!has_start(i)) continue;
    if (!have_rank || st.rank[i] < first_rank) first_rank = st.rank[i];
    have_rank = true;
  }
  std::vector<AlignedStep> out;
  for (size_t i = 0; i < st.size(); ++i) {
    if (!has_start(i) || st.rank[i] != first_rank || warmup.count(i) || st.dur_ns[i] <= 0) continue;
    out.push_back({st.rank[i], st.number[i], st.ts_ns[i], st.dur_ns[i]});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const AlignedStep& x, const AlignedStep& y) { return x.start_ns < y.start_ns; });
  return out;
}

std::optional<CompareWindow> ClampCompareWindow(const AlignedStep& a, const AlignedStep& b, int64_t start_ns,
                                                int64_t end_ns) {
  CompareWindow w;
  w.span_ns = std::max<int64_t>(1, std::max(a.dur_ns, b.dur_ns));
  w.start_ns = std::max<int64_t>(0, start_ns);
  w.end_ns = end_ns < 0 ? w.span_ns : std::min(end_ns, w.span_ns);
  if (w.end_ns <= w.start_ns) return std::nullopt;
  return w;
}

namespace {

// The tile of [from, to) of one step (ns from its start, to <= its
// duration), re-based so its times count from the step's start.
Tile StepWindowTile(const Trace& trace, const TileIndex& index, const AlignedStep& step, int64_t from, int64_t to,
                    uint32_t width) {
  const int64_t shift = step.start_ns - index.start_ns;  // the step's start, from the index's origin
  Tile tile = ComputeTile(trace, index, shift + from, shift + to, width);
  tile.origin_ns += shift;
  tile.start_ns -= shift;
  tile.end_ns -= shift;
  return tile;
}

}  // namespace

std::vector<StepTile> AlignStepTiles(const Trace& trace_a, const TileIndex& index_a, const AlignedStep& a,
                                     const Trace& trace_b, const TileIndex& index_b, const AlignedStep& b,
                                     uint32_t width, std::optional<CompareWindow> window) {
  width = std::clamp<uint32_t>(width, 1, kMaxTileWidth);
  const CompareWindow w = window ? *window : *ClampCompareWindow(a, b, 0, -1);
  const double len = static_cast<double>(w.end_ns - w.start_ns);
  auto side = [&](const Trace& trace, const TileIndex& index, const AlignedStep& s) {
    StepTile out;
    out.step = s;
    const int64_t to = std::min(w.end_ns, s.dur_ns);
    if (to <= w.start_ns) {
      out.in_window = false;
      return out;
    }
    const auto bins =
        std::max<uint32_t>(1, static_cast<uint32_t>(width * (static_cast<double>(to - w.start_ns) / len) + 0.5));
    out.tile = StepWindowTile(trace, index, s, w.start_ns, to, bins);
    return out;
  };
  return {side(trace_a, index_a, a), side(trace_b, index_b, b)};
}

std::string AlignedTilesToJson(const std::vector<const Trace*>& traces, const std::vector<int64_t>& ids,
                               const std::vector<StepTile>& tiles, size_t step, size_t steps,
                               const CompareWindow& window) {
  std::string o = "{\"step\": " + std::to_string(step) + ", \"steps\": " + std::to_string(steps) +
                  ", \"start_ns\": " + std::to_string(window.start_ns) + ", \"end_ns\": " +
                  std::to_string(window.end_ns) + ", \"span_ns\": " + std::to_string(window.span_ns) + ", \"runs\": [";
  for (size_t i = 0; i < tiles.size(); ++i) {
    const StepTile& t = tiles[i];
    if (i) o += ", ";
    o += "{\"run\": " + std::to_string(ids[i]) + ", \"step_number\": " + std::to_string(t.step.number) +
         ", \"rank\": " + std::to_string(t.step.rank) + ", \"step_start_ns\": " + std::to_string(t.step.start_ns) +
         ", \"step_dur_ns\": " + std::to_string(t.step.dur_ns) +
         ", \"tile\": " + (t.in_window ? TileToJson(*traces[i], t.tile) : std::string("null")) + "}";
  }
  return o + "]}";
}

std::string AlignedTilesToHtml(const std::vector<const Trace*>& traces, const std::vector<int64_t>& ids,
                               const std::vector<StepTile>& tiles, size_t step, size_t steps,
                               const CompareWindow& window, uint32_t width, const std::string& fix) {
  const std::string a = std::to_string(ids[0]), b = std::to_string(ids[1]);
  const std::string base =
      "/compare?a=" + a + "&amp;b=" + b + (fix.empty() ? "" : "&amp;fix=" + HtmlEscape(PercentEncode(fix))) + "&amp;step=";
  const std::string here = base + std::to_string(step) + "&amp;";
  const bool whole = window.start_ns == 0 && window.end_ns == window.span_ns;
  auto ns = [](double v) { return HtmlEscape(render::FormatQuantity(v, render::Unit::kNs)); };
  std::string o = "<h2>Timeline aligned on steps</h2><p id=\"compare-timeline-nav\" data-zoom-base=\"" + here +
                  "\" data-start=\"" + std::to_string(window.start_ns) + "\" data-end=\"" +
                  std::to_string(window.end_ns) + "\" data-span=\"" + std::to_string(window.span_ns) +
                  "\" data-px=\"" + std::to_string(width) + "\">Steady step " + std::to_string(step + 1) + " of " +
                  std::to_string(steps) + " of each run, from the step's start, at the same time per pixel (" +
                  ns(static_cast<double>(window.end_ns - window.start_ns) / width) + "): " +
                  (whole ? std::string("the whole steps") : ns(static_cast<double>(window.start_ns)) + " to " +
                                                                ns(static_cast<double>(window.end_ns))) +
                  ". <span id=\"compare-zoom\">" + ZoomLinks(here, window.start_ns, window.end_ns, window.span_ns, "whole step") +
                  "</span>· ";
  if (step > 0) o += "<a href=\"" + base + std::to_string(step - 1) + "\">« previous step</a> ";
  if (step + 1 < steps) o += "<a href=\"" + base + std::to_string(step + 1) + "\">next step »</a> ";
  o += "<a href=\"/api/compare/timeline?a=" + a + "&amp;b=" + b + "&amp;step=" + std::to_string(step) +
       "&amp;start=" + std::to_string(window.start_ns) + "&amp;end=" + std::to_string(window.end_ns) +
       "\">JSON</a></p><p class=\"note\">Click a drawing to zoom in 4× there, drag it to pan; keys: ← → pan, + − zoom, "
       "0 the whole step.</p><div id=\"compare-timeline\">";
  const char* side[2] = {"before", "after"};
  for (size_t i = 0; i < 2 && i < tiles.size(); ++i) {
    const AlignedStep& st = tiles[i].step;
    o += "<h3>Run " + std::to_string(ids[i]) + " (" + side[i] + "): step " +
         (st.number >= 0 ? std::to_string(st.number) : std::string("?")) +
         (st.rank == kNoRank ? std::string() : ", rank " + std::to_string(st.rank)) + ", " +
         ns(static_cast<double>(st.dur_ns)) + "</h3>";
    if (!tiles[i].in_window) {
      o += "<p class=\"note step-ended\">This step ended " + ns(static_cast<double>(window.start_ns - st.dur_ns)) +
           " before the window starts.</p>";
      continue;
    }
    std::string svg = TileToSvg(*traces[i], tiles[i].tile);
    const std::string id_attr = "<svg id=\"timeline\"";  // one id per drawing on the page
    if (svg.compare(0, id_attr.size(), id_attr) == 0) {
      svg.replace(0, id_attr.size(), std::string("<svg id=\"timeline-") + (i == 0 ? "a" : "b") + "\"");
    }
    o += svg;
  }
  return o + "</div>";
}

}  // namespace aiprof
