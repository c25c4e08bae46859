#include "src/analysis/validation/trace_identity.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {
namespace {

constexpr uint64_t kMul1 = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kMul2 = 0xC2B2AE3D27D4EB4Full;

uint64_t Mix(uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x;
}

// A streaming hash of bytes, eight at a time.
class Hasher {
 public:
  void Add(const char* p, size_t n) {
    size_ += n;
    while (n > 0) {
      size_t take = std::min(n, 8 - fill_);
      std::memcpy(buf_ + fill_, p, take);
      fill_ += take;
      p += take;
      n -= take;
      if (fill_ == 8) Flush();
    }
  }
  void Add(std::string_view s) { Add(s.data(), s.size()); }
  uint64_t Finish() {
    if (fill_ > 0) {
      std::memset(buf_ + fill_, 0, 8 - fill_);
      Flush();
    }
    return Mix(h_ ^ size_);
  }
  uint64_t size() const { return size_; }

 private:
  void Flush() {
    uint64_t w;
    std::memcpy(&w, buf_, 8);
    h_ = (h_ ^ Mix(w * kMul1)) * kMul2;
    h_ = (h_ << 29) | (h_ >> 35);
    fill_ = 0;
  }
  uint64_t h_ = 0x243F6A8885A308D3ull, size_ = 0;
  char buf_[8];
  size_t fill_ = 0;
};

Status HashFile(const std::filesystem::path& path, Hasher* h) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrStatus(path.string() + ": cannot open to identify it");
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h->Add(buf.data(), static_cast<size_t>(in.gcount()));
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
  Hasher h;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> files;
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec)) files.push_back(it->path());
    }
    if (ec) return ErrStatus(path + ": cannot list to identify it: " + ec.message());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      const std::string rel = fs::relative(f, path, ec).generic_string();
      h.Add(rel.c_str(), rel.size() + 1);  // the NUL separates a name from the bytes
      RETURN_IF_ERROR(HashFile(f, &h));
    }
  } else {
    RETURN_IF_ERROR(HashFile(path, &h));
  }
  const uint64_t size = h.size();
  char b[24];
  std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(size));
  return Hex(h.Finish()) + "-" + b;
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
    Hasher h;
    h.Add(s);
    names.insert(h.Finish());
  }
  std::string out;
  for (int k = 0; k < kWorkloadHashes; ++k) {
    uint64_t lowest = std::numeric_limits<uint64_t>::max();
    const uint64_t seed = Mix(static_cast<uint64_t>(k + 1) * kMul1);
    for (uint64_t n : names) lowest = std::min(lowest, Mix(n ^ seed));
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
