#include "src/cluster/mpi/mpi_transport.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>

namespace aiprof {

namespace {

std::string ProgramDir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  std::string path(buf, static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::vector<std::string> Candidates() {
  if (const char* env = std::getenv("AIPROF_MPI_MODULE"); env != nullptr && *env != '\0') return {env};
  const std::string dir = ProgramDir();
  if (dir.empty()) return {};
  return {dir + "/aiprof_mpi.so", dir + "/" + AIPROF_MPI_MODULE_FROM_BIN};
}

}  // namespace

StatusOr<std::unique_ptr<MpiTransport>> OpenMpiTransport() {
  std::string tried;
  for (const std::string& path : Candidates()) {
    if (access(path.c_str(), F_OK) != 0) {
      tried += "\n  " + path + ": " + std::strerror(errno);
      continue;
    }
    // RTLD_GLOBAL: OpenMPI's own components, which it dlopens, resolve
    // symbols of libmpi and libopen-pal in the global scope.
    void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (module == nullptr) {
      const char* why = dlerror();
      tried += "\n  " + path + ": " + (why != nullptr ? why : "dlopen failed");
      continue;
    }
    auto version = reinterpret_cast<MpiVersionFn>(dlsym(module, AIPROF_MPI_VERSION_SYMBOL));
    auto open = reinterpret_cast<MpiOpenFn>(dlsym(module, AIPROF_MPI_OPEN_SYMBOL));
    if (version == nullptr || open == nullptr) {
      tried += "\n  " + path + ": not an aiprof MPI module (no " AIPROF_MPI_OPEN_SYMBOL ")";
      continue;
    }
    if (std::strcmp(version(), AIPROF_VERSION) != 0) {
      tried += "\n  " + path + ": built for aiprof " + version() + ", this is " + AIPROF_VERSION;
      continue;
    }
    // The module stays loaded for the life of the process (MPI cannot be
    // initialised twice, and the transport's code is in it).
    char error[512] = {};
    MpiTransport* transport = open(error, sizeof(error));
    if (transport == nullptr) return ErrStatus(path + ": " + (error[0] != '\0' ? error : "MPI did not start"));
    return std::unique_ptr<MpiTransport>(transport);
  }
  return ErrStatus("an MPI launcher started this process, but aiprof's MPI module could not be loaded (tried:" + tried +
                   ")\nInstall OpenMPI's library (Debian: libopenmpi3) and the aiprof build's aiprof_mpi.so, set "
                   "AIPROF_MPI_MODULE to its path, or run `aiprof cluster analyze` without mpirun/srun");
}

}  // namespace aiprof
