// `aiprof report IN [--before B] [--target ...] [--constraints ...] [--db PATH]
// -o analysis.html|report.pdf|report.md`: the one page a person reads first
// (src/report/page/report_data.h).
#include <CLI/CLI.hpp>

#include "src/analysis/validation/compare.h"
#include "src/analysis/validation/run_samples.h"
#include "src/analysis/validation/baseline_store.h"
#include "src/cli/command.h"
#include "src/cli/run_samples_loader.h"
#include "src/cli/diagnosis_pipeline.h"
#include "src/report/page/report_data.h"
#include "src/report/pdf/html_to_pdf.h"
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
void EmbedViews(const Trace& trace, const Diagnosis& diagnosis, const std::string& title, bool pdf, ReportData* data) {
  if (!pdf) {
    // The timeline is drawn from the report's own diagnosis, not a second one.
    TimelineViewOptions options;
    options.layout.title = title;
    options.layout.max_detailed_slices = kReportTimelineSlices;
    options.diagnosis = &diagnosis;
    std::string page;
    Status status = RenderTimelinePage(trace, options, &page);
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
    ViewContext context{trace, nullptr, options};
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

bool EndsWith(const std::string& s, const std::string& e) {
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

class ReportCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand(
        "report", "One report to read first: headline, charts, top ops, diagnosis, suggestions, validation (HTML, PDF, Markdown)");
    sub->add_option("input", in_.input, "Trace file or folder, or .aiprof")->required();
    sub->add_option("-o,--output", in_.output, "analysis.html, report.pdf or report.md (format from the extension)")->required();
    sub->add_option("--before", before_, "A trace of the run before the change: adds the validation (before -> input)");
    sub->add_option("--target", options_.target, "latency, throughput or memory")
        ->check(CLI::IsMember({"latency", "throughput", "memory"}));
    sub->add_option("--constraints", constraints_, "e.g. \"memory<3GB,precision_loss<1%,effort<=medium\"");
    sub->add_option("--db", db_, "Knowledge-card database (default: the baseline database in the user's data dir)");
    sub->add_option("--rules", in_.rule_paths, "Extra rule file or folder (repeatable)");
    sub->add_flag("--no-builtin-rules", in_.no_builtin_rules, "Use only the --rules files");
    sub->add_option("--device", in_.device, "Device whose peaks the roofline uses (data/devices.yaml)");
    return sub;
  }

  Status Run() override {
    const std::string& out = in_.output;
    const bool pdf = IsPdfPath(out);
    if (!pdf && !EndsWith(out, ".html") && !EndsWith(out, ".htm") && !EndsWith(out, ".md")) {
      return ErrStatus(out + ": the report is written as .html, .pdf or .md");
    }
    if (pdf) RETURN_IF_ERROR(FindChromium().status());  // fail before the work
    ASSIGN_OR_RETURN(options_.constraints, ParseConstraints(constraints_));
    ASSIGN_OR_RETURN(std::unique_ptr<DiagnosisRun> run, RunDiagnosis(in_));
    ASSIGN_OR_RETURN(SuggestResult suggestions, SuggestWithHistory(*run, options_, db_));
    std::optional<ValidationResult> validation;
    if (!before_.empty()) {
      ASSIGN_OR_RETURN(RunSamples before, LoadRunSamples(before_, "step", 0, "", "ms", nullptr));
      ASSIGN_OR_RETURN(RunSamples after, LoadRunSamples(in_.input, "step", 0, "", "ms", nullptr));
      validation = Validate(before, after, ValidationOptions{});
    }
    ReportInputs inputs;
    inputs.source = in_.input;
    inputs.before_source = before_;
    inputs.trace = run->trace.get();
    inputs.metrics = &run->metrics;
    inputs.diagnosis = &run->diagnosis;
    inputs.suggestions = &suggestions;
    inputs.options = &options_;
    inputs.validation = validation ? &*validation : nullptr;
    inputs.device = in_.device;
    ReportData data = BuildReport(inputs);
    if (!EndsWith(out, ".md")) EmbedViews(*run->trace, run->diagnosis, in_.input, pdf, &data);
    if (EndsWith(out, ".md")) return WriteOutput(out, ReportToMarkdown(data));
    std::string html = ReportToHtml(data);
    if (pdf) return HtmlToPdf(html, out);
    return WriteOutput(out, html);
  }

 private:
  DiagnosisInputs in_;
  SuggestOptions options_;
  std::string constraints_, db_, before_;
};

}  // namespace

std::unique_ptr<Command> NewReportCommand() { return std::make_unique<ReportCommand>(); }

}  // namespace aiprof
