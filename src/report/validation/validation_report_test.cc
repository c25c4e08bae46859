#include "src/report/validation/validation_report.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace aiprof {
namespace {

ValidationResult Hostile() {
  RunSamples a, b;
  a.label = "<script>alert(1)</script>|a.json";
  b.label = "b\"\n.json";
  a.source_kind = b.source_kind = "trace";
  a.unit = b.unit = "step";
  for (int i = 0; i < 12; ++i) {
    a.latency_ns.push_back(100 + i);
    b.latency_ns.push_back(200 + i);
  }
  for (int i = 0; i < 6; ++i) {
    std::string name = "<img src=x onerror=y>|op" + std::to_string(i);
    a.op_dur_ns[name] = {10, 10, 10};
    b.op_dur_ns[name] = {20, 20, 20};
  }
  ValidationOptions o;
  o.metrics = {"latency", "p50"};
  o.bootstrap_resamples = 500;
  return Validate(a, b, o);
}

TEST(ValidationReportTest, EverythingFromInputsIsEscaped) {
  ValidationResult r = Hostile();
  ASSERT_EQ(r.overall, Verdict::kRegressed);
  std::string html = ValidationToHtml(r);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  std::string md = ValidationToMarkdown(r);
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  EXPECT_EQ(md.find("<img"), std::string::npos);
  // A raw | in an op name would break the table: every one is escaped.
  for (size_t at = md.find("|op"); at != std::string::npos; at = md.find("|op", at + 1)) {
    EXPECT_EQ(md[at - 1], '\\') << md.substr(at - 20, 40);
  }
  EXPECT_NE(md.find("\\|op0"), std::string::npos);
  std::string json = ValidationToJson(r);
  EXPECT_EQ(json.find("<script>"), std::string::npos);
  EXPECT_NE(json.find("b\\\"\\n.json"), std::string::npos);
  std::string line = ValidationHeadline(r);
  EXPECT_EQ(line.find('\n'), std::string::npos);  // one line, even with a newline in a file name
  EXPECT_EQ(line.rfind("aiprof: REGRESSED: latency", 0), 0u) << line;
}

// The report's headline card: the verdict and the deciding metric's change
// as its value, the statistic's two values, test, interval and sample sizes
// as its detail, all as the validation computed them; labels stay plain text
// (the renderers escape them).
TEST(ValidationReportTest, CardNamesVerdictChangeAndEvidence) {
  ValidationResult r = Hostile();
  render::KeyValue card = ValidationCard(r);
  EXPECT_EQ(card.key, "change");
  const MetricComparison& m = r.metrics[0];
  ASSERT_EQ(m.metric, "latency");
  char pct[32];
  std::snprintf(pct, sizeof pct, "%+.2f%%", 100 * m.change_rel);
  EXPECT_EQ(card.value.str(), std::string("Regressed: latency ") + pct);
  EXPECT_NE(card.detail.find("n = 12 / 12"), std::string::npos) << card.detail;
  EXPECT_NE(card.detail.find(m.test + " p = "), std::string::npos) << card.detail;
  EXPECT_NE(card.detail.find("before <script>alert(1)</script>|a.json, after b"), std::string::npos) << card.detail;
  // Too few samples: the verdict and the reason, no figures.
  ValidationOptions o;
  o.metrics = {"p99"};
  RunSamples a;
  a.latency_ns = {1, 2, 3};
  render::KeyValue few = ValidationCard(Validate(a, a, o));
  EXPECT_EQ(few.value.str().find("Insufficient"), 0u) << few.value.str();
  EXPECT_EQ(few.detail.find(" p = "), std::string::npos) << few.detail;
}

// The headline card carries the prediction's verdict and its three figures
// on its base; the intervals stay in the "Predicted vs measured" section,
// where the full line is (the card read 40 lines on ResNet50 with them).
TEST(ValidationReportTest, CardHoldsThePredictionsVerdictNotItsIntervals) {
  ValidationResult r = Hostile();
  PredictionCheck c;
  c.fix_id = "dataloader_workers";
  c.source = "simulation";
  c.scenario = "overlap-data-loading 4";
  c.before_ns = 189.08e6;
  c.predicted_ns = 130.66e6, c.predicted_lo_ns = 119.25e6, c.predicted_hi_ns = 134.04e6;
  c.measured_ns = 126.86e6, c.measured_lo_ns = 124.20e6, c.measured_hi_ns = 163.46e6;
  JudgePrediction(&c);
  r.prediction = c;
  const std::string detail = ValidationCard(r).detail;
  EXPECT_NE(detail.find(BriefPredictionCheck(c)), std::string::npos) << detail;
  EXPECT_NE(detail.find("hit, +3.0%"), std::string::npos) << detail;
  EXPECT_NE(detail.find("before 189.08 ms -> predicted 130.66 ms (-30.9%) -> measured 126.86 ms (-32.9%)"),
            std::string::npos)
      << detail;
  EXPECT_EQ(detail.find("predicted interval"), std::string::npos) << detail;
  const std::string section = ValidationToMarkdown(r);
  EXPECT_NE(section.find("predicted interval 119.25 ms .. 134.04 ms"), std::string::npos);
}

TEST(ValidationReportTest, JsonCarriesVerdictsIntervalsAndNullsForUntested) {
  ValidationResult r = Hostile();
  std::string json = ValidationToJson(r);
  EXPECT_NE(json.find("\"schema\": \"aiprof.validation/1\""), std::string::npos);
  EXPECT_NE(json.find("\"overall\": \"regressed\""), std::string::npos);
  EXPECT_NE(json.find("\"verdict\": \"regressed\""), std::string::npos);
  EXPECT_NE(json.find("\"rel_low\": "), std::string::npos);
  EXPECT_NE(json.find("\"diagnosis\": {\"kind\": \"environmental\""), std::string::npos);
  ValidationOptions o;
  o.metrics = {"p99"};
  RunSamples a;
  a.latency_ns = {1, 2, 3};
  std::string small = ValidationToJson(Validate(a, a, o));
  EXPECT_NE(small.find("\"test\": null, \"test_statistic\": null, \"p_value\": null"), std::string::npos) << small;
  EXPECT_NE(small.find("\"ci\": null"), std::string::npos);
  EXPECT_NE(small.find("\"verdict\": \"insufficient_data\""), std::string::npos);
  EXPECT_NE(small.find("\"op_shift\": null"), std::string::npos);
}

TEST(ValidationReportTest, FormatValueUnits) {
  EXPECT_EQ(FormatValue(11295500, "ns"), "11.3 ms");
  EXPECT_EQ(FormatValue(830e3, "ns"), "830 us");
  EXPECT_EQ(FormatValue(1.5e9, "ns"), "1.5 s");
  EXPECT_EQ(FormatValue(0.625, "fraction"), "62.50%");
  EXPECT_EQ(FormatValue(7.67, "samples/s"), "7.67 samples/s");
}

TEST(ValidationReportTest, CardHasTheFourParts) {
  KnowledgeCard c;
  c.id = 4;
  c.scene = "convnet";
  c.bottleneck = "layout_conversion";
  c.fix = "channels_last <b>";
  c.metric = "latency";
  c.statistic = "median";
  c.unit = "ns";
  c.before = 11.3e6;
  c.after = 10.2e6;
  c.change_rel = -0.0973;
  c.ci_low_rel = -0.12;
  c.ci_high_rel = -0.07;
  c.test = "mannwhitney";
  c.p_value = 3.66e-5;
  std::string md = CardToMarkdown(c);
  EXPECT_NE(md.find("**Scene:** convnet"), std::string::npos);
  EXPECT_NE(md.find("**Core bottleneck:** layout\\_conversion"), std::string::npos) << md;
  EXPECT_NE(md.find("**Effective fix:** channels\\_last &lt;b&gt;"), std::string::npos) << md;
  EXPECT_NE(md.find("latency -9.73%"), std::string::npos) << md;
  EXPECT_NE(md.find("95% CI -12.00% .. -7.00%"), std::string::npos) << md;
}

// A stored prediction reads before -> predicted -> measured on its own base,
// each change a share of the before figure (hand-computed: 70/100 - 1 and
// 80/100 - 1); a card stored without the before figure shows no change.
TEST(ValidationReportTest, CardsPredictionHasItsBeforeFigureAndBothChanges) {
  KnowledgeCard c;
  c.metric = "latency";
  c.unit = "ns";
  c.prediction = CardPrediction{"dataloader_workers",
                                "simulation",
                                "remove-idle data_loading",
                                70e6,
                                65e6,
                                75e6,
                                80e6,
                                78e6,
                                82e6,
                                "median",
                                "",
                                "",
                                "",
                                100e6};
  std::string md = CardToMarkdown(c);
  EXPECT_NE(md.find("**Before step wall time:** 100.00 ms"), std::string::npos) << md;
  EXPECT_NE(md.find("**Predicted change, a share of the before figure:** \\-30.00%"), std::string::npos) << md;
  EXPECT_NE(md.find("**Measured change, a share of the before figure:** \\-20.00%"), std::string::npos) << md;
  EXPECT_NE(md.find("**Error of the uncorrected prediction:** \\-12.50%"), std::string::npos) << md;
  c.prediction->before_ns = 0;
  md = CardToMarkdown(c);
  EXPECT_EQ(md.find("-30.00%"), std::string::npos) << md;
  EXPECT_EQ(md.find("-20.00%"), std::string::npos) << md;
}

}  // namespace
}  // namespace aiprof
