#include "src/analysis/validation/trace_identity.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {
namespace {

// Bytes hashed with XXH3 (libxxhash, as the cluster digests are), one
// megabyte at a time. Only regular files are read: a FIFO or a device
// named as a trace (or inside a trace folder) would block or never end
// (found when MCP's load_trace, which identifies what it loads, hung on a
// FIFO of e2e_mcp's hostile inputs).
Status HashFile(const std::filesystem::path& path, XXH3_state_t* h, uint64_t* size) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return ErrStatus(path.string() + ": not a regular file; not read to identify it");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrStatus(path.string() + ": cannot open to identify it");
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const size_t got = static_cast<size_t>(in.gcount());
    XXH3_64bits_update(h, buf.data(), got);
    *size += got;
  }
  if (in.bad()) return ErrStatus(path.string() + ": cannot read to identify it");
  return OkStatus();
}

std::string Hex(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace

StatusOr<std::string> InputIdentity(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> h(XXH3_createState(), &XXH3_freeState);
  if (!h || XXH3_64bits_reset(h.get()) != XXH_OK) return ErrStatus(path + ": cannot identify it (out of memory)");
  uint64_t size = 0;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> files;
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_symlink(ec) && it->is_regular_file(ec)) files.push_back(it->path());
    }
    if (ec) return ErrStatus(path + ": cannot list to identify it: " + ec.message());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      const std::string rel = fs::relative(f, path, ec).generic_string();
      XXH3_64bits_update(h.get(), rel.c_str(), rel.size() + 1);  // the NUL separates a name from the bytes
      RETURN_IF_ERROR(HashFile(f, h.get(), &size));
    }
  } else {
    RETURN_IF_ERROR(HashFile(path, h.get(), &size));
  }
  char b[24];
  std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(size));
  return Hex(XXH3_64bits_digest(h.get())) + "-" + b;
}

std::string WorkloadSignature(const Trace& trace) {
  std::unordered_set<uint32_t> ids;
  for (size_t i = 0; i < trace.slices.size(); ++i) ids.insert(trace.slices.name[i].raw);
  if (ids.empty()) return "";
  std::unordered_set<uint64_t> names;
  for (uint32_t id : ids) {
    std::string_view s = trace.Str(StringId{id});
    // "ProfilerStep#12" is the name "ProfilerStep" of step 12.
    const size_t hash = s.rfind('#');
    if (hash != std::string_view::npos && hash + 1 < s.size() &&
        std::all_of(s.begin() + hash + 1, s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      s = s.substr(0, hash);
    }
    names.insert(XXH3_64bits(s.data(), s.size()));
  }
  std::string out;
  for (int k = 0; k < kWorkloadHashes; ++k) {
    uint64_t lowest = std::numeric_limits<uint64_t>::max();
    // The k-th of the MinHash's hash functions: XXH3 seeded with k + 1.
    for (uint64_t n : names) lowest = std::min(lowest, XXH3_64bits_withSeed(&n, sizeof n, k + 1));
    out += Hex(lowest);
  }
  return out;
}

double WorkloadSimilarity(const std::string& a, const std::string& b) {
  constexpr size_t kLen = 16 * kWorkloadHashes;
  if (a.size() != kLen || b.size() != kLen) return -1;
  int same = 0;
  for (size_t k = 0; k < kLen; k += 16) same += a.compare(k, 16, b, k, 16) == 0;
  return static_cast<double>(same) / kWorkloadHashes;
}

}  // namespace aiprof
