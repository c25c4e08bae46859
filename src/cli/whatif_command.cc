#include <CLI/CLI.hpp>

#include "src/analysis/critical_path/critical_path_analysis.h"
#include "src/analysis/validation/knowledge_card.h"
#include "src/analysis/whatif/simulate.h"
#include "src/analysis/whatif/whatif.h"
#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/render/renderers.h"
#include "src/report/whatif/whatif_report.h"
#include "src/session/prediction_check.h"
#include "src/session/session.h"

namespace aiprof {
namespace {

// aiprof whatif IN --scenario "..." [--scenario ...]: replays the critical
// path's dependency graph under each scenario (docs/whatif.md) and prints
// the predicted step time per step and for the steady state.
class WhatIfCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("whatif", "Predict the step time if idle, ops or kernels changed (replays the dependency graph)");
    in_.Add(sub, "Trace file (Chrome/Kineto JSON, .gz, .zst) or .aiprof");
    out_.AddDocument(sub, {.yaml = false, .tables = true}, "Write here (atomically) instead of standard output");
    AddScenarioFlag(sub, &scenarios_, "Scenario: clauses separated by ';' (docs/whatif.md); repeatable")->required();
    AddDevicesFileFlag(sub, &options_.analyze);
    AddWarmupFlag(sub, &options_.analyze.warmup_steps);
    AddDbFlag(sub, &db_,
              "Knowledge database whose past cases of the same scenario (stored by `aiprof card --scenario`, or by "
              "card --fix-id for a suggestion's scenario) correct the median and mean predictions (docs/whatif.md)");
    return sub;
  }

  Status Run() override {
    std::vector<Scenario> parsed;
    for (const std::string& text : scenarios_) {
      StatusOr<Scenario> sc = ParseScenario(text);
      if (!sc.ok()) return AsUsage(sc.status());  // the flag's text: a bad command line
      parsed.push_back(std::move(*sc));
    }
    ASSIGN_OR_RETURN(std::string format, out_.Resolve());
    options_.input = in_.input;
    ASSIGN_OR_RETURN(std::unique_ptr<AnalysisSession> session, in_.Open(options_));
    WarnImportDiagnostics(session->trace());
    std::vector<KnowledgeCard> cards;
    if (!db_.empty()) {
      ASSIGN_OR_RETURN(cards, AllCards(db_));
    }
    const HistoryScope scope = db_.empty() ? HistoryScope{} : session->history_scope(db_);
    std::vector<WhatIfResult> results;
    for (Scenario& sc : parsed) {
      RETURN_IF_ERROR(ResolveStatedScenarioDevices(session->trace(), options_.analyze.devices_file, &sc));
      results.push_back(session->WhatIf(sc));
      if (!db_.empty()) CorrectWhatIfByHistory(cards, &results.back(), scope);
    }
    return out_.WriteDocument(
        WhatIfToDocument(results, WholeTraceWindows(session->results().Get(kCriticalPath)), in_.input), format);
  }

 private:
  InputFlags in_;
  OutputFlags out_;
  SessionOptions options_;
  std::vector<std::string> scenarios_;
  std::string db_;
};

}  // namespace

std::unique_ptr<Command> NewWhatIfCommand() { return std::make_unique<WhatIfCommand>(); }

}  // namespace aiprof
