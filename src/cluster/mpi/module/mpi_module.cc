// aiprof_mpi.so: MpiTransport over OpenMPI (or any MPI), loaded by the aiprof
// program with dlopen when an MPI launcher started it (mpi_transport.h). The
// only file that includes <mpi.h>; it links MPI's C library, not its C++
// bindings (which <mpi.h> includes into C++ unless told not to: their
// symbols are in libmpi_cxx, which the module does not link).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdio>

#include "src/cluster/mpi/mpi_transport.h"

namespace aiprof {
namespace {

class OpenMpi final : public MpiTransport {
 public:
  OpenMpi(int rank, int size, bool finalize) : rank_(rank), size_(size), finalize_(finalize) {}
  ~OpenMpi() override {
    if (finalize_) MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void GatherU64(const uint64_t* mine, int n, uint64_t* all) override {
    MPI_Gather(mine, n, MPI_UINT64_T, all, n, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  }
  void BroadcastInt(int* value) override { MPI_Bcast(value, 1, MPI_INT, 0, MPI_COMM_WORLD); }
  void GatherBytes(std::string_view mine, const std::vector<int>& counts, const std::vector<int>& displs,
                   char* all) override {
    MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all, counts.data(), displs.data(), MPI_BYTE, 0,
                MPI_COMM_WORLD);
  }
  void Barrier() override { MPI_Barrier(MPI_COMM_WORLD); }

 private:
  int rank_, size_;
  bool finalize_;
};

}  // namespace
}  // namespace aiprof

extern "C" __attribute__((visibility("default"))) const char* aiprof_mpi_version() { return AIPROF_VERSION; }

extern "C" __attribute__((visibility("default"))) aiprof::MpiTransport* aiprof_mpi_open_v1(char* error,
                                                                                           size_t error_size) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && MPI_Init(nullptr, nullptr) != MPI_SUCCESS) {
    std::snprintf(error, error_size, "MPI_Init failed");
    return nullptr;
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // MPI started by someone else in this process is left for them to finalise.
  return new aiprof::OpenMpi(rank, size, !initialized);
}
