#include "src/cluster/mpi/mpi_gather.h"

#include <xxhash.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "src/cluster/mpi/mpi_transport.h"
#include "src/render/escape.h"

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
Status CheckSameUnits(const std::vector<MapUnit>& units, MpiTransport& mpi) {
  const int rank = mpi.rank(), size = mpi.size();
  uint64_t mine[2] = {UnitsHash(units), static_cast<uint64_t>(units.size())};
  std::vector<uint64_t> all(2 * static_cast<size_t>(size));
  mpi.GatherU64(mine, 2, all.data());
  std::string differ;
  int differing = 0;
  if (rank == 0) {
    for (int p = 1; p < size; ++p) {
      const uint64_t* theirs = all.data() + 2 * static_cast<size_t>(p);
      if (theirs[0] == mine[0] && theirs[1] == mine[1]) continue;
      if (++differing <= 20) {
        differ += (differing > 1 ? ", " : "") + std::to_string(p) + " (" + Units(theirs[1]) +
                  (theirs[1] == mine[1] ? ", other paths or order)" : ")");
      }
    }
    if (differing > 20) differ += " and " + std::to_string(differing - 20) + " more";
  }
  if (rank == 0 && differing > 0) {
    // Written before the others learn of it: they then stop with an error,
    // and mpirun ends the whole job at the first non-zero exit, which could
    // kill this process before its error reached the user (e2e_cluster_mpi's
    // D5 lost it once, under load). Written as the CLI writes errors.
    const std::string why =
        "the MPI processes do not list the same inputs: process 0 lists " + Units(units.size()) + " (first " +
        (units.empty() ? std::string("none") : units.front().path) + "), and " +
        (differing == 1 ? "process " : "processes ") + differ + (differing == 1 ? " lists" : " list") +
        " others. Each process lists the inputs itself, so all must see the same files (not node-local paths, nor "
        "a shared folder that changed while they started); nothing was mapped";
    std::fprintf(stderr, "aiprof: error: %s\n", EscapeControls(why, /*keep_line_breaks=*/true).c_str());
    std::fflush(stderr);
  }
  mpi.BroadcastInt(&differing);
  if (differing == 0) return OkStatus();
  if (rank != 0) {
    return ErrStatus("MPI process " + std::to_string(rank) +
                     ": stopped, the MPI processes do not list the same inputs (process 0's error names them)");
  }
  return ErrStatus("stopped: the MPI processes do not list the same inputs (the error above names them)");
}

void AppendCount(uint64_t n, std::string* out) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((n >> (8 * i)) & 0xff));
}

// Process p's part: for each unit it maps (p, p + size, ...), a digest
// count and that many digests; every byte accounted for. Each unit's
// digests go to (*ordered)[unit]. Errors name the process and the offset.
Status SplitPart(std::string_view part, size_t p, size_t size, std::vector<std::vector<std::string>>* ordered) {
  const std::string where = "the digests from MPI process " + std::to_string(p);
  size_t at = 0;
  for (size_t unit = p; unit < ordered->size(); unit += size) {
    if (part.size() - at < 8) {
      return ErrStatus(where + ": ends at byte " + std::to_string(at) + ", before the digests of unit " +
                       std::to_string(unit) + " (of the " + std::to_string((ordered->size() - p + size - 1) / size) +
                       " units it maps)");
    }
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<unsigned char>(part[at + i])) << (8 * i);
    at += 8;
    // Each digest is at least a header: a count beyond that is corrupt.
    if (n == 0 || n > (part.size() - at) / kDigestHeaderBytes) {
      return ErrStatus(where + ": " + std::to_string(n) + " digests announced at byte " + std::to_string(at - 8) +
                       " for unit " + std::to_string(unit) + ", with " + std::to_string(part.size() - at) +
                       " bytes left (each unit gives one digest per rank it holds)");
    }
    for (uint64_t k = 0; k < n; ++k) {
      size_t used = 0;
      StatusOr<RankDigest> d = ParseDigest(part.substr(at), where + ", byte " + std::to_string(at), &used);
      if (!d.ok()) return d.status();
      (*ordered)[unit].emplace_back(part.substr(at, used));
      at += used;
    }
  }
  if (at != part.size()) {
    return ErrStatus(where + ": " + std::to_string(part.size() - at) +
                     " bytes after the digests of its units, from byte " + std::to_string(at));
  }
  return OkStatus();
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
  // MPI is finalised when `mpi` goes out of scope, on every return below.
  ASSIGN_OR_RETURN(std::unique_ptr<MpiTransport> mpi, OpenMpiTransport());
  const int rank = mpi->rank(), size = mpi->size();
  info->process = rank;
  info->processes = size;
  // Every process lists the units itself; they must agree (same units, same
  // order), else process p maps other traces than process 0 assigns to it
  // and the report mixes jobs. Checked on a hash and count of the list,
  // before any mapping.
  if (Status same = CheckSameUnits(units, *mpi); !same.ok()) return same;
  // This process's share, serialized: per unit, its digest count (u64,
  // little-endian: a trace of several ranks gives one digest each), then
  // its digests, each one's length known from its header.
  std::string blob;
  {
    std::vector<std::vector<RankDigest>> mine =
        MapUnitGroups(units, static_cast<size_t>(rank), static_cast<size_t>(size), threads, host);
    for (const std::vector<RankDigest>& group : mine) {
      AppendCount(group.size(), &blob);
      for (const RankDigest& d : group) SerializeDigest(d, &blob);
    }
  }
  const uint64_t length = blob.size();
  std::vector<uint64_t> lengths(static_cast<size_t>(size));
  mpi->GatherU64(&length, 1, lengths.data());
  int fits = 1;
  std::vector<int> counts(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
  if (rank == 0) {
    uint64_t total = 0;
    for (int p = 0; p < size; ++p) {
      displs[static_cast<size_t>(p)] = static_cast<int>(std::min<uint64_t>(total, INT_MAX));
      counts[static_cast<size_t>(p)] = static_cast<int>(std::min<uint64_t>(lengths[static_cast<size_t>(p)], INT_MAX));
      total += lengths[static_cast<size_t>(p)];
    }
    fits = total <= INT_MAX ? 1 : 0;
  }
  mpi->BroadcastInt(&fits);
  Status status = OkStatus();
  if (!fits) {
    status = ErrStatus(
        "the digests of all ranks exceed 2 GiB, more than one MPI_Gatherv carries; reduce digest files instead");
  } else {
    std::string all;
    if (rank == 0) {
      uint64_t total = 0;
      for (uint64_t l : lengths) total += l;
      all.resize(static_cast<size_t>(total));
    }
    mpi->GatherBytes(blob, counts, displs, rank == 0 ? all.data() : nullptr);
    if (rank == 0) {
      // Process p holds units p, p + size, ...: put them back in unit order.
      std::vector<std::vector<std::string>> ordered(units.size());
      for (int p = 0; p < size && status.ok(); ++p) {
        std::string_view part(all.data() + displs[static_cast<size_t>(p)],
                              static_cast<size_t>(counts[static_cast<size_t>(p)]));
        status = SplitPart(part, static_cast<size_t>(p), static_cast<size_t>(size), &ordered);
      }
      std::vector<std::string> flat;
      for (std::vector<std::string>& group : ordered) {
        for (std::string& d : group) flat.push_back(std::move(d));
      }
      if (status.ok()) status = on_root(std::move(flat));
    }
  }
  mpi->Barrier();
  return status;
}

}  // namespace aiprof
