#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>

#include "src/analysis/launches/launch_stats.h"
#include "src/analysis/summary/summary.h"
#include "src/analysis/summary/summary_analysis.h"
#include "src/cli/capture_trace_flag.h"
#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/cli/phase_timer.h"
#include "src/importers/common/importer_registry.h"
#include "src/render/renderers.h"
#include "src/report/summary/summary_report.h"

namespace aiprof {
namespace {

class SummaryCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("summary", "Op, device, step and import figures of a trace");
    // The formats as the importers' registry names them (KnownFileFormats).
    in_.Add(sub,
            ("Trace file or folder: " + KnownFileFormats() + " (torch_npu *_ascend_pt, msprof PROF_*, several ranks)")
                .c_str());
    // CSV is its own (SummaryToCsv: every op, with a note on standard error).
    out_.AddDocument(sub, {.yaml = false, .tables = true}, "Write here (atomically) instead of standard output");
    captures_.Add(sub);
    AddTopFlag(sub, &top_,
               "Ops to list, the most self time first, profiler wrappers left out (0 = all, and json and csv add "
               "the wrappers after them; default 20 for text, all for json and csv)");
    return sub;
  }

  Status Run() override {
    ASSIGN_OR_RETURN(std::string format, out_.Resolve());
    PhaseTimer timer(in_.timing);
    SessionOptions options;
    options.input = in_.input;
    ASSIGN_OR_RETURN(std::unique_ptr<AnalysisSession> session, captures_.Open(in_, std::move(options)));
    timer.Mark("import");
    const Trace& trace = session->trace();
    const Summary& summary = session->results().Get(kSummary);
    timer.Mark("analyse");
    SummaryReportOptions report;
    AddResultFigures(session->results(), &report);
    // Machine-readable outputs list every op unless --top says otherwise.
    report.top_n = top_ ? *top_ : format == "text" ? 20 : 0;
    if (format == "csv" && report.top_n != 0) {
      // CSV has no place for a note: say it on standard error.
      const size_t listed = ListedOps(trace, summary, report.top_n, true).size();
      if (listed < summary.ops.size()) {
        std::fprintf(stderr, "aiprof summary: --top %zu listed %zu of %zu ops (profiler wrappers left out)\n",
                     report.top_n, listed, summary.ops.size());
      }
    }
    if (format == "csv") {
      RETURN_IF_ERROR(WriteOutput(out_.output, SummaryToCsv(trace, summary, report)));
    } else {
      RETURN_IF_ERROR(out_.WriteDocument(SummaryToDocument(trace, summary, report), format));
    }
    timer.Mark("render+write");
    return OkStatus();
  }

 private:
  InputFlags in_;
  CaptureTraceFlag captures_;
  OutputFlags out_;
  std::optional<size_t> top_;
};

}  // namespace

std::unique_ptr<Command> NewSummaryCommand() { return std::make_unique<SummaryCommand>(); }

}  // namespace aiprof
