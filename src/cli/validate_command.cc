// aiprof validate: before/after statistics with a verdict per metric
// (docs/validation.md). Also defines the input loader the baseline and card
// commands share (declared where used, as commands.cc declares commands).
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "src/analysis/summary/summary.h"
#include "src/analysis/validation/baseline_store.h"
#include "src/analysis/validation/compare.h"
#include "src/analysis/validation/trace_samples.h"
#include "src/cli/command.h"
#include "src/cli/run_samples_loader.h"
#include "src/report/pdf/html_to_pdf.h"
#include "src/importers/common/importer_registry.h"
#include "src/importers/samples/sample_file.h"
#include "src/report/summary_report.h"
#include "src/report/validation/validation_report.h"

namespace aiprof {

// Reads `path` (a trace in any importable format, or a benchmark result
// file) into samples; fills `summary_json` with the trace summary when asked.
// unit: traces, "step" or a span name; batch_size: items per sample (0 =
// unknown); bench: which benchmark of a result file; sample_unit: unit of
// bare numbers in result files.
// Leading warm-up steps of traces: -1 detects them (LeadingWarmup).
StatusOr<RunSamples> LoadRunSamples(const std::string& path, const std::string& unit, double batch_size,
                                    const std::string& bench, const std::string& sample_unit, std::string* summary_json,
                                    int warmup_steps) {
  struct {
    const std::string& unit;
    double batch_size;
    const std::string& bench;
    const std::string& sample_unit;
  } o{unit, batch_size, bench, sample_unit};
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return ErrStatus(path + ": no such file or folder");
  if (std::filesystem::is_regular_file(path, ec) && LooksLikeSampleFile(path)) {
    if (o.unit != "step") return ErrStatus(path + ": --unit selects spans in traces; this is a benchmark result file");
    SampleFileOptions so;
    so.benchmark = o.bench;
    so.default_unit = o.sample_unit;
    ASSIGN_OR_RETURN(SampleFile f, ReadSampleFile(path, so));
    RunSamples r;
    r.label = f.benchmark.empty() ? path : path + " [" + f.benchmark + "]";
    r.source_kind = f.format;
    r.unit = f.format == "google-benchmark" ? "repetition" : f.format == "hyperfine" ? "run" : "sample";
    r.latency_ns = std::move(f.latency_ns);
    r.throughput = std::move(f.items_per_second);
    r.items_per_sample = o.batch_size;
    r.quality = std::move(f.quality);
    r.device_util_missing = "a benchmark result file carries no device utilization";
    if (summary_json) *summary_json = "{}";
    return r;
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Trace> trace, ImportTrace(path));
  TraceSampleOptions to;
  to.unit = o.unit;
  to.items_per_sample = o.batch_size;
  to.warmup_steps = warmup_steps;
  ASSIGN_OR_RETURN(RunSamples r, SamplesFromTrace(*trace, path, to));
  if (summary_json) *summary_json = SummaryToJson(*trace, ComputeSummary(*trace), SummaryReportOptions{});
  return r;
}

// "2%" -> 0.02, "0.02" -> 0.02; returns an error text for CLI11 validators ("" when valid).
std::string ParseValidationFraction(const std::string& s, double* out) {
  std::string body = s;
  bool percent = !body.empty() && body.back() == '%';
  if (percent) body.pop_back();
  char* end = nullptr;
  double v = std::strtod(body.c_str(), &end);
  if (body.empty() || end != body.c_str() + body.size() || !std::isfinite(v) || v < 0) {
    return "'" + s + "' is not a non-negative number or percentage";
  }
  *out = percent ? v / 100 : v;
  return "";
}

namespace {

struct RunInputOptions {
  std::string unit = "step";
  double batch_size = 0;
  std::string bench;
  std::string sample_unit = "ms";
};

StatusOr<std::string> ReportFormat(const std::string& format, const std::string& output) {
  if (!format.empty()) return format;
  if (output.empty() || output == "-") return std::string("text");
  if (std::filesystem::path(output).extension() == ".txt") return std::string("text");
  std::string ext = std::filesystem::path(output).extension().string();
  if (ext == ".md" || ext == ".markdown") return std::string("md");
  if (ext == ".html" || ext == ".htm") return std::string("html");
  if (ext == ".json") return std::string("json");
  if (ext == ".pdf") return std::string("pdf");
  return ErrStatus(output + ": cannot tell the report format from the extension; use .txt, .md, .html, .json or .pdf, or --format");
}

class ValidateCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("validate", "Decide with statistics whether a change improved or regressed performance");
    CLI::Option_group* before = sub->add_option_group("before", "What to compare against (one of)");
    before->add_option("--before", before_, "Trace or benchmark result file measured before the change");
    before->add_option("--baseline", baseline_, "Stored baseline of this service (aiprof set-baseline)");
    before->require_option(1);
    sub->add_option("--after", after_, "Trace or benchmark result file measured after the change")->required();
    sub->add_option("--metrics", metrics_, "Comma-separated: latency, p50, p99 (any pNN), throughput, device_util, accuracy, quality:NAME")
        ->delimiter(',');
    sub->add_option("--test", test_, "welch, mannwhitney, bootstrap or auto")
        ->check(CLI::IsMember({"auto", "welch", "mannwhitney", "bootstrap"}));
    sub->add_option("--alpha", alpha_, "Significance level")->check(CLI::Range(1e-9, 0.5));
    sub->add_option("--min-effect", min_effect_text_, "Smallest relative change that counts, e.g. 2% or 0.02")
        ->check([this](const std::string& s) { return ParseValidationFraction(s, &min_effect_); });
    sub->add_option("--unit", input_.unit, "Traces: 'step' (ProfilerStep#N) or the name of the spans that are samples (e.g. request)");
    sub->add_option("--warmup-steps", warmup_steps_,
                    "Traces with --unit step: leading warm-up steps to leave out (default: detect leading outliers; 0 keeps all)")
        ->check(CLI::NonNegativeNumber);
    sub->add_option("--batch-size", input_.batch_size, "Items per sample, for throughput in items/s")->check(CLI::PositiveNumber);
    sub->add_option("--bench", input_.bench, "Benchmark files: which hyperfine command or Google Benchmark name");
    sub->add_option("--sample-unit", input_.sample_unit, "Benchmark files: unit of bare numbers (ns, us, ms, s)")
        ->check(CLI::IsMember({"ns", "us", "ms", "s"}));
    sub->add_option("--resamples", resamples_, "Bootstrap resamples")->check(CLI::Range(100, 1000000));
    sub->add_option("--seed", seed_, "Bootstrap seed (results are reproducible for a given seed)");
    sub->add_option("-o,--output", output_, "Report file: .md, .html, .json or .txt (written atomically); default text to standard output");
    sub->add_option("--format", format_, "text, md, html, json or pdf (default: from the -o extension, text without -o)")->check(CLI::IsMember({"text", "md", "html", "json", "pdf"}));
    sub->add_option("--service", service_, "Keep this validation in the service's history (implied by --baseline)");
    sub->add_option("--db", db_, "Baseline database (default $XDG_DATA_HOME/aiprof/baselines.db)");
    sub->add_flag("--alert-on-regression", alert_,
                  "On a significant regression print a one-line alert to standard error and exit with status 3");
    return sub;
  }

  Status Run() override {
    ValidationOptions options;
    if (!metrics_.empty()) options.metrics = metrics_;
    RETURN_IF_ERROR(CheckMetricNames(options.metrics));
    ASSIGN_OR_RETURN(options.test, ParseTestKind(test_));
    options.alpha = alpha_;
    options.min_effect = min_effect_;
    options.bootstrap_resamples = resamples_;
    options.seed = seed_;
    ASSIGN_OR_RETURN(std::string format, ReportFormat(format_, output_));
    if (format == "pdf") RETURN_IF_ERROR(FindChromium().status());  // fail before the work

    std::unique_ptr<BaselineStore> store;
    StoredBaseline baseline;
    RunSamples before;
    if (!baseline_.empty()) {
      ASSIGN_OR_RETURN(store, OpenStore());
      ASSIGN_OR_RETURN(baseline, store->LatestBaseline(baseline_));
      before = baseline.samples;
      if (input_.batch_size > 0) before.items_per_sample = input_.batch_size;
    } else {
      ASSIGN_OR_RETURN(before, LoadRunSamples(before_, input_.unit, input_.batch_size, input_.bench, input_.sample_unit, nullptr, warmup_steps_));
    }
    ASSIGN_OR_RETURN(RunSamples after, LoadRunSamples(after_, input_.unit, input_.batch_size, input_.bench, input_.sample_unit, nullptr, warmup_steps_));
    ValidationResult result = Validate(before, after, options);

    std::string json = ValidationToJson(result);
    if (format == "pdf") {
      if (output_.empty() || output_ == "-") return ErrStatus("--format pdf needs -o FILE.pdf");
      RETURN_IF_ERROR(HtmlToPdf(ValidationToHtml(result), output_));
    } else {
      std::string text = format == "json"   ? json
                         : format == "html" ? ValidationToHtml(result)
                         : format == "text" ? ValidationToText(result)
                                            : ValidationToMarkdown(result);
      RETURN_IF_ERROR(WriteOutput(output_, text));
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
  StatusOr<std::unique_ptr<BaselineStore>> OpenStore() {
    std::string path = db_;
    if (path.empty()) {
      ASSIGN_OR_RETURN(path, DefaultBaselineDbPath());
    }
    return BaselineStore::Open(path);
  }

  std::string before_, baseline_, after_, output_, format_, service_, db_;
  std::vector<std::string> metrics_;
  std::string test_ = "auto";
  double alpha_ = 0.05;
  std::string min_effect_text_;
  double min_effect_ = 0.02;
  int resamples_ = 10000;
  uint64_t seed_ = 0x5eed;
  RunInputOptions input_;
  bool alert_ = false;
  int warmup_steps_ = -1;
  int exit_code_ = kExitOk;
};

}  // namespace

std::unique_ptr<Command> NewValidateCommand() { return std::make_unique<ValidateCommand>(); }

}  // namespace aiprof
