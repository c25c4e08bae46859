#include "src/cli/command.h"

namespace aiprof {

std::unique_ptr<Command> NewImportCommand();
std::unique_ptr<Command> NewSummaryCommand();
std::unique_ptr<Command> NewAnalyzeCommand();
std::unique_ptr<Command> NewDiagnoseCommand();
std::unique_ptr<Command> NewSuggestCommand();
std::unique_ptr<Command> NewValidateCommand();
std::unique_ptr<Command> NewSetBaselineCommand();
std::unique_ptr<Command> NewHistoryCommand();
std::unique_ptr<Command> NewCardCommand();
std::unique_ptr<Command> NewRooflineCommand();
std::unique_ptr<Command> NewCalibrateCommand();
std::unique_ptr<Command> NewNodeBottleneckCommand();
std::unique_ptr<Command> NewExportCommand();
std::unique_ptr<Command> NewWhatIfCommand();
std::unique_ptr<Command> NewDiffCommand();
std::unique_ptr<Command> NewTraceCommand();
std::unique_ptr<Command> NewReportCommand();
std::unique_ptr<Command> NewViewCommand();
std::unique_ptr<Command> NewClusterCommand();
std::unique_ptr<Command> NewMonitorCommand();
std::unique_ptr<Command> NewQueryCommand();
std::unique_ptr<Command> NewMcpCommand();
std::unique_ptr<Command> NewServeCommand();
std::unique_ptr<Command> NewPushCommand();

// Every subcommand, in the order `aiprof --help` lists them.
std::vector<std::unique_ptr<Command>> AllCommands() {
  std::vector<std::unique_ptr<Command>> out;
  out.push_back(NewTraceCommand());
  out.push_back(NewMonitorCommand());
  out.push_back(NewImportCommand());
  out.push_back(NewSummaryCommand());
  out.push_back(NewAnalyzeCommand());
  out.push_back(NewDiagnoseCommand());
  out.push_back(NewSuggestCommand());
  out.push_back(NewReportCommand());
  out.push_back(NewValidateCommand());
  out.push_back(NewSetBaselineCommand());
  out.push_back(NewHistoryCommand());
  out.push_back(NewCardCommand());
  out.push_back(NewRooflineCommand());
  out.push_back(NewCalibrateCommand());
  out.push_back(NewNodeBottleneckCommand());
  out.push_back(NewExportCommand());
  out.push_back(NewWhatIfCommand());
  out.push_back(NewDiffCommand());
  out.push_back(NewViewCommand());
  out.push_back(NewClusterCommand());
  out.push_back(NewQueryCommand());
  out.push_back(NewMcpCommand());
  out.push_back(NewServeCommand());
  out.push_back(NewPushCommand());
  return out;
}

}  // namespace aiprof
