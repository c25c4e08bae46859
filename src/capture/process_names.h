// Names each process of a capture from its command line and role: the
// start-up hook (torch_hook.py) writes <capture dir>/procs/<pid>.txt in every
// Python process ("role" then "command line"; roles: "" for a command,
// "fork of PPID", "Pool worker N", "multiprocessing NAME", "DataLoader worker
// N"), and aiprof names the launched or attached process from its own command
// line when no such file says more. Every host track of the pid then carries
// the name as its process name (perf's comm, the SDK's and torch's names give
// way), so the DataLoader's workers no longer all read "python3". Each
// process of a torch.distributed job is also put on its rank (AssignRanks).
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
  // Its torch.distributed rank where one is known (the hook's third line,
  // "rank R world_size W", from RANK and WORLD_SIZE in its environment; or
  // torch.distributed.get_rank() from its torch layer), else kNoRank;
  // world_size 0 when unknown.
  int32_t rank = kNoRank;
  int64_t world_size = 0;
};

// The hook's files in `dir` by pid; files that are not "<pid>.txt" with two
// lines are left out. A third line "rank R world_size W" sets the rank.
std::map<int64_t, ProcessRole> ReadProcessRoles(const std::string& dir);

// "DataLoader worker 0 (python3 train.py --epochs 3)", or the command alone;
// the command is cut at 80 characters.
std::string ProcessLabel(const ProcessRole& p);

// Sets the process name of every host track (numeric pid, host device) of
// each pid in `roles`.
void NameProcesses(const std::map<int64_t, ProcessRole>& roles, Trace* trace);

// Puts every host track (numeric pid, host device) of each pid in `roles`
// that has a rank on that rank, unless the track has one already (a torch
// file's tracks, device ones included, take their process's rank before the
// merge), then every step on its track's rank. Where all ranked processes
// agree on a world size, the trace's metadata "world_size" says it. Returns
// how many distinct ranks the trace's tracks have.
size_t AssignRanks(const std::map<int64_t, ProcessRole>& roles, Trace* trace);

// Every track and step of `trace` (one process's torch file) on `rank`.
void SetTraceRank(int32_t rank, Trace* trace);

}  // namespace aiprof

#endif  // AIPROF_SRC_CAPTURE_PROCESS_NAMES_H_
