#include "src/view/topology/topology_render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "src/base/module_loader.h"
#include "src/render/escape.h"
#include "src/render/page.h"
#include "src/view/topology/module/graphviz_module.h"

namespace aiprof {
namespace {

constexpr size_t kMaxLabelChars = 48;

// At most kMaxLabelChars bytes, cut at a UTF-8 boundary, "…" when cut.
std::string Shorten(std::string_view s) { return FitLabel(s, kMaxLabelChars); }

// A node's label in a tooltip is cut after this many bytes: every edge's
// two tooltips name both its ends, so a thread named by 1 MiB launching on
// 200 streams made 420 MB of DOT (from a 1.1 MB trace) that Graphviz did
// not lay out in 150 s. The page's details panel shows whole labels.
constexpr size_t kMaxTooltipLabelBytes = 256;
std::string TooltipLabel(std::string_view s) { return ShownText(s, kMaxTooltipLabelBytes); }

std::string DurationLabel(double ns) {
  char buf[64];
  if (ns >= 1e9) std::snprintf(buf, sizeof(buf), "%.3g s", ns / 1e9);
  else if (ns >= 1e6) std::snprintf(buf, sizeof(buf), "%.3g ms", ns / 1e6);
  else if (ns >= 1e3) std::snprintf(buf, sizeof(buf), "%.3g us", ns / 1e3);
  else std::snprintf(buf, sizeof(buf), "%.0f ns", ns);
  return buf;
}

const char* FillColor(const TopoNode& n) {
  if (n.highlight) return "#fad2cf";
  switch (n.kind) {
    case TopoNodeKind::kRank: return n.external ? "#f1f3f4" : "#fce8e6";
    case TopoNodeKind::kThread: return "#e8f0fe";
    case TopoNodeKind::kStream: return "#e6f4ea";
    case TopoNodeKind::kStage: return "#fef7e0";
    case TopoNodeKind::kCommGroup: return "#f3e8fd";
    default: return "#ffffff";
  }
}

const char* EdgeColor(const TopoEdge& e) {
  if (e.highlight) return "#d93025";
  switch (e.kind) {
    case TopoEdgeKind::kLaunch: return "#1a73e8";
    case TopoEdgeKind::kFlow: return "#5f6368";
    case TopoEdgeKind::kRequest: return "#e37400";
    case TopoEdgeKind::kStage: return "#b06000";
    case TopoEdgeKind::kCollective: return "#9334e6";
    case TopoEdgeKind::kLink: return "#188038";
  }
  return "#5f6368";
}

std::string DetailsText(const std::vector<std::pair<std::string, std::string>>& details) {
  std::string out;
  for (const auto& [k, v] : details) out += (out.empty() ? "" : "\n") + k + ": " + v;
  return out;
}

// DOT text with line breaks: each line escaped, joined by DOT's "\n".
std::string DotLines(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (true) {
    size_t nl = text.find('\n', start);
    out += DotText(std::string_view(text).substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    out += "\\n";
    start = nl + 1;
  }
  return out;
}

class DotWriter {
 public:
  explicit DotWriter(const Topology& t) : t_(t), children_(t.nodes.size()) {
    for (uint32_t i = 0; i < t.nodes.size(); ++i) {
      if (t.nodes[i].parent != kNoTopoNode) children_[t.nodes[i].parent].push_back(i);
      if (!t.nodes[i].cluster) {
        int k = static_cast<int>(t.nodes[i].kind);
        max_time_[k] = std::max(max_time_[k], t.nodes[i].time_ns);
      }
    }
    degree_.assign(t.nodes.size(), 0);
    for (const TopoEdge& e : t.edges) {
      int k = static_cast<int>(e.kind);
      max_count_[k] = std::max(max_count_[k], e.count);
      ++degree_[e.from];
      ++degree_[e.to];
    }
  }

  std::string Write(std::string_view title) {
    out_ = "digraph topology {\n";
    out_ += "  graph [rankdir=LR, fontname=\"Helvetica\", fontsize=11, nodesep=0.25, ranksep=0.7, newrank=true, label=\"" +
            DotText(t_.limit_note.empty() ? std::string(title) : std::string(title) + " (" + t_.limit_note + ")") +
            "\", labelloc=t];\n";
    out_ += "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=9, color=\"#5f6368\"];\n";
    out_ += "  edge [fontname=\"Helvetica\", fontsize=8, arrowsize=0.6];\n";
    for (uint32_t i = 0; i < t_.nodes.size(); ++i) {
      if (t_.nodes[i].parent == kNoTopoNode) WriteNode(i, "  ");
    }
    for (uint32_t i = 0; i < t_.edges.size(); ++i) WriteEdge(i);
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  std::string Tooltip(const TopoNode& n) const {
    std::string text = std::string(TopoNodeKindName(n.kind)) + ": " + TooltipLabel(n.label);
    if (n.highlight) text += "\n" + n.highlight_reason;
    if (!n.details.empty()) text += "\n" + DetailsText(n.details);
    return DotLines(text);
  }

  void WriteNode(uint32_t i, const std::string& indent) {
    const TopoNode& n = t_.nodes[i];
    const std::string id = "n" + std::to_string(i);
    if (n.cluster) {
      out_ += indent + "subgraph cluster_" + id + " {\n";
      out_ += indent + "  id=\"" + id + "\"; label=\"" + DotText(Shorten(n.label));
      if (n.time_ns > 0) out_ += "\\n" + DotText(DurationLabel(static_cast<double>(n.time_ns)));
      out_ += "\"; tooltip=\"" + Tooltip(n) + "\";\n";
      out_ += indent + "  style=\"rounded" + std::string(n.external ? ",dashed" : "") + "\"; color=\"" +
              (n.highlight ? "#d93025" : "#9aa0a6") + "\"; penwidth=" + (n.highlight ? "3" : "1") + ";\n";
      for (uint32_t c : children_[i]) WriteNode(c, indent + "  ");
      WriteGrid(i, indent + "  ");
      out_ += indent + "}\n";
      return;
    }
    const int64_t max_time = max_time_[static_cast<int>(n.kind)];
    const double scale = max_time > 0 ? std::sqrt(static_cast<double>(n.time_ns) / max_time) : 0;
    char size[96];
    std::snprintf(size, sizeof(size), "width=%.2f, height=%.2f", 1.0 + 1.6 * scale, 0.4 + 0.5 * scale);
    out_ += indent + id + " [id=\"" + id + "\", label=\"" + DotText(Shorten(n.label));
    if (n.time_ns > 0) out_ += "\\n" + DotText(DurationLabel(static_cast<double>(n.time_ns)));
    out_ += "\", tooltip=\"" + Tooltip(n) + "\", " + size + ", fillcolor=\"" + FillColor(n) + "\"";
    if (n.highlight) out_ += ", color=\"#d93025\", penwidth=3";
    if (n.external) out_ += ", style=\"rounded,dashed,filled\"";
    if (n.kind == TopoNodeKind::kCommGroup) out_ += ", shape=ellipse";
    if (n.kind == TopoNodeKind::kStage) out_ += ", shape=box3d";
    out_ += "];\n";
  }

  // Nodes of a cluster that no edge touches would all land in one column (one
  // rank of the layout): invisible edges chain them in rows of kGridColumns
  // so they form a grid instead of one long column.
  void WriteGrid(uint32_t cluster, const std::string& indent) {
    constexpr size_t kGridColumns = 3;
    size_t in_row = 0;
    uint32_t previous = kNoTopoNode;
    for (uint32_t c : children_[cluster]) {
      if (t_.nodes[c].cluster || degree_[c] != 0) continue;
      if (in_row > 0) {
        out_ += indent + "n" + std::to_string(previous) + " -> n" + std::to_string(c) + " [style=invis];\n";
      }
      previous = c;
      in_row = (in_row + 1) % kGridColumns;
    }
  }

  std::string EdgeLabel(const TopoEdge& e) const {
    char buf[128];
    switch (e.kind) {
      case TopoEdgeKind::kLaunch:
        std::snprintf(buf, sizeof(buf), "%llu launches\\n%s", static_cast<unsigned long long>(e.count),
                      DurationLabel(static_cast<double>(e.time_ns)).c_str());
        return buf;
      case TopoEdgeKind::kCollective:
        std::snprintf(buf, sizeof(buf), "%llu x %s", static_cast<unsigned long long>(e.count),
                      DurationLabel(static_cast<double>(e.time_ns)).c_str());
        return buf;
      case TopoEdgeKind::kLink:
        std::snprintf(buf, sizeof(buf), "%.3g GB/s", e.bandwidth_bytes_per_second / 1e9);
        return DotText(Shorten(e.label)) + " " + buf;
      default:
        return DotText(Shorten(e.label)) + " x" + std::to_string(e.count);
    }
  }

  void WriteEdge(uint32_t i) {
    const TopoEdge& e = t_.edges[i];
    const uint64_t max_count = max_count_[static_cast<int>(e.kind)];
    const double scale = max_count > 0 ? std::sqrt(static_cast<double>(e.count) / max_count) : 0;
    char pen[32];
    std::snprintf(pen, sizeof(pen), "%.2f", e.highlight ? 3.5 : 1.0 + 3.0 * scale);
    std::string tip = std::string(TopoEdgeKindName(e.kind)) + ": " + TooltipLabel(t_.nodes[e.from].label) + " -> " +
                      TooltipLabel(t_.nodes[e.to].label) + "\n" + DetailsText(e.details);
    out_ += "  n" + std::to_string(e.from) + " -> n" + std::to_string(e.to) + " [id=\"e" + std::to_string(i) +
            "\", label=\"" + EdgeLabel(e) + "\", tooltip=\"" + DotLines(tip) + "\", labeltooltip=\"" + DotLines(tip) +
            "\", color=\"" + EdgeColor(e) + "\", fontcolor=\"" + EdgeColor(e) + "\", penwidth=" + pen;
    if (e.kind == TopoEdgeKind::kStage && e.label == "contains") out_ += ", style=dashed";
    if (e.kind == TopoEdgeKind::kFlow || e.kind == TopoEdgeKind::kRequest) out_ += ", style=dotted";
    if (e.kind == TopoEdgeKind::kCollective) out_ += ", arrowhead=none";
    out_ += "];\n";
  }

  const Topology& t_;
  std::vector<std::vector<uint32_t>> children_;
  std::vector<uint32_t> degree_;
  int64_t max_time_[8] = {};
  uint64_t max_count_[8] = {};
  std::string out_;
};

void AppendToString(void* sink, const char* data, size_t size) { static_cast<std::string*>(sink)->append(data, size); }

// The Graphviz module's layout function, loaded on the first call (once per
// process; a failure is kept and reported by every later call).
StatusOr<AiprofGraphvizLayoutFn> GraphvizLayout() {
  static const StatusOr<AiprofGraphvizLayoutFn> layout = []() -> StatusOr<AiprofGraphvizLayoutFn> {
    ModuleSpec spec;
    spec.file_name = "aiprof_graphviz.so";
    spec.from_bin = AIPROF_GRAPHVIZ_MODULE_FROM_BIN;
    spec.env_var = "AIPROF_GRAPHVIZ_MODULE";
    spec.version_symbol = AIPROF_GRAPHVIZ_VERSION_SYMBOL;
    spec.entry_symbol = AIPROF_GRAPHVIZ_LAYOUT_SYMBOL;
    spec.anchor = reinterpret_cast<const void*>(&AppendToString);
    StatusOr<LoadedModule> module = LoadModule(spec);
    if (!module.ok()) {
      // The first line says what and what to do, naming no path (aiprof
      // serve replies with it and logs the rest); the paths tried follow.
      return ErrStatus(
          "the topology view needs aiprof's Graphviz module (aiprof_graphviz.so), which did not load: "
          "install Graphviz's library (Debian: libgvc6) and the aiprof build's aiprof_graphviz.so "
          "(lib/aiprof/ of the install), or set AIPROF_GRAPHVIZ_MODULE to its path\n" +
          module.status().message());
    }
    return reinterpret_cast<AiprofGraphvizLayoutFn>(module->entry);
  }();
  return layout;
}

void AppendDetailsJson(std::string* out, const std::vector<std::pair<std::string, std::string>>& details) {
  out->push_back('[');
  for (size_t i = 0; i < details.size(); ++i) {
    if (i) out->push_back(',');
    out->push_back('[');
    *out += DisplayJsonString(details[i].first);
    out->push_back(',');
    *out += DisplayJsonString(details[i].second);
    out->push_back(']');
  }
  out->push_back(']');
}

std::string JsonNumber(double v) {
  if (!std::isfinite(v) || v < 0) return "null";  // unknown
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

std::string GraphJson(const Topology& t) {
  std::string out = "{\"nodes\":[";
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    const TopoNode& n = t.nodes[i];
    if (i) out += ",\n";
    out += "{\"id\":\"n" + std::to_string(i) + "\",\"kind\":\"" + TopoNodeKindName(n.kind) +
           "\",\"label\":" + DisplayJsonString(n.label) + ",\"cluster\":" + (n.cluster ? "true" : "false") +
           ",\"rank\":" + std::to_string(n.rank) + ",\"pid\":" + std::to_string(n.pid) +
           ",\"tid\":" + std::to_string(n.tid) +
           ",\"parent\":" + (n.parent == kNoTopoNode ? std::string("null") : "\"n" + std::to_string(n.parent) + "\"") +
           ",\"time_ns\":" + std::to_string(n.time_ns) + ",\"highlight\":" + (n.highlight ? "true" : "false") +
           ",\"reason\":" + DisplayJsonString(n.highlight_reason) + ",\"details\":";
    AppendDetailsJson(&out, n.details);
    out += "}";
  }
  out += "],\n\"edges\":[";
  for (size_t i = 0; i < t.edges.size(); ++i) {
    const TopoEdge& e = t.edges[i];
    if (i) out += ",\n";
    out += "{\"id\":\"e" + std::to_string(i) + "\",\"kind\":\"" + TopoEdgeKindName(e.kind) + "\",\"from\":\"n" +
           std::to_string(e.from) + "\",\"to\":\"n" + std::to_string(e.to) +
           "\",\"label\":" + DisplayJsonString(e.label) + ",\"count\":" + std::to_string(e.count) +
           ",\"time_ns\":" + std::to_string(e.time_ns) + ",\"host_time_ns\":" + std::to_string(e.host_time_ns) +
           ",\"bytes\":" + JsonNumber(e.bytes) +
           ",\"bandwidth_bytes_per_second\":" + JsonNumber(e.bandwidth_bytes_per_second) +
           ",\"highlight\":" + (e.highlight ? "true" : "false") + ",\"details\":";
    AppendDetailsJson(&out, e.details);
    out += "}";
  }
  out += "]}";
  // DisplayJsonString writes < > & as \u escapes (safe inside <script>) and
  // shows invisible controls: the page displays every string here.
  return out;
}

constexpr char kStyle[] = R"(
body { font: 13px Helvetica, Arial, sans-serif; margin: 0; color: #202124; }
header { padding: 8px 16px; border-bottom: 1px solid #dadce0; }
header h1 { font-size: 16px; margin: 0 0 4px 0; }
#summary { margin: 2px 0; color: #d93025; }
.legend span { display: inline-block; margin-right: 12px; }
.legend i { display: inline-block; width: 18px; height: 3px; vertical-align: middle; margin-right: 4px; }
main { display: flex; align-items: flex-start; }
#graph { flex: 1; overflow: auto; padding: 8px; }
#graph svg { max-width: 100%; height: auto; }
#details { width: 320px; padding: 8px 16px; border-left: 1px solid #dadce0; position: sticky; top: 0; }
#details h2 { font-size: 14px; margin: 4px 0; word-break: break-all; }
#details dt { color: #5f6368; margin-top: 4px; }
#details dd { margin: 0 0 0 8px; word-break: break-all; }
.kind { color: #5f6368; }
g.dim { opacity: 0.25; }
/* A narrow window: the graph takes the width, the details stay in view at the bottom. */
@media (max-width: 1000px) {
  main { flex-direction: column; align-items: stretch; }
  #details { width: auto; border-left: 0; border-top: 1px solid #dadce0; position: sticky; bottom: 0; top: auto;
             max-height: 35vh; overflow: auto; background: #fff; }
}
g.sel > path, g.sel > polygon, g.sel > ellipse { stroke-width: 3px; }
)";

constexpr char kScript[] = R"(
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('topology-data').textContent);
  var items = new Map();
  data.nodes.forEach(function (n) { items.set(n.id, n); });
  data.edges.forEach(function (e) { items.set(e.id, e); });
  var panel = document.getElementById('details');
  function el(tag, text, cls) {
    var x = document.createElement(tag);
    x.textContent = text;
    if (cls) x.className = cls;
    return x;
  }
  function title(item) {
    return item.from ? items.get(item.from).label + ' \u2192 ' + items.get(item.to).label : item.label;
  }
  function show(item) {
    panel.replaceChildren(el('h2', title(item)), el('p', item.kind + (item.label && item.from ? ' (' + item.label + ')' : ''), 'kind'));
    if (item.highlight && item.reason) panel.appendChild(el('p', item.reason, 'reason'));
    var dl = document.createElement('dl');
    item.details.forEach(function (kv) { dl.appendChild(el('dt', kv[0])); dl.appendChild(el('dd', kv[1])); });
    panel.appendChild(dl);
  }
  var groups = Array.prototype.slice.call(document.querySelectorAll('#graph g.node, #graph g.edge, #graph g.cluster'));
  function select(id) {
    var keep = new Set([id]);
    data.edges.forEach(function (e) {
      if (e.id === id) { keep.add(e.from); keep.add(e.to); }
      if (e.from === id || e.to === id) { keep.add(e.id); keep.add(e.from); keep.add(e.to); }
    });
    groups.forEach(function (g) {
      var on = keep.has(g.id) || g.classList.contains('cluster');
      g.classList.toggle('dim', !on);
      g.classList.toggle('sel', g.id === id);
    });
  }
  function clear() {
    groups.forEach(function (g) { g.classList.remove('dim'); g.classList.remove('sel'); });
  }
  groups.forEach(function (g) {
    var item = items.get(g.id);
    if (!item) return;
    // The details panel replaces Graphviz's own <title> tooltips (node ids).
    Array.prototype.slice.call(g.children).forEach(function (c) { if (c.tagName === 'title') c.remove(); });
    g.addEventListener('mouseenter', function () { show(item); });
    g.addEventListener('click', function (ev) { ev.stopPropagation(); ev.preventDefault(); select(g.id); show(item); });
  });
  document.getElementById('graph').addEventListener('click', clear);
  document.body.dataset.nodes = String(data.nodes.length);
  document.body.dataset.edges = String(data.edges.length);
})();
)";

}  // namespace

std::string DotText(std::string_view s) {
  // HtmlEscape makes the UTF-8 valid and writes & < > " ' as entities, which
  // Graphviz turns back into characters; a backslash must be doubled.
  std::string html = HtmlEscape(s);
  std::string out;
  out.reserve(html.size());
  for (char c : html) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '\\') out += "\\\\";
    else if (u < 0x20 || u == 0x7f) out.push_back(' ');
    else out.push_back(c);
  }
  return out;
}

std::string TopologyToDot(const Topology& topology, std::string_view title) {
  return DotWriter(topology).Write(title);
}

StatusOr<std::string> LayoutSvg(const std::string& dot) {
  ASSIGN_OR_RETURN(AiprofGraphvizLayoutFn layout, GraphvizLayout());
  std::string svg;
  std::string error;
  if (layout(dot.c_str(), &AppendToString, &svg, &error) == 0) return ErrStatus(error);
  return svg;
}

std::string TopologyToHtml(const Topology& topology, std::string_view svg, std::string_view title) {
  // The SVG without its XML prolog and doctype (not allowed inside HTML).
  size_t start = svg.find("<svg");
  std::string_view body = start == std::string_view::npos ? svg : svg.substr(start);
  std::string page_title = "aiprof topology: " + std::string(title);
  render::PageSpec page;
  page.title = page_title;
  page.generator = "aiprof view --topology";
  page.styles = {kStyle};
  page.scripts = {kScript};
  std::string out = render::PageHead(page) + "<header><h1>Topology: " + HtmlEscape(title) + "</h1>\n";
  out += "<p id=\"summary\">" + HtmlEscape(topology.highlight_summary.empty() ? "" : "Highlighted: " + topology.highlight_summary) +
         "</p>\n";
  if (!topology.limit_note.empty()) out += "<p id=\"limits\">" + HtmlEscape(topology.limit_note) + "</p>\n";
  out += "<p class=\"legend\">";
  const char* legend[][2] = {{"#1a73e8", "launch (host to device)"}, {"#5f6368", "flow"},
                             {"#e37400", "request path"}, {"#b06000", "stage to stage"},
                             {"#9334e6", "collective (stream to group)"}, {"#188038", "link (rank to rank)"},
                             {"#d93025", "slowest / slow"}};
  for (const auto& item : legend) {
    out += std::string("<span><i style=\"background:") + item[0] + "\"></i>" + item[1] + "</span>";
  }
  out += "<span>node size: time (hover for details; click to highlight neighbours)</span></p></header>\n";
  out += "<main><div id=\"graph\">\n";
  out += body;
  out += "\n</div><aside id=\"details\"><p class=\"kind\">Hover a node or an edge for its figures.</p></aside></main>\n";
  out += "<script type=\"application/json\" id=\"topology-data\">" + GraphJson(topology) + "</script>\n";
  out += render::PageTail(page);
  return out;
}

}  // namespace aiprof
