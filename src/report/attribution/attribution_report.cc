#include "src/report/attribution/attribution_report.h"

#include <algorithm>
#include <string>
#include <vector>

#include "src/render/escape.h"
#include "src/render/units.h"

namespace aiprof {
namespace {

using render::Unit;
using render::Value;

double PerStep(const AttributionResult& r, int64_t ns) { return r.PerStep(ns); }

void AddClasses(const AttributionResult& r, render::Section* s) {
  render::KeyValues kv;
  kv.items.push_back({"wall_ns",
                      r.pseudo_step ? "Main thread span" : "Host step time (step span, mean of steady steps)",
                      Value::Number(PerStep(r, r.wall_ns)), Unit::kNs});
  kv.items.push_back({"steps", "Steps", Value::Int(static_cast<int64_t>(r.steps)), Unit::kCount});
  kv.items.push_back({"coverage", "Coverage (assigned once)", Value::Number(r.Coverage()), Unit::kFraction});
  for (size_t c = 0; c < kTimeClassCount; ++c) {
    std::string name = TimeClassName(static_cast<TimeClass>(c));
    std::string key = name;
    std::replace(key.begin(), key.end(), ' ', '_');
    std::replace(key.begin(), key.end(), '-', '_');
    kv.items.push_back({key + "_ns", name + " per step", Value::Number(PerStep(r, r.by_class_ns[c])), Unit::kNs});
  }
  kv.items.push_back({"device_ns", "Device activity launched per step", Value::Number(PerStep(r, r.device_ns)),
                      Unit::kNs, "device time joined to a node through its launching call"});
  // docs/analyses.md: device activity starting in a steady step and linked
  // to no node of the steady steps' tree is reported as "not joined" (on
  // traces with device activity in their steps; a CPU trace has none).
  if (r.device_ns > 0 || r.unlinked_device_ns > 0) {
    kv.items.push_back({"unlinked_device_ns", "Device activity not joined to any node per step",
                        Value::Number(PerStep(r, r.unlinked_device_ns)), Unit::kNs,
                        "device time starting in a steady step that joined no node of the tree: its launching call "
                        "is not in the trace, is on no step's thread, or was made in the warm-up"});
    kv.items.push_back({"unlinked_compute_ns", "… of which not collectives",
                        Value::Number(PerStep(r, r.unlinked_compute_ns)), Unit::kNs});
  }
  s->Add(std::move(kv));
}

// The label of a parent's remainder row: its children under the tree's
// minimum share of the step, summed (the table and the HTML tree).
std::string RemainderLabel(size_t left_out) {
  return "other (" + std::to_string(left_out) + " node" + (left_out == 1 ? "" : "s") + " under " +
         render::FormatQuantity(kAttributionTreeMinShare, Unit::kFraction) + " of the step each)";
}

// Children lists, largest first.
std::vector<std::vector<uint32_t>> ChildLists(const AttributionNodes& n) {
  std::vector<std::vector<uint32_t>> kids(n.size());
  for (uint32_t i = 1; i < n.size(); ++i) kids[n.parent[i]].push_back(i);
  for (auto& k : kids) {
    std::sort(k.begin(), k.end(), [&](uint32_t a, uint32_t b) {
      int64_t ka = std::max(n.total_ns[a], n.device_total_ns[a]), kb = std::max(n.total_ns[b], n.device_total_ns[b]);
      return ka != kb ? ka > kb : a < b;
    });
  }
  return kids;
}

bool Shown(const AttributionResult& r, uint32_t x) {
  const AttributionNodes& n = r.nodes;
  double wall = static_cast<double>(std::max<int64_t>(r.wall_ns, 1));
  double dev = static_cast<double>(std::max<int64_t>(n.device_total_ns[0], 1));
  return static_cast<double>(n.total_ns[x]) >= kAttributionTreeMinShare * wall ||
         static_cast<double>(n.device_total_ns[x]) >= kAttributionTreeMinShare * dev;
}

std::string NodeSummaryText(const Trace& trace, const AttributionResult& r, uint32_t x) {
  const AttributionNodes& n = r.nodes;
  std::string out =
      "[" + std::string(AttributionKindName(n.kind[x])) + "] " + ShownText(NodeLabel(trace, r, x)) + " — ";
  if (n.kind[x] == AttributionKind::kDevice) {
    out += "device " + render::FormatQuantity(PerStep(r, n.device_total_ns[x]), Unit::kNs);
  } else {
    out += render::FormatQuantity(PerStep(r, n.total_ns[x]), Unit::kNs) + " (" +
           render::FormatQuantity(static_cast<double>(n.total_ns[x]) / static_cast<double>(std::max<int64_t>(r.wall_ns, 1)),
                                  Unit::kFraction) +
           "), self " + render::FormatQuantity(PerStep(r, n.self_ns[x]), Unit::kNs);
    if (n.device_total_ns[x] > 0) out += ", device " + render::FormatQuantity(PerStep(r, n.device_total_ns[x]), Unit::kNs);
  }
  if (x != 0) out += ", ×" + render::FormatQuantity(PerStep(r, static_cast<int64_t>(n.count[x])), Unit::kNone) + " per step";
  return out;
}

// The tree as nested <details> (HTML) and as indented text, depth first,
// iteratively (no recursion on deep trees), at most kAttributionTreeNodes nodes.
void AddTree(const Trace& trace, const AttributionResult& r, render::Section* s) {
  const std::vector<std::vector<uint32_t>> kids = ChildLists(r.nodes);
  std::string html = "<div class=\"attribution-tree\">";
  // A row of the tree, or (node = kNoNode) the remainder of `parent`'s
  // children under kAttributionTreeMinShare: their count and time per step.
  struct TreeRow {
    uint32_t node;
    size_t depth;
    uint32_t parent = kNoNode;
    size_t left_out = 0;
    int64_t total_ns = 0, self_ns = 0, device_ns = 0;
  };
  std::vector<TreeRow> rows;
  struct Item {
    uint32_t node;
    size_t depth;
    bool close;
    int32_t rest = -1;  // index into rests: the remainder row of a parent
  };
  std::vector<Item> todo = {{0, 0, false}};
  std::vector<TreeRow> rests;
  std::vector<std::string> rest_lines;
  size_t shown = 0, hidden = 0;
  while (!todo.empty()) {
    Item it = todo.back();
    todo.pop_back();
    if (it.close) {
      html += "</details>";
      continue;
    }
    if (it.rest >= 0) {
      html += "<div class=\"leaf muted\">" + HtmlEscape(rest_lines[it.rest]) + "</div>";
      rows.push_back(rests[it.rest]);
      continue;
    }
    if (shown >= kAttributionTreeNodes) {
      ++hidden;
      continue;
    }
    ++shown;
    const std::string line = NodeSummaryText(trace, r, it.node);
    rows.push_back({it.node, it.depth});
    std::vector<uint32_t> visible;
    TreeRow rest{kNoNode, it.depth + 1, it.node};
    uint32_t small = kNoNode;  // the one child under the share, when only one
    for (uint32_t c : kids[it.node]) {
      if (Shown(r, c)) {
        visible.push_back(c);
      } else {
        small = c;
        ++rest.left_out;
        rest.total_ns += r.nodes.total_ns[c];
        rest.self_ns += r.nodes.total_ns[c];  // the remainder's own time is its nodes' totals
        rest.device_ns += r.nodes.device_total_ns[c];
      }
    }
    // A remainder of one node takes the row the node itself would: shown by
    // its name (kids are largest first, so it stays last).
    if (rest.left_out == 1) {
      visible.push_back(small);
      rest = TreeRow{kNoNode, it.depth + 1, it.node};
    }
    const std::string rest_line =
        rest.left_out == 0
            ? ""
            : RemainderLabel(rest.left_out) + " — " + render::FormatQuantity(PerStep(r, rest.total_ns), Unit::kNs) +
                  (rest.device_ns > 0 ? ", device " + render::FormatQuantity(PerStep(r, rest.device_ns), Unit::kNs)
                                      : std::string());
    if (visible.empty() && rest.left_out == 0) {
      html += "<div class=\"leaf\">" + HtmlEscape(line) + "</div>";
      continue;
    }
    html += std::string("<details") + (it.depth < 2 ? " open" : "") + "><summary>" + HtmlEscape(line) +
            "</summary>";
    todo.push_back({it.node, it.depth, true});
    // The remainder comes after the shown children (the stack pops it last).
    if (rest.left_out > 0) {
      todo.push_back({kNoNode, it.depth + 1, false, static_cast<int32_t>(rests.size())});
      rests.push_back(rest);
      rest_lines.push_back(rest_line);
    }
    for (size_t k = visible.size(); k-- > 0;) todo.push_back({visible[k], it.depth + 1, false});
  }
  html += "</div>";
  if (hidden > 0) {
    std::string note = std::to_string(hidden) + " more nodes not shown (limit " + std::to_string(kAttributionTreeNodes) + ")";
    html += "<p class=\"muted\">" + HtmlEscape(note) + "</p>";
  }
  // HTML: the collapsible tree, and the table below folded under it (the
  // same rows); other formats have no text for the tree (the renderers would
  // fold its lines) but the table.
  s->Add(render::RawHtml{std::move(html), ""});
  render::Table t;
  t.key = "tree";
  t.title = "Attribution tree, depth first (per step; indentation = depth)";
  t.html_fold = "The tree as a table";
  t.columns = {{"node", "node", Unit::kNone},          {"kind", "kind", Unit::kNone},
               {"total_ns", "host total", Unit::kNs},  {"self_ns", "host self", Unit::kNs},
               {"device_ns", "device", Unit::kNs},     {"count", "instances", Unit::kNone}};
  for (const TreeRow& row : rows) {
    const AttributionNodes& n = r.nodes;
    if (row.node == kNoNode) {
      t.rows.push_back({Value::String(std::string(2 * row.depth, ' ') + RemainderLabel(row.left_out)),
                        Value::String("other"), Value::Number(PerStep(r, row.total_ns)),
                        Value::Number(PerStep(r, row.self_ns)), Value::Number(PerStep(r, row.device_ns)),
                        Value::Null()});
      continue;
    }
    t.rows.push_back({Value::String(std::string(2 * row.depth, ' ') + NodeLabel(trace, r, row.node)),
                      Value::String(AttributionKindName(n.kind[row.node])), Value::Number(PerStep(r, n.total_ns[row.node])),
                      Value::Number(PerStep(r, n.self_ns[row.node])), Value::Number(PerStep(r, n.device_total_ns[row.node])),
                      Value::Number(PerStep(r, static_cast<int64_t>(n.count[row.node])))});
  }
  if (hidden > 0) t.note = std::to_string(hidden) + " more nodes not shown";
  s->Add(std::move(t));
}

void AddModules(const Trace& trace, const AttributionResult& r, render::Section* s) {
  const AttributionNodes& n = r.nodes;
  std::vector<uint32_t> mods;
  for (uint32_t i = 1; i < n.size(); ++i) {
    if (n.kind[i] != AttributionKind::kModule && n.kind[i] != AttributionKind::kThread) continue;
    // A row of zeros says nothing (a thread that ran nothing while the step's
    // thread waited, a module of no duration); the tree keeps the node.
    if (n.total_ns[i] == 0 && n.device_total_ns[i] == 0) continue;
    mods.push_back(i);
  }
  std::sort(mods.begin(), mods.end(), [&](uint32_t a, uint32_t b) {
    return n.total_ns[a] != n.total_ns[b] ? n.total_ns[a] > n.total_ns[b] : a < b;
  });
  render::Table t;
  t.key = "modules";
  t.title = "Modules (per step; host = wall time on the step's thread, device = activity they launched)";
  t.columns = {{"module", "module path", Unit::kNone},     {"class", "time class", Unit::kNone},
               {"count", "instances", Unit::kNone},        {"total_ns", "host total", Unit::kNs},
               {"self_ns", "host self", Unit::kNs},        {"share", "share of step", Unit::kFraction},
               {"device_ns", "device", Unit::kNs}};
  for (size_t k = 0; k < mods.size() && k < kAttributionModuleRows; ++k) {
    uint32_t x = mods[k];
    t.rows.push_back({Value::String(NodePath(trace, r, x)), Value::String(TimeClassName(n.time_class[x])),
                      Value::Number(PerStep(r, static_cast<int64_t>(n.count[x]))),
                      Value::Number(PerStep(r, n.total_ns[x])), Value::Number(PerStep(r, n.self_ns[x])),
                      Value::Number(static_cast<double>(n.total_ns[x]) / static_cast<double>(std::max<int64_t>(r.wall_ns, 1))),
                      Value::Number(PerStep(r, n.device_total_ns[x]))});
  }
  if (mods.size() > kAttributionModuleRows) {
    t.note = std::to_string(mods.size() - kAttributionModuleRows) + " more modules not shown";
  }
  if (mods.empty()) t.note = "no modules in this trace (nn.Module frames need with_stack/with_modules; record_function labels and SDK spans count as modules)";
  s->Add(std::move(t));
}

}  // namespace

render::Document AttributionToDocument(const Trace& trace, const AttributionResult& r) {
  render::Document doc;
  doc.key = "attribution";
  doc.title = "Where the step's time goes";
  doc.generator = "aiprof analyze --only attribution";
  render::Section& s = doc.AddSection("attribution", "Where the step's time goes");
  if (!r.available) {
    s.Add(render::Paragraph{"Not available: " + r.problem});
    return doc;
  }
  s.Add(render::Paragraph{
      "Every nanosecond of the step's wall time on its critical (main host) thread is assigned once: to the module, "
      "op or runtime call running then, to another thread of the process that ran an op or a labelled region (a "
      "communication thread's record_function) while this one waited, or to host time outside any recorded op. Device "
      "time is what the ops launched."});
  AddClasses(r, &s);
  AddModules(trace, r, &s);
  render::Section& tree = s.AddSection("tree", "Attribution tree");
  AddTree(trace, r, &tree);
  return doc;
}

}  // namespace aiprof
