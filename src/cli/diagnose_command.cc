// `aiprof diagnose` and `aiprof suggest`: the session's diagnosis and
// suggestions, written in the format asked for.
#include <CLI/CLI.hpp>

#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/render/renderers.h"
#include "src/report/diagnosis/diagnosis_report.h"
#include "src/report/diagnosis/draft_rule.h"
#include "src/report/pdf/html_to_pdf.h"
#include "src/report/suggestions/suggestions_doc.h"

namespace aiprof {
namespace {

// The diagnosis document (DiagnosisToDocument): a machine form (yaml) and tables.
constexpr DocumentKind kDiagnosisDocument = {.yaml = true, .tables = true};

class DiagnoseCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("diagnose", "Bottlenecks, root causes, confidence and impact, from the rule library");
    flags_.Add(sub);
    out_.AddDocument(sub, kDiagnosisDocument, "Write the report here (atomically; format from the extension)",
                     {render::PdfFormat()});
    sub->add_option("--draft-rule", draft_rule_,
                    "Also write a YAML rule template with this trace's measured metrics filled in (atomically)");
    return sub;
  }

  Status Run() override {
    ASSIGN_OR_RETURN(std::string format, out_.Resolve());
    if (format == "pdf") RETURN_IF_ERROR(FindChromium().status());  // fail before the work
    ASSIGN_OR_RETURN(std::unique_ptr<AnalysisSession> session, flags_.in.Open(flags_.Options()));
    WarnImportDiagnostics(session->trace());
    ASSIGN_OR_RETURN(const Diagnosis* diagnosis, session->diagnosis());
    if (!draft_rule_.empty()) {
      RETURN_IF_ERROR(WriteOutput(draft_rule_, DraftRuleYaml(flags_.in.input, *diagnosis, session->metrics())));
    }
    DiagnosisReport report{flags_.in.input, &session->metrics(), diagnosis, nullptr, nullptr};
    return out_.WriteDocument(DiagnosisToDocument(report), format);
  }

 private:
  DiagnosisFlags flags_;
  OutputFlags out_;
  std::string draft_rule_;
};

class SuggestCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("suggest", "Fixes for each finding, with expected gain and risk, filtered by target and constraints");
    flags_.Add(sub);
    // yaml and suggestions-json are the suggestions' own schema (docs/suggestions-schema.md).
    out_.AddDocument(sub, kDiagnosisDocument, "Write the report here (atomically; format from the extension)",
                     {render::PdfFormat(), {"suggestions-json", {}}});
    target_.Add(sub, &flags_.session.suggest);
    AddDbFlag(sub, &flags_.session.db, "Knowledge-card database (default: the baseline database in the user's data dir)");
    return sub;
  }

  Status Run() override {
    ASSIGN_OR_RETURN(std::string format, out_.Resolve());
    if (format == "pdf") RETURN_IF_ERROR(FindChromium().status());  // fail before the work
    RETURN_IF_ERROR(target_.Apply(&flags_.session.suggest));
    ASSIGN_OR_RETURN(std::unique_ptr<AnalysisSession> session, flags_.in.Open(flags_.Options()));
    WarnImportDiagnostics(session->trace());
    ASSIGN_OR_RETURN(const Diagnosis* diagnosis, session->diagnosis());
    ASSIGN_OR_RETURN(const SuggestResult* suggestions, session->suggestions());
    DiagnosisReport report{flags_.in.input, &session->metrics(), diagnosis, suggestions,
                           &session->options().suggest};
    if (format == "yaml") return WriteOutput(out_.output, SuggestionsToYaml(report));
    if (format == "suggestions-json") return WriteOutput(out_.output, SuggestionsToJson(report));
    return out_.WriteDocument(DiagnosisToDocument(report), format);
  }

 private:
  DiagnosisFlags flags_;
  OutputFlags out_;
  TargetFlags target_;
};

}  // namespace

std::unique_ptr<Command> NewDiagnoseCommand() { return std::make_unique<DiagnoseCommand>(); }
std::unique_ptr<Command> NewSuggestCommand() { return std::make_unique<SuggestCommand>(); }

}  // namespace aiprof
