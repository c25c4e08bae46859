#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <string>

#include "src/analysis/roofline/cpu_calibration.h"
#include "src/base/atomic_file.h"
#include "src/base/mapped_inputs.h"
#include "src/base/phase_log.h"
#include "src/base/threads.h"
#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/render/escape.h"

namespace aiprof {

Status WriteOutput(const std::string& path, const std::string& content) {
  if (path.empty() || path == "-") {
    if (std::fwrite(content.data(), 1, content.size(), stdout) != content.size() || std::fflush(stdout) != 0) {
      return ErrStatus("cannot write to standard output");
    }
    return OkStatus();
  }
  return WriteFileAtomically(path, content);
}

namespace {

// Calibration on first need (src/analysis/roofline/cpu_calibration.h): on
// unless --no-calibrate or AIPROF_CALIBRATE=0 (AIPROF_CALIBRATE=save: keep the
// peaks even when measured on a busy machine); AIPROF_CALIBRATE_SECONDS sets
// the time per FLOP/s measurement (0.05-5 s).
AutoCalibration CliAutoCalibration(bool no_calibrate) {
  AutoCalibration a;
  const char* env = std::getenv("AIPROF_CALIBRATE");
  a.enabled = !no_calibrate && !(env != nullptr && std::string(env) == "0");
  a.save_when_busy = env != nullptr && std::string(env) == "save";
  if (const char* s = std::getenv("AIPROF_CALIBRATE_SECONDS"); s != nullptr && *s) {
    char* end = nullptr;
    double v = std::strtod(s, &end);
    if (end != s && *end == '\0' && v >= 0.05 && v <= 5) a.flops_seconds = v;
    else std::fprintf(stderr, "aiprof: warning: AIPROF_CALIBRATE_SECONDS=%s is not a number of seconds in [0.05, 5]; using %.2f\n", s, a.flops_seconds);
  }
  a.notify = [](std::string_view m) {
    std::fprintf(stderr, "aiprof: %.*s\n", static_cast<int>(m.size()), m.data());
  };
  return a;
}

// The message of OutOfMemory, built before it is needed: the handler must
// not allocate.
std::string& OutOfMemoryMessage() {
  static std::string message;
  return message;
}

// std::new_handler: an allocation failed on any thread (an input larger than
// the memory this process may use: a ulimit, a cgroup). It said "terminate
// called after throwing std::bad_alloc" and aborted (exit 134) naming
// nothing; now one line naming the command and its inputs, and exit 1.
[[noreturn]] void OutOfMemory() {
  const std::string& m = OutOfMemoryMessage();
  if (::write(2, m.data(), m.size()) < 0) {
  }
  std::_Exit(kExitError);
}

}  // namespace

void InstallOutOfMemoryHandler(int argc, char** argv) {
  std::string words;
  for (int i = 1; i < argc && words.size() < 300; ++i) words += std::string(i > 1 ? " " : "") + argv[i];
  if (words.size() > 300) words = words.substr(0, 300) + "...";
  OutOfMemoryMessage() = "aiprof: error: out of memory (aiprof " + EscapeControls(words, false) +
                         "): the input needs more memory than this process may use (ulimit -v, a cgroup's limit, "
                         "the machine's memory)\n";
  std::set_new_handler(OutOfMemory);
}

int RunCli(int argc, char** argv) {
  InstallOutOfMemoryHandler(argc, argv);
  // An input file truncated while it is mapped: named, exit 1 (was "Bus
  // error", exit 135).
  InstallMappedInputBusHandler();
  CLI::App app{"aiprof: performance profiler and diagnosis for AI inference and training"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "aiprof " AIPROF_VERSION);
  size_t threads = 0;
  app.add_option("--threads", threads,
                 "Threads for parsing and analyses (default: the cores available, at most 16); "
                 "results are the same for any count")
      ->check(CLI::Range(1, 4096));
  bool no_calibrate = false;
  app.add_flag("--no-calibrate", no_calibrate,
               "CPU traces without calibrated peaks: leave the roofline without them instead of measuring this "
               "machine once (`aiprof calibrate`, saved for later runs); also AIPROF_CALIBRATE=0");
  app.fallthrough();  // --threads and --no-calibrate may follow the command name
  std::vector<std::unique_ptr<Command>> commands = AllCommands();
  std::vector<CLI::App*> subcommands;
  for (auto& c : commands) subcommands.push_back(c->Register(&app));
  OneValuePerFlag(&app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  SetWorkerThreads(threads);
  for (size_t i = 0; i < commands.size(); ++i) {
    if (!subcommands[i]->parsed()) continue;
    SetAutoCalibration(CliAutoCalibration(no_calibrate || !commands[i]->CalibratesOnFirstNeed()));
    // --timing (InputFlags): every phase logged while the command ran
    // (import, each analysis once, rules, diagnosis, ...), in the order they ended.
    const CLI::Option* timing = subcommands[i]->get_option_no_throw("--timing");
    const bool timed = timing != nullptr && timing->count() > 0;
    if (timed) EnablePhaseLog(true);
    Status status = commands[i]->Run();
    if (timed) {
      for (const auto& [name, ms] : TakePhaseLog()) std::fprintf(stderr, "aiprof:   %-22s %9.1f ms\n", name.c_str(), ms);
    }
    if (!status.ok()) {
      // Messages name files and quote their content (a file name inside a
      // downloaded folder, a server's answer): controls are shown, not sent.
      std::fprintf(stderr, "aiprof: error: %s\n", EscapeControls(status.message(), /*keep_line_breaks=*/true).c_str());
      return status.usage() ? kExitUsage : kExitError;
    }
    return commands[i]->SuccessExitCode();
  }
  return kExitOk;
}

}  // namespace aiprof
