// aiprof card: measures a before/after pair and writes (and stores) a
// knowledge card: scene, core bottleneck, effective fix, measured gain with
// its confidence interval. Other commands read cards with FindCards()
// (src/analysis/validation/knowledge_card.h).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>

#include "src/analysis/validation/baseline_store.h"
#include "src/analysis/validation/compare.h"
#include "src/cli/command.h"
#include "src/cli/run_samples_loader.h"
#include "src/report/validation/validation_report.h"

namespace aiprof {

std::string ParseValidationFraction(const std::string& s, double* out);

namespace {

// The op that lost the most time per sample (ops gone after count in full),
// as "op:NAME", or "" when the inputs carry no ops.
std::string InferBottleneck(const RunSamples& before, const RunSamples& after, double* saved_ns) {
  double na = std::max<double>(1, static_cast<double>(before.latency_ns.size()));
  double nb = std::max<double>(1, static_cast<double>(after.latency_ns.size()));
  std::string best;
  *saved_ns = 0;
  for (const auto& [name, a] : before.op_dur_ns) {
    double before_total = 0, after_total = 0;
    for (double d : a) before_total += d;
    if (auto it = after.op_dur_ns.find(name); it != after.op_dur_ns.end()) {
      for (double d : it->second) after_total += d;
    }
    double saved = before_total / na - after_total / nb;
    if (saved > *saved_ns) {
      *saved_ns = saved;
      best = name;
    }
  }
  return best.empty() ? "" : "op:" + best;
}

class CardCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("card", "Measure a before/after pair and write and store a knowledge card");
    sub->add_option("--before", before_, "Trace or benchmark result file before the fix")->required();
    sub->add_option("--after", after_, "Trace or benchmark result file after the fix")->required();
    sub->add_option("--scene", scene_, "Workload and setting (default: the after file's name and the sample unit)");
    sub->add_option("--bottleneck", bottleneck_,
                    "Core bottleneck type, as findings name it (default: inferred, op:NAME of the op that lost the most time)");
    sub->add_option("--fix", fix_, "The effective fix, in a few words");
    sub->add_option("--metric", metric_, "Metric the gain is measured on (latency, p50, throughput, ...)");
    sub->add_option("--test", test_, "welch, mannwhitney, bootstrap or auto")
        ->check(CLI::IsMember({"auto", "welch", "mannwhitney", "bootstrap"}));
    sub->add_option("--alpha", alpha_, "Significance level; the interval is at 1 - alpha")->check(CLI::Range(1e-9, 0.5));
    sub->add_option("--min-effect", min_effect_text_, "Smallest relative change that counts")
        ->check([this](const std::string& s) { return ParseValidationFraction(s, &min_effect_); });
    sub->add_option("--unit", unit_, "Traces: 'step' or the name of the spans that are samples");
    sub->add_option("--batch-size", batch_size_, "Items per sample, for throughput")->check(CLI::PositiveNumber);
    sub->add_option("--bench", bench_, "Benchmark files: which benchmark");
    sub->add_option("--sample-unit", sample_unit_, "Benchmark files: unit of bare numbers")->check(CLI::IsMember({"ns", "us", "ms", "s"}));
    sub->add_option("--seed", seed_, "Bootstrap seed");
    sub->add_option("-o,--output", output_, "Card file (Markdown, written atomically); default standard output");
    sub->add_option("--db", db_, "Database the card is stored in (default $XDG_DATA_HOME/aiprof/baselines.db)");
    return sub;
  }

  Status Run() override {
    ValidationOptions options;
    options.metrics = {metric_};
    RETURN_IF_ERROR(CheckMetricNames(options.metrics));
    ASSIGN_OR_RETURN(options.test, ParseTestKind(test_));
    options.alpha = alpha_;
    options.min_effect = min_effect_;
    options.seed = seed_;
    ASSIGN_OR_RETURN(RunSamples before, LoadRunSamples(before_, unit_, batch_size_, bench_, sample_unit_, nullptr));
    ASSIGN_OR_RETURN(RunSamples after, LoadRunSamples(after_, unit_, batch_size_, bench_, sample_unit_, nullptr));
    ValidationResult result = Validate(before, after, options);
    const MetricComparison& m = result.metrics.at(0);
    if (m.verdict == Verdict::kInsufficientData) {
      return ErrStatus("cannot measure " + m.metric + " for a card: " + m.reason);
    }
    KnowledgeCard card;
    card.scene = scene_.empty() ? std::filesystem::path(after_).filename().string() + " (one sample = one " + after.unit + ")" : scene_;
    double saved_ns = 0;
    card.bottleneck = bottleneck_.empty() ? InferBottleneck(before, after, &saved_ns) : bottleneck_;
    if (card.bottleneck.empty()) card.bottleneck = "unknown (give --bottleneck)";
    card.fix = fix_.empty() ? "not stated (give --fix)" : fix_;
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
    ASSIGN_OR_RETURN(std::unique_ptr<BaselineStore> store, BaselineStore::Open(db));
    ASSIGN_OR_RETURN(card.id, store->SaveCard(card));
    std::string text = CardToMarkdown(card);
    if (bottleneck_.empty() && saved_ns > 0) {
      text += "\nThe bottleneck was inferred, not given: " + card.bottleneck.substr(3) + " lost the most time per " + after.unit +
              " (" + FormatValue(saved_ns, "ns") + "; op time includes child ops, and an op replaced by another counts as "
              "removed). Check it, and pass --bottleneck with the finding's type so that suggest can match this card.\n";
    }
    return WriteOutput(output_, text);
  }

 private:
  std::string before_, after_, scene_, bottleneck_, fix_, output_, db_, bench_;
  std::string metric_ = "latency", test_ = "auto", unit_ = "step", sample_unit_ = "ms";
  std::string min_effect_text_;
  double alpha_ = 0.05, min_effect_ = 0.02, batch_size_ = 0;
  uint64_t seed_ = 0x5eed;
};

}  // namespace

std::unique_ptr<Command> NewCardCommand() { return std::make_unique<CardCommand>(); }

}  // namespace aiprof
