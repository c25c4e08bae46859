// aiprof view IN (--flame|--timeline|--topology|...) [--diff B] [--thread NAME]
//                [--rank N] [--format F] -o OUT
// The views and their formats come from the view registry (src/view/).
#include <CLI/CLI.hpp>

#include <map>

#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/session/session.h"
#include "src/cli/phase_timer.h"
#include "src/importers/common/importer_registry.h"
#include "src/model/trace.h"
#include "src/view/view_registry.h"

namespace aiprof {
namespace {

class ViewCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("view", "Render a view of a trace (flame graph, ...) to one self-contained file");
    in_.Add(sub);
    std::string formats;
    for (const ViewSpec& spec : AllViews()) {
      std::string help = spec.help;
      help += " (formats:";
      for (const ViewFormat& f : spec.formats) help += std::string(" ") + f.name;
      help += ")";
      flags_.push_back(sub->add_flag(std::string("--") + spec.name)->description(help));
      for (const ViewFormat& f : spec.formats) {
        if (formats.find(std::string(" ") + f.name + " ") == std::string::npos) formats += std::string(" ") + f.name + " ";
      }
    }
    for (size_t i = 0; i < flags_.size(); ++i) {
      for (size_t j = 0; j < flags_.size(); ++j) {
        if (i != j) flags_[i]->excludes(flags_[j]);
      }
    }
    sub->add_option("--diff", baseline_, "Baseline trace: show the change from it (views that support it)");
    sub->add_option("--thread", options_.thread, "Only this thread (its name, tid, or pid/tid)");
    sub->add_option("--rank", options_.rank, "Only this rank")->check(CLI::NonNegativeNumber);
    AddCriticalPathFlag(sub, &options_.critical_path,
                  "Timeline: highlight each step's critical path and draw its dependencies");
    sub->add_option("--color-by", options_.color_by,
                    "Timeline and flame graph: colour slices/frames by their nn.Module (record_function and SDK "
                    "spans count as modules)")
        ->check(CLI::IsMember({"module"}));
    AddFormatFlag(sub, &options_.format,
                    "Output format (default: from -o's extension, else the view's first format):" + formats);
    AddOutputPathFlag(sub, &output_, "Output file ('-' or absent: standard output)");
    return sub;
  }

  Status Run() override {
    ASSIGN_OR_RETURN(const ViewSpec* spec, SelectedView());
    RETURN_IF_ERROR(ChooseFormat(*spec));
    if (!baseline_.empty() && !spec->supports_diff) {
      return ErrStatus(std::string("--") + spec->name + " does not support --diff");
    }
    if (options_.critical_path && !spec->draws_critical_path) {
      return ErrStatus(std::string("--critical-path: --") + spec->name + " does not draw it (--timeline does)");
    }
    if (!options_.color_by.empty() && !spec->colors_by_module) {
      return ErrStatus(std::string("--color-by: --") + spec->name + " has no colouring choice (--timeline and --flame do)");
    }
    PhaseTimer timer(in_.timing);
    SessionOptions session_options;
    session_options.input = in_.input;
    session_options.analyze.keep_all_gaps = spec->draws_gaps;
    ASSIGN_OR_RETURN(std::unique_ptr<AnalysisSession> session, in_.Open(session_options));
    WarnImportDiagnostics(session->trace());
    std::unique_ptr<Trace> baseline;
    if (!baseline_.empty()) {
      ASSIGN_OR_RETURN(baseline, ImportTrace(baseline_));
    }
    timer.Mark("import");
    options_.title = in_.input;
    options_.baseline_title = baseline_;
    ViewContext context{*session, session->trace(), baseline.get(), options_};
    if (output_.empty() || output_ == "-") {
      StringViewSink sink;
      RETURN_IF_ERROR(spec->render(context, &sink));
      timer.Mark("render");
      return WriteOutput("", sink.str());
    }
    FileViewSink sink;
    RETURN_IF_ERROR(sink.Open(output_));
    RETURN_IF_ERROR(spec->render(context, &sink));
    RETURN_IF_ERROR(sink.Commit());
    timer.Mark("render+write");
    return OkStatus();
  }

 private:
  StatusOr<const ViewSpec*> SelectedView() const {
    const std::vector<ViewSpec>& views = AllViews();
    for (size_t i = 0; i < flags_.size(); ++i) {
      if (flags_[i]->count() > 0) return &views[i];
    }
    std::string names;
    for (const ViewSpec& spec : views) names += std::string(names.empty() ? "" : ", ") + "--" + spec.name;
    return UsageStatus("aiprof view: choose a view: " + names);
  }

  Status ChooseFormat(const ViewSpec& spec) {
    if (options_.format.empty()) {
      if (!output_.empty() && output_ != "-") options_.format = FormatForPath(spec, output_);
      if (options_.format.empty()) options_.format = spec.formats.front().name;
      return OkStatus();
    }
    if (HasFormat(spec, options_.format)) return OkStatus();
    std::string names;
    for (const ViewFormat& f : spec.formats) names += std::string(" ") + f.name;
    return UsageStatus("--" + std::string(spec.name) + " has no format '" + options_.format + "' (formats:" + names +
                       ")");
  }

  InputFlags in_;
  std::string output_, baseline_;
  ViewOptions options_;
  std::vector<CLI::Option*> flags_;
};

}  // namespace

std::unique_ptr<Command> NewViewCommand() { return std::make_unique<ViewCommand>(); }

}  // namespace aiprof
