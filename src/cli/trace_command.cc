// aiprof trace: records a command or a running process into one .aiprof file
// (src/capture/capture.h; docs/capture.md).
#include <dirent.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <vector>

#include "src/base/atomic_file.h"
#include "src/capture/capture.h"
#include "src/cli/command.h"
#include "src/cli/duration_flag.h"
#include "src/cli/flags.h"
#include "src/model/native_file.h"
#include "src/render/escape.h"

namespace aiprof {
namespace {

// "100%", "25%", "0.25" -> share in [0, 1]; -1 when malformed.
double ParseRate(const std::string& s) {
  size_t end = 0;
  double v = 0;
  try {
    v = std::stod(s, &end);
  } catch (...) {
    return -1;
  }
  const std::string unit = s.substr(end);
  if (unit == "%") v /= 100.0;
  else if (!unit.empty()) return -1;
  return v >= 0 && v <= 1 ? v : -1;
}

std::string DefaultOutput() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "trace-%Y%m%d-%H%M%S.aiprof", &tm);
  return buf;
}

// The one running process whose name (comm) or program (argv[0]'s base name)
// is `name`, other than this one.
StatusOr<int> FindProcess(const std::string& name) {
  std::vector<int> found;
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      const int pid = std::atoi(e->d_name);
      if (pid <= 0 || pid == getpid()) continue;
      std::string comm, cmd;
      std::ifstream(std::string("/proc/") + e->d_name + "/comm") >> comm;
      std::getline(std::ifstream(std::string("/proc/") + e->d_name + "/cmdline"), cmd, '\0');
      const std::string base = cmd.substr(cmd.rfind('/') + 1);
      if (comm == name || base == name) found.push_back(pid);
    }
    closedir(d);
  }
  if (found.size() == 1) return found[0];
  if (found.empty()) return ErrStatus("aiprof trace --target " + name + ": no running process has that name");
  std::string list;
  for (int p : found) list += " " + std::to_string(p);
  return ErrStatus("aiprof trace --target " + name + ": several processes have that name (pids" + list +
                   "); choose one with --pid");
}

class TraceCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand(
        "trace", "Record a command (-- CMD ARGS...) or a running process (--pid N): application spans (SDK), "
                 "torch ops, host CPU samples and counters on one clock, into one .aiprof file");
    AddOutputPathFlag(sub, &output_, "The .aiprof file to write (default trace-<date>-<time>.aiprof)");
    sub->add_option("--scope", scope_, "app | framework | full_stack (default: every layer this machine has)")
        ->check(CLI::IsMember({"app", "framework", "full_stack"}));
    duration_opt_ =
        sub->add_option("--duration", duration_, "Stop after this long (60s, 500ms, 2m); the command then gets SIGINT");
    sub->add_option("--sampling-rate", sampling_rate_, "Share of top-level application spans kept (100%, 25%)");
    AddCpuHzFlag(sub, &cpu_hz_, "Host CPU sampling frequency in Hz; 0 turns host samples off")
        ->check(CLI::Range(0, 20000));
    sub->add_option("--unwind", unwind_, "Call stacks: auto (of frame pointers and DWARF, the one with more frames in known code), fp, dwarf")
        ->check(CLI::IsMember({"auto", "fp", "dwarf"}));
    sub->add_option("--target", target_, "Name of the traced service, recorded in the trace; without a command or "
                                          "--pid, the running process of that name is attached to");
    AddPidFlag(sub, &pid_, "Attach to this running process and all its threads");
    sub->add_option("--torch-every", torch_every_,
                    "The torch op layer on 1 training step in N (steps 0, N, 2N, ... of optimizer.step); the other "
                    "steps keep samples, counters, SDK spans and step times (default 1: every step)")
        ->check(CLI::Range(1, 1000000));
    sub->add_flag("--no-page-faults", no_page_faults_,
                  "Do not record minor page faults (perf page-faults event; on by default, with the cost of one "
                  "first-touch fault measured at start)");
    sub->add_option("--fault-period", fault_period_, "Record one page-fault record per N faults (default 1: every fault)")
        ->check(CLI::Range(1, 1000000));
    sub->add_flag("--keep-capture-dir", keep_dir_, "Keep the temporary capture folder (for debugging)");
    sub->add_option("command", command_, "The command to run, after --");
    return sub;
  }

  Status Run() override {
    CaptureOptions o;
    if (pid_ == 0 && command_.empty() && !target_.empty()) {
      ASSIGN_OR_RETURN(pid_, FindProcess(target_));
      std::fprintf(stderr, "aiprof: --target %s is pid %d\n", target_.c_str(), pid_);
    }
    if (pid_ > 0 && !command_.empty()) {
      return UsageStatus(
          "aiprof trace: give either a command after -- or --pid N (or --target NAME of a running "
          "process), not both");
    }
    if (pid_ <= 0 && command_.empty()) {
      return UsageStatus(
          "aiprof trace: nothing to trace: give a command after -- or --pid N (or --target NAME of a "
          "running process)");
    }
    o.command = command_;
    o.pid = pid_;
    o.scope = scope_ == "app" ? CaptureScope::kApp : scope_ == "framework" ? CaptureScope::kFramework
                                                                          : CaptureScope::kFullStack;
    if (duration_opt_ != nullptr && duration_opt_->count() > 0) {
      o.duration_ns = duration_.empty() ? -1 : ParseDuration(duration_);
      if (o.duration_ns <= 0) {
        return UsageStatus("aiprof trace: --duration '" + duration_ + "' is not a duration (60s, 500ms, 2m)");
      }
    }
    o.sampling_rate = ParseRate(sampling_rate_);
    if (o.sampling_rate < 0)
      return UsageStatus("aiprof trace: --sampling-rate " + sampling_rate_ + " is not a share (100%, 0.25)");
    o.cpu_hz = cpu_hz_;
    o.unwind = unwind_ == "fp" ? UnwindMode::kFramePointer : unwind_ == "dwarf" ? UnwindMode::kDwarf : UnwindMode::kAuto;
    o.target = target_;
    o.progress = isatty(STDERR_FILENO) == 1;
    o.keep_dir = keep_dir_;
    o.torch_every = torch_every_;
    o.page_faults = !no_page_faults_;
    o.fault_period = static_cast<uint64_t>(fault_period_);
    if (output_.empty()) output_ = DefaultOutput();
    // A capture cannot be repeated: an output that cannot be written is
    // found before the command starts, not after it ran.
    RETURN_IF_ERROR(CheckWritableOutput(output_));
    if (pid_ > 0) {  // the command of a launch writes its own output; a running process gets a word
      const int pid = pid_;
      const std::string until = o.duration_ns <= 0 ? "Ctrl-C" : "--duration " + duration_ + " or Ctrl-C";
      o.on_started = [pid, until] {
        std::fprintf(stderr, "aiprof: attached to pid %d; recording until %s\n", pid, until.c_str());
        std::fflush(stderr);
      };
    }
    ASSIGN_OR_RETURN(CaptureResult r, RunCapture(o));
    RETURN_IF_ERROR(WriteNativeFile(*r.trace, output_));
    std::fprintf(stderr, "aiprof: wrote %s: %s\n", EscapeControls(output_, false).c_str(), r.summary.c_str());
    exit_code_ = r.exit_code;
    return OkStatus();
  }

  int SuccessExitCode() const override { return exit_code_; }

 private:
  std::string output_, scope_ = "full_stack", duration_, sampling_rate_ = "100%", unwind_ = "auto", target_;
  CLI::Option* duration_opt_ = nullptr;
  int cpu_hz_ = 999;
  int pid_ = 0;
  int torch_every_ = 1;
  bool no_page_faults_ = false;
  int fault_period_ = 1;
  bool keep_dir_ = false;
  std::vector<std::string> command_;
  int exit_code_ = kExitOk;
};

}  // namespace

std::unique_ptr<Command> NewTraceCommand() { return std::make_unique<TraceCommand>(); }

}  // namespace aiprof
