#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>

#include "src/analysis/analyze.h"
#include "src/cli/command.h"
#include "src/cli/phase_timer.h"
#include "src/importers/common/importer_registry.h"
#include "src/report/analysis/analyze_report.h"

namespace aiprof {
namespace {

class AnalyzeCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("analyze", "Where the time goes and why: gaps, launches, copies, layout, fusion, tails, steps, memory");
    sub->add_option("input", input_, "Trace file (Chrome/Kineto JSON, .gz, .zst) or .aiprof")->required();
    sub->add_option("--format", format_, "text or json")->check(CLI::IsMember({"text", "json"}));
    sub->add_option("--only", only_, "Analyses to run, comma-separated")->delimiter(',');
    sub->add_option("--device", device_, "Device peaks for the roofline (a name in data/devices.yaml; default: from the trace, or cpu-local from `aiprof calibrate`)");
    sub->add_option("-o,--output", output_, "Write here (atomically) instead of standard output");
    sub->add_flag("--timing", timing_, "Print the time of each phase to standard error");
    return sub;
  }

  Status Run() override {
    for (const std::string& name : only_) {
      const auto& names = AnalysisNames();
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        std::string all;
        for (std::string_view n : names) all += (all.empty() ? "" : ", ") + std::string(n);
        return ErrStatus("unknown analysis '" + name + "' in --only (known: " + all + ")");
      }
    }
    PhaseTimer timer(timing_);
    ASSIGN_OR_RETURN(std::unique_ptr<Trace> trace, ImportTrace(input_));
    timer.Mark("import");
    AnalyzeOptions options;
    options.only = only_;
    options.device = device_;
    AnalysisReport report = RunAnalyses(*trace, options);
    timer.Mark("analyse");
    if (timing_) {
      for (const AnalysisSection& s : report.sections) {
        std::fprintf(stderr, "aiprof:   %-14s %7.1f ms\n", s.name.c_str(), s.elapsed_ms);
      }
    }
    RETURN_IF_ERROR(WriteOutput(output_, format_ == "json" ? AnalysisToJson(report) : AnalysisToText(report)));
    timer.Mark("render+write");
    return OkStatus();
  }

 private:
  std::string input_, output_, device_;
  std::string format_ = "text";
  std::vector<std::string> only_;
  bool timing_ = false;
};

}  // namespace

std::unique_ptr<Command> NewAnalyzeCommand() { return std::make_unique<AnalyzeCommand>(); }

}  // namespace aiprof
