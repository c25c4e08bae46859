// SVG charts written by aiprof for the report: stacked bars, bars with
// marked items, a log-log roofline scatter with the device's roofs, and an
// area chart over time. Each takes plain numbers and labels (structured
// results, already chosen by the caller) and returns one <svg> element;
// every label is escaped, every number that is not finite is left out.
#ifndef AIPROF_SRC_RENDER_SVG_CHART_H_
#define AIPROF_SRC_RENDER_SVG_CHART_H_

#include <cstddef>
#include <string>
#include <vector>

namespace aiprof {

struct ChartSeries {
  std::string name;
  std::string color;           // CSS colour, from the caller's fixed palette
  std::vector<double> values;  // one per category / point
};

// Horizontal layout, one stacked bar per category; `unit` labels the axis
// ("ms"). Categories with a zero total still get their label.
std::string StackedBarChart(const std::string& title, const std::vector<std::string>& categories,
                            const std::vector<ChartSeries>& series, const std::string& unit);

// One vertical bar per item, its whole label in its tooltip and under it
// when there is room (else its trailing number or its position from 1);
// items with `marked[i]` are drawn in the accent
// colour and named in the legend as `marked_label`; a dashed line at
// `reference` (e.g. the median) when it is > 0.
std::string BarChart(const std::string& title, const std::vector<std::string>& labels,
                     const std::vector<double>& values, const std::vector<bool>& marked,
                     const std::string& marked_label, double reference, const std::string& reference_label,
                     const std::string& unit);

struct ScatterPoint {
  double x = 0, y = 0;  // > 0 (log axes)
  double weight = 0;    // point area ∝ weight
  std::string label;    // tooltip
};

// Log-log scatter; with peak_y > 0 and slope > 0 the roofline
// y = min(peak_y, slope·x) is drawn (ridge at peak_y / slope).
std::string RooflineChart(const std::string& title, const std::vector<ScatterPoint>& points, double peak_y,
                          double slope, const std::string& x_label, const std::string& y_label);

// Stepped area over time (x in seconds from the start), one area per series.
std::string AreaChart(const std::string& title, const std::vector<double>& x_s,
                      const std::vector<ChartSeries>& series, const std::string& unit);

// The palette the report uses, so colours mean the same in every chart.
const std::vector<std::string>& ChartPalette();
// The colour of idle-gap cause `cause` (GapCause's order: data_loading, sync,
// host_bound, other, startup) wherever gaps are drawn: the report's charts
// and the timeline's gap lanes and legend, so one page keys them alike; each
// differs from the breakdown bar's other series (compute, communication,
// memory copy, aiprof's own work).
const std::string& IdleCauseColor(size_t cause);

}  // namespace aiprof

#endif  // AIPROF_SRC_RENDER_SVG_CHART_H_
