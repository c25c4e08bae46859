#include "src/render/svg_chart.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

namespace aiprof {
namespace {

// The labels drawn under a bar chart's bars (font size 9), in order.
std::vector<std::string> Ticks(const std::string& svg) {
  std::vector<std::string> out;
  static const std::regex tick(R"(<text [^>]*font-size="9" text-anchor="middle">([^<]*)</text>)");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator(); ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

TEST(BarChartTest, WholeLabelsUnderBarsWhenTheyFit) {
  std::vector<std::string> labels = {"ProfilerStep#5", "ProfilerStep#6", "ProfilerStep#7"};
  std::string svg = BarChart("t", labels, {1, 2, 3}, {}, "slow", 0, "", "ms");
  EXPECT_EQ(Ticks(svg), labels);
}

// Twelve steps: "ProfilerStep#12" (about 75 px) does not fit the 45 px of a
// bar's slot, so the step number is drawn and the name stays in the tooltip.
TEST(BarChartTest, StepNumbersWhenNamesDoNotFit) {
  std::vector<std::string> labels;
  std::vector<double> values;
  for (int i = 0; i < 12; ++i) {
    labels.push_back("ProfilerStep#" + std::to_string(i + 6));
    values.push_back(10 + i);
  }
  std::string svg = BarChart("t", labels, values, {}, "slow", 0, "", "ms");
  std::vector<std::string> want;
  for (int i = 0; i < 12; ++i) want.push_back(std::to_string(i + 6));
  EXPECT_EQ(Ticks(svg), want);
  EXPECT_NE(svg.find("<title>ProfilerStep#17: "), std::string::npos);
}

// A long name with no trailing number (hand-made: a hostile step name) draws
// the bar's position, not a smear of text; the tooltip keeps it, cut at 200
// bytes and escaped.
TEST(BarChartTest, PositionWhenALongNameHasNoNumber) {
  std::string evil = "<b>" + std::string(5000, 'x') + "</b>";
  std::string svg = BarChart("t", {"step a", evil}, {1, 2}, {}, "slow", 0, "", "ms");
  EXPECT_EQ(Ticks(svg), (std::vector<std::string>{"step a", "2"}));
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_NE(svg.find("<title>&lt;b&gt;xxx"), std::string::npos);
  EXPECT_LT(svg.size(), 4000u);
}

// Multi-rank reports label steps "r<rank> ProfilerStep#N": the rank stays
// in the short label. A step number past 9 digits is not cut to a wrong
// one: the position is drawn.
TEST(BarChartTest, ShortLabelsKeepTheRankAndNeverAWrongNumber) {
  std::vector<std::string> labels;
  std::vector<double> values;
  for (int r = 0; r < 2; ++r) {
    for (int k = 0; k < 6; ++k) {
      labels.push_back("r" + std::to_string(r) + " ProfilerStep#" + std::to_string(k + 5));
      values.push_back(1);
    }
  }
  labels.back() = "ProfilerStep#1234567890";
  std::string svg = BarChart("t", labels, values, {}, "slow", 0, "", "ms");
  std::vector<std::string> ticks = Ticks(svg);
  ASSERT_EQ(ticks.size(), 12u);
  EXPECT_EQ(ticks[0], "r0:5");
  EXPECT_EQ(ticks[6], "r1:5");
  EXPECT_EQ(ticks[11], "12");  // its position, not "234567890"
}

// An axis of small values (the vLLM report's idle gaps: 0.024 ms at most)
// read "0, 0.01, 0.01, 0.01, 0.02, 0.03" with two decimals; each tick is
// now its own number.
TEST(StackedBarChartTest, SmallAxisTicksAreDistinct) {
  std::string svg = StackedBarChart("t", {"a", "b"}, {{"idle", "#888", {0.0236, 0.0066}}}, "ms");
  std::vector<std::string> ticks;
  static const std::regex tick(R"(<text [^>]*font-size="10" text-anchor="middle">([^<]*)</text>)");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator(); ++it) {
    ticks.push_back((*it)[1]);
  }
  EXPECT_EQ(ticks, (std::vector<std::string>{"0", "0.005", "0.01", "0.015", "0.02", "0.025"}));
}

// The idle causes' colours (data_loading, sync, host_bound, other, startup)
// differ from each other and from the breakdown bar's other series: compute,
// communication and memory copy (palette 0..2) and aiprof's own work (7).
// The old rule, palette 3 + cause, gave startup 7, aiprof's own work's.
TEST(IdleCauseColorTest, FiveCausesKeyedApartFromTheBarsOtherSeries) {
  const std::vector<std::string>& pal = ChartPalette();
  std::vector<std::string> seen = {pal[0], pal[1], pal[2], pal[7]};
  for (size_t c = 0; c < 5; ++c) {
    const std::string& colour = IdleCauseColor(c);
    EXPECT_EQ(std::count(seen.begin(), seen.end(), colour), 0) << "cause " << c << " " << colour;
    seen.push_back(colour);
  }
  EXPECT_EQ(IdleCauseColor(2), pal[5]);  // host_bound: unchanged
}

}  // namespace
}  // namespace aiprof
