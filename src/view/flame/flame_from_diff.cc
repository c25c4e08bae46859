#include "src/view/flame/flame_from_diff.h"

#include <algorithm>
#include <cmath>

#include "src/view/flame/flame_html.h"

namespace aiprof {
namespace {

FrameClass ClassOf(AttributionKind k) {
  switch (k) {
    case AttributionKind::kRoot: return FrameClass::kRoot;
    case AttributionKind::kThread: return FrameClass::kThread;
    case AttributionKind::kModule: return FrameClass::kAnnotation;
    case AttributionKind::kOp: return FrameClass::kOperator;
    case AttributionKind::kRuntime: return FrameClass::kRuntime;
    case AttributionKind::kDevice: return FrameClass::kOther;
    case AttributionKind::kUntraced: return FrameClass::kOther;
  }
  return FrameClass::kOther;
}

// One side's frames: the diff nodes the side has (parents first, as the
// diff stores them), their time on `base`; `row_of` maps diff node → row.
void BuildSide(const Trace& t, const AttributionResult& r, const AttributionDiff& d, bool side_b, DiffFlameBase base,
               FrameTree* tree, std::vector<uint32_t>* row_of) {
  const DiffNodes& n = d.nodes;
  row_of->assign(n.size(), kNoFrame);
  tree->names.assign(1, std::string_view());
  for (uint32_t i = 0; i < n.size(); ++i) {
    const uint32_t node = side_b ? n.b[i] : n.a[i];
    if (node == kNoNode) continue;
    if (base == DiffFlameBase::kHost && n.kind[i] == AttributionKind::kDevice) continue;
    const uint32_t parent = i == 0 ? kNoFrame : (*row_of)[n.parent[i]];
    if (i != 0 && parent == kNoFrame) continue;
    double ns;
    if (base == DiffFlameBase::kHost || n.kind[i] == AttributionKind::kDevice) {
      ns = side_b ? n.b_ns[i] : n.a_ns[i];
    } else {
      ns = side_b ? n.b_device_ns[i] : n.a_device_ns[i];
    }
    const uint32_t row = static_cast<uint32_t>(tree->parent.size());
    (*row_of)[i] = row;
    tree->parent.push_back(parent);
    tree->owned_.push_back(i == 0 ? std::string("all") : NodeLabel(t, r, node));
    tree->names.push_back(tree->owned_.back());
    tree->name.push_back(static_cast<uint32_t>(tree->names.size() - 1));
    tree->module.push_back(0);
    tree->kind.push_back(ClassOf(n.kind[i]));
    tree->depth.push_back(parent == kNoFrame ? 0 : tree->depth[parent] + 1);
    tree->total_ns.push_back(std::max<int64_t>(0, std::llround(ns)));
    tree->calls.push_back(side_b ? n.b_calls[i] : n.a_calls[i]);
    tree->self_ns.push_back(0);
    tree->threads += n.kind[i] == AttributionKind::kThread ? 1 : 0;
  }
  tree->events = tree->parent.size();
  tree->from_diff = true;
  // Self = total − children's totals; a total is raised to its children's
  // sum where rounding (or device time counted twice) left it smaller.
  // Children follow their parent, so one reverse pass sees them final.
  std::vector<int64_t> kids(tree->size(), 0);
  for (size_t f = tree->size(); f-- > 0;) {
    tree->total_ns[f] = std::max(tree->total_ns[f], kids[f]);
    tree->self_ns[f] = tree->total_ns[f] - kids[f];
    if (f > 0) kids[tree->parent[f]] += tree->total_ns[f];
  }
}

}  // namespace

DiffFlame BuildDiffFlame(const Trace& a, const AttributionResult& ra, const Trace& b, const AttributionResult& rb,
                         const AttributionDiff& d, DiffFlameBase base) {
  DiffFlame out;
  std::vector<uint32_t> row_a, row_b;
  BuildSide(a, ra, d, false, base, &out.baseline, &row_a);
  BuildSide(b, rb, d, true, base, &out.shown, &row_b);
  out.match.assign(out.shown.size(), kNoFrame);
  out.node_of_shown.assign(out.shown.size(), kNoNode);
  for (uint32_t i = 0; i < d.nodes.size(); ++i) {
    if (row_b[i] == kNoFrame) continue;
    out.node_of_shown[row_b[i]] = i;
    out.match[row_b[i]] = row_a[i];
  }
  return out;
}

Status WriteDiffFlameHtml(const DiffFlame& flame, const std::string& title_a, const std::string& title_b,
                          ViewSink* sink) {
  ViewOptions options;
  options.format = "html";
  options.title = title_b;
  options.baseline_title = title_a;
  return WriteFlameHtml(flame.shown, FlameDiff{&flame.baseline, &flame.match}, options, sink);
}

}  // namespace aiprof
