#include "src/cluster/mpi/mpi_gather.h"

#include <mpi.h>
#include <xxhash.h>

#include <climits>
#include <cstdlib>

namespace aiprof {

namespace {

std::string Units(unsigned long long n) { return std::to_string(n) + (n == 1 ? " unit" : " units"); }

// Hash of the unit list (paths, kinds and listing errors, in order).
unsigned long long UnitsHash(const std::vector<MapUnit>& units) {
  std::string all;
  for (const MapUnit& u : units) {
    all += u.path;
    all += '\0';
    all += std::to_string(u.kind);
    all += '\0';
    all += u.error;
    all += '\0';
  }
  return XXH3_64bits(all.data(), all.size());
}

// Collective: every process's (hash, count) of its unit list at process 0,
// which names the processes whose list differs from its own.
Status CheckSameUnits(const std::vector<MapUnit>& units, int rank, int size) {
  unsigned long long mine[2] = {UnitsHash(units), static_cast<unsigned long long>(units.size())};
  std::vector<unsigned long long> all(2 * static_cast<size_t>(size));
  MPI_Gather(mine, 2, MPI_UNSIGNED_LONG_LONG, all.data(), 2, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  std::string differ;
  int differing = 0;
  if (rank == 0) {
    for (int p = 1; p < size; ++p) {
      const unsigned long long* theirs = all.data() + 2 * static_cast<size_t>(p);
      if (theirs[0] == mine[0] && theirs[1] == mine[1]) continue;
      if (++differing <= 20) {
        differ += (differing > 1 ? ", " : "") + std::to_string(p) + " (" + Units(theirs[1]) +
                  (theirs[1] == mine[1] ? ", other paths or order)" : ")");
      }
    }
    if (differing > 20) differ += " and " + std::to_string(differing - 20) + " more";
  }
  MPI_Bcast(&differing, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (differing == 0) return OkStatus();
  if (rank != 0) {
    return ErrStatus("MPI process " + std::to_string(rank) +
                     ": stopped, the MPI processes do not list the same inputs (process 0's error names them)");
  }
  return ErrStatus("the MPI processes do not list the same inputs: process 0 lists " + Units(units.size()) +
                   " (first " + (units.empty() ? std::string("none") : units.front().path) + "), and " +
                   (differing == 1 ? "process " : "processes ") + differ + (differing == 1 ? " lists" : " list") +
                   " others. Each process lists the inputs itself, so all must see the same files (not "
                   "node-local paths, nor a shared folder that changed while they started); nothing was mapped");
}

}  // namespace

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
  // Every process lists the units itself; they must agree (same units, same
  // order), else process p maps other traces than process 0 assigns to it
  // and the report mixes jobs. Checked on a hash and count of the list,
  // before any mapping.
  if (Status same = CheckSameUnits(units, rank, size); !same.ok()) {
    MPI_Finalize();
    return same;
  }
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
        const std::string where = "the digests from MPI process " + std::to_string(p);
        size_t expected = 0;
        for (size_t i = static_cast<size_t>(p); i < units.size(); i += static_cast<size_t>(size)) ++expected;
        // Its part must be exactly one digest per unit it maps: bytes after
        // them, or fewer, are an error naming the process and the offset.
        std::vector<DigestAt> got;
        if (!part.empty()) status = ParseDigests(part, where, &got);
        if (status.ok() && got.size() != expected) {
          status = ErrStatus(where + ": " + std::to_string(got.size()) + " digests, expected " +
                             std::to_string(expected) + " (one per unit it maps)");
        }
        for (size_t k = 0; k < got.size() && status.ok(); ++k) {
          const size_t end = k + 1 < got.size() ? got[k + 1].offset : part.size();
          ordered[static_cast<size_t>(p) + k * static_cast<size_t>(size)] =
              std::string(part.substr(got[k].offset, end - got[k].offset));
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
