#include "src/base/child_process.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace aiprof {
namespace {

bool IsVar(const std::string& entry, std::string_view name) {
  return entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 && entry[name.size()] == '=';
}

}  // namespace

PreparedCommand::PreparedCommand(const std::vector<std::string>& command, std::string what) : args_(command) {
  for (char** e = environ; e && *e; ++e) env_.emplace_back(*e);
  failure_ = std::move(what) + ": cannot run " + (args_.empty() ? std::string() : args_[0]) + ": ";
  Freeze();
}

void PreparedCommand::SetEnv(std::string_view name, std::string_view value, bool overwrite) {
  for (std::string& e : env_) {
    if (IsVar(e, name)) {
      if (overwrite) e = std::string(name) + "=" + std::string(value);
      Freeze();
      return;
    }
  }
  env_.push_back(std::string(name) + "=" + std::string(value));
  Freeze();
}

void PreparedCommand::UnsetEnv(std::string_view name) {
  std::erase_if(env_, [&](const std::string& e) { return IsVar(e, name); });
  Freeze();
}

std::string PreparedCommand::GetEnv(std::string_view name) const {
  for (const std::string& e : env_) {
    if (IsVar(e, name)) return e.substr(name.size() + 1);
  }
  return "";
}

void PreparedCommand::Freeze() {
  argv_.clear();
  for (std::string& a : args_) argv_.push_back(a.data());
  argv_.push_back(nullptr);
  envp_.clear();
  for (std::string& e : env_) envp_.push_back(e.data());
  envp_.push_back(nullptr);
}

void PreparedCommand::StopWithParent(int signal) {
  parent_death_signal_ = signal;
  parent_pid_ = static_cast<int>(getpid());
}

void PreparedCommand::ExecPrepared() {
  if (parent_death_signal_ != 0) {
    prctl(PR_SET_PDEATHSIG, parent_death_signal_);
    // The parent died between the fork and the prctl: no signal will come.
    if (getppid() != parent_pid_) kill(getpid(), parent_death_signal_);
  }
  if (argv_[0] != nullptr) execvpe(argv_[0], argv_.data(), envp_.data());
  const int err = argv_[0] != nullptr ? errno : ENOENT;
  // write(2) only; strerrordesc_np returns a static string (no locale, no
  // allocation).
  const char* reason = strerrordesc_np(err);
  if (reason == nullptr) reason = "error";
  ssize_t ignored = write(STDERR_FILENO, failure_.data(), failure_.size());
  ignored = write(STDERR_FILENO, reason, std::strlen(reason));
  ignored = write(STDERR_FILENO, "\n", 1);
  (void)ignored;
  _exit(127);
}

}  // namespace aiprof
