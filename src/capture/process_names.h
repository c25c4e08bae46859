// Names each process of a capture from its command line and role: the
// start-up hook (torch_hook.py) writes <capture dir>/procs/<pid>.txt in every
// Python process ("role" then "command line"; roles: "" for a command,
// "fork of PPID", "Pool worker N", "multiprocessing NAME", "DataLoader worker
// N"), and aiprof names the launched or attached process from its own command
// line when no such file says more. Every host track of the pid then carries
// the name as its process name (perf's comm, the SDK's and torch's names give
// way), so the DataLoader's workers no longer all read "python3".
#ifndef AIPROF_SRC_CAPTURE_PROCESS_NAMES_H_
#define AIPROF_SRC_CAPTURE_PROCESS_NAMES_H_

#include <cstdint>
#include <map>
#include <string>

#include "src/model/trace.h"

namespace aiprof {

struct ProcessRole {
  std::string role;     // "" for the process a command started
  std::string command;  // its command line, arguments joined by spaces
};

// The hook's files in `dir` by pid; files that are not "<pid>.txt" with two
// lines are left out.
std::map<int64_t, ProcessRole> ReadProcessRoles(const std::string& dir);

// "DataLoader worker 0 (python3 train.py --epochs 3)", or the command alone;
// the command is cut at 80 characters.
std::string ProcessLabel(const ProcessRole& p);

// Sets the process name of every host track (numeric pid, host device) of
// each pid in `roles`.
void NameProcesses(const std::map<int64_t, ProcessRole>& roles, Trace* trace);

}  // namespace aiprof

#endif  // AIPROF_SRC_CAPTURE_PROCESS_NAMES_H_
