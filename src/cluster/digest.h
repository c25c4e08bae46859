// The per-rank digest: what the cross-rank reduce needs from one rank's
// trace, and nothing that grows with its events.
//
// Held per rank: per-step times and breakdown, every collective instance
// (its group, type, arrival and end on this rank's clock, message size, the
// step it falls in), per-type collective times, the top ops by total time
// with count, total, extremes and a DurationSketch, device busy/span,
// memory peaks, the per-link figures of communication_matrix.json, the
// profiler's own wait/transit split (communication.json), import
// diagnostics, rank, host and the input's path. A digest whose input could
// not be read holds only the input, the rank when its name tells it, and
// `error` (why).
//
// Arrival: a collective's start on this rank's device (for gloo, its host
// span), i.e. when the rank reached it; the transfer starts once the last
// rank has arrived, which only the reduce knows.
//
// File format (docs/cluster.md): the 8-byte magic "AIPDGST\n", u32 format
// version (kDigestVersion), u32 reserved (0), u64 payload length, u64
// XXH3-64 of the payload, then the payload: little-endian fixed-width
// integers and doubles, LEB128 varints for counts, strings as a varint
// length plus bytes. Digests are self-delimiting, so several can be
// concatenated in one buffer (the MPI backend gathers them so). A reader
// checks the magic, version, length and checksum, and every count against
// the bytes left: a truncated or corrupt digest is an error, never a crash.
#ifndef AIPROF_SRC_CLUSTER_DIGEST_H_
#define AIPROF_SRC_CLUSTER_DIGEST_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/duration_sketch.h"
#include "src/base/status.h"

namespace aiprof {

inline constexpr uint32_t kDigestVersion = 1;
inline constexpr char kDigestMagic[8] = {'A', 'I', 'P', 'D', 'G', 'S', 'T', '\n'};
inline constexpr size_t kDigestHeaderBytes = 8 + 4 + 4 + 8 + 8;
// Ops kept per rank (by total time); the rest are summed into one
// "(other ops)" row so that totals still add up.
inline constexpr size_t kDigestMaxOps = 256;
inline constexpr int32_t kDigestNoRank = -1;
// WriteDigestFile: at most this many digests of one rank (of different
// inputs) in a folder: rank-<N>.digest, rank-<N>.dup2.digest, ...
inline constexpr size_t kDigestMaxSameName = 1000;

struct DigestStep {
  int64_t number = -1;  // ProfilerStep#N, -1 unknown
  int64_t start_ns = 0, dur_ns = 0;
  // Breakdown over the step's window (step_breakdown.h, "timeline"); -1 unknown.
  int64_t computing_ns = -1, communication_ns = -1, exposed_comm_ns = -1, free_ns = -1;
  // step_trace_time.csv's Communication / Not Overlapped; -1 absent.
  int64_t profiler_comm_ns = -1, profiler_exposed_ns = -1;
};

struct DigestCollective {
  uint32_t group = 0;  // index into RankDigest::strings ("" unknown)
  uint8_t type = 0;    // CollectiveType
  int32_t device = -1;
  int64_t arrival_ns = 0, end_ns = 0;
  double bytes = -1;  // -1 unknown
  int64_t step = -1;  // the step that issued it (CollectiveSteps, collective_pairing.h), -1 none
};

struct DigestCollectiveType {
  uint8_t type = 0;
  uint64_t count = 0, sized = 0;
  int64_t total_ns = 0, max_ns = 0, sized_time_ns = 0, group_size = 0;
  double bytes = 0;
};

struct DigestOp {
  uint32_t name = 0, category = 0;  // indices into strings
  uint8_t kind = 0;                 // EventKind
  uint64_t count = 0;
  int64_t total_ns = 0, min_ns = 0, max_ns = 0;
  DurationSketch sketch;
};

struct DigestDevice {
  int32_t device = -1;
  int64_t busy_ns = 0, span_ns = 0;
};

struct DigestMemory {
  int64_t device_type = 0, device_id = -1;
  double peak_allocated = 0, peak_reserved = 0, capacity = 0;
};

struct DigestLink {
  std::string link, transport;
  double bytes = 0, time_ns = 0;
};

struct DigestDiagnostic {
  std::string kind, first_where, description;
  uint64_t count = 0;
};

struct RankDigest {
  int32_t rank = kDigestNoRank;
  int64_t world_size = 0;  // as the trace says it; 0 unknown
  std::string host, source, source_format;
  std::string error;  // non-empty: the input could not be used, and why
  int64_t span_ns = 0;  // first to last device activity
  uint64_t slice_count = 0;
  // communication.json "Total Op Info" split, ns; -1 absent.
  int64_t profiler_elapse_ns = -1, profiler_wait_ns = -1, profiler_transit_ns = -1;
  int64_t profiler_sync_ns = -1, profiler_idle_ns = -1;
  std::vector<std::string> strings;  // group, op and category names
  std::vector<DigestStep> steps;
  std::vector<DigestCollective> collectives;
  std::vector<DigestCollectiveType> collective_types;
  std::vector<DigestOp> ops;  // by total, largest first
  std::vector<DigestDevice> devices;
  std::vector<DigestMemory> memory;
  std::vector<DigestLink> links;
  std::vector<DigestDiagnostic> diagnostics;

  bool ok() const { return error.empty(); }
  std::string_view Str(uint32_t i) const { return i < strings.size() ? std::string_view(strings[i]) : ""; }
};

// Appends the digest's bytes to `out`.
void SerializeDigest(const RankDigest& d, std::string* out);

// Reads one digest at the start of `bytes` (which may hold more after it);
// `consumed` gets its length. `where` names the input in errors.
StatusOr<RankDigest> ParseDigest(std::string_view bytes, const std::string& where, size_t* consumed = nullptr);

// One digest of a buffer or file that holds several.
struct DigestAt {
  RankDigest digest;
  size_t offset = 0;  // its first byte in the buffer or file
};

// Reads every digest of `bytes` (digests concatenate), in order, into
// `out`. A digest that cannot be read, or bytes after the last whole digest,
// stop the reading: the error names `where`, which digest (its ordinal and
// byte offset) and why; the digests before it stay in `out`. No bytes at all
// is an error too (not a digest).
Status ParseDigests(std::string_view bytes, const std::string& where, std::vector<DigestAt>* out);

// Reads every digest of a file, as ParseDigests (`path` names it in errors).
Status ReadDigestFile(const std::string& path, std::vector<DigestAt>* out);

// How a digest was written.
struct DigestWrite {
  std::string path;
  // Not empty when `dir` already held a digest of the same name from another
  // input (a second input claiming the rank): that file, which was left as it
  // was; `path` is then a free name beside it (rank-<N>.dup<k>.digest).
  std::string clash;
};

// Writes `d` into `dir` as rank-<rank>.digest (input-<fallback>.digest when
// the rank is unknown), atomically. An existing file of that name is
// replaced only when it holds one digest of the same input (source and
// host): mapping a trace again refreshes its digest. Otherwise the file is
// kept and the digest goes to the first free rank-<N>.dup<k>.digest (k = 2,
// 3, ...; sorted after rank-<N>.digest, so the reduce keeps the first),
// created without replacing anything (safe when several maps write into one
// shared folder at once); the reduce sees both and reports the duplicate.
StatusOr<DigestWrite> WriteDigestFile(const RankDigest& d, const std::string& dir, size_t fallback);

}  // namespace aiprof

#endif  // AIPROF_SRC_CLUSTER_DIGEST_H_
