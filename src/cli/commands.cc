#include "src/cli/command.h"

namespace aiprof {

std::unique_ptr<Command> NewImportCommand();
std::unique_ptr<Command> NewSummaryCommand();
std::unique_ptr<Command> NewAnalyzeCommand();
std::unique_ptr<Command> NewDiagnoseCommand();
std::unique_ptr<Command> NewSuggestCommand();

// Every subcommand, in the order `aiprof --help` lists them.
std::vector<std::unique_ptr<Command>> AllCommands() {
  std::vector<std::unique_ptr<Command>> out;
  out.push_back(NewImportCommand());
  out.push_back(NewSummaryCommand());
  out.push_back(NewAnalyzeCommand());
  out.push_back(NewDiagnoseCommand());
  out.push_back(NewSuggestCommand());
  return out;
}

}  // namespace aiprof
