// aiprof validate: before/after statistics with a verdict per metric
// (docs/validation.md).
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "src/analysis/summary/summary.h"
#include "src/analysis/validation/baseline_store.h"
#include "src/analysis/validation/compare.h"
#include "src/analysis/validation/trace_samples.h"
#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/report/pdf/html_to_pdf.h"
#include "src/report/validation/validation_report.h"
#include "src/session/prediction_check.h"
#include "src/session/run_loader.h"

namespace aiprof {

namespace {

class ValidateCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("validate", "Decide with statistics whether a change improved or regressed performance");
    CLI::Option_group* before = sub->add_option_group("before", "What to compare against (one of)");
    before->add_option("--before", before_,
                       "Trace or benchmark result file measured before the change; give it once per run (separate "
                       "processes) to make the run the unit, at least 3 a side");
    before->add_option("--baseline", baseline_, "Stored baseline of this service (aiprof set-baseline)");
    before->require_option(1);
    sub->add_option("--after", after_,
                    "Trace or benchmark result file measured after the change; once per run, like --before")
        ->required();
    sub->add_option("--metrics", metrics_, "Comma-separated: latency, p50, p99 (any pNN), throughput, device_util, accuracy, quality:NAME")
        ->delimiter(',');
    stats_.Add(sub, /*resamples_flag=*/true);
    AddRunInputFlags(sub, &input_, /*warmup_steps=*/true);
    out_.Add(sub, {render::TextFormat(), render::MarkdownFormat(), render::HtmlFormat(), render::JsonFormat(),
                   render::PdfFormat()},
             "Report file: .md, .html, .json, .txt or .pdf (written atomically); default text to standard output");
    AddServiceFlag(sub, &service_, "Keep this validation in the service's history (implied by --baseline)");
    AddDbFlag(sub, &db_);
    AddFixIdFlag(sub, &fix_,
                    "The suggestion id the after run applied (default: matched by the finding that went away); "
                    "shows its prediction against the measurement");
    sub->add_flag("--alert-on-regression", alert_,
                  "On a significant regression print a one-line alert to standard error and exit with status 3");
    return sub;
  }

  Status Run() override {
    ValidationOptions options;
    if (!metrics_.empty()) options.metrics = metrics_;
    RETURN_IF_ERROR(CheckMetricNames(options.metrics));
    RETURN_IF_ERROR(stats_.Apply(&options));
    ASSIGN_OR_RETURN(std::string format, out_.Resolve());
    if (format == "pdf") RETURN_IF_ERROR(FindChromium().status());  // fail before the work

    std::unique_ptr<BaselineStore> store;
    StoredBaseline baseline;
    RunSamples before;
    std::unique_ptr<Trace> before_trace;
    if (!baseline_.empty()) {
      ASSIGN_OR_RETURN(store, OpenStore());
      ASSIGN_OR_RETURN(baseline, store->LatestBaseline(baseline_));
      before = baseline.samples;
      if (input_.batch_size > 0) before.items_per_sample = input_.batch_size;
    } else {
      ASSIGN_OR_RETURN(before, LoadSide(before_, &before_trace));
    }
    std::unique_ptr<Trace> after_trace;
    ASSIGN_OR_RETURN(RunSamples after, LoadSide(after_, &after_trace));
    ValidationResult result = Validate(before, after, options);
    if (before_trace && after_trace) {
      // The prediction is made from the first before run and checked against
      // the first after run's trace; with several runs every run's figure is
      // pooled (PoolRuns below), as validate's verdict is by runs.
      SessionOptions so;
      so.db = db_;
      std::unique_ptr<AnalysisSession> b = AnalysisSession::ForTrace(*before_trace, so);
      std::unique_ptr<AnalysisSession> a = AnalysisSession::ForTrace(*after_trace, so);
      ASSIGN_OR_RETURN(result.prediction, CheckPrediction(*b, *a, fix_));
      if (result.prediction && (before_.size() > 1 || after_.size() > 1)) {
        ASSIGN_OR_RETURN(std::optional<PredictionCheck> pooled, PoolRuns(*result.prediction, *a, so, &result.sample_notes));
        if (pooled) {
          result.prediction = std::move(pooled);
        } else {
          result.sample_notes.push_back("the prediction check uses the first traces of each side (" + before_.front() +
                                        ", " + after_.front() + "): some runs are result files, not traces");
        }
      }
    } else if (!fix_.empty()) {
      return ErrStatus("--fix-id needs traces before and after (a prediction is made from the before trace)");
    }

    std::string json = ValidationToJson(result);
    if (format == "pdf") {
      if (out_.ToStdout()) return ErrStatus("--format pdf needs -o FILE.pdf");
      RETURN_IF_ERROR(HtmlToPdf(ValidationToHtml(result), out_.output));
    } else {
      std::string text = format == "json"   ? json
                         : format == "html" ? ValidationToHtml(result)
                         : format == "text" ? ValidationToText(result)
                                            : ValidationToMarkdown(result);
      RETURN_IF_ERROR(WriteOutput(out_.output, text));
    }

    std::string service = !baseline_.empty() ? baseline_ : service_;
    bool regression = result.overall == Verdict::kRegressed;
    if (!service.empty()) {
      if (!store) {
        ASSIGN_OR_RETURN(store, OpenStore());
      }
      ValidationRecord record;
      record.service = service;
      record.baseline_id = baseline.id;
      record.before_label = result.before_label;
      record.after_label = result.after_label;
      record.overall = VerdictId(result.overall);
      record.alert = regression;
      record.headline = ValidationHeadline(result);
      record.report_json = json;
      RETURN_IF_ERROR(store->SaveValidation(record).status());
    }
    if (alert_ && regression) {
      std::string line = ValidationHeadline(result);
      if (!service.empty()) line += "; service " + service;
      std::fprintf(stderr, "%s\n", line.c_str());
      std::fflush(stderr);
      exit_code_ = kExitRegression;
    }
    return OkStatus();
  }

  int SuccessExitCode() const override { return exit_code_; }

 private:
  // One side: each file loaded as a run, merged (MergeRuns); the first run's
  // trace kept for the prediction check.
  StatusOr<RunSamples> LoadSide(const std::vector<std::string>& paths, std::unique_ptr<Trace>* first_trace) {
    std::vector<RunSamples> runs;
    for (const std::string& path : paths) {
      ASSIGN_OR_RETURN(LoadedRun run, LoadRun(path, input_));
      if (!*first_trace) *first_trace = std::move(run.trace);
      runs.push_back(std::move(run.samples));
    }
    return MergeRuns(std::move(runs));
  }

  // Several runs a side: the first pair's check names the fix; every other
  // before run predicts it from its own trace, every other after run is
  // measured (each trace loaded again, one at a time: LoadSide kept only the
  // first), and PoolPredictionRuns makes the runs the unit.
  // nullopt when a run is a result file (no trace to predict from).
  StatusOr<std::optional<PredictionCheck>> PoolRuns(const PredictionCheck& first, AnalysisSession& first_after,
                                                    const SessionOptions& so, std::vector<std::string>* notes) {
    std::vector<PredictionCheck> before{first};
    std::vector<std::string> not_suggested;
    std::vector<MeanInterval> after{SteadyStepWallTime(first_after)};
    for (size_t i = 1; i < before_.size(); ++i) {
      ASSIGN_OR_RETURN(LoadedRun run, LoadRun(before_[i], input_));
      if (!run.trace) return std::optional<PredictionCheck>();
      std::unique_ptr<AnalysisSession> b = AnalysisSession::ForTrace(*run.trace, so);
      bool suggested = true;
      ASSIGN_OR_RETURN(std::optional<PredictionCheck> c, PredictFixForRun(*b, first_after, first.fix_id, &suggested));
      if (!c) return ErrStatus(before_[i] + ": no steady step to predict " + first.fix_id + " from");
      if (!suggested) not_suggested.push_back(before_[i]);
      before.push_back(std::move(*c));
    }
    if (!not_suggested.empty()) {
      std::string runs;
      for (const std::string& r : not_suggested) runs += (runs.empty() ? "" : ", ") + r;
      notes->push_back("the prediction of " + first.fix_id + " pools every before run; " +
                       std::to_string(not_suggested.size()) + " of " + std::to_string(before_.size()) +
                       " do not suggest it (its finding did not fire there) and predict no change: " + runs);
    }
    for (size_t i = 1; i < after_.size(); ++i) {
      ASSIGN_OR_RETURN(LoadedRun run, LoadRun(after_[i], input_));
      if (!run.trace) return std::optional<PredictionCheck>();
      std::unique_ptr<AnalysisSession> a = AnalysisSession::ForTrace(*run.trace, so);
      const MeanInterval m = SteadyStepWallTime(*a);
      if (m.n == 0) return ErrStatus(after_[i] + ": no steady step to measure the prediction of " + first.fix_id + " by");
      after.push_back(m);
    }
    return std::optional<PredictionCheck>(PoolPredictionRuns(before, after));
  }

  StatusOr<std::unique_ptr<BaselineStore>> OpenStore() {
    std::string path = db_;
    if (path.empty()) {
      ASSIGN_OR_RETURN(path, DefaultBaselineDbPath());
    }
    return BaselineStore::Open(path);
  }

  std::vector<std::string> before_, after_;
  std::string baseline_, service_, db_, fix_;
  std::vector<std::string> metrics_;
  StatsFlags stats_;
  RunInputs input_;
  OutputFlags out_;
  bool alert_ = false;
  int exit_code_ = kExitOk;
};

}  // namespace

std::unique_ptr<Command> NewValidateCommand() { return std::make_unique<ValidateCommand>(); }

}  // namespace aiprof
