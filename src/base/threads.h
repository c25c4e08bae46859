// How many threads parallel phases (import parsing, analyses) may use:
// `--threads N` on every command, else the cores this process may run on
// (at most 16).
#ifndef AIPROF_SRC_BASE_THREADS_H_
#define AIPROF_SRC_BASE_THREADS_H_

#include <cstddef>

namespace aiprof {

// The cores available to this process (its CPU affinity mask), at least 1.
size_t AvailableCores();
// The thread count set by SetWorkerThreads, else min(AvailableCores(), 16).
size_t WorkerThreads();
// 0 restores the default.
void SetWorkerThreads(size_t n);

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_THREADS_H_
