#include "src/cluster/digest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/base/atomic_file.h"

namespace aiprof {
namespace {

class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}
  template <typename T>
  void Fixed(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out_->append(b, sizeof(T));
  }
  void Var(uint64_t v) {
    while (v >= 0x80) {
      out_->push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_->push_back(static_cast<char>(v));
  }
  // Zig-zag for signed values that are usually small.
  void SVar(int64_t v) { Var((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void Str(std::string_view s) {
    Var(s.size());
    out_->append(s);
  }

 private:
  std::string* out_;
};

class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  bool failed() const { return failed_; }
  size_t left() const { return b_.size() - pos_; }
  template <typename T>
  T Fixed() {
    T v{};
    if (left() < sizeof(T)) return Fail<T>();
    std::memcpy(&v, b_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  uint64_t Var() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (left() == 0) return Fail<uint64_t>();
      const uint8_t c = static_cast<uint8_t>(b_[pos_++]);
      v |= static_cast<uint64_t>(c & 0x7f) << shift;
      if (!(c & 0x80)) return v;
    }
    return Fail<uint64_t>();
  }
  int64_t SVar() {
    const uint64_t u = Var();
    return static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
  }
  std::string Str() {
    const uint64_t n = Var();
    if (n > left()) return Fail<std::string>();
    std::string s(b_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  // A count of items of at least `min_bytes` each; fails when they cannot fit.
  size_t Count(size_t min_bytes) {
    const uint64_t n = Var();
    if (min_bytes > 0 && n > left() / min_bytes) return Fail<size_t>();
    return static_cast<size_t>(n);
  }
  size_t pos() const { return pos_; }

 private:
  template <typename T>
  T Fail() {
    failed_ = true;
    pos_ = b_.size();
    return T{};
  }
  std::string_view b_;
  size_t pos_ = 0;
  bool failed_ = false;
};

void WriteSketch(Writer& w, const DurationSketch& s) {
  w.Var(s.zero_count());
  w.SVar(s.min_index());
  w.Var(s.buckets().size());
  for (uint64_t c : s.buckets()) w.Var(c);
}

bool ReadSketch(Reader& r, DurationSketch* s) {
  const uint64_t zero = r.Var();
  const int64_t min_index = r.SVar();
  const size_t n = r.Count(1);
  std::vector<uint64_t> b(n);
  for (uint64_t& c : b) c = r.Var();
  if (r.failed() || min_index < INT32_MIN || min_index > INT32_MAX) return false;
  return s->Assign(zero, static_cast<int32_t>(min_index), std::move(b));
}

void WritePayload(const RankDigest& d, Writer& w) {
  w.SVar(d.rank);
  w.SVar(d.world_size);
  w.Str(d.host);
  w.Str(d.source);
  w.Str(d.source_format);
  w.Str(d.error);
  w.SVar(d.span_ns);
  w.Var(d.slice_count);
  for (int64_t v : {d.profiler_elapse_ns, d.profiler_wait_ns, d.profiler_transit_ns, d.profiler_sync_ns, d.profiler_idle_ns}) {
    w.SVar(v);
  }
  w.Var(d.strings.size());
  for (const std::string& s : d.strings) w.Str(s);
  w.Var(d.steps.size());
  for (const DigestStep& s : d.steps) {
    for (int64_t v : {s.number, s.start_ns, s.dur_ns, s.computing_ns, s.communication_ns, s.exposed_comm_ns, s.free_ns,
                      s.profiler_comm_ns, s.profiler_exposed_ns}) {
      w.SVar(v);
    }
  }
  w.Var(d.collectives.size());
  int64_t previous = 0;  // arrivals delta-coded against the previous instance
  for (const DigestCollective& c : d.collectives) {
    w.Var(c.group);
    w.Fixed<uint8_t>(c.type);
    w.SVar(c.device);
    w.SVar(c.arrival_ns - previous);
    w.SVar(c.end_ns - c.arrival_ns);
    w.Fixed<double>(c.bytes);
    w.SVar(c.step);
    previous = c.arrival_ns;
  }
  w.Var(d.collective_types.size());
  for (const DigestCollectiveType& t : d.collective_types) {
    w.Fixed<uint8_t>(t.type);
    w.Var(t.count);
    w.Var(t.sized);
    for (int64_t v : {t.total_ns, t.max_ns, t.sized_time_ns, t.group_size}) w.SVar(v);
    w.Fixed<double>(t.bytes);
  }
  w.Var(d.ops.size());
  for (const DigestOp& o : d.ops) {
    w.Var(o.name);
    w.Var(o.category);
    w.Fixed<uint8_t>(o.kind);
    w.Var(o.count);
    for (int64_t v : {o.total_ns, o.min_ns, o.max_ns}) w.SVar(v);
    WriteSketch(w, o.sketch);
  }
  w.Var(d.devices.size());
  for (const DigestDevice& v : d.devices) {
    w.SVar(v.device);
    w.SVar(v.busy_ns);
    w.SVar(v.span_ns);
  }
  w.Var(d.memory.size());
  for (const DigestMemory& m : d.memory) {
    w.SVar(m.device_type);
    w.SVar(m.device_id);
    w.Fixed<double>(m.peak_allocated);
    w.Fixed<double>(m.peak_reserved);
    w.Fixed<double>(m.capacity);
  }
  w.Var(d.links.size());
  for (const DigestLink& l : d.links) {
    w.Str(l.link);
    w.Str(l.transport);
    w.Fixed<double>(l.bytes);
    w.Fixed<double>(l.time_ns);
  }
  w.Var(d.diagnostics.size());
  for (const DigestDiagnostic& g : d.diagnostics) {
    w.Str(g.kind);
    w.Str(g.first_where);
    w.Str(g.description);
    w.Var(g.count);
  }
}

int32_t NarrowRank(int64_t v) { return v < INT32_MIN || v > INT32_MAX ? kDigestNoRank : static_cast<int32_t>(v); }

bool ReadPayload(Reader& r, RankDigest* d) {
  d->rank = NarrowRank(r.SVar());
  d->world_size = r.SVar();
  d->host = r.Str();
  d->source = r.Str();
  d->source_format = r.Str();
  d->error = r.Str();
  d->span_ns = r.SVar();
  d->slice_count = r.Var();
  for (int64_t* v : {&d->profiler_elapse_ns, &d->profiler_wait_ns, &d->profiler_transit_ns, &d->profiler_sync_ns,
                     &d->profiler_idle_ns}) {
    *v = r.SVar();
  }
  d->strings.resize(r.Count(1));
  for (std::string& s : d->strings) s = r.Str();
  d->steps.resize(r.Count(9));
  for (DigestStep& s : d->steps) {
    for (int64_t* v : {&s.number, &s.start_ns, &s.dur_ns, &s.computing_ns, &s.communication_ns, &s.exposed_comm_ns,
                       &s.free_ns, &s.profiler_comm_ns, &s.profiler_exposed_ns}) {
      *v = r.SVar();
    }
  }
  d->collectives.resize(r.Count(14));
  int64_t previous = 0;
  for (DigestCollective& c : d->collectives) {
    const uint64_t group = r.Var();
    c.group = group < d->strings.size() ? static_cast<uint32_t>(group) : 0;
    if (group >= d->strings.size() && !d->strings.empty()) return false;
    c.type = r.Fixed<uint8_t>();
    c.device = NarrowRank(r.SVar());
    // Delta-coded times: a sum that overflows is a corrupt digest (found by digest_fuzzer).
    if (__builtin_add_overflow(previous, r.SVar(), &c.arrival_ns)) return false;
    if (__builtin_add_overflow(c.arrival_ns, r.SVar(), &c.end_ns)) return false;
    c.bytes = r.Fixed<double>();
    c.step = r.SVar();
    previous = c.arrival_ns;
  }
  d->collective_types.resize(r.Count(15));
  for (DigestCollectiveType& t : d->collective_types) {
    t.type = r.Fixed<uint8_t>();
    t.count = r.Var();
    t.sized = r.Var();
    for (int64_t* v : {&t.total_ns, &t.max_ns, &t.sized_time_ns, &t.group_size}) *v = r.SVar();
    t.bytes = r.Fixed<double>();
  }
  d->ops.resize(r.Count(10));
  for (DigestOp& o : d->ops) {
    const uint64_t name = r.Var(), category = r.Var();
    if (name >= d->strings.size() || category >= d->strings.size()) return false;
    o.name = static_cast<uint32_t>(name);
    o.category = static_cast<uint32_t>(category);
    o.kind = r.Fixed<uint8_t>();
    o.count = r.Var();
    for (int64_t* v : {&o.total_ns, &o.min_ns, &o.max_ns}) *v = r.SVar();
    if (!ReadSketch(r, &o.sketch)) return false;
  }
  d->devices.resize(r.Count(3));
  for (DigestDevice& v : d->devices) {
    v.device = NarrowRank(r.SVar());
    v.busy_ns = r.SVar();
    v.span_ns = r.SVar();
  }
  d->memory.resize(r.Count(26));
  for (DigestMemory& m : d->memory) {
    m.device_type = r.SVar();
    m.device_id = r.SVar();
    m.peak_allocated = r.Fixed<double>();
    m.peak_reserved = r.Fixed<double>();
    m.capacity = r.Fixed<double>();
  }
  d->links.resize(r.Count(18));
  for (DigestLink& l : d->links) {
    l.link = r.Str();
    l.transport = r.Str();
    l.bytes = r.Fixed<double>();
    l.time_ns = r.Fixed<double>();
  }
  d->diagnostics.resize(r.Count(4));
  for (DigestDiagnostic& g : d->diagnostics) {
    g.kind = r.Str();
    g.first_where = r.Str();
    g.description = r.Str();
    g.count = r.Var();
  }
  return !r.failed() && r.left() == 0;
}

}  // namespace

void SerializeDigest(const RankDigest& d, std::string* out) {
  std::string payload;
  Writer pw(&payload);
  WritePayload(d, pw);
  Writer w(out);
  out->append(kDigestMagic, sizeof(kDigestMagic));
  w.Fixed<uint32_t>(kDigestVersion);
  w.Fixed<uint32_t>(0);
  w.Fixed<uint64_t>(payload.size());
  w.Fixed<uint64_t>(XXH3_64bits(payload.data(), payload.size()));
  out->append(payload);
}

StatusOr<RankDigest> ParseDigest(std::string_view bytes, const std::string& where, size_t* consumed) {
  if (bytes.size() < kDigestHeaderBytes) {
    return ErrStatus(where + ": not a digest (" + std::to_string(bytes.size()) + " bytes, shorter than the " +
                     std::to_string(kDigestHeaderBytes) + "-byte header)");
  }
  if (std::memcmp(bytes.data(), kDigestMagic, sizeof(kDigestMagic)) != 0) {
    return ErrStatus(where + ": not an aiprof digest (bad magic at byte 0)");
  }
  uint32_t version, reserved;
  uint64_t length, checksum;
  std::memcpy(&version, bytes.data() + 8, 4);
  std::memcpy(&reserved, bytes.data() + 12, 4);
  std::memcpy(&length, bytes.data() + 16, 8);
  std::memcpy(&checksum, bytes.data() + 24, 8);
  if (version != kDigestVersion) {
    return ErrStatus(where + ": digest format version " + std::to_string(version) + ", this aiprof reads version " +
                     std::to_string(kDigestVersion) + " (map the trace again)");
  }
  if (reserved != 0) return ErrStatus(where + ": corrupt digest header (reserved field at byte 12 is not 0)");
  if (length > bytes.size() - kDigestHeaderBytes) {
    return ErrStatus(where + ": truncated digest (payload of " + std::to_string(length) + " bytes, " +
                     std::to_string(bytes.size() - kDigestHeaderBytes) + " present after the header)");
  }
  std::string_view payload = bytes.substr(kDigestHeaderBytes, length);
  if (XXH3_64bits(payload.data(), payload.size()) != checksum) {
    return ErrStatus(where + ": corrupt digest (checksum mismatch over bytes " + std::to_string(kDigestHeaderBytes) +
                     ".." + std::to_string(kDigestHeaderBytes + length) + ")");
  }
  RankDigest d;
  Reader r(payload);
  if (!ReadPayload(r, &d)) {
    return ErrStatus(where + ": malformed digest payload near byte " + std::to_string(kDigestHeaderBytes + r.pos()));
  }
  if (consumed != nullptr) *consumed = kDigestHeaderBytes + length;
  return d;
}

Status ParseDigests(std::string_view bytes, const std::string& where, std::vector<DigestAt>* out) {
  size_t offset = 0;
  for (size_t k = 1; k == 1 || offset < bytes.size(); ++k) {
    const std::string at =
        k == 1 ? where : where + " (digest " + std::to_string(k) + ", at byte " + std::to_string(offset) + ")";
    size_t used = 0;
    StatusOr<RankDigest> d = ParseDigest(bytes.substr(offset), at, &used);
    if (!d.ok()) {
      if (k == 1) return d.status();
      // After whole digests: name it as bytes that follow them, so that a
      // truncated copy or stray bytes are not taken for a corrupt first digest.
      return ErrStatus(d.status().message() + "; the " + std::to_string(bytes.size() - offset) + " bytes from byte " +
                       std::to_string(offset) + " follow " + std::to_string(k - 1) +
                       (k == 2 ? " whole digest" : " whole digests") + " and are not one");
    }
    out->push_back(DigestAt{std::move(*d), offset});
    offset += used;
  }
  return OkStatus();
}

Status ReadDigestFile(const std::string& path, std::vector<DigestAt>* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrStatus(path + ": cannot open the digest");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return ErrStatus(path + ": cannot read the digest");
  return ParseDigests(buf.str(), path, out);
}

namespace {

// True when `path` is a regular file holding exactly one digest of the same
// input as `d` (its own earlier digest, which a new map may replace).
bool HoldsDigestOfSameInput(const std::string& path, const RankDigest& d) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::vector<DigestAt> old;
  if (!ReadDigestFile(path, &old).ok() || old.size() != 1) return false;
  const RankDigest& o = old.front().digest;
  return o.rank == d.rank && o.source == d.source && o.host == d.host;
}

}  // namespace

StatusOr<DigestWrite> WriteDigestFile(const RankDigest& d, const std::string& dir, size_t fallback) {
  std::string bytes;
  SerializeDigest(d, &bytes);
  const std::string stem = d.rank >= 0 ? "rank-" + std::to_string(d.rank) : "input-" + std::to_string(fallback);
  DigestWrite out;
  for (size_t k = 1; k <= kDigestMaxSameName; ++k) {
    const std::string name = k == 1 ? stem + ".digest" : stem + ".dup" + std::to_string(k) + ".digest";
    const std::string path = (std::filesystem::path(dir) / name).string();
    if (HoldsDigestOfSameInput(path, d)) {
      RETURN_IF_ERROR(WriteFileAtomically(path, bytes));
      out.path = path;
      return out;
    }
    bool exists = false;
    RETURN_IF_ERROR(WriteNewFileAtomically(path, bytes, &exists));
    if (!exists) {
      out.path = path;
      return out;
    }
    if (out.clash.empty()) out.clash = path;
  }
  return ErrStatus((std::filesystem::path(dir) / (stem + ".digest")).string() + " and " +
                   std::to_string(kDigestMaxSameName - 1) + " more " + stem +
                   ".dup<k>.digest files exist already, each of another input; not written (clear the folder)");
}

}  // namespace aiprof
