#include <CLI/CLI.hpp>

#include <cstdio>
#include <optional>

#include "src/analysis/summary/summary.h"
#include "src/cli/command.h"
#include "src/cli/phase_timer.h"
#include "src/importers/common/importer_registry.h"
#include "src/report/summary_report.h"

namespace aiprof {
namespace {

class SummaryCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("summary", "Op, device, step and import figures of a trace");
    sub->add_option("input", input_, "Trace file (Chrome/Kineto or Ascend JSON, .gz, .zst; nsys SQLite) or .aiprof, or a folder (torch_npu *_ascend_pt, msprof PROF_*, several ranks)")->required();
    sub->add_option("--format", format_, "text, json or csv")->check(CLI::IsMember({"text", "json", "csv"}));
    sub->add_option("--top", top_, "Ops to list, by total time (0 = all; default 20 for text, all for json and csv)");
    sub->add_option("-o,--output", output_, "Write here (atomically) instead of standard output");
    sub->add_flag("--timing", timing_, "Print the time of each phase to standard error");
    return sub;
  }

  Status Run() override {
    PhaseTimer timer(timing_);
    ASSIGN_OR_RETURN(std::unique_ptr<Trace> trace, ImportTrace(input_));
    timer.Mark("import");
    Summary summary = ComputeSummary(*trace);
    timer.Mark("analyse");
    SummaryReportOptions options;
    // Machine-readable outputs list every op unless --top says otherwise.
    options.top_n = top_ ? *top_ : format_ == "text" ? 20 : 0;
    if (format_ == "csv" && options.top_n != 0 && options.top_n < summary.ops.size()) {
      // CSV has no place for a note: say it on standard error.
      std::fprintf(stderr, "aiprof summary: --top %zu listed %zu of %zu ops\n", options.top_n, options.top_n,
                   summary.ops.size());
    }
    std::string text = format_ == "json" ? SummaryToJson(*trace, summary, options)
                       : format_ == "csv" ? SummaryToCsv(*trace, summary, options)
                                          : SummaryToText(*trace, summary, options);
    RETURN_IF_ERROR(WriteOutput(output_, text));
    timer.Mark("render+write");
    return OkStatus();
  }

 private:
  std::string input_, output_;
  std::string format_ = "text";
  std::optional<size_t> top_;
  bool timing_ = false;
};

}  // namespace

std::unique_ptr<Command> NewSummaryCommand() { return std::make_unique<SummaryCommand>(); }

}  // namespace aiprof
