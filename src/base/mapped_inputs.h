// Input files read through a memory mapping, for a SIGBUS handler that names
// them.
//
// A mapped file that another program truncates while aiprof reads it (a
// profiler rewriting its trace, a copy over it, a log rotator) raises SIGBUS
// at the first page past its new end: `aiprof summary big.json` ended with
// "Bus error", exit 135, naming nothing. Readers register what they map;
// the handler (installed by the command line) says which file shrank and
// exits 1. A SIGBUS anywhere else keeps its default action.
#ifndef AIPROF_SRC_BASE_MAPPED_INPUTS_H_
#define AIPROF_SRC_BASE_MAPPED_INPUTS_H_

#include <cstddef>
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

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_MAPPED_INPUTS_H_
