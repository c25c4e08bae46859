#include "src/cluster/mpi/mpi_transport.h"

#include "src/base/module_loader.h"

namespace aiprof {

StatusOr<std::unique_ptr<MpiTransport>> OpenMpiTransport() {
  ModuleSpec spec;
  spec.file_name = "aiprof_mpi.so";
  spec.from_bin = AIPROF_MPI_MODULE_FROM_BIN;
  spec.env_var = "AIPROF_MPI_MODULE";
  spec.version_symbol = AIPROF_MPI_VERSION_SYMBOL;
  spec.entry_symbol = AIPROF_MPI_OPEN_SYMBOL;
  // RTLD_GLOBAL: OpenMPI's own components, which it dlopens, resolve
  // symbols of libmpi and libopen-pal in the global scope.
  spec.global_symbols = true;
  spec.anchor = reinterpret_cast<const void*>(&OpenMpiTransport);
  StatusOr<LoadedModule> module = LoadModule(spec);
  if (!module.ok()) {
    return ErrStatus("an MPI launcher started this process, but aiprof's MPI module " + module.status().message() +
                     "\nInstall OpenMPI's library (Debian: libopenmpi3) and the aiprof build's aiprof_mpi.so, set "
                     "AIPROF_MPI_MODULE to its path, or run `aiprof cluster analyze` without mpirun/srun");
  }
  // The module stays loaded for the life of the process (MPI cannot be
  // initialised twice, and the transport's code is in it).
  auto open = reinterpret_cast<MpiOpenFn>(module->entry);
  char error[512] = {};
  MpiTransport* transport = open(error, sizeof(error));
  if (transport == nullptr) return ErrStatus(module->path + ": " + (error[0] != '\0' ? error : "MPI did not start"));
  return std::unique_ptr<MpiTransport>(transport);
}

}  // namespace aiprof
