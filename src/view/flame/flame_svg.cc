#include "src/view/flame/flame_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "src/render/escape.h"

namespace aiprof {
namespace {

constexpr double kWidth = 1200;
constexpr double kPad = 10;
constexpr double kRow = 16;
constexpr double kFont = 12;
constexpr double kCharWidth = kFont * 0.59;  // FlameGraph's estimate for a monospace-ish font
constexpr double kMinWidth = 0.1;            // px; narrower frames are left out
constexpr double kHeader = 48;

// XML text: HTML escaping, and control characters (illegal in XML 1.0) as U+FFFD.
std::string XmlText(std::string_view s) {
  std::string escaped = HtmlEscape(s);
  std::string out;
  out.reserve(escaped.size());
  for (char c : escaped) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\t' && c != '\n' && c != '\r') out.append("\xEF\xBF\xBD");
    else out.push_back(c);
  }
  return out;
}

std::string Time(int64_t ns) {
  char buf[48];
  double a = std::abs(static_cast<double>(ns));
  if (a >= 1e9) std::snprintf(buf, sizeof buf, "%.3f s", ns / 1e9);
  else if (a >= 1e6) std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  else if (a >= 1e3) std::snprintf(buf, sizeof buf, "%.3f us", ns / 1e3);
  else std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
  return buf;
}

std::string Pct(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100 * x);
  return buf;
}

uint32_t Fnv(std::string_view s) {
  uint32_t h = 2166136261u;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return h;
}

std::string KindColour(FrameClass k, std::string_view name) {
  int hue = 95, sat = 35;
  switch (k) {
    case FrameClass::kRoot: hue = 0; sat = 0; break;
    case FrameClass::kThread: hue = 210; sat = 8; break;
    case FrameClass::kPython: hue = 52; sat = 75; break;
    case FrameClass::kOperator: hue = 24; sat = 85; break;
    case FrameClass::kAnnotation: hue = 275; sat = 45; break;
    case FrameClass::kRuntime: hue = 190; sat = 55; break;
    case FrameClass::kNative: hue = 8; sat = 75; break;
    case FrameClass::kKernelMode: hue = 330; sat = 55; break;
    case FrameClass::kOther: break;
  }
  uint32_t h = Fnv(name);
  char buf[48];
  std::snprintf(buf, sizeof buf, "hsl(%d,%d%%,%d%%)", hue + static_cast<int>(h % 12), sat, 62 + static_cast<int>((h >> 8) % 20));
  return buf;
}

// Change in self share (this trace's share minus the baseline's) per frame.
std::vector<double> SelfShareChange(const FrameTree& tree, const FlameDiff& diff) {
  std::vector<double> d(tree.size(), 0);
  double total = std::max<int64_t>(tree.root_total_ns(), 1);
  double base_total = std::max<int64_t>(diff.baseline->root_total_ns(), 1);
  for (size_t f = 0; f < tree.size(); ++f) {
    uint32_t m = (*diff.match)[f];
    double before = m == kNoFrame ? 0 : diff.baseline->self_ns[m] / base_total;
    d[f] = tree.self_ns[f] / total - before;
  }
  return d;
}

std::string DiffColour(double delta, double max_abs) {
  if (std::abs(delta) < 1e-12) return "hsl(0,0%,96%)";
  double i = std::min(1.0, std::abs(delta) / (max_abs > 0 ? max_abs : 1));
  char buf[48];
  std::snprintf(buf, sizeof buf, "hsl(%d,85%%,%d%%)", delta > 0 ? 0 : 220, static_cast<int>(std::lround(96 - 46 * i)));
  return buf;
}

// Children of each frame in CSR form, heaviest first (the HTML page's order).
struct Children {
  std::vector<uint32_t> offset, list;
};
Children ChildrenOf(const FrameTree& tree) {
  Children c;
  c.offset.assign(tree.size() + 1, 0);
  for (size_t f = 1; f < tree.size(); ++f) ++c.offset[tree.parent[f] + 1];
  for (size_t f = 0; f < tree.size(); ++f) c.offset[f + 1] += c.offset[f];
  c.list.resize(tree.size() > 0 ? tree.size() - 1 : 0);
  std::vector<uint32_t> fill(c.offset.begin(), c.offset.end() - 1);
  for (uint32_t f = 1; f < tree.size(); ++f) c.list[fill[tree.parent[f]]++] = f;
  for (size_t f = 0; f < tree.size(); ++f) {
    std::sort(c.list.begin() + c.offset[f], c.list.begin() + c.offset[f + 1], [&](uint32_t a, uint32_t b) {
      if (tree.total_ns[a] != tree.total_ns[b]) return tree.total_ns[a] > tree.total_ns[b];
      return tree.names[tree.name[a]] < tree.names[tree.name[b]];
    });
  }
  return c;
}

}  // namespace

std::string FlameSvg(const FrameTree& tree, const FlameDiff& diff, const ViewOptions& options) {
  uint32_t max_depth = 0;
  for (uint32_t d : tree.depth) max_depth = std::max(max_depth, d);
  const double height = kHeader + (max_depth + 1) * kRow + 2 * kPad;
  const double inner = kWidth - 2 * kPad;
  std::vector<double> delta;
  double max_abs = 0;
  if (diff.baseline) {
    delta = SelfShareChange(tree, diff);
    for (size_t f = 1; f < delta.size(); ++f) max_abs = std::max(max_abs, std::abs(delta[f]));
  }
  char buf[256];
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                "font-family=\"DejaVu Sans Mono, monospace\" font-size=\"%.0f\">\n",
                kWidth, height, kWidth, height, kFont);
  out += buf;
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>\n";
  out += "<text x=\"" + std::to_string(static_cast<int>(kPad)) + "\" y=\"20\" font-size=\"15\" font-family=\"sans-serif\">Flame graph: " +
         XmlText(options.title) + (diff.baseline ? " vs " + XmlText(options.baseline_title) : "") + "</text>\n";
  std::string sub = Time(tree.root_total_ns()) + " from " + std::string(tree.source()) + "; widths are shares of " +
                    (tree.from_diff      ? "the aligned root's time"
                     : tree.from_samples ? "the sample weights"
                                         : "the top-level spans' time") +
                    (diff.baseline ? "; colour: change in self share (red grew, blue shrank)" : "");
  out += "<text x=\"" + std::to_string(static_cast<int>(kPad)) + "\" y=\"38\" font-size=\"11\" fill=\"#555\" font-family=\"sans-serif\">" +
         XmlText(sub) + "</text>\n";
  if (tree.size() == 0) return out + "</svg>\n";
  Children children = ChildrenOf(tree);
  const double all = std::max<int64_t>(tree.root_total_ns(), 1);
  const double scale = inner / all;
  std::vector<std::pair<uint32_t, double>> stack = {{0, kPad}};
  while (!stack.empty()) {
    auto [f, x] = stack.back();
    stack.pop_back();
    double w = f == 0 ? inner : tree.total_ns[f] * scale;
    if (w < kMinWidth) continue;
    double y = kHeader + kPad + (max_depth - tree.depth[f]) * kRow;
    std::string_view name = tree.names[tree.name[f]];
    std::string colour = diff.baseline ? DiffColour(delta[f], max_abs) : KindColour(tree.kind[f], name);
    std::string tip = ShownText(name) + " | total " + Time(tree.total_ns[f]) + " (" + Pct(tree.total_ns[f] / all) +
                      "), self " + Time(tree.self_ns[f]) + " (" + Pct(tree.self_ns[f] / all) + ")";
    if (diff.baseline) {
      char d[64];
      std::snprintf(d, sizeof d, ", self share change %+.2f pts", 100 * delta[f]);
      tip += (*diff.match)[f] == kNoFrame ? ", absent from the baseline" : "";
      tip += d;
    }
    out += "<g><title>" + XmlText(tip) + "</title>";
    std::snprintf(buf, sizeof buf, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" rx=\"1\" fill=\"", x, y,
                  std::max(w - 0.3, 0.1), kRow - 1);
    out += buf + colour + "\"/>";
    size_t fit = static_cast<size_t>(std::max(0.0, (w - 6) / kCharWidth));
    if (fit >= 3) {
      // Cut on a UTF-8 boundary (a byte cut could split a character).
      std::string label(Utf8Prefix(name, fit));
      if (name.size() > fit) label = std::string(Utf8Prefix(name, fit - 2)) + "..";
      std::snprintf(buf, sizeof buf, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + kRow - 4);
      out += buf + XmlText(label) + "</text>";
    }
    out += "</g>\n";
    double cx = x;
    std::vector<std::pair<uint32_t, double>> kids;
    for (uint32_t i = children.offset[f]; i < children.offset[f + 1]; ++i) {
      uint32_t c = children.list[i];
      kids.push_back({c, cx});
      cx += tree.total_ns[c] * scale;
    }
    for (size_t i = kids.size(); i-- > 0;) stack.push_back(kids[i]);
  }
  return out + "</svg>\n";
}

}  // namespace aiprof
