#include <CLI/CLI.hpp>
#include <cstdio>

#include "src/analysis/analyze.h"
#include "src/analysis/critical_path/critical_path_analysis.h"
#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/cli/phase_timer.h"
#include "src/render/escape.h"
#include "src/view/export/chrome_json_export.h"
#include "src/view/export/perfetto_export.h"
#include "src/view/view_sink.h"

namespace aiprof {
namespace {

// aiprof export IN --format perfetto|chrome-json -o OUT: the model as a file
// other tools open (ui.perfetto.dev, trace_processor, chrome://tracing).
class ExportCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("export", "Write the trace as a Perfetto protobuf trace or Chrome trace JSON");
    in_.Add(sub);
    AddFormatFlag(sub, &format_, "perfetto (protobuf, .pftrace) or chrome-json")
        ->check(CLI::IsMember({"perfetto", "chrome-json"}));
    AddOutputPathFlag(sub, &output_, "Output file")->required();
    AddCriticalPathFlag(sub, &critical_path_,
                  "Flag the slices on each step's critical path (arg critical_path) and add flows for its dependencies");
    return sub;
  }

  Status Run() override {
    PhaseTimer timer(in_.timing);
    ASSIGN_OR_RETURN(std::unique_ptr<Trace> trace, in_.Import());
    timer.Mark("import");
    std::unique_ptr<AnalysisResults> results;
    const CriticalPathResult* path = nullptr;
    if (critical_path_) {
      results = std::make_unique<AnalysisResults>(*trace, AnalyzeOptions{});
      path = &results->Get(kCriticalPath);
      timer.Mark("critical_path");
    }
    FileViewSink sink;
    RETURN_IF_ERROR(sink.Open(output_));
    if (format_ == "perfetto") {
      PerfettoExportStats stats;
      RETURN_IF_ERROR(ExportPerfetto(*trace, &sink, &stats, path));
      RETURN_IF_ERROR(sink.Commit());
      std::fprintf(stderr,
                   "wrote %s: %llu packets, %llu tracks (%llu for overlapping slices), %llu slices, %llu instants, "
                   "%llu counter values, %llu flows\n",
                   EscapeControls(output_, false).c_str(), Ull(stats.packets), Ull(stats.track_descriptors),
                   Ull(stats.overlap_tracks), Ull(stats.slices), Ull(stats.instants), Ull(stats.counter_values),
                   Ull(stats.flows));
      if (path) {
        std::fprintf(stderr, "critical path: %llu slices flagged, %llu dependency flows\n", Ull(stats.critical_slices),
                     Ull(stats.critical_flows));
      }
      if (stats.shift_ns != 0) {
        std::fprintf(stderr, "note: timestamps before 0 in the trace; all shifted by %lld ns\n",
                     static_cast<long long>(stats.shift_ns));
      }
    } else {
      ChromeJsonExportStats stats;
      RETURN_IF_ERROR(ExportChromeJson(*trace, &sink, &stats, path));
      RETURN_IF_ERROR(sink.Commit());
      std::fprintf(stderr, "wrote %s: %llu events (%llu slices, %llu instants, %llu counter values, %llu flows)\n",
                   EscapeControls(output_, false).c_str(), Ull(stats.events), Ull(stats.slices), Ull(stats.instants),
                   Ull(stats.counter_values), Ull(stats.flows));
      if (path) {
        std::fprintf(stderr, "critical path: %llu slices flagged, %llu dependency flows\n", Ull(stats.critical_slices),
                     Ull(stats.critical_flows));
      }
    }
    timer.Mark("export");
    return OkStatus();
  }

 private:
  static unsigned long long Ull(uint64_t v) { return static_cast<unsigned long long>(v); }

  InputFlags in_;
  std::string output_;
  std::string format_ = "perfetto";
  bool critical_path_ = false;
};

}  // namespace

std::unique_ptr<Command> NewExportCommand() { return std::make_unique<ExportCommand>(); }

}  // namespace aiprof
