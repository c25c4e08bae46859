#include <CLI/CLI.hpp>

#include "src/cli/command.h"
#include "src/cli/diagnosis_pipeline.h"
#include "src/report/diagnosis/diagnosis_report.h"

namespace aiprof {
namespace {

std::string Render(const std::string& format, const DiagnosisReport& report, bool color) {
  if (format == "md") return DiagnosisToMarkdown(report);
  if (format == "json") return DiagnosisToJson(report);
  if (format == "html") return DiagnosisToHtml(report);
  return DiagnosisToText(report, color);
}

class DiagnoseCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("diagnose", "Bottlenecks, root causes, confidence and impact, from the rule library");
    AddDiagnosisFlags(sub, &in_);
    return sub;
  }

  Status Run() override {
    ASSIGN_OR_RETURN(std::string format, ReportFormat(in_));
    ASSIGN_OR_RETURN(std::unique_ptr<DiagnosisRun> run, RunDiagnosis(in_));
    DiagnosisReport report{in_.input, &run->metrics, &run->diagnosis, nullptr, nullptr};
    return WriteOutput(in_.output, Render(format, report, UseColor(in_)));
  }

 private:
  DiagnosisInputs in_;
};

class SuggestCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("suggest", "Fixes for each finding, with expected gain and risk, filtered by target and constraints");
    AddDiagnosisFlags(sub, &in_);
    sub->add_option("--target", options_.target, "latency, throughput or memory")
        ->check(CLI::IsMember({"latency", "throughput", "memory"}));
    sub->add_option("--constraints", constraints_, "e.g. \"memory<3GB,precision_loss<1%,effort<=medium\"");
    return sub;
  }

  Status Run() override {
    ASSIGN_OR_RETURN(std::string format, ReportFormat(in_));
    ASSIGN_OR_RETURN(options_.constraints, ParseConstraints(constraints_));
    ASSIGN_OR_RETURN(std::unique_ptr<DiagnosisRun> run, RunDiagnosis(in_));
    SuggestResult suggestions = Suggest(run->diagnosis, run->metrics, options_);
    DiagnosisReport report{in_.input, &run->metrics, &run->diagnosis, &suggestions, &options_};
    return WriteOutput(in_.output, Render(format, report, UseColor(in_)));
  }

 private:
  DiagnosisInputs in_;
  SuggestOptions options_;
  std::string constraints_;
};

}  // namespace

std::unique_ptr<Command> NewDiagnoseCommand() { return std::make_unique<DiagnoseCommand>(); }
std::unique_ptr<Command> NewSuggestCommand() { return std::make_unique<SuggestCommand>(); }

}  // namespace aiprof
