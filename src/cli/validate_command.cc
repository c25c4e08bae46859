// aiprof validate: before/after statistics with a verdict per metric
// (docs/validation.md).
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "src/analysis/summary/summary.h"
#include "src/analysis/validation/baseline_store.h"
#include "src/analysis/validation/compare.h"
#include "src/analysis/validation/trace_identity.h"
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
    scenario_.Add(sub,
                  "The fix the after run applied, stated as a what-if scenario (docs/whatif.md) instead of a "
                  "suggestion id: shows the before run's replay of it against the measurement (corrected by the "
                  "past cases of that scenario in the knowledge database: --db, else the default one)");
    AddDevicesFileFlag(sub, &devices_);
    sub->add_flag("--alert-on-regression", alert_,
                  "On a significant regression print a one-line alert to standard error and exit with status 3");
    return sub;
  }

  Status Run() override {
    ValidationOptions options;
    if (!metrics_.empty()) options.metrics = metrics_;
    RETURN_IF_ERROR(AsUsage(CheckMetricNames(options.metrics)));
    RETURN_IF_ERROR(stats_.Apply(&options));
    ASSIGN_OR_RETURN(std::string format, out_.Resolve());
    if (format == "pdf" && out_.ToStdout()) return UsageStatus("--format pdf needs -o FILE.pdf");
    if (format == "pdf") RETURN_IF_ERROR(FindChromium().status());  // fail before the work
    bool judge_on_mean = false;
    RETURN_IF_ERROR(scenario_.Resolve(&judge_on_mean));  // before the work

    // Each run given once: the same file twice on one side (by path or by
    // content) would count one measurement as several independent runs.
    std::vector<std::string> identities;
    RETURN_IF_ERROR(CheckDistinctRuns("--before", before_, &identities));
    RETURN_IF_ERROR(CheckDistinctRuns("--after", after_, &identities));

    std::unique_ptr<BaselineStore> store;
    StoredBaseline baseline;
    // Each run is imported once. With traces on both sides the first pair
    // names the fix (CheckPrediction); every later run's trace adds its
    // prediction (before) or measurement (after) while it is loaded, and the
    // runs are pooled (PoolPredictionRuns), as the verdict is by runs.
    std::vector<RunSamples> before_runs, after_runs;
    std::unique_ptr<Trace> before_trace, after_trace;
    if (!baseline_.empty()) {
      ASSIGN_OR_RETURN(store, OpenStore());
      ASSIGN_OR_RETURN(baseline, store->LatestBaseline(baseline_));
      before_runs.push_back(baseline.samples);
      if (input_.batch_size > 0) before_runs.back().items_per_sample = input_.batch_size;
    } else {
      ASSIGN_OR_RETURN(LoadedRun run, LoadRun(before_.front(), input_));
      before_runs.push_back(std::move(run.samples));
      before_trace = std::move(run.trace);
    }
    {
      ASSIGN_OR_RETURN(LoadedRun run, LoadRun(after_.front(), input_));
      after_runs.push_back(std::move(run.samples));
      after_trace = std::move(run.trace);
    }
    if (!fix_.empty() && !(before_trace && after_trace)) {
      return ErrStatus("--fix-id needs traces before and after (a prediction is made from the before trace)");
    }
    if (scenario_.given() && !(before_trace && after_trace)) {
      return ErrStatus("--scenario needs traces before and after (the prediction is replayed on the before trace)");
    }
    SessionOptions so;
    so.db = db_;
    // Past cases of these very inputs (a card of this pair) do not correct
    // the prediction being checked against them.
    so.history_checked_inputs = identities;
    RunPool pool;
    pool.mean = judge_on_mean;
    pool.scenario = scenario_.scenario;
    pool.devices_file = devices_.devices_file;
    if (scenario_.given()) {
      ASSIGN_OR_RETURN(pool.cards, AllCards(db_));  // "": the default database, as the suggestions' history
    }
    std::unique_ptr<AnalysisSession> first_before, first_after;
    std::optional<PredictionCheck> check;
    if (before_trace && after_trace) {
      first_before = AnalysisSession::ForTrace(*before_trace, so);
      first_after = AnalysisSession::ForTrace(*after_trace, so);
      ASSIGN_OR_RETURN(check, pool.Check(*first_before, *first_after, fix_));
    }
    if (check) {
      pool.before.push_back(*check);
      pool.after.push_back(SteadyStepTime(*first_after, *check));
    }
    for (size_t i = 1; i < before_.size(); ++i) {
      ASSIGN_OR_RETURN(LoadedRun run, LoadRun(before_[i], input_));
      if (check) RETURN_IF_ERROR(pool.AddBefore(before_[i], run.trace.get(), *first_after, *check, so));
      before_runs.push_back(std::move(run.samples));
    }
    for (size_t i = 1; i < after_.size(); ++i) {
      ASSIGN_OR_RETURN(LoadedRun run, LoadRun(after_[i], input_));
      if (check) RETURN_IF_ERROR(pool.AddAfter(after_[i], run.trace.get(), *check, so));
      after_runs.push_back(std::move(run.samples));
    }
    ValidationResult result = Validate(MergeRuns(std::move(before_runs)), MergeRuns(std::move(after_runs)), options);
    if (scenario_.given() && !check) {
      result.sample_notes.push_back("no prediction check for --scenario: " + before_.front() + " or " + after_.front() +
                                    " has no steady step");
    }
    // Why no fix was inferred (how one was: the check's matched_by).
    if (!check && !pool.why_not.empty()) result.sample_notes.push_back(pool.why_not + "; name it with --fix-id");
    result.prediction = std::move(check);
    if (result.prediction && (before_.size() > 1 || after_.size() > 1)) {
      if (pool.complete) {
        result.prediction = PoolPredictionRuns(pool.before, pool.after);
        if (!pool.not_suggested.empty()) {
          std::string runs;
          for (const std::string& r : pool.not_suggested) runs += (runs.empty() ? "" : ", ") + r;
          result.sample_notes.push_back(
              "the prediction of " + RunPool::Name(*result.prediction) + " pools every before run; " +
              std::to_string(pool.not_suggested.size()) + " of " + std::to_string(before_.size()) +
              " do not suggest it (its finding did not fire there) and predict no change: " + runs);
        }
      } else {
        result.sample_notes.push_back("the prediction check uses the first run of each side (" + before_.front() +
                                      ", " + after_.front() + "): some runs are result files, not traces");
      }
    }

    std::string json = ValidationToJson(result);
    if (format == "pdf") {
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
  // The prediction check's runs beyond the first pair (several runs a side):
  // each before run's prediction of the fix from its own trace (no change
  // where it does not suggest it), each after run's steady median (mean,
  // as the first pair's check: PredictionCheck::mean).
  // `complete` turns false when a run is a result file (no trace).
  struct RunPool {
    std::vector<PredictionCheck> before;
    std::vector<MeanInterval> after;
    std::vector<std::string> not_suggested;
    bool complete = true;
    // --scenario: every before run replays it (no run "does not suggest" it).
    std::string scenario, devices_file;
    bool mean = false;
    std::vector<KnowledgeCard> cards;

    // Why the first pair has no check when none was named or inferred.
    std::string why_not;

    StatusOr<std::optional<PredictionCheck>> Check(AnalysisSession& b, AnalysisSession& a, const std::string& fix_id) {
      if (scenario.empty()) return CheckPrediction(b, a, fix_id, &why_not);
      return CheckScenarioPrediction(b, a, scenario, mean, devices_file, cards);
    }

    Status AddBefore(const std::string& path, const Trace* trace, AnalysisSession& first_after,
                     const PredictionCheck& first, const SessionOptions& so) {
      const std::string& fix_id = first.fix_id;
      if (!trace) {
        complete = false;
        return OkStatus();
      }
      std::unique_ptr<AnalysisSession> b = AnalysisSession::ForTrace(*trace, so);
      bool suggested = true;
      std::optional<PredictionCheck> c;
      if (scenario.empty()) {
        ASSIGN_OR_RETURN(c, PredictFixForRun(*b, first_after, fix_id, first.mean, &suggested));
      } else {
        StatusOr<std::optional<PredictionCheck>> got = Check(*b, first_after, fix_id);
        if (!got.ok()) return ErrStatus(path + ": " + got.status().message());
        c = std::move(*got);
      }
      if (!c) return ErrStatus(path + ": no steady step to predict " + Name(first) + " from");
      if (c->step_period != first.step_period) {
        return ErrStatus(path + ": its prediction of " + Name(first) + " is on the step " +
                         (c->step_period ? "period" : "wall time") + ", the first before run's on the step " +
                         (first.step_period ? "period" : "wall time") + ": runs on two bases are not pooled");
      }
      if (!suggested) not_suggested.push_back(path);
      before.push_back(std::move(*c));
      return OkStatus();
    }
    static std::string Name(const PredictionCheck& c) { return c.fix_id.empty() ? c.fix_title : c.fix_id; }
    Status AddAfter(const std::string& path, const Trace* trace, const PredictionCheck& first,
                    const SessionOptions& so) {
      if (!trace) {
        complete = false;
        return OkStatus();
      }
      std::unique_ptr<AnalysisSession> a = AnalysisSession::ForTrace(*trace, so);
      const MeanInterval m = SteadyStepTime(*a, first);
      if (m.n == 0) return ErrStatus(path + ": no steady step to measure the prediction of " + Name(first) + " by");
      after.push_back(m);
      return OkStatus();
    }
  };

  // Fails when two of `paths` (one side's runs, named `flag`) are one file:
  // the same path once resolved, or the same content (InputIdentity, which
  // it appends to *identities).
  static Status CheckDistinctRuns(const char* flag, const std::vector<std::string>& paths,
                                  std::vector<std::string>* identities) {
    std::vector<std::string> canonical, ids;
    for (size_t i = 0; i < paths.size(); ++i) {
      std::error_code ec;
      std::filesystem::path c = std::filesystem::weakly_canonical(paths[i], ec);
      canonical.push_back(ec ? paths[i] : c.string());
      // An input that cannot be read is the loader's to report.
      StatusOr<std::string> read = InputIdentity(paths[i]);
      const std::string id = read.ok() ? *read : "";
      for (size_t j = 0; j < i; ++j) {
        if (canonical[j] == canonical[i] || (!id.empty() && ids[j] == id)) {
          return ErrStatus(std::string(flag) + " run " + std::to_string(i + 1) + " (" + paths[i] + ") is " +
                           (canonical[j] == canonical[i] ? "the same file as" : "a copy (same content) of") + " run " +
                           std::to_string(j + 1) + " (" + paths[j] +
                           "): give each run once; a repeated file is one measurement, not another run");
        }
      }
      ids.push_back(id);
    }
    for (const std::string& id : ids) {
      if (!id.empty()) identities->push_back(id);
    }
    return OkStatus();
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
  ScenarioFixFlags scenario_;
  AnalyzeOptions devices_;
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
