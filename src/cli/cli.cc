#include <sys/ioctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/analysis/roofline/cpu_calibration.h"
#include "src/base/atomic_file.h"
#include "src/base/mapped_inputs.h"
#include "src/base/phase_log.h"
#include "src/base/threads.h"
#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/monitor/incident.h"
#include "src/render/escape.h"
#include "src/render/renderers.h"

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

// The width of the terminal the command's text goes to: $COLUMNS, else the
// terminal's own (TIOCGWINSZ), when standard output is a terminal and -o
// names no file; else 0 (no limit: a file or a pipe gets whole lines).
size_t TerminalColumns(const CLI::App* sub) {
  const CLI::Option* output = sub->get_option_no_throw("--output");
  if (output != nullptr && output->count() > 0 && output->as<std::string>() != "-") return 0;
  if (!isatty(STDOUT_FILENO)) return 0;
  if (const char* env = std::getenv("COLUMNS"); env != nullptr && *env) {
    char* end = nullptr;
    const unsigned long v = std::strtoul(env, &end, 10);
    if (*end == '\0' && v > 0 && v <= 100000) return v;
  }
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 0;
}

// Edits (insert, delete, replace one character) from `a` to `b`.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The word argv names as the command: the first argument that is neither an
// option of aiprof itself nor the value of --threads or --width ("" when
// there is none).
std::string CommandWord(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--threads" || arg == "--width") {
      ++i;
    } else if (arg == "--") {
      return "";
    } else if (!arg.starts_with("-")) {
      return std::string(arg);
    }
  }
  return "";
}

// Words of other tools that name what an aiprof command does. `explain` is
// no alias: what explains a run is two commands (diagnose: why, with
// findings; analyze --only attribution,critical_path: where a step's time
// goes), and the message names both.
constexpr std::pair<std::string_view, std::string_view> kOtherWords[] = {
    {"explain",
     "aiprof diagnose TRACE (why it is slow) or aiprof analyze TRACE --only attribution,critical_path (where a "
     "step's time goes)"},
    {"compare", "aiprof diff A B, or aiprof validate --before A --after B"},
    {"record", "aiprof trace -- CMD"},
    {"profile", "aiprof trace -- CMD"},
    {"stats", "aiprof summary TRACE"},
    {"show", "aiprof summary TRACE, aiprof view TRACE or aiprof report TRACE -o FILE"},
    {"sql", "aiprof query TRACE SQL"},
};

// "unknown command 'X'" with the commands whose names are closest (a typo,
// a prefix) or that do what the word says in other tools.
std::string UnknownCommandMessage(std::string_view word, const std::vector<CLI::App*>& subcommands) {
  std::string lower(word);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::vector<std::pair<size_t, std::string>> close;
  for (const CLI::App* sub : subcommands) {
    const std::string& name = sub->get_name();
    const size_t d = EditDistance(lower, name);
    const bool prefix =
        lower.size() >= 2 && (name.starts_with(lower) || (lower.size() >= 4 && lower.starts_with(name)));
    if (d <= std::max<size_t>(2, lower.size() / 3) || prefix) close.emplace_back(prefix ? 0 : d, name);
  }
  std::stable_sort(close.begin(), close.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string message = "unknown command '" + EscapeControls(word, false) + "'";
  std::string closest;
  for (size_t i = 0; i < close.size() && i < 3; ++i) closest += (i ? ", " : "") + close[i].second;
  if (!closest.empty()) message += "; did you mean: " + closest;
  for (const auto& [other, ours] : kOtherWords) {
    if (EditDistance(lower, other) <= (other.size() > 4 ? 2u : 0u)) message += "; for that, try " + std::string(ours);
  }
  return message + " (aiprof --help lists every command)";
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
  SayWriterTempRemovals();  // a killed write's temporary file removed beside an output: said on stderr
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
  std::optional<size_t> width;
  app.add_option("--width", width,
                 "Columns text output's tables fit: the widest names are shortened in the middle (0: no limit; "
                 "default: the terminal's width when standard output is one, else no limit; a name is shortened "
                 "to 80 columns either way, and JSON, CSV, Markdown and HTML keep it whole)")
      ->check(CLI::Range(0, 100000));
  app.fallthrough();  // --threads, --width and --no-calibrate may follow the command name
  std::vector<std::unique_ptr<Command>> commands = AllCommands();
  std::vector<CLI::App*> subcommands;
  for (auto& c : commands) subcommands.push_back(c->Register(&app));
  OneValuePerFlag(&app);
  // A word that names no command: named, with the closest commands (CLI11
  // said only "A subcommand is required").
  if (const std::string word = CommandWord(argc, argv); !word.empty()) {
    const bool known =
        std::any_of(subcommands.begin(), subcommands.end(), [&](const CLI::App* sub) { return sub->check_name(word); });
    if (!known) {
      std::fprintf(stderr, "aiprof: error: %s\n", UnknownCommandMessage(word, subcommands).c_str());
      return kExitUsage;
    }
  }
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
    render::SetDefaultTextWidth(width ? *width : TerminalColumns(subcommands[i]));
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
