#include "src/analysis/whatif/simulate.h"

#include <gtest/gtest.h>

#include "src/analysis/validation/statistics.h"
#include "src/analysis/validation/trace_identity.h"
#include "src/analysis/whatif/whatif.h"
#include "src/analysis/whatif/whatif_test_traces.h"
#include "test/util/hand_made_traces.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

TEST(MedianIntervalTest, OrderStatisticsByHand) {
  // Six values: P(Bin(6, 1/2) = 0) = 1/64 ≤ 2.5% but P(≤ 1) = 7/64 is not,
  // so k = 1: [min, max].
  std::vector<double> six = {5, 1, 4, 2, 3, 6};
  MeanInterval m = MedianWithInterval(six);
  EXPECT_DOUBLE_EQ(m.mean, 3.5);
  EXPECT_DOUBLE_EQ(m.lo, 1);
  EXPECT_DOUBLE_EQ(m.hi, 6);
  // Nine: P(≤ 1) = 10/512 = 1.95% ≤ 2.5%, P(≤ 2) = 46/512 is not: k = 2.
  std::vector<double> nine = {9, 8, 7, 6, 5, 4, 3, 2, 1};
  m = MedianWithInterval(nine);
  EXPECT_DOUBLE_EQ(m.mean, 5);
  EXPECT_DOUBLE_EQ(m.lo, 2);
  EXPECT_DOUBLE_EQ(m.hi, 8);
  std::vector<double> one = {7};
  m = MedianWithInterval(one);
  EXPECT_DOUBLE_EQ(m.lo, 7);
  EXPECT_DOUBLE_EQ(m.hi, 7);
}

struct Outcome {
  Rule rule;
  Suggestion suggestion;
  Finding finding;
  SuggestionOutcome o;
  Outcome() {
    rule.id = rule.bottleneck = "data_loading";
    suggestion.id = "dataloader_workers";
    suggestion.risk.effort = "low";
    finding.rule = &rule;
    o.finding = &finding;
    o.suggestion = &suggestion;
  }
};

TEST(SimulateTest, GainIsOneMinusPredictedOverMeasured) {
  Outcome x;
  ApplySimulation(SimulatedGain{"remove-idle data_loading", 6, 200, 150, 140, 160}, &x.o);
  EXPECT_EQ(x.o.gain_source, kGainFromSimulation);
  EXPECT_DOUBLE_EQ(x.o.gain_min, 0.2);   // 1 - 160/200
  EXPECT_DOUBLE_EQ(x.o.gain_max, 0.3);   // 1 - 140/200
  EXPECT_DOUBLE_EQ(x.o.speedup_max, 1 / 0.7);
  EXPECT_EQ(GainBasis(x.o), "step wall time");
}

// A scenario whose interval reaches past twice the step (plain_train_loop's
// suggestion: 2.156 ms measured, 1.31 to 5.50 ms predicted) loses up to
// 1 - 5.50/2.156 = -155%, x0.39: the figure is not clamped to -100%, x0.50.
TEST(SimulateTest, ALossPastTheStepItselfIsNotClamped) {
  Outcome x;
  ApplySimulation(SimulatedGain{"scale aten::mm 2", 6, 2156, 3000, 1310, 5500}, &x.o);
  EXPECT_DOUBLE_EQ(x.o.gain_min, 1 - 5500.0 / 2156);
  EXPECT_DOUBLE_EQ(x.o.speedup_min, 2156.0 / 5500);
  EXPECT_DOUBLE_EQ(x.o.gain_max, 1 - 1310.0 / 2156);
}

TEST(SimulateTest, HistoryCorrectionByHand) {
  Outcome x;
  ApplySimulation(SimulatedGain{"remove-idle data_loading", 6, 300, 200, 190, 210}, &x.o);
  KnowledgeCard past;
  past.prediction = CardPrediction{"dataloader_workers", kGainFromSimulation, "remove-idle data_loading", 100, 95, 105, 120, 110, 130};
  KnowledgeCard other = past;
  other.prediction->fix_id = "another_fix";  // not this fix: ignored
  CorrectByHistory({past, other}, &x.o);
  ASSERT_TRUE(x.o.simulation);
  // One case, r = ln(120/100) = 0.182322; σ = 0.15, τ = 0.25:
  // precision = 1/0.0225 + 1/0.0625 = 60.4444, b = (0.182322/0.0225)/60.4444
  // = 0.134059; 200·e^b = 228.69. Spread 1.96·√(1/60.4444 + 0.0225) = 0.387288.
  EXPECT_EQ(x.o.simulation->history_cases, 1u);
  EXPECT_DOUBLE_EQ(x.o.simulation->uncorrected_ns, 200);
  EXPECT_NEAR(x.o.simulation->predicted_ns, 228.69, 0.01);
  EXPECT_NEAR(x.o.simulation->predicted_lo_ns, 190 * std::exp(0.134059 - 0.387288), 0.01);
  EXPECT_NEAR(x.o.simulation->predicted_hi_ns, 210 * std::exp(0.134059 + 0.387288), 0.01);
  EXPECT_NEAR(x.o.gain_max, 1 - 190 * std::exp(0.134059 - 0.387288) / 300, 1e-4);
  // Corrected once only.
  CorrectByHistory({past}, &x.o);
  EXPECT_NEAR(x.o.simulation->predicted_ns, 228.69, 0.01);
}

TEST(SimulateTest, NoPastCaseOfThisFixChangesNothing) {
  Outcome x;
  ApplySimulation(SimulatedGain{"remove-idle data_loading", 6, 300, 200, 190, 210}, &x.o);
  KnowledgeCard prior_only;
  prior_only.prediction = CardPrediction{"dataloader_workers", kGainFromPrior, "", 100, 95, 105, 120, 110, 130};
  CorrectByHistory({prior_only, KnowledgeCard{}}, &x.o);
  EXPECT_EQ(x.o.simulation->history_cases, 0u);
  EXPECT_DOUBLE_EQ(x.o.simulation->predicted_ns, 200);
}

TEST(SimulateTest, OnlyCasesOnTheSimulationsStatisticCorrectIt) {
  Outcome x;
  ApplySimulation(SimulatedGain{"remove-idle data_loading", 6, 300, 200, 190, 210}, &x.o);
  KnowledgeCard on_mean;
  on_mean.prediction = CardPrediction{
      "dataloader_workers", kGainFromSimulation, "remove-idle data_loading", 100, 95, 105, 120, 110, 130, "mean"};
  CorrectByHistory({on_mean}, &x.o);  // the simulation is a median: a mean's error says nothing of it
  EXPECT_EQ(x.o.simulation->history_cases, 0u);
  x.o.simulation->mean = true;
  CorrectByHistory({on_mean}, &x.o);
  EXPECT_EQ(x.o.simulation->history_cases, 1u);
  EXPECT_NEAR(x.o.simulation->predicted_ns, 228.69, 0.01);  // as HistoryCorrectionByHand
}

// A card of a pair already counted (`card` run again on the same before and
// after inputs) is the same measurement: one case, not another.
TEST(SimulateTest, OneMeasuredPairIsOneCase) {
  KnowledgeCard past;
  past.scene = "resnet50";
  past.prediction = CardPrediction{
      "dataloader_workers", kGainFromSimulation, "remove-idle data_loading", 100, 95, 105, 120, 110, 130};
  past.prediction->before_input = "b-1";
  past.prediction->after_input = "a-1";
  Outcome once, thrice;
  ApplySimulation(SimulatedGain{"remove-idle data_loading", 6, 300, 200, 190, 210}, &once.o);
  ApplySimulation(SimulatedGain{"remove-idle data_loading", 6, 300, 200, 190, 210}, &thrice.o);
  CorrectByHistory({past}, &once.o);
  CorrectByHistory({past, past, past}, &thrice.o);
  EXPECT_EQ(thrice.o.simulation->history_cases, 1u);
  EXPECT_DOUBLE_EQ(thrice.o.simulation->predicted_lo_ns, once.o.simulation->predicted_lo_ns);
  EXPECT_DOUBLE_EQ(thrice.o.simulation->predicted_hi_ns, once.o.simulation->predicted_hi_ns);
  EXPECT_NE(thrice.o.simulation->history_from.find("2 repeated card(s) of a pair already counted"), std::string::npos)
      << thrice.o.simulation->history_from;
  EXPECT_NE(thrice.o.simulation->history_from.find("1 past case(s) (scene: 'resnet50')"), std::string::npos)
      << thrice.o.simulation->history_from;
}

// Cases that agree exactly do not read as certainty: σ² is moderated by
// kHistoryPriorDof prior cases at σ0 = 0.15 (before, three equal errors put σ
// at its 1e-3 floor and the predictive spread at ±0.06).
TEST(SimulateTest, CasesThatAgreeKeepAPriorSpread) {
  const double r = std::log(120.0 / 100);
  std::optional<HistoryCorrection> h = CorrectionFromLogErrors({r, r, r});
  ASSERT_TRUE(h);
  // σ² = 4·0.0225 / (4 + 2) = 0.015; precision = 3/0.015 + 16 = 216.
  const double sigma2 = 0.015, precision = 3 / sigma2 + 16;
  EXPECT_NEAR(h->bias, 3 * r / sigma2 / precision, 1e-12);
  EXPECT_NEAR(h->spread, 1.96 * std::sqrt(1 / precision + sigma2), 1e-12);
  EXPECT_GT(h->spread, 0.24);
  // One case: σ = σ0 exactly, as before.
  h = CorrectionFromLogErrors({r});
  EXPECT_NEAR(h->spread, 0.387288, 1e-6);
  // Many cases that spread: the sample variance takes over.
  std::vector<double> many;
  for (int i = 0; i < 200; ++i) many.push_back(i % 2 ? 0.3 : -0.3);
  h = CorrectionFromLogErrors(many);
  EXPECT_NEAR(h->spread, 1.96 * 0.3, 0.01);
}

// A case corrects its own workload only, and never the inputs being
// checked (a check of a stored pair against itself) nor the trace it was
// measured from.
TEST(SimulateTest, CasesAreScopedToTheWorkloadAndLeaveOutTheCheckedInputs) {
  KnowledgeCard past;
  past.scene = "resnet50";
  past.prediction = CardPrediction{
      "dataloader_workers", kGainFromSimulation, "remove-idle data_loading", 100, 95, 105, 120, 110, 130};
  past.prediction->before_input = "b-1";
  past.prediction->after_input = "a-1";
  past.prediction->workload = std::string(16 * kWorkloadHashes, 'a');
  auto corrected = [&](const HistoryScope& scope, std::string* from) {
    Outcome x;
    ApplySimulation(SimulatedGain{"remove-idle data_loading", 6, 300, 200, 190, 210}, &x.o);
    CorrectByHistory({past}, &x.o, scope);
    *from = x.o.simulation->history_from;
    return x.o.simulation->history_cases;
  };
  std::string from;
  HistoryScope same;
  same.workload = past.prediction->workload;
  EXPECT_EQ(corrected(same, &from), 1u);
  HistoryScope other;
  other.workload = std::string(16 * kWorkloadHashes, 'b');
  EXPECT_EQ(corrected(other, &from), 0u);
  EXPECT_NE(from.find("left out: 1 of another workload"), std::string::npos) << from;
  HistoryScope checked = same;
  checked.checked_inputs = {"a-1"};
  EXPECT_EQ(corrected(checked, &from), 0u);
  EXPECT_NE(from.find("1 of the very inputs being checked"), std::string::npos) << from;
  // Nor the trace being predicted: a case measured from it (its before
  // input) is its own outcome; one measured into it (its after input) is a
  // past case of another trace, and counts.
  HistoryScope predicted = same;
  predicted.predicted_input = "b-1";
  EXPECT_EQ(corrected(predicted, &from), 0u);
  EXPECT_NE(from.find("left out: 1 measured from this very trace"), std::string::npos) << from;
  predicted.predicted_input = "a-1";
  EXPECT_EQ(corrected(predicted, &from), 1u);
  // A card stored before workloads were recorded corrects no known workload.
  past.prediction->workload.clear();
  EXPECT_EQ(corrected(same, &from), 0u);
}

TEST(SimulateTest, WhatIfIsCorrectedByPastCasesOfTheSameScenarioPerStatistic) {
  WhatIfResult r;
  r.scenario = "remove aten::to;  scale  log 0.1";
  r.predicted_ns = 200, r.predicted_lo_ns = 190, r.predicted_hi_ns = 210;
  r.predicted_mean_ns = 400, r.predicted_mean_lo_ns = 380, r.predicted_mean_hi_ns = 420;
  auto card = [](std::string fix_id, std::string scenario, double predicted, double measured, std::string statistic) {
    KnowledgeCard c;
    c.prediction = CardPrediction{fix_id, kGainFromSimulation, scenario, predicted, 0, 0, measured, 0, 0, statistic};
    return c;
  };
  // Three cases on the mean, the same scenario however spaced and whoever
  // stored it (card --scenario, or a suggestion's card); one on the median;
  // one of another scenario; a prior.
  std::vector<KnowledgeCard> cards = {card("", "remove aten::to; scale log 0.1", 100, 80, "mean"),
                                      card("cast_fix", "remove aten::to ; scale log 0.1", 100, 90, "mean"),
                                      card("", "remove aten::to;scale log 0.1", 100, 85, "mean"),
                                      card("", "remove aten::to; scale log 0.1", 100, 120, "median"),
                                      card("", "remove aten::to", 100, 10, "mean"),
                                      card("", "remove aten::to; scale log 0.1", 100, 10, "mean")};
  cards.back().prediction->source = kGainFromPrior;
  CorrectWhatIfByHistory(cards, &r);
  EXPECT_TRUE(r.history_asked);
  // Median: one case, as HistoryCorrectionByHand: 200·e^0.134059.
  EXPECT_EQ(r.median_history.cases, 1u);
  EXPECT_DOUBLE_EQ(r.median_history.uncorrected_ns, 200);
  EXPECT_NEAR(r.predicted_ns, 228.69, 0.01);
  // Mean: r = ln 0.8, ln 0.9, ln 0.85 = −0.223144, −0.105361, −0.162519;
  // Σ = −0.491023, mean −0.163674; Σ(r − r̄)² = 0.0069384; σ² moderated by
  // 4 prior cases at σ0 = 0.15: (4·0.0225 + 0.0069384)/(4 + 2) = 0.0161564;
  // precision = 3/σ² + 16 = 201.685; b = (−0.491023/σ²)/201.684 = −0.150690;
  // spread = 1.96·√(1/201.684 + σ²) = 0.284805.
  EXPECT_EQ(r.mean_history.cases, 3u);
  const double ss = std::pow(std::log(0.8) + 0.163674, 2) + std::pow(std::log(0.9) + 0.163674, 2) +
                    std::pow(std::log(0.85) + 0.163674, 2);
  const double var = (4 * 0.0225 + ss) / 6, precision = 3 / var + 16;
  const double b = (std::log(0.8) + std::log(0.9) + std::log(0.85)) / var / precision;
  const double spread = 1.96 * std::sqrt(1 / precision + var);
  EXPECT_NEAR(b, -0.150690, 1e-6);
  EXPECT_NEAR(spread, 0.284805, 1e-6);
  EXPECT_NEAR(r.predicted_mean_ns, 400 * std::exp(b), 1e-6);
  EXPECT_NEAR(r.predicted_mean_lo_ns, 380 * std::exp(b - spread), 1e-6);
  EXPECT_NEAR(r.predicted_mean_hi_ns, 420 * std::exp(b + spread), 1e-6);
}

TEST(SimulateTest, CanonicalScenarioTextSeparatesClausesAndWordsOnce) {
  EXPECT_EQ(CanonicalScenarioText("  remove   aten::to ;scale x 0.5;; "), "remove aten::to; scale x 0.5");
  EXPECT_EQ(CanonicalScenarioText("remove aten::to; scale x 0.5"), "remove aten::to; scale x 0.5");
  // Numbers in a number's place, in their shortest form; patterns as written.
  EXPECT_EQ(CanonicalScenarioText("scale x .10; every 010 ckpt; overlap-data-loading 04"),
            "scale x 0.1; every 10 ckpt; overlap-data-loading 4");
  EXPECT_EQ(CanonicalScenarioText("scale x 1e-1"), "scale x 0.1");
  EXPECT_EQ(CanonicalScenarioText("remove 2.0; scale 0.50 2"), "remove 2.0; scale 0.50 2");
  // A scenario that does not parse: its white space alone collapsed.
  EXPECT_EQ(CanonicalScenarioText("scale  x abc"), "scale x abc");
}

// Hand-made (µs): four steps of 20 µs, each aten::mm 10 then checkpoint 10.
// The fix "checkpoint every 4th step" (`every 4 checkpoint`) predicts steps
// of 10, 10, 10, 20: median 10 µs, a 50% gain the run would never see; mean
// 12.5 µs, 37.5% of the mean step. By hand: s = √((3·2.5² + 7.5²)/3) = 5 µs,
// t(3) 97.5% = 3.18245, half-width 3.18245·5/√4 = 7.9561 µs.


TEST(SimulateTest, AFixOnOneStepInNIsJudgedByTheMeanStep) {
  auto t = testing::ImportJsonText(testing::CheckpointTrace());
  ASSERT_NE(t, nullptr);
  const CriticalPathResult path = ComputeCriticalPath(*t);
  Outcome every, scale;
  every.suggestion.scenario = "every 4 checkpoint";
  scale.suggestion.scenario = "scale checkpoint 0.5";
  SuggestResult result;
  result.kept = {every.o, scale.o};
  SimulateSuggestions(*t, path, &result);
  ASSERT_EQ(result.kept.size(), 2u);
  const SuggestionOutcome* e = nullptr;
  const SuggestionOutcome* s = nullptr;
  for (const SuggestionOutcome& o : result.kept) (o.suggestion == &every.suggestion ? e : s) = &o;
  ASSERT_TRUE(e && s && e->simulation && s->simulation);
  EXPECT_TRUE(e->simulation->mean);
  EXPECT_DOUBLE_EQ(e->simulation->measured_ns, 20'000);
  EXPECT_DOUBLE_EQ(e->simulation->predicted_ns, 12'500);
  EXPECT_NEAR(e->gain_max, 1 - (12'500 - 7'956.1) / 20'000, 1e-4);
  EXPECT_NEAR(e->gain_min, 1 - (12'500 + 7'956.1) / 20'000, 1e-4);
  EXPECT_EQ(GainBasis(*e), "mean step wall time");
  EXPECT_NE(GainOrigin(*e).find("(mean"), std::string::npos) << GainOrigin(*e);
  // A clause on every step keeps the median: 15 µs on each step.
  EXPECT_FALSE(s->simulation->mean);
  EXPECT_DOUBLE_EQ(s->simulation->predicted_ns, 15'000);
  EXPECT_EQ(GainBasis(*s), "step wall time");
  EXPECT_TRUE(ScenarioNeedsMean(*ParseScenario("remove aten::to; every 10 log")));
  EXPECT_FALSE(ScenarioNeedsMean(*ParseScenario("remove aten::to; scale log 0.1")));
}

// Hand-made (the checkpoint trace above): a scenario whose name patterns
// match no slice (cuDNN's nchwToNhwc on a trace without it) is no
// simulation, so the suggestion keeps its prior instead of a "simulated"
// 0% gain (the Flux trial's D2); one that matches is simulated.
TEST(SimulateTest, AScenarioThatMatchesNothingKeepsThePrior) {
  auto t = testing::ImportJsonText(testing::CheckpointTrace());
  ASSERT_NE(t, nullptr);
  const CriticalPathResult path = ComputeCriticalPath(*t);
  Outcome none, some;
  none.suggestion.scenario = "remove nchwToNhwc; remove nhwcToNchw";
  some.suggestion.scenario = "remove nchwToNhwc; remove checkpoint";
  SuggestResult result;
  result.kept = {none.o, some.o};
  SimulateSuggestions(*t, path, &result);
  ASSERT_EQ(result.kept.size(), 2u);
  for (const SuggestionOutcome& o : result.kept) {
    if (o.suggestion == &none.suggestion) {
      EXPECT_FALSE(o.simulation.has_value());
      EXPECT_NE(o.gain_source, kGainFromSimulation);
      // The reason, not "no steady steps" (the trace has them).
      EXPECT_EQ(GainOrigin(o),
                "prior: impact x efficacy (the scenario is not replayed: it changes no slice of this trace)");
    } else {
      ASSERT_TRUE(o.simulation.has_value());
      EXPECT_DOUBLE_EQ(o.simulation->predicted_ns, 10'000);
    }
  }
}

// kDeviceBehindTrace (test/util/hand_made_traces.h, figures by hand there):
// the device runs behind, step periods 15 and 15 us (a rank's first step has
// none), the step wall times 20, 25, 30 us. A suggestion replayed there is simulated on the period (the
// trace's step time), both figures on it, and says so; before, every
// period-based replay kept the prior ("it predicts a step period").
TEST(SimulateTest, DeviceBehindIsSimulatedOnTheStepPeriod) {
  auto t = testing::ImportJsonText(testing::kDeviceBehindTrace);
  ASSERT_NE(t, nullptr);
  const CriticalPathResult path = ComputeCriticalPath(*t);
  // The replay's per-step figures are periods; the first step has none (not
  // its 20 us wall time).
  StatusOr<Scenario> sc = ParseScenario("scale K 0.5");
  ASSERT_TRUE(sc.ok());
  const WhatIfResult r = PredictWhatIf(*t, path, *sc);
  EXPECT_EQ(r.time_base, WhatIfResult::TimeBase::kStepPeriod);
  EXPECT_TRUE(r.device_behind);
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_TRUE(r.steps[0].no_period);
  EXPECT_FALSE(r.steps[0].steady);
  EXPECT_EQ(r.steps[0].measured_ns, 0);
  EXPECT_EQ(r.steps[0].predicted_ns, 0);
  EXPECT_FALSE(r.steps[1].no_period);
  EXPECT_EQ(r.steps[1].measured_ns, 15'000);
  EXPECT_EQ(r.steps[2].measured_ns, 15'000);

  Outcome o;
  o.suggestion.scenario = "scale K 0.5";
  SuggestResult result;
  result.kept = {o.o};
  SimulateSuggestions(*t, path, &result);
  ASSERT_EQ(result.kept.size(), 1u);
  const SuggestionOutcome& k = result.kept[0];
  ASSERT_TRUE(k.simulation.has_value()) << k.not_simulated;
  EXPECT_TRUE(k.simulation->step_period);
  EXPECT_EQ(k.simulation->steps, 2u);
  EXPECT_DOUBLE_EQ(k.simulation->measured_ns, 15'000);
  EXPECT_LT(k.simulation->predicted_ns, k.simulation->measured_ns);
  EXPECT_EQ(GainBasis(k), "step period");
  EXPECT_NE(GainOrigin(k).find(" step period ("), std::string::npos) << GainOrigin(k);
}

// A period only the scenario brings (graph-launch on a host-paced trace) is
// not the trace's step time: the prior stays, with the reason.
TEST(SimulateTest, AScenarioPeriodOnAHostPacedTraceKeepsThePrior) {
  auto t = testing::ImportJsonText(testing::CheckpointTrace());
  ASSERT_NE(t, nullptr);
  const CriticalPathResult path = ComputeCriticalPath(*t);
  Outcome o;
  o.suggestion.scenario = "graph-launch";
  SuggestResult result;
  result.kept = {o.o};
  SimulateSuggestions(*t, path, &result);
  ASSERT_EQ(result.kept.size(), 1u);
  EXPECT_FALSE(result.kept[0].simulation.has_value());
  EXPECT_EQ(result.kept[0].not_simulated, "it predicts a step period, not the step wall time validate measures");
}

}  // namespace
}  // namespace aiprof
