#include "src/view/flame/flame_html.h"

#include <fmt/format.h>

#include "src/render/escape.h"
#include "src/render/page.h"
#include "src/view/flame/flame.css.h"
#include "src/view/flame/flame.js.h"

namespace aiprof {
namespace {

// A JSON string safe inside <script> (AppendJsonEscaped writes < > & as
// \u003c \u003e \u0026, so "</script>" and "<!--" cannot appear), with
// invisible controls shown (AppendDisplayJsonEscaped).
void AppendScriptString(std::string* out, std::string_view s) {
  out->push_back('"');
  AppendDisplayJsonEscaped(out, s);
  out->push_back('"');
}

template <typename T, typename F>
void AppendArray(std::string* out, const char* key, const std::vector<T>& v, F&& value) {
  out->append("\"").append(key).append("\":[");
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out->push_back(',');
    out->append(std::to_string(value(i)));
  }
  out->append("]");
}

// "calls":[...] per frame, calls per step to 4 significant digits (a diff's
// frames: FrameTree::calls).
template <typename F>
void AppendCalls(std::string* out, size_t n, F value) {
  out->append("\"calls\":[");
  for (size_t i = 0; i < n; ++i) {
    if (i) out->push_back(',');
    out->append(fmt::format("{:.4g}", value(i)));
  }
  out->append("]");
}

void AppendDiff(std::string* out, const FrameTree& tree, const FlameDiff& diff, const ViewOptions& options) {
  const FrameTree& base = *diff.baseline;
  const std::vector<uint32_t>& match = *diff.match;
  std::vector<bool> used(base.size(), false);
  for (uint32_t m : match) {
    if (m != kNoFrame) used[m] = true;
  }
  int64_t missing_frames = 0, missing_ns = 0;
  for (uint32_t f = 1; f < base.size(); ++f) {
    if (used[f]) continue;
    ++missing_frames;
    missing_ns += base.self_ns[f];
  }
  out->append(",\"diff\":{\"title\":");
  AppendScriptString(out, options.baseline_title);
  out->append(",\"root_total\":").append(std::to_string(base.root_total_ns()));
  out->append(",\"missing_frames\":").append(std::to_string(missing_frames));
  out->append(",\"missing_ns\":").append(std::to_string(missing_ns)).push_back(',');
  AppendArray(out, "total", match, [&](size_t i) { return match[i] == kNoFrame ? 0 : base.total_ns[match[i]]; });
  out->push_back(',');
  AppendArray(out, "self", match, [&](size_t i) { return match[i] == kNoFrame ? 0 : base.self_ns[match[i]]; });
  out->push_back(',');
  AppendArray(out, "matched", match, [&](size_t i) { return match[i] == kNoFrame ? 0 : 1; });
  if (!base.calls.empty()) {
    out->push_back(',');
    AppendCalls(out, match.size(), [&](size_t i) { return match[i] == kNoFrame ? 0.0 : base.calls[match[i]]; });
  }
  out->push_back('}');
}

}  // namespace

std::string FlameJson(const FrameTree& tree, const FlameDiff& diff, const ViewOptions& options) {
  std::string out = "{\"title\":";
  AppendScriptString(&out, options.title);
  out.append(",\"source\":\"").append(tree.source()).append("\"");
  out.append(",\"event_noun\":\"").append(tree.event_noun()).append("\"");
  out.append(",\"unit\":\"ns\",\"events\":").append(std::to_string(tree.events));
  out.append(",\"outliving\":").append(std::to_string(tree.outliving_events));
  out.append(",\"threads\":").append(std::to_string(tree.threads));
  out.append(",\"kinds\":[");
  for (int k = 0; k <= static_cast<int>(FrameClass::kOther); ++k) {
    if (k) out.push_back(',');
    out.append("\"").append(FrameClassName(static_cast<FrameClass>(k))).append("\"");
  }
  out.append("],\"names\":[");
  for (size_t i = 0; i < tree.names.size(); ++i) {
    if (i) out.push_back(',');
    AppendScriptString(&out, tree.names[i]);
  }
  out.append("],");
  AppendArray(&out, "parent", tree.parent,
              [&](size_t i) { return tree.parent[i] == kNoFrame ? int64_t{-1} : int64_t{tree.parent[i]}; });
  out.push_back(',');
  AppendArray(&out, "name", tree.name, [&](size_t i) { return tree.name[i]; });
  out.push_back(',');
  AppendArray(&out, "module", tree.module, [&](size_t i) { return tree.module[i]; });
  out.push_back(',');
  AppendArray(&out, "kind", tree.kind, [&](size_t i) { return static_cast<int>(tree.kind[i]); });
  out.push_back(',');
  AppendArray(&out, "total", tree.total_ns, [&](size_t i) { return tree.total_ns[i]; });
  out.push_back(',');
  AppendArray(&out, "self", tree.self_ns, [&](size_t i) { return tree.self_ns[i]; });
  if (!tree.nn_module.empty()) {
    out.push_back(',');
    AppendArray(&out, "nn_module", tree.nn_module, [&](size_t i) { return int{tree.nn_module[i]}; });
  }
  if (!tree.calls.empty()) {
    out.push_back(',');
    AppendCalls(&out, tree.calls.size(), [&](size_t i) { return tree.calls[i]; });
  }
  if (diff.baseline && diff.match) AppendDiff(&out, tree, diff, options);
  out.push_back('}');
  return out;
}

Status WriteFlameHtml(const FrameTree& tree, const FlameDiff& diff, const ViewOptions& options, ViewSink* sink) {
  std::string title = HtmlEscape(options.title.empty() ? "trace" : options.title);
  std::string page_title = "Flame graph: " + (options.title.empty() ? std::string("trace") : options.title);
  render::PageSpec page;
  page.title = page_title;
  page.generator = "aiprof view --flame";
  page.styles = {embedded::kFlameCss};
  page.scripts = {embedded::kFlameJs};
  std::string head = render::PageHead(page);
  head.append("<header><h1>Flame graph: ").append(title);
  if (diff.baseline) head.append(" <small>vs ").append(HtmlEscape(options.baseline_title)).append("</small>");
  head.append(
      "</h1><div id=\"summary\"></div>\n<div id=\"toolbar\">"
      "<input type=\"search\" id=\"search\" placeholder=\"Search (text or /regex/)\" aria-label=\"Search frames\">"
      "<button id=\"reset\" title=\"Show everything (Esc)\">Reset zoom</button>"
      "<button id=\"orient\" title=\"Root at the top (icicle) or at the bottom (flame)\">Icicle</button>"
      "<button id=\"sandwich-btn\" disabled>Sandwich (click a frame first)</button>");
  if (diff.baseline) {
    head.append(
        "<label>colour by change in <select id=\"diff-by\"><option value=\"self\">self share</option>"
        "<option value=\"total\">total share</option></select></label>"
        "<span class=\"legend\"><span style=\"--c:hsl(0,85%,55%)\">grew</span>"
        "<span style=\"--c:hsl(220,85%,55%)\">shrank</span></span>");
  } else if (!tree.nn_module.empty()) {
    // Colour by module: the page fills the legend with the largest modules.
    head.append("<button id=\"colorby\" title=\"Colour frames by their nn.Module or by kind\"></button>"
                "<span class=\"legend\" id=\"module-legend\"></span>");
  } else {
    head.append(
        "<span class=\"legend\"><span style=\"--c:hsl(52,75%,65%)\">python</span>"
        "<span style=\"--c:hsl(24,85%,65%)\">operator</span><span style=\"--c:hsl(275,45%,68%)\">annotation</span>"
        "<span style=\"--c:hsl(190,55%,65%)\">runtime</span><span style=\"--c:hsl(8,75%,65%)\">native</span>"
        "<span style=\"--c:hsl(95,35%,65%)\">other</span></span>");
  }
  head.append(
      "<span id=\"match-info\"></span></div></header>\n"
      "<div id=\"main-view\"><div id=\"crumbs\"></div><div id=\"flame\" class=\"chart\"></div></div>\n"
      "<div id=\"sandwich-view\"><div id=\"toolbar2\" style=\"margin:6px 12px\">"
      "<button id=\"sandwich-close\">Back to the flame graph (Esc)</button> "
      "Sandwich of <b id=\"sandwich-title\"></b> <span id=\"sandwich-summary\"></span></div>"
      "<h2>Callers (who calls it; it is the bottom row)</h2><div id=\"callers\" class=\"chart\"></div>"
      "<h2>Callees (what it calls; it is the top row)</h2><div id=\"callees\" class=\"chart\"></div></div>\n"
      "<div id=\"tooltip\"></div>\n<script type=\"application/json\" id=\"flame-data\">");
  RETURN_IF_ERROR(sink->Append(head));
  RETURN_IF_ERROR(sink->Append(FlameJson(tree, diff, options)));
  RETURN_IF_ERROR(sink->Append("</script>\n"));
  return sink->Append(render::PageTail(page));
}

}  // namespace aiprof
