// The MPI backend of `aiprof cluster analyze`: when an MPI launcher started
// the process, MPI is reached through the module aiprof_mpi.so
// (mpi_transport.h; built when CMake finds MPI). Each MPI process maps units
// i with i % size == rank, serializes its digests (per unit their count,
// then the digests: one per rank the unit's trace holds) and sends them
// with MPI_Gatherv to process 0, which gets every digest back in unit order. A unit that fails to import
// becomes a digest holding the reason, so no process aborts the job.
#ifndef AIPROF_SRC_CLUSTER_MPI_MPI_GATHER_H_
#define AIPROF_SRC_CLUSTER_MPI_MPI_GATHER_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "src/base/status.h"
#include "src/cluster/cluster_map.h"

namespace aiprof {

// True when an MPI launcher (mpirun/mpiexec, srun with PMI/PMIx) started this process.
bool LaunchedByMpi();

struct MpiGathered {
  int process = 0, processes = 1;
  // Process 0 only: every unit's digests, in unit order (serialized digests concatenated).
  std::optional<std::vector<std::string>> digests;
};

// MPI_Init, map this process's share, gather at process 0, MPI_Finalize
// (after `after_on_root` ran on process 0, so that the others wait).
Status MpiMapAndGather(const std::vector<MapUnit>& units, size_t threads, const std::string& host,
                       const std::function<Status(std::vector<std::string>)>& on_root, MpiGathered* info);

}  // namespace aiprof

#endif  // AIPROF_SRC_CLUSTER_MPI_MPI_GATHER_H_
