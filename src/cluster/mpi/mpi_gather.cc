#include "src/cluster/mpi/mpi_gather.h"

#include <mpi.h>

#include <climits>
#include <cstdlib>

namespace aiprof {

bool LaunchedByMpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK", "MPI_LOCALNRANKS"}) {
    if (std::getenv(v) != nullptr) return true;
  }
  return false;
}

Status MpiMapAndGather(const std::vector<MapUnit>& units, size_t threads, const std::string& host,
                       const std::function<Status(std::vector<std::string>)>& on_root, MpiGathered* info) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && MPI_Init(nullptr, nullptr) != MPI_SUCCESS) return ErrStatus("MPI_Init failed");
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  info->process = rank;
  info->processes = size;
  // This process's share, serialized, each digest's length first known from its header.
  std::vector<RankDigest> mine = MapUnits(units, static_cast<size_t>(rank), static_cast<size_t>(size), threads, host);
  std::string blob;
  for (const RankDigest& d : mine) SerializeDigest(d, &blob);
  mine.clear();
  long long length = static_cast<long long>(blob.size());
  std::vector<long long> lengths(static_cast<size_t>(size));
  MPI_Gather(&length, 1, MPI_LONG_LONG, lengths.data(), 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  int fits = 1;
  std::vector<int> counts(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
  if (rank == 0) {
    long long total = 0;
    for (int p = 0; p < size; ++p) {
      displs[static_cast<size_t>(p)] = static_cast<int>(std::min<long long>(total, INT_MAX));
      counts[static_cast<size_t>(p)] = static_cast<int>(std::min<long long>(lengths[static_cast<size_t>(p)], INT_MAX));
      total += lengths[static_cast<size_t>(p)];
    }
    fits = total <= INT_MAX ? 1 : 0;
  }
  MPI_Bcast(&fits, 1, MPI_INT, 0, MPI_COMM_WORLD);
  Status status = OkStatus();
  if (!fits) {
    status = ErrStatus("the digests of all ranks exceed 2 GiB, more than one MPI_Gatherv carries; reduce digest files instead");
  } else {
    std::string all;
    if (rank == 0) {
      long long total = 0;
      for (long long l : lengths) total += l;
      all.resize(static_cast<size_t>(total));
    }
    MPI_Gatherv(blob.data(), static_cast<int>(blob.size()), MPI_BYTE, rank == 0 ? all.data() : nullptr, counts.data(),
                displs.data(), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      // Process p holds units p, p + size, ...: put them back in unit order.
      std::vector<std::string> ordered(units.size());
      for (int p = 0; p < size && status.ok(); ++p) {
        std::string_view part(all.data() + displs[static_cast<size_t>(p)], static_cast<size_t>(counts[static_cast<size_t>(p)]));
        for (size_t i = static_cast<size_t>(p); i < units.size(); i += static_cast<size_t>(size)) {
          size_t used = 0;
          StatusOr<RankDigest> d = ParseDigest(part, "digest from MPI process " + std::to_string(p), &used);
          if (!d.ok()) {
            status = d.status();
            break;
          }
          ordered[i] = std::string(part.substr(0, used));
          part.remove_prefix(used);
        }
      }
      if (status.ok()) status = on_root(std::move(ordered));
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}

}  // namespace aiprof
