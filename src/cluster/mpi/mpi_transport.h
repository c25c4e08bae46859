// The few MPI operations `aiprof cluster analyze` needs, behind an interface,
// so that the aiprof program does not link OpenMPI: the implementation is the
// shared module aiprof_mpi.so (src/cluster/mpi/module/), loaded with dlopen
// only when an MPI launcher started the process. Linked in, OpenMPI's eight
// libraries cost every start of aiprof about 4 ms of wall and CPU time and
// 88 page faults (aiprof relinked with -lmpi_cxx -lmpi against the same
// objects without: median of paired differences, 300 alternating runs of
// --version, twice, 2026-12-06; README.md "Start-up"), and aiprof could not
// start at all on a machine without them. (The 13 ms said before was an
// empty program's, whose other libraries aiprof loads anyway.)
//
// The module and the program are built together (same compiler, same
// libstdc++): the interface is a C++ class and its entry point a C symbol
// whose name carries the interface's version.
#ifndef AIPROF_SRC_CLUSTER_MPI_MPI_TRANSPORT_H_
#define AIPROF_SRC_CLUSTER_MPI_MPI_TRANSPORT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"

namespace aiprof {

// MPI_COMM_WORLD of an initialised MPI; its destructor finalises MPI. Every
// operation is collective: all processes call it, in the same order.
class MpiTransport {
 public:
  virtual ~MpiTransport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Process 0 gets every process's `n` values, process p's at all[p * n]
  // (`all` holds size() * n there; others may pass nullptr).
  virtual void GatherU64(const uint64_t* mine, int n, uint64_t* all) = 0;
  // Process 0's value to every process.
  virtual void BroadcastInt(int* value) = 0;
  // Process 0 gets process p's `mine` at all + displs[p], counts[p] bytes
  // (counts and displs are read at process 0 only).
  virtual void GatherBytes(std::string_view mine, const std::vector<int>& counts, const std::vector<int>& displs,
                           char* all) = 0;
  virtual void Barrier() = 0;
};

// The module's entry point: initialises MPI (unless the process already has)
// and returns the transport, or nullptr with the reason in `error`
// (`error_size` bytes, NUL-terminated).
#define AIPROF_MPI_OPEN_SYMBOL "aiprof_mpi_open_v1"
using MpiOpenFn = MpiTransport* (*)(char* error, size_t error_size);
// The version of aiprof the module was built with; loading refuses another.
#define AIPROF_MPI_VERSION_SYMBOL "aiprof_mpi_version"
using MpiVersionFn = const char* (*)();

// Loads the module and opens MPI. The module is looked up
// (src/base/module_loader.h) as $AIPROF_MPI_MODULE when set, else
// aiprof_mpi.so beside the program (the build tree), else the install
// location relative to the program (AIPROF_MPI_MODULE_FROM_BIN). The error
// names every path tried and why.
StatusOr<std::unique_ptr<MpiTransport>> OpenMpiTransport();

}  // namespace aiprof

#endif  // AIPROF_SRC_CLUSTER_MPI_MPI_TRANSPORT_H_
