#include "src/render/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "src/render/escape.h"

namespace aiprof {
namespace {

// Every text in a drawing, escaped and cut: labels and tooltips hold trace
// names (a step, an op), and one 1 MiB name drawn under each bar made the
// report's page megabytes and its PDF a layout load.
constexpr size_t kMaxChartTextBytes = 200;
std::string Esc(std::string_view s) { return HtmlEscape(ShownText(s, kMaxChartTextBytes)); }

constexpr double kWidth = 720;
constexpr double kLeft = 150, kRight = 20, kTop = 34, kBottom = 46;
constexpr const char* kAccent = "#d62728";

std::string Open(const std::string& title, double height) {
  return fmt::format(
      "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" "
      "role=\"img\" aria-label=\"{}\"><title>{}</title>"
      "<text x=\"8\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>",
      kWidth, height, kWidth, height, Esc(title), Esc(title), Esc(title));
}

bool Finite(double v) { return std::isfinite(v); }

// The label drawn under bar `i` when the whole label fits in `room` pixels
// (at about 5 px a character of the 9 px font), else a short one: its
// trailing number ("ProfilerStep#12" draws "12"; a multi-rank report's "r1
// ProfilerStep#12" draws "r1:12") or, for a number of more than 9 digits or
// none, the bar's position from 1. The whole label stays in the tooltip.
std::string TickLabel(std::string_view label, size_t i, double room) {
  size_t chars = 0;
  for (unsigned char c : label) chars += (c & 0xC0) != 0x80;
  if (static_cast<double>(chars) * 5.0 <= room) return std::string(label);
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t end = label.size();
  while (end > 0 && (label[end - 1] == ' ' || label[end - 1] == ')')) --end;
  size_t begin = end;
  while (begin > 0 && digit(label[begin - 1])) --begin;
  if (begin == end || end - begin > 9) return std::to_string(i + 1);
  std::string number(label.substr(begin, end - begin));
  size_t rank_end = 1;
  while (rank_end < label.size() && digit(label[rank_end])) ++rank_end;
  if (label.size() > 2 && label[0] == 'r' && rank_end > 1 && rank_end < begin && label[rank_end] == ' ') {
    return std::string(label.substr(0, rank_end)) + ":" + number;
  }
  return number;
}

// A round axis maximum >= v and its tick step (1, 2, 5 × 10^k).
std::pair<double, double> NiceAxis(double v, int ticks) {
  if (!(v > 0) || !Finite(v)) return {1, 0.25};
  double raw = v / ticks;
  double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  return {step * std::ceil(v / step - 1e-9), step};
}

std::string Num(double v) {
  double a = std::fabs(v);
  if (a >= 100 || v == std::floor(v)) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  // Below 1, three significant digits: two decimals drew an axis of 0.005
  // steps as "0, 0.01, 0.01, 0.01, 0.02" (the vLLM report's idle gaps, ms).
  return fmt::format("{:.3g}", v);
}

using LegendItems = std::vector<std::pair<std::string, std::string>>;

double LegendItemWidth(const std::string& name) { return 24 + 6.5 * static_cast<double>(name.size()); }

// Rows the legend wraps into within the chart's width.
int LegendRows(const LegendItems& items) {
  int rows = items.empty() ? 0 : 1;
  double x = kLeft;
  for (const auto& item : items) {
    double w = LegendItemWidth(item.first);
    if (x + w > kWidth - kRight && x > kLeft) {
      ++rows;
      x = kLeft;
    }
    x += w;
  }
  return rows;
}

// Draws the legend from `y` down, wrapping as LegendRows() counts.
std::string Legend(const LegendItems& items, double y) {
  std::string out;
  double x = kLeft;
  for (const auto& [name, color] : items) {
    double w = LegendItemWidth(name);
    if (x + w > kWidth - kRight && x > kLeft) {
      x = kLeft;
      y += 14;
    }
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"10\" height=\"10\" fill=\"{}\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\">{}</text>",
        x, y, Esc(color), x + 14, y + 9, Esc(name));
    x += w;
  }
  return out;
}

std::string LogTickLabel(double v) {
  int e = static_cast<int>(std::lround(std::log10(v)));
  return fmt::format("1e{}", e);
}

}  // namespace

const std::vector<std::string>& ChartPalette() {
  static const std::vector<std::string> kPalette = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
                                                    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#d62728"};
  return kPalette;
}

const std::string& IdleCauseColor(size_t cause) {
  // data_loading, sync, host_bound, other: palette 3..6 (compute, copies and
  // communication take 0..2); startup: 8, as 7 is aiprof's own work in the
  // breakdown bar beside them.
  static constexpr size_t kIndex[] = {3, 4, 5, 6, 8};
  constexpr size_t kKeyed = sizeof(kIndex) / sizeof(kIndex[0]);
  const std::vector<std::string>& pal = ChartPalette();
  return pal[(cause < kKeyed ? kIndex[cause] : 3 + cause) % pal.size()];
}

std::string StackedBarChart(const std::string& title, const std::vector<std::string>& categories,
                            const std::vector<ChartSeries>& series, const std::string& unit) {
  const double bar = 18, gap = 8;
  LegendItems legend;
  for (const ChartSeries& s : series) legend.emplace_back(s.name, s.color);
  const double legend_h = 14.0 * std::max(0, LegendRows(legend) - 1);
  const double height = kTop + static_cast<double>(categories.size()) * (bar + gap) + kBottom + 10 + legend_h;
  double max_total = 0;
  for (size_t c = 0; c < categories.size(); ++c) {
    double total = 0;
    for (const ChartSeries& s : series) {
      if (c < s.values.size() && Finite(s.values[c]) && s.values[c] > 0) total += s.values[c];
    }
    max_total = std::max(max_total, total);
  }
  auto [axis_max, step] = NiceAxis(max_total, 5);
  const double plot_w = kWidth - kLeft - kRight;
  std::string out = Open(title, height);
  for (double t = 0; t <= axis_max + step * 1e-6 && step > 0; t += step) {
    double x = kLeft + plot_w * t / axis_max;
    out += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3:.1f}\" font-size=\"10\" text-anchor=\"middle\">{4}</text>",
                       x, kTop - 4, height - kBottom + 4 - legend_h, height - kBottom + 16 - legend_h, Num(t));
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
                     kLeft + plot_w / 2, height - kBottom + 30 - legend_h, Esc(unit));
  for (size_t c = 0; c < categories.size(); ++c) {
    double y = kTop + static_cast<double>(c) * (bar + gap);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\">{}</text>", kLeft - 6,
                       y + bar * 0.7, Esc(categories[c]));
    double x = kLeft;
    for (const ChartSeries& s : series) {
      if (c >= s.values.size() || !Finite(s.values[c]) || s.values[c] <= 0) continue;
      double w = plot_w * s.values[c] / axis_max;
      out += fmt::format(
          "<rect class=\"bar\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\">"
          "<title>{}: {} {} {}</title></rect>",
          x, y, w, bar, Esc(s.color), Esc(categories[c]), Esc(s.name), Num(s.values[c]), Esc(unit));
      x += w;
    }
  }
  out += Legend(legend, height - 14 - legend_h);
  return out + "</svg>";
}

std::string BarChart(const std::string& title, const std::vector<std::string>& labels,
                     const std::vector<double>& values, const std::vector<bool>& marked,
                     const std::string& marked_label, double reference, const std::string& reference_label,
                     const std::string& unit) {
  const double height = 260;
  const double plot_w = kWidth - kLeft - kRight, plot_h = height - kTop - kBottom - 14;
  double max_v = reference > 0 ? reference : 0;
  for (double v : values) {
    if (Finite(v)) max_v = std::max(max_v, v);
  }
  auto [axis_max, step] = NiceAxis(max_v, 4);
  std::string out = Open(title, height);
  for (double t = 0; t <= axis_max + step * 1e-6 && step > 0; t += step) {
    double y = kTop + plot_h - plot_h * t / axis_max;
    out += fmt::format("<line x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{3:.1f}\" y=\"{4:.1f}\" font-size=\"10\" text-anchor=\"end\">{5}</text>",
                       kLeft, kLeft + plot_w, y, kLeft - 6, y + 3, Num(t));
  }
  out += fmt::format(
      "<text x=\"14\" y=\"{:.1f}\" font-size=\"11\" transform=\"rotate(-90 14 {:.1f})\" "
      "text-anchor=\"middle\">{}</text>",
      kTop + plot_h / 2, kTop + plot_h / 2, Esc(unit));
  const size_t n = values.size();
  const double slot = n ? plot_w / static_cast<double>(n) : plot_w;
  const size_t label_every = std::max<size_t>(1, n / 20);
  for (size_t i = 0; i < n; ++i) {
    double v = Finite(values[i]) ? std::max(0.0, values[i]) : 0;
    double h = plot_h * v / axis_max;
    double x = kLeft + slot * static_cast<double>(i) + slot * 0.1;
    bool mark = i < marked.size() && marked[i];
    out += fmt::format(
        "<rect class=\"bar{}\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\">"
        "<title>{}: {} {}{}</title></rect>",
        mark ? " marked" : "", x, kTop + plot_h - h, slot * 0.8, h, mark ? kAccent : "#1f77b4",
        Esc(i < labels.size() ? labels[i] : std::string()), Num(v), Esc(unit),
        mark ? " (" + Esc(marked_label) + ")" : std::string());
    if (i % label_every == 0 && i < labels.size()) {
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"9\" text-anchor=\"middle\">{}</text>",
                         x + slot * 0.4, kTop + plot_h + 12,
                         Esc(TickLabel(labels[i], i, slot * static_cast<double>(label_every) * 0.95)));
    }
  }
  LegendItems legend = {{"step", "#1f77b4"}};
  if (std::any_of(marked.begin(), marked.end(), [](bool b) { return b; })) legend.emplace_back(marked_label, kAccent);
  if (reference > 0 && Finite(reference)) {
    double y = kTop + plot_h - plot_h * reference / axis_max;
    out += fmt::format(
        "<line class=\"reference\" x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" "
        "stroke=\"#333\" stroke-dasharray=\"4 3\"><title>{3}: {4} {5}</title></line>",
        kLeft, kLeft + plot_w, y, Esc(reference_label), Num(reference), Esc(unit));
    legend.emplace_back(reference_label + " (dashed)", "#333");
  }
  out += Legend(legend, height - 16);
  return out + "</svg>";
}

std::string RooflineChart(const std::string& title, const std::vector<ScatterPoint>& points, double peak_y,
                          double slope, const std::string& x_label, const std::string& y_label) {
  const double height = 340;
  const double plot_w = kWidth - kLeft - kRight, plot_h = height - kTop - kBottom;
  double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0, wmax = 0;
  for (const ScatterPoint& p : points) {
    if (!(p.x > 0) || !(p.y > 0) || !Finite(p.x) || !Finite(p.y)) continue;
    xmin = std::min(xmin, p.x), xmax = std::max(xmax, p.x);
    ymin = std::min(ymin, p.y), ymax = std::max(ymax, p.y);
    wmax = std::max(wmax, p.weight);
  }
  const bool roof = peak_y > 0 && slope > 0 && Finite(peak_y) && Finite(slope);
  if (roof) {
    double ridge = peak_y / slope;
    xmin = std::min(xmin, ridge / 10), xmax = std::max(xmax, ridge * 10);
    ymax = std::max(ymax, peak_y);
    ymin = std::min(ymin, peak_y / 1e4);
  }
  std::string out = Open(title, height);
  if (!(xmax > 0) || !(ymax > 0)) {
    out += "<text x=\"150\" y=\"120\" font-size=\"12\">no op could be placed on the roofline</text>";
    return out + "</svg>";
  }
  double lx0 = std::floor(std::log10(xmin)), lx1 = std::ceil(std::log10(xmax));
  double ly0 = std::floor(std::log10(ymin)), ly1 = std::ceil(std::log10(ymax));
  if (lx1 <= lx0) lx1 = lx0 + 1;
  if (ly1 <= ly0) ly1 = ly0 + 1;
  auto X = [&](double v) { return kLeft + plot_w * (std::log10(v) - lx0) / (lx1 - lx0); };
  auto Y = [&](double v) { return kTop + plot_h - plot_h * (std::log10(v) - ly0) / (ly1 - ly0); };
  for (double e = lx0; e <= lx1; ++e) {
    double v = std::pow(10, e);
    out += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" stroke=\"#eee\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3:.1f}\" font-size=\"10\" text-anchor=\"middle\">{4}</text>",
                       X(v), kTop, kTop + plot_h, kTop + plot_h + 14, LogTickLabel(v));
  }
  for (double e = ly0; e <= ly1; ++e) {
    double v = std::pow(10, e);
    out += fmt::format("<line x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#eee\"/>"
                       "<text x=\"{3:.1f}\" y=\"{4:.1f}\" font-size=\"10\" text-anchor=\"end\">{5}</text>",
                       kLeft, kLeft + plot_w, Y(v), kLeft - 6, Y(v) + 3, LogTickLabel(v));
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
                     kLeft + plot_w / 2, height - 12, Esc(x_label));
  out += fmt::format(
      "<text x=\"14\" y=\"{:.1f}\" font-size=\"11\" transform=\"rotate(-90 14 {:.1f})\" "
      "text-anchor=\"middle\">{}</text>",
      kTop + plot_h / 2, kTop + plot_h / 2, Esc(y_label));
  if (roof) {
    double x0 = std::pow(10, lx0), x1 = std::pow(10, lx1), ridge = peak_y / slope;
    double xs = std::max(x0, peak_y / 1e12 / slope);
    xs = std::max(xs, std::pow(10, ly0) / slope);
    out += fmt::format("<polyline class=\"roof\" fill=\"none\" stroke=\"#333\" stroke-width=\"2\" "
                       "points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"><title>roofline: peak {:.3g}, "
                       "bandwidth {:.3g}</title></polyline>",
                       X(xs), Y(slope * xs), X(ridge), Y(peak_y), X(x1), Y(peak_y), peak_y, slope);
  }
  for (const ScatterPoint& p : points) {
    if (!(p.x > 0) || !(p.y > 0) || !Finite(p.x) || !Finite(p.y)) continue;
    double r = wmax > 0 ? 2 + 10 * std::sqrt(std::max(0.0, p.weight) / wmax) : 3;
    out += fmt::format(
        "<circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" fill=\"#1f77b4\" "
        "fill-opacity=\"0.5\" stroke=\"#1f77b4\"><title>{}</title></circle>",
        X(p.x), Y(p.y), r, Esc(p.label));
  }
  return out + "</svg>";
}

std::string AreaChart(const std::string& title, const std::vector<double>& x_s,
                      const std::vector<ChartSeries>& series, const std::string& unit) {
  LegendItems legend;
  for (const ChartSeries& s : series) legend.emplace_back(s.name, s.color);
  const double height = 260 + 14.0 * std::max(0, LegendRows(legend) - 1);
  const double plot_w = kWidth - kLeft - kRight, plot_h = 260 - kTop - kBottom - 14;
  double xmax = 0, ymax = 0;
  for (double x : x_s) {
    if (Finite(x)) xmax = std::max(xmax, x);
  }
  for (const ChartSeries& s : series) {
    for (double v : s.values) {
      if (Finite(v)) ymax = std::max(ymax, v);
    }
  }
  auto [ax, xstep] = NiceAxis(xmax, 6);
  auto [ay, ystep] = NiceAxis(ymax, 4);
  auto X = [&, ax = ax](double v) { return kLeft + plot_w * v / ax; };
  auto Y = [&, ay = ay](double v) { return kTop + plot_h - plot_h * v / ay; };
  std::string out = Open(title, height);
  for (double t = 0; t <= ay + ystep * 1e-6 && ystep > 0; t += ystep) {
    out += fmt::format("<line x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{3:.1f}\" y=\"{4:.1f}\" font-size=\"10\" text-anchor=\"end\">{5}</text>",
                       kLeft, kLeft + plot_w, Y(t), kLeft - 6, Y(t) + 3, Num(t));
  }
  for (double t = 0; t <= ax + xstep * 1e-6 && xstep > 0; t += xstep) {
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"middle\">{}</text>", X(t),
                       kTop + plot_h + 12, Num(t));
  }
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">time (s)</text>"
      "<text x=\"14\" y=\"{:.1f}\" font-size=\"11\" transform=\"rotate(-90 14 {:.1f})\" "
      "text-anchor=\"middle\">{}</text>",
      kLeft + plot_w / 2, kTop + plot_h + 26, kTop + plot_h / 2, kTop + plot_h / 2, Esc(unit));
  for (const ChartSeries& s : series) {
    std::string pts = fmt::format("{:.1f},{:.1f}", X(0), Y(0));
    double last = 0;
    for (size_t i = 0; i < x_s.size() && i < s.values.size(); ++i) {
      if (!Finite(x_s[i]) || !Finite(s.values[i])) continue;
      pts += fmt::format(" {:.1f},{:.1f} {:.1f},{:.1f}", X(x_s[i]), Y(last), X(x_s[i]), Y(s.values[i]));
      last = s.values[i];
    }
    pts += fmt::format(" {:.1f},{:.1f} {:.1f},{:.1f}", X(xmax), Y(last), X(xmax), Y(0));
    out += fmt::format(
        "<polygon class=\"area\" points=\"{}\" fill=\"{}\" fill-opacity=\"0.35\" stroke=\"{}\">"
        "<title>{}</title></polygon>",
        pts, Esc(s.color), Esc(s.color), Esc(s.name));
  }
  out += Legend(legend, 260 - 14);
  return out + "</svg>";
}

}  // namespace aiprof
