// aiprof card: measures a before/after pair and writes (and stores) a
// knowledge card: scene, core bottleneck, effective fix, measured gain with
// its confidence interval. Other commands read cards with FindCards()
// (src/analysis/validation/knowledge_card.h).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "src/analysis/validation/baseline_store.h"
#include "src/analysis/validation/compare.h"
#include "src/analysis/validation/trace_identity.h"
#include "src/analysis/whatif/whatif.h"
#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/report/validation/validation_report.h"
#include "src/session/prediction_check.h"
#include "src/session/prediction_pool.h"
#include "src/session/run_loader.h"

namespace aiprof {

namespace {

class CardCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("card", "Measure a before/after pair and write and store a knowledge card");
    AddBeforeFlag(sub, &before_, "Trace or benchmark result file before the fix")->required();
    AddAfterFlag(sub, &after_, "Trace or benchmark result file after the fix")->required();
    sub->add_option("--scene", scene_, "Workload and setting (default: the after file's name and the sample unit)");
    sub->add_option("--bottleneck", bottleneck_,
                    "Core bottleneck type, as findings name it (default: inferred: the matched finding's type; with "
                    "--scenario, op:NAME of what the scenario changes most; else op:NAME of the op that lost the most "
                    "time)");
    sub->add_option("--fix", fix_, "The effective fix, in a few words");
    AddFixIdFlag(sub, &fix_id_,
                    "The suggestion id the after run applied (default: matched by the finding that went away): the "
                    "card keeps its prediction and the error, which corrects later predictions of that fix");
    scenario_.Add(sub,
                  "The fix the after run applied, stated as a what-if scenario (docs/whatif.md) instead of a "
                  "suggestion id: the card keeps the before run's replay of it and the error, which corrects later "
                  "`aiprof whatif --db` predictions of that scenario");
    AddDevicesFileFlag(sub, &devices_);
    sub->add_option("--metric", metric_, "Metric the gain is measured on (latency, p50, throughput, ...)");
    stats_.Add(sub, /*resamples_flag=*/false);
    AddRunInputFlags(sub, &run_inputs_, /*warmup_steps=*/false);
    AddOutputPathFlag(sub, &output_, "Card file (Markdown; default standard output)");
    AddDbFlag(sub, &db_, "Database the card is stored in (default $XDG_DATA_HOME/aiprof/baselines.db)");
    return sub;
  }

  Status Run() override {
    ValidationOptions options;
    options.metrics = {metric_};
    RETURN_IF_ERROR(AsUsage(CheckMetricNames(options.metrics)));
    RETURN_IF_ERROR(stats_.Apply(&options));
    bool mean = false;
    RETURN_IF_ERROR(scenario_.Resolve(&mean));  // before the work
    ASSIGN_OR_RETURN(LoadedRun before_run, LoadRun(before_, run_inputs_));
    ASSIGN_OR_RETURN(LoadedRun after_run, LoadRun(after_, run_inputs_));
    const RunSamples& before = before_run.samples;
    const RunSamples& after = after_run.samples;
    ValidationResult result = Validate(before, after, options);
    const MetricComparison& m = result.metrics.at(0);
    if (m.verdict == Verdict::kInsufficientData) {
      return ErrStatus("cannot measure " + m.metric + " for a card: " + m.reason);
    }
    KnowledgeCard card;
    card.scene = scene_.empty() ? std::filesystem::path(after_).filename().string() + " (one sample = one " + after.unit + ")" : scene_;
    double saved_ns = 0;
    card.bottleneck = bottleneck_.empty() ? InferCardBottleneck(before, after, &saved_ns) : bottleneck_;
    if (card.bottleneck.empty()) card.bottleneck = "unknown (give --bottleneck)";
    card.fix = !fix_.empty()        ? fix_
               : !scenario_.given() ? std::string("not stated (give --fix)")
                                    : "scenario '" + CanonicalScenarioText(scenario_.scenario) + "'";
    // What the case is tied to: the two inputs (one measured pair is one
    // case) and the before trace's workload.
    ASSIGN_OR_RETURN(const std::string before_id, InputIdentity(before_));
    ASSIGN_OR_RETURN(const std::string after_id, InputIdentity(after_));
    card.metric = m.metric;
    card.statistic = m.statistic_name;
    card.unit = m.unit;
    card.higher_is_better = m.higher_is_better;
    card.before_label = result.before_label;
    card.after_label = result.after_label;
    card.n_before = m.n_before;
    card.n_after = m.n_after;
    card.before = m.before;
    card.after = m.after;
    card.change_rel = m.change_rel;
    card.ci_low_rel = m.ci.rel_low;
    card.ci_high_rel = m.ci.rel_high;
    card.confidence = m.confidence;
    card.p_value = m.p_value;
    card.test = m.test;
    card.verdict = VerdictId(m.verdict);
    card.created_unix_ms = NowUnixMs();
    std::string db = db_;
    if (db.empty()) {
      ASSIGN_OR_RETURN(db, DefaultBaselineDbPath());
    }
    // The prediction check of validate (PredictionPool: the scenario's replay,
    // or the suggestion the after run applied, named or inferred), on the
    // one pair; past cards of this very pair do not correct it.
    std::unique_ptr<AnalysisSession> b, a;
    if (before_run.trace && after_run.trace) {
      SessionOptions so;
      if (!scenario_.given()) {
        so.db = db;
        so.history_checked_inputs = {before_id, after_id};
      }
      b = AnalysisSession::ForTrace(*before_run.trace, so);
      a = AnalysisSession::ForTrace(*after_run.trace, so);
    } else if (scenario_.given()) {
      return ErrStatus("--scenario needs traces before and after (the prediction is replayed on the before trace)");
    } else if (!fix_id_.empty()) {
      return ErrStatus("--fix-id needs traces before and after (the prediction is made from the before trace)");
    }
    PredictionPoolOptions po;
    po.fix_id = fix_id_;
    po.scenario = scenario_.scenario;
    po.mean = mean;
    po.devices_file = devices_.devices_file;
    PredictionPool pool(po);
    RETURN_IF_ERROR(pool.AddFirst(before_, b.get(), after_, a.get()));
    pool.Finish(&result);
    const std::optional<PredictionCheck>& check = result.prediction;
    if (scenario_.given() && !check) return ErrStatus("--scenario: a run has no steady step to predict or measure");
    std::optional<ScenarioTarget> target;  // --scenario: what it changes most, the card's bottleneck
    if (scenario_.given() && bottleneck_.empty()) {
      // The scenario's own target, not the op that lost the most time
      // between the runs (which another change may explain).
      ASSIGN_OR_RETURN(Scenario sc, ParseScenario(scenario_.scenario));
      RETURN_IF_ERROR(ResolveScenarioDevices(b->trace(), devices_.devices_file, &sc));
      target = ScenarioBottleneck(b->WhatIf(sc));
      if (target) card.bottleneck = target->bottleneck;
    }
    if (check) {
      // The prediction kept is the simulation before any history correction,
      // with its own interval, so each card's error is the simulation's own.
      card.prediction = CardPrediction{check->fix_id,
                                       check->source,
                                       check->scenario,
                                       check->uncorrected_ns,
                                       check->uncorrected_lo_ns,
                                       check->uncorrected_hi_ns,
                                       check->measured_ns,
                                       check->measured_lo_ns,
                                       check->measured_hi_ns,
                                       check->mean ? "mean" : "median",
                                       before_id,
                                       after_id,
                                       WorkloadSignature(*before_run.trace),
                                       check->before_ns};
      // A fix named by its suggestion (--fix-id, or matched) is that
      // suggestion's, unless --fix says it in other words.
      if (fix_.empty() && !check->fix_id.empty()) card.fix = check->fix_title + " (suggestion " + check->fix_id + ")";
      if (bottleneck_.empty() && !check->bottleneck.empty()) card.bottleneck = check->bottleneck;
    }
    ASSIGN_OR_RETURN(std::unique_ptr<BaselineStore> store, BaselineStore::Open(db));
    ASSIGN_OR_RETURN(card.id, store->SaveCard(card));
    std::string text = CardToMarkdown(card);
    if (check) {
      text += "\nChecked now" + std::string(check->history_cases ? ", corrected by history" : "") + ": " +
              DescribePredictionCheck(*check) + "\n";
    }
    if (target) {
      text += "\nThe bottleneck is what the scenario changes most: " +
              (target->name.empty() ? std::string(PathClassName(target->cls)) : target->name) +
              ", on the before run's critical path " + FormatValue(target->measured_ns, "ns") + " -> " +
              FormatValue(target->predicted_ns, "ns") + " per steady step in the replay (not the op that lost the " +
              "most time between the runs). Pass --bottleneck with a finding's type so that suggest can match this "
              "card.\n";
    } else if (bottleneck_.empty() && check && !check->bottleneck.empty()) {
      text += "\nThe bottleneck is the type of the before run's finding the fix answered (" + check->matched_by + ").\n";
    } else if (bottleneck_.empty() && saved_ns > 0) {
      text += "\nThe bottleneck was inferred, not given: " + card.bottleneck.substr(3) + " lost the most time per " + after.unit +
              " (" + FormatValue(saved_ns, "ns") + "; op time includes child ops, and an op replaced by another counts as "
              "removed). Check it, and pass --bottleneck with the finding's type so that suggest can match this card.\n";
    }
    return WriteOutput(output_, text);
  }

 private:
  std::string before_, after_, scene_, bottleneck_, fix_, fix_id_, output_, db_;
  ScenarioFixFlags scenario_;
  AnalyzeOptions devices_;
  std::string metric_ = "latency";
  StatsFlags stats_;
  RunInputs run_inputs_;
};

}  // namespace

std::unique_ptr<Command> NewCardCommand() { return std::make_unique<CardCommand>(); }

}  // namespace aiprof
