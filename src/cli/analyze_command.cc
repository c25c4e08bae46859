#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>

#include "src/analysis/analyze.h"
#include "src/cli/command.h"
#include "src/cli/capture_trace_flag.h"
#include "src/cli/flags.h"
#include "src/render/renderers.h"
#include "src/report/analysis/analyze_report.h"

namespace aiprof {
namespace {

class AnalyzeCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("analyze", "Where the time goes and why: gaps, launches, copies, layout, fusion, tails, steps, memory");
    in_.Add(sub, "Trace file (Chrome/Kineto JSON, .gz, .zst) or .aiprof");
    out_.AddDocument(sub, {.yaml = true, .tables = true}, "Write here (atomically) instead of standard output");
    captures_.Add(sub);
    sub->add_option("--only", options_.analyze.only, "Analyses to run, comma-separated")->delimiter(',');
    AddDeviceFlag(sub, &options_.analyze);
    AddWarmupFlag(sub, &options_.analyze.warmup_steps);
    return sub;
  }

  Status Run() override {
    for (const std::string& name : options_.analyze.only) {
      const auto& names = AnalysisNames();
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        std::string all;
        for (std::string_view n : names) all += (all.empty() ? "" : ", ") + std::string(n);
        return UsageStatus("unknown analysis '" + name + "' in --only (known: " + all + ")");
      }
    }
    ASSIGN_OR_RETURN(std::string format, out_.Resolve());
    options_.input = in_.input;
    ASSIGN_OR_RETURN(std::unique_ptr<AnalysisSession> session, captures_.Open(in_, options_));
    WarnImportDiagnostics(session->trace());
    const AnalysisReport& report = session->analyses();
    return out_.WriteDocument(AnalyzeToDocument(report, session->results()), format);
  }

 private:
  InputFlags in_;
  CaptureTraceFlag captures_;
  OutputFlags out_;
  SessionOptions options_;
};

}  // namespace

std::unique_ptr<Command> NewAnalyzeCommand() { return std::make_unique<AnalyzeCommand>(); }

}  // namespace aiprof
