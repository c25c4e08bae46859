#include <CLI/CLI.hpp>

#include <map>
#include <optional>

#include <sys/stat.h>

#include "src/analysis/validation/baseline_store.h"
#include "src/analysis/validation/knowledge_card.h"
#include "src/cli/command.h"
#include "src/cli/diagnosis_pipeline.h"
#include "src/report/pdf/html_to_pdf.h"
#include "src/report/suggestions/suggestions_doc.h"
#include "src/report/diagnosis/diagnosis_report.h"
#include "src/report/diagnosis/draft_rule.h"

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
    sub->add_option("--draft-rule", draft_rule_,
                    "Also write a YAML rule template with this trace's measured metrics filled in (atomically)");
    return sub;
  }

  Status Run() override {
    ASSIGN_OR_RETURN(std::string format, ReportFormat(in_));
    if (format == "yaml" || format == "suggestions-json") {
      return ErrStatus("--format " + format + " is the machine-readable suggestion file: use `aiprof suggest`");
    }
    if (format == "pdf") RETURN_IF_ERROR(FindChromium().status());
    ASSIGN_OR_RETURN(std::unique_ptr<DiagnosisRun> run, RunDiagnosis(in_));
    if (!draft_rule_.empty()) {
      RETURN_IF_ERROR(WriteOutput(draft_rule_, DraftRuleYaml(in_.input, run->diagnosis, run->metrics)));
    }
    DiagnosisReport report{in_.input, &run->metrics, &run->diagnosis, nullptr, nullptr};
    if (format == "pdf") return HtmlToPdf(DiagnosisToHtml(report), in_.output);
    return WriteOutput(in_.output, Render(format, report, UseColor(in_)));
  }

 private:
  DiagnosisInputs in_;
  std::string draft_rule_;
};

class SuggestCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("suggest", "Fixes for each finding, with expected gain and risk, filtered by target and constraints");
    AddDiagnosisFlags(sub, &in_);
    sub->add_option("--target", options_.target, "latency, throughput or memory")
        ->check(CLI::IsMember({"latency", "throughput", "memory"}));
    sub->add_option("--constraints", constraints_, "e.g. \"memory<3GB,precision_loss<1%,effort<=medium\"");
    sub->add_option("--db", db_, "Knowledge-card database (default: the baseline database in the user's data dir)");
    return sub;
  }

  Status Run() override {
    ASSIGN_OR_RETURN(std::string format, ReportFormat(in_));
    if (format == "pdf") RETURN_IF_ERROR(FindChromium().status());  // fail before the work
    ASSIGN_OR_RETURN(options_.constraints, ParseConstraints(constraints_));
    ASSIGN_OR_RETURN(std::unique_ptr<DiagnosisRun> run, RunDiagnosis(in_));
    ASSIGN_OR_RETURN(SuggestResult suggestions, SuggestWithHistory(*run, options_, db_));
    DiagnosisReport report{in_.input, &run->metrics, &run->diagnosis, &suggestions, &options_};
    if (format == "yaml") return WriteOutput(in_.output, SuggestionsToYaml(report));
    if (format == "pdf") return HtmlToPdf(DiagnosisToHtml(report), in_.output);
    if (format == "suggestions-json") return WriteOutput(in_.output, SuggestionsToJson(report));
    return WriteOutput(in_.output, Render(format, report, UseColor(in_)));
  }

 private:
  DiagnosisInputs in_;
  SuggestOptions options_;
  std::string constraints_;
  std::string db_;
};

}  // namespace

std::unique_ptr<Command> NewDiagnoseCommand() { return std::make_unique<DiagnoseCommand>(); }
std::unique_ptr<Command> NewSuggestCommand() { return std::make_unique<SuggestCommand>(); }

}  // namespace aiprof
