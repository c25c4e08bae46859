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
#include "src/session/validate_runs.h"

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
    out_.AddDocument(sub, {.yaml = false, .tables = true},
                     "Report file: .md, .html, .json, .txt, .csv or .pdf (written atomically); default text to "
                     "standard output",
                     {render::PdfFormat()});
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

    std::unique_ptr<BaselineStore> store;
    StoredBaseline baseline;
    ValidateRunsOptions vo;
    vo.validation = options;
    vo.inputs = input_;
    vo.session.db = db_;
    vo.prediction.fix_id = fix_;
    vo.prediction.mean = judge_on_mean;
    vo.prediction.scenario = scenario_.scenario;
    vo.prediction.devices_file = devices_.devices_file;
    if (scenario_.given()) {
      ASSIGN_OR_RETURN(vo.prediction.cards, AllCards(db_));  // "": the default database, as the suggestions' history
    }
    std::vector<ValidateRun> before, after;
    if (!baseline_.empty()) {
      ASSIGN_OR_RETURN(store, OpenStore());
      ASSIGN_OR_RETURN(baseline, store->LatestBaseline(baseline_));
      if (input_.batch_size > 0) baseline.samples.items_per_sample = input_.batch_size;
      before.push_back(ValidateRun::Samples(baseline_, baseline.samples));
    }
    for (const std::string& path : before_) before.push_back(ValidateRun::File(path));
    for (const std::string& path : after_) after.push_back(ValidateRun::File(path));
    ASSIGN_OR_RETURN(ValidationResult result, ValidateRuns(before, after, vo));

    const render::Document doc = ValidationToDocument(result);  // its machine form: ValidationToJson
    RETURN_IF_ERROR(out_.WriteDocument(doc, format));

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
      record.report_json = doc.machine_json;
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
