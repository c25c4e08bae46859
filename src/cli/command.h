// One subcommand of the aiprof CLI: registers its flags, then runs.
#ifndef AIPROF_SRC_CLI_COMMAND_H_
#define AIPROF_SRC_CLI_COMMAND_H_

#include <memory>
#include <string>
#include <vector>

#include "src/base/status.h"

namespace CLI {
class App;
}

namespace aiprof {

// Exit statuses (documented in README.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;  // unusable input, failed output
inline constexpr int kExitUsage = 2;  // bad command line
inline constexpr int kExitRegression = 3;  // validate --alert-on-regression found a significant regression; monitor wrote an incident

class Command {
 public:
  virtual ~Command() = default;
  // Adds the subcommand and its flags to `app`; returns the subcommand.
  virtual CLI::App* Register(CLI::App* app) = 0;
  virtual Status Run() = 0;
  // Exit status after Run() succeeded (kExitOk unless the command reports an outcome, e.g. kExitRegression).
  virtual int SuccessExitCode() const { return kExitOk; }
  // Whether a CPU trace's roofline may measure this machine on first need
  // (src/analysis/roofline/cpu_calibration.h). Servers (mcp, serve, monitor)
  // say no: they answer requests and must not spend a second measuring.
  virtual bool CalibratesOnFirstNeed() const { return true; }
};

std::vector<std::unique_ptr<Command>> AllCommands();

// Writes `content` to `path` atomically, or to stdout when path is empty or "-".
Status WriteOutput(const std::string& path, const std::string& content);

// Entry point used by main().
int RunCli(int argc, char** argv);

// An allocation that fails on any thread ends the process with one line on
// standard error naming the command line ("aiprof: error: out of memory
// (aiprof summary big.json.gz): ...") and exit 1 (RunCli installs it).
void InstallOutOfMemoryHandler(int argc, char** argv);

}  // namespace aiprof

#endif  // AIPROF_SRC_CLI_COMMAND_H_
