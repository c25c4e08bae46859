// `aiprof report IN [--before B] [--target ...] [--constraints ...] [--db PATH]
// -o analysis.html|report.pdf|report.md`: the one page a person reads first
// (src/report/page/report_data.h). One session serves the report, its
// validation and the views it embeds: each analysis runs once.
#include <CLI/CLI.hpp>

#include "src/analysis/validation/compare.h"
#include "src/analysis/validation/knowledge_card.h"
#include "src/analysis/validation/trace_identity.h"
#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/render/renderers.h"
#include "src/report/page/report_data.h"
#include "src/report/pdf/html_to_pdf.h"
#include "src/session/session.h"
#include "src/session/validate_runs.h"
#include "src/view/timeline/timeline_view.h"
#include "src/view/view_registry.h"

namespace aiprof {
namespace {

// The interactive views embedded in the HTML report, and the one drawn in
// print (the flame graph's SVG; a page cannot print a canvas timeline).
struct EmbeddedView {
  const char* view;
  const char* title;
  const char* format;
};
constexpr EmbeddedView kEmbeddedViews[] = {
    {"flame", "Flame graph", "html"},
};
// The timeline overview keeps this many slices in full detail (the rest as
// density bars): the report is read first and opened often.
inline constexpr size_t kReportTimelineSlices = 50'000;

// Renders each embedded view that exists; a view that fails is named in the
// report instead of failing the whole report.
void EmbedViews(AnalysisSession& session, const std::string& title, bool pdf, ReportData* data) {
  if (!pdf) {
    // The timeline shows the session's own diagnosis and gaps, not a second run.
    TimelineViewOptions options;
    options.layout.title = title;
    options.layout.max_detailed_slices = kReportTimelineSlices;
    std::string page;
    Status status = RenderTimelinePage(session, options, &page);
    if (status.ok()) {
      data->embedded_views.emplace_back("Timeline overview", std::move(page));
    } else {
      data->view_errors.emplace_back("Timeline overview", status.message());
    }
  }
  for (const EmbeddedView& e : kEmbeddedViews) {
    const ViewSpec* spec = FindView(e.view);
    const char* format = pdf && std::string_view(e.view) == "flame" ? "svg" : e.format;
    if (!spec || !HasFormat(*spec, format)) continue;
    if (pdf && std::string_view(format) != "svg") continue;
    ViewOptions options;
    options.format = format;
    options.title = title;
    ViewContext context{session, session.trace(), nullptr, options};
    StringViewSink sink;
    Status status = spec->render(context, &sink);
    if (!status.ok()) {
      data->view_errors.emplace_back(e.title, status.message());
      continue;
    }
    if (std::string_view(format) == "svg") {
      data->embedded_svgs.emplace_back(e.title, sink.str());
    } else {
      data->embedded_views.emplace_back(e.title, sink.str());
    }
  }
}

class ReportCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand(
        "report", "One report to read first: headline, charts, top ops, diagnosis, suggestions, validation (HTML, PDF, Markdown, text, JSON)");
    flags_.Add(sub);
    out_.Add(sub, {render::HtmlFormat(), render::PdfFormat(), render::MarkdownFormat(), render::TextFormat(), render::JsonFormat()},
             "analysis.html, report.pdf, report.md, report.txt or report.json (format from the extension)", /*required=*/true);
    AddBeforeFlag(sub, &before_, "A trace of the run before the change: adds the validation (before -> input)");
    AddFixIdFlag(sub, &fix_id_,
                 "With --before: the suggestion id this run applied (default: the fix of the finding that went away)");
    scenario_.Add(sub,
                  "With --before: the fix this run applied, stated as a what-if scenario (docs/whatif.md) instead of "
                  "a suggestion id; corrected by the past cases of that scenario in the knowledge database");
    target_.Add(sub, &flags_.session.suggest);
    AddDbFlag(sub, &flags_.session.db, "Knowledge-card database (default: the baseline database in the user's data dir)");
    return sub;
  }

  Status Run() override {
    ASSIGN_OR_RETURN(std::string format, out_.Resolve());
    const bool pdf = format == "pdf";
    if (pdf) RETURN_IF_ERROR(FindChromium().status());  // fail before the work
    RETURN_IF_ERROR(target_.Apply(&flags_.session.suggest));
    SessionOptions options = flags_.Options();
    options.analyze.keep_all_gaps = format == "html";  // the embedded timeline draws every gap
    if ((scenario_.given() || !fix_id_.empty()) && before_.empty()) {
      return UsageStatus(std::string(scenario_.given() ? "--scenario" : "--fix-id") + " needs --before");
    }
    bool mean = false;
    RETURN_IF_ERROR(scenario_.Resolve(&mean));  // fail before the work
    ASSIGN_OR_RETURN(std::unique_ptr<AnalysisSession> session, flags_.in.Open(std::move(options)));
    std::optional<ValidationResult> validation;
    if (!before_.empty()) {
      // As `aiprof validate --before B --after IN` (ValidateRuns), with this
      // run read through the report's own session and --warmup-steps over
      // both runs; the before run's phases are logged as "before.".
      ValidateRunsOptions vo;
      vo.inputs.warmup_steps = session->options().analyze.warmup_steps;
      vo.session = session->options();
      vo.session.analyze.phase_prefix = "before.";
      // Past cases of this very pair (a card of it) do not correct the
      // prediction checked against it: every file of this run counts.
      for (const std::string& path : flags_.in.paths) {
        ASSIGN_OR_RETURN(std::string id, InputIdentity(path));
        vo.session.history_checked_inputs.push_back(std::move(id));
      }
      vo.prediction.fix_id = fix_id_;
      vo.prediction.scenario = scenario_.scenario;
      vo.prediction.mean = mean;
      vo.prediction.devices_file = session->options().analyze.devices_file;
      if (scenario_.given()) {
        ASSIGN_OR_RETURN(vo.prediction.cards, AllCards(session->options().db));
      }
      ASSIGN_OR_RETURN(validation, ValidateRuns({ValidateRun::File(before_)},
                                                {ValidateRun::Loaded(flags_.in.input, session.get())}, vo));
    }
    ReportInputs inputs;
    inputs.before_source = before_;
    inputs.session = session.get();
    inputs.validation = validation ? &*validation : nullptr;
    ASSIGN_OR_RETURN(ReportData data, BuildReport(inputs));
    if (format != "html" && format != "pdf") {
      // Markdown, text and JSON: the report's document without the drawn views.
      ASSIGN_OR_RETURN(std::string text, render::RenderDocument(ReportToDocument(data), format));
      return WriteOutput(out_.output, text);
    }
    EmbedViews(*session, flags_.in.input, pdf, &data);
    std::string html = ReportToHtml(data);
    if (pdf) return HtmlToPdf(html, out_.output);
    return WriteOutput(out_.output, html);
  }

 private:
  DiagnosisFlags flags_;
  OutputFlags out_;
  TargetFlags target_;
  std::string before_, fix_id_;
  ScenarioFixFlags scenario_;
};

}  // namespace

std::unique_ptr<Command> NewReportCommand() { return std::make_unique<ReportCommand>(); }

}  // namespace aiprof
