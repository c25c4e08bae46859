// Starting a command in a forked child, safely in a process with threads.
// After fork() only async-signal-safe calls are allowed in the child: a
// malloc (setenv, std::string, std::vector, fprintf) can wait forever on a
// lock another thread of the parent held at the fork (found under ASan:
// `aiprof monitor --metrics-listen` forked while its HTTP server thread ran,
// and the child hung in setenv's malloc before exec). So the command's
// environment, its argv and the error message are built before the fork,
// and the child only execs them (ExecPrepared).
#ifndef AIPROF_SRC_BASE_CHILD_PROCESS_H_
#define AIPROF_SRC_BASE_CHILD_PROCESS_H_

#include <string>
#include <string_view>
#include <vector>

namespace aiprof {

class PreparedCommand {
 public:
  // `command`: the program (looked up on PATH) and its arguments; the
  // environment starts as this process's. `what`: the message's prefix
  // when the exec fails ("aiprof monitor").
  PreparedCommand(const std::vector<std::string>& command, std::string what);

  // Environment edits, before the fork. `overwrite` false keeps a value the
  // environment already has (setenv's rule).
  void SetEnv(std::string_view name, std::string_view value, bool overwrite = true);
  void UnsetEnv(std::string_view name);
  // The value this environment gives `name` ("" when unset).
  std::string GetEnv(std::string_view name) const;

  // The child gets `signal` when this process (the thread that forks it)
  // ends, however it ends, SIGKILL and the OOM killer included
  // (PR_SET_PDEATHSIG); if this process is already gone when the child
  // runs, the child sends it to itself at once. So a command aiprof started
  // never outlives it, still instrumented. Call before the fork.
  void StopWithParent(int signal);

  // In the child, after fork: execs the command with the prepared
  // environment; on failure writes "WHAT: cannot run PROGRAM: REASON" to
  // standard error and _exits with 127. Async-signal-safe.
  [[noreturn]] void ExecPrepared();

 private:
  void Freeze();
  std::vector<std::string> args_, env_;
  std::vector<char*> argv_, envp_;
  std::string failure_;  // "WHAT: cannot run PROGRAM: "
  int parent_death_signal_ = 0;
  int parent_pid_ = 0;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_CHILD_PROCESS_H_
