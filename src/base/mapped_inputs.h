// Input files read through a memory mapping, for a SIGBUS handler that names
// them.
//
// A mapped file that another program truncates while aiprof reads it (a
// profiler rewriting its trace, a copy over it, a log rotator) raises SIGBUS
// at the first page past its new end: `aiprof summary big.json` ended with
// "Bus error", exit 135, naming nothing. Readers register what they map;
// the handler (installed by the command line) says which file shrank and
// exits 1. A SIGBUS anywhere else keeps its default action.
//
// A server (`aiprof serve`) must not end because one file of its logdir
// shrank: with faults made recoverable, the handler maps zero pages over the
// rest of that mapping instead, so the reader goes on over zeros (which it
// treats as it treats any broken input), and records the file; the server
// then fails that file's conversion with RecoveredMappedInputFault.
#ifndef AIPROF_SRC_BASE_MAPPED_INPUTS_H_
#define AIPROF_SRC_BASE_MAPPED_INPUTS_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace aiprof {

// Registers [begin, begin + size) as the mapping of `path`; returns a slot to
// unregister, or -1 when every slot is taken (the mapping is then not named:
// a SIGBUS there keeps its default action).
int RegisterMappedInput(const void* begin, size_t size, const std::string& path);
// Forgets a slot RegisterMappedInput returned (-1: nothing).
void UnregisterMappedInput(int slot);

// Installs the SIGBUS handler: a fault inside a registered mapping writes
// "aiprof: error: PATH: the file shrank while it was read ..." to standard
// error and exits 1.
void InstallMappedInputBusHandler();

// Process-wide: whether a SIGBUS inside a registered mapping is recovered
// (the rest of that mapping reads as zeros from then on, the fault is
// recorded) instead of ending the process. Off by default (the command
// line's commands end naming the file).
void SetMappedInputFaultsRecoverable(bool recoverable);

// The number of faults recovered so far: pass it to
// RecoveredMappedInputFault before the reads to check.
uint64_t RecoveredMappedInputFaults();

// After a recovered fault numbered `since` or later in a mapping registered
// as `path` or as a file under the folder `path`: "FILE: the file shrank
// while it was read ...", naming that file; "" when there was none. (Only
// the last 64 faults are kept: with more since `since`, a fault is assumed.)
std::string RecoveredMappedInputFault(uint64_t since, const std::string& path);

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_MAPPED_INPUTS_H_
