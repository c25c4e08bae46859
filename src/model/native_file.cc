#include "src/model/native_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "src/base/atomic_file.h"
#include "src/base/parallel.h"
#include "src/base/threads.h"
#include "src/model/op_stats.h"
#include "src/model/time_range.h"

namespace aiprof {
namespace {

constexpr std::string_view kEndMagic = "AIPROFEND";

// Columns start at 8-byte aligned offsets so a mapped file can be used in
// place (kColumnAlignment); the writer pads with zeros.
constexpr uint64_t kColumnAlignment = 8;

class NativeWriter {
 public:
  NativeWriter(AtomicFileWriter* w, uint64_t start) : w_(w), pos_(start) {}
  Status Write(const void* data, size_t n) {
    pos_ += n;
    return w_->Write(data, n);
  }
  Status U64(uint64_t v) { return Write(&v, sizeof(v)); }
  Status Str(std::string_view s) {
    RETURN_IF_ERROR(U64(s.size()));
    return Write(s.data(), s.size());
  }
  template <typename T>
  Status Column(const ChunkedVector<T>& c) {
    RETURN_IF_ERROR(U64(c.size()));
    static const char kZeros[kColumnAlignment] = {};
    RETURN_IF_ERROR(Write(kZeros, (kColumnAlignment - pos_ % kColumnAlignment) % kColumnAlignment));
    for (size_t b = 0; b < c.block_count(); ++b) RETURN_IF_ERROR(Write(c.block(b), c.block_items(b) * sizeof(T)));
    return OkStatus();
  }

 private:
  AtomicFileWriter* w_;
  uint64_t pos_;
};

// Reads from the whole file mapped into memory: columns are used in place
// (no copy), strings are views into the mapping.
class NativeReader {
 public:
  NativeReader(const char* base, uint64_t size, std::string path) : base_(base), size_(size), path_(std::move(path)) {}
  Status Bytes(void* dst, uint64_t n) {
    if (n > size_ - pos_) return Corrupt("a section runs past the end of the file");
    if (n > 0) std::memcpy(dst, base_ + pos_, n);
    pos_ += n;
    return OkStatus();
  }
  Status U64(uint64_t* v) { return Bytes(v, sizeof(*v)); }
  Status View(std::string_view* s) {
    uint64_t n = 0;
    RETURN_IF_ERROR(U64(&n));
    if (n > size_ - pos_) return Corrupt("a string runs past the end of the file");
    *s = std::string_view(base_ + pos_, n);
    pos_ += n;
    return OkStatus();
  }
  Status Str(std::string* s) {
    std::string_view v;
    RETURN_IF_ERROR(View(&v));
    s->assign(v);
    return OkStatus();
  }
  template <typename T>
  Status Column(ChunkedVector<T>* c, uint64_t expected = UINT64_MAX) {
    uint64_t n = 0;
    RETURN_IF_ERROR(U64(&n));
    uint64_t pad = (kColumnAlignment - pos_ % kColumnAlignment) % kColumnAlignment;
    if (pad > size_ - pos_) return Corrupt("a column runs past the end of the file");
    pos_ += pad;
    if (n > (size_ - pos_) / sizeof(T)) return Corrupt("a column is longer than the file");
    if (expected != UINT64_MAX && n != expected) return Corrupt("columns of one table differ in length");
    c->AdoptExternal(reinterpret_cast<T*>(const_cast<char*>(base_ + pos_)), n);
    pos_ += n * sizeof(T);
    return OkStatus();
  }
  Status Corrupt(const std::string& what) const {
    return ErrStatus(path_ + ": corrupt .aiprof file at byte " + std::to_string(pos_) + ": " + what);
  }
  uint64_t pos() const { return pos_; }

 private:
  const char* base_;
  uint64_t size_;
  std::string path_;
  uint64_t pos_ = 0;
};

// A table's columns in Table::Columns order; on reading, every column after
// the first must have the first's length.
template <typename Table>
Status WriteTable(const Table& table, NativeWriter& w) {
  Status status = OkStatus();
  Table::Columns(table, [&](const auto& column) {
    if (status.ok()) status = w.Column(column);
  });
  return status;
}

template <typename Table>
Status ReadTable(NativeReader& r, Table* table) {
  Status status = OkStatus();
  bool first = true;
  uint64_t rows = 0;
  Table::Columns(*table, [&](auto& column) {
    if (!status.ok()) return;
    status = first ? r.Column(&column) : r.Column(&column, rows);
    if (first) rows = column.size();
    first = false;
  });
  return status;
}

Status WriteAll(const Trace& t, NativeWriter& w) {
  RETURN_IF_ERROR(w.U64(t.strings.size()));
  for (size_t i = 0; i < t.strings.size(); ++i) RETURN_IF_ERROR(w.Str(t.strings.Get(StringId{static_cast<uint32_t>(i)})));
  RETURN_IF_ERROR(WriteTable(t.tracks, w));
  RETURN_IF_ERROR(WriteTable(t.slices, w));
  RETURN_IF_ERROR(w.Column(t.args));
  RETURN_IF_ERROR(WriteTable(t.instants, w));
  RETURN_IF_ERROR(WriteTable(t.counters, w));
  RETURN_IF_ERROR(WriteTable(t.flows, w));
  RETURN_IF_ERROR(WriteTable(t.steps, w));
  RETURN_IF_ERROR(WriteTable(t.op_metrics, w));
  RETURN_IF_ERROR(WriteTable(t.step_breakdown, w));
  RETURN_IF_ERROR(WriteTable(t.callsites, w));
  RETURN_IF_ERROR(WriteTable(t.samples, w));
  RETURN_IF_ERROR(w.U64(t.slices.size()));
  if (OpStatsCurrent(t)) {
    RETURN_IF_ERROR(WriteTable(t.op_stats, w));
  } else {
    RETURN_IF_ERROR(WriteTable(ComputeOpStats(t), w));
  }
  RETURN_IF_ERROR(w.U64(t.metadata.size()));
  for (const auto& [key, value] : t.metadata) {
    RETURN_IF_ERROR(w.Str(key));
    RETURN_IF_ERROR(w.Str(value));
  }
  const auto& diags = t.diagnostics.entries();
  RETURN_IF_ERROR(w.U64(diags.size()));
  for (const auto& [kind, e] : diags) {
    RETURN_IF_ERROR(w.Str(kind)); RETURN_IF_ERROR(w.U64(e.count));
    RETURN_IF_ERROR(w.Str(e.first_where)); RETURN_IF_ERROR(w.Str(e.description));
  }
  return OkStatus();
}

Status ReadAll(NativeReader& r, Trace* t) {
  uint64_t n = 0;
  RETURN_IF_ERROR(r.U64(&n));
  if (n == 0 || n > UINT32_MAX) return r.Corrupt("bad string count");
  std::vector<std::string_view> strings;
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view s;
    RETURN_IF_ERROR(r.View(&s));
    if (i == 0 && !s.empty()) return r.Corrupt("string 0 must be empty");
    strings.push_back(s);
  }
  t->strings.AdoptExternal(std::move(strings));
  RETURN_IF_ERROR(ReadTable(r, &t->tracks));
  RETURN_IF_ERROR(ReadTable(r, &t->slices));
  RETURN_IF_ERROR(r.Column(&t->args));
  RETURN_IF_ERROR(ReadTable(r, &t->instants));
  RETURN_IF_ERROR(ReadTable(r, &t->counters));
  RETURN_IF_ERROR(ReadTable(r, &t->flows));
  RETURN_IF_ERROR(ReadTable(r, &t->steps));
  RETURN_IF_ERROR(ReadTable(r, &t->op_metrics));
  RETURN_IF_ERROR(ReadTable(r, &t->step_breakdown));
  RETURN_IF_ERROR(ReadTable(r, &t->callsites));
  RETURN_IF_ERROR(ReadTable(r, &t->samples));
  RETURN_IF_ERROR(r.U64(&t->op_stats_slices));
  RETURN_IF_ERROR(ReadTable(r, &t->op_stats));
  RETURN_IF_ERROR(r.U64(&n));
  for (uint64_t i = 0; i < n; ++i) {
    std::string key, value;
    RETURN_IF_ERROR(r.Str(&key)); RETURN_IF_ERROR(r.Str(&value));
    t->metadata[key] = value;
  }
  RETURN_IF_ERROR(r.U64(&n));
  for (uint64_t i = 0; i < n; ++i) {
    std::string kind;
    DiagnosticEntry e;
    RETURN_IF_ERROR(r.Str(&kind)); RETURN_IF_ERROR(r.U64(&e.count));
    RETURN_IF_ERROR(r.Str(&e.first_where)); RETURN_IF_ERROR(r.Str(&e.description));
    t->diagnostics.mutable_entries()[kind] = e;
  }
  return OkStatus();
}

// Ids stored in columns must point into their tables.
// Fast whole-column checks (branch-free block loops the compiler vectorises)
// for the two big tables; only a file that fails them is walked row by row
// to name the first bad row.
template <typename T, typename F>
uint64_t ColumnMax(const ChunkedVector<T>& c, F value) {
  uint64_t m = 0;
  for (size_t b = 0; b < c.block_count(); ++b) {
    const T* p = c.block(b);
    size_t n = c.block_items(b);
    for (size_t i = 0; i < n; ++i) m = std::max<uint64_t>(m, value(p[i]));
  }
  return m;
}

bool SlicesLookValid(const Trace& t, uint32_t strings) {
  const SliceTable& s = t.slices;
  auto id = [](StringId x) { return uint64_t{x.raw}; };
  if (s.size() == 0) return true;
  if (ColumnMax(s.track, [](uint32_t x) { return uint64_t{x}; }) >= t.tracks.size()) return false;
  if (ColumnMax(s.name, id) >= strings || ColumnMax(s.category, id) >= strings) return false;
  // Times as TraceBuilder admits them (time_range.h), so no end overflows.
  for (size_t b = 0; b < s.ts_ns.block_count(); ++b) {
    const int64_t* ts = s.ts_ns.block(b);
    const int64_t* dur = s.dur_ns.block(b);
    bool ok = true;
    for (size_t i = 0, n = s.ts_ns.block_items(b); i < n; ++i) ok &= SpanInRange(ts[i], dur[i]);
    if (!ok) return false;
  }
  uint64_t arg_end = 0;
  for (size_t b = 0; b < s.arg_begin.block_count(); ++b) {
    const uint64_t* begin = s.arg_begin.block(b);
    const uint16_t* count = s.arg_count.block(b);
    size_t n = s.arg_begin.block_items(b);
    for (size_t i = 0; i < n; ++i) {
      // A begin past the args table also fails the sum test unless it wraps.
      arg_end = std::max(arg_end, begin[i] > t.args.size() ? UINT64_MAX : begin[i] + count[i]);
    }
  }
  return arg_end <= t.args.size();
}

bool ArgsLookValid(const Trace& t, uint32_t strings) {
  uint32_t bad = 0;
  for (size_t b = 0; b < t.args.block_count(); ++b) {
    const Arg* a = t.args.block(b);
    size_t n = t.args.block_items(b);
    for (size_t i = 0; i < n; ++i) {
      uint8_t type = static_cast<uint8_t>(a[i].type);
      bool has_string = a[i].type == ArgType::kString || a[i].type == ArgType::kJson;
      bad |= (a[i].key.raw >= strings) | (type > static_cast<uint8_t>(ArgType::kNull)) |
             (has_string & (a[i].str >= strings));
    }
  }
  return bad == 0;
}

Status Validate(const Trace& t, const NativeReader& r) {
  uint32_t strings = static_cast<uint32_t>(t.strings.size());
  // The two big whole-table checks run side by side.
  bool slices_ok = true, args_ok = true;
  ParallelFor(2, WorkerThreads(), [&](size_t which) {
    if (which == 0) slices_ok = SlicesLookValid(t, strings);
    else args_ok = ArgsLookValid(t, strings);
  });
  for (size_t i = 0; !slices_ok && i < t.slices.size(); ++i) {
    if (t.slices.track[i] >= t.tracks.size() || t.slices.name[i].raw >= strings ||
        t.slices.category[i].raw >= strings ||
        t.slices.arg_begin[i] + t.slices.arg_count[i] > t.args.size()) {
      return r.Corrupt("slice " + std::to_string(i) + " refers outside its tables");
    }
    if (!SpanInRange(t.slices.ts_ns[i], t.slices.dur_ns[i])) {
      return r.Corrupt("slice " + std::to_string(i) + " has ts " + std::to_string(t.slices.ts_ns[i]) + " ns, dur " +
                       std::to_string(t.slices.dur_ns[i]) + " ns: outside +-2^61 ns or negative");
    }
  }
  if (!slices_ok) return r.Corrupt("slices refer outside their tables or hold impossible times");
  for (size_t i = 0; !args_ok && i < t.args.size(); ++i) {
    ArgType ty = t.args[i].type;
    if (t.args[i].key.raw >= strings || static_cast<uint8_t>(ty) > static_cast<uint8_t>(ArgType::kNull) ||
        ((ty == ArgType::kString || ty == ArgType::kJson) && t.args[i].str >= strings)) {
      return r.Corrupt("arg " + std::to_string(i) + " refers outside the string table");
    }
  }
  if (!args_ok) return r.Corrupt("args refer outside the string table");
  for (size_t i = 0; i < t.tracks.size(); ++i) {
    if (t.tracks.name[i].raw >= strings || t.tracks.process_name[i].raw >= strings ||
        t.tracks.pid_label[i].raw >= strings || t.tracks.tid_label[i].raw >= strings) {
      return r.Corrupt("track " + std::to_string(i) + " refers outside the string table");
    }
  }
  for (size_t i = 0; i < t.instants.size(); ++i) {
    if (t.instants.track[i] >= t.tracks.size() || t.instants.name[i].raw >= strings ||
        t.instants.category[i].raw >= strings || t.instants.arg_begin[i] + t.instants.arg_count[i] > t.args.size()) {
      return r.Corrupt("instant " + std::to_string(i) + " refers outside its tables");
    }
  }
  for (size_t i = 0; i < t.counters.size(); ++i) {
    if (t.counters.track[i] >= t.tracks.size()) return r.Corrupt("counter refers to a missing track");
  }
  for (size_t i = 0; i < t.flows.size(); ++i) {
    if (t.flows.from_slice[i] >= t.slices.size() || t.flows.to_slice[i] >= t.slices.size() ||
        t.flows.category[i].raw >= strings) {
      return r.Corrupt("flow refers to a missing slice");
    }
  }
  for (size_t i = 0; i < t.steps.size(); ++i) {
    if (t.steps.track[i] >= t.tracks.size() || t.steps.name[i].raw >= strings) return r.Corrupt("step refers to a missing track");
  }
  const OpMetricTable& om = t.op_metrics;
  for (size_t i = 0; i < om.size(); ++i) {
    if ((om.slice[i] != kNoSlice && om.slice[i] >= t.slices.size()) || om.source[i].raw >= strings ||
        om.op[i].raw >= strings || om.key[i].raw >= strings || om.text[i].raw >= strings) {
      return r.Corrupt("op metric " + std::to_string(i) + " refers outside its tables");
    }
  }
  const StepBreakdownTable& sb = t.step_breakdown;
  for (size_t i = 0; i < sb.size(); ++i) {
    if (sb.source[i].raw >= strings || sb.key[i].raw >= strings) {
      return r.Corrupt("step breakdown " + std::to_string(i) + " refers outside the string table");
    }
  }
  const OpStatTable& os = t.op_stats;
  uint64_t counted = 0;
  for (size_t i = 0; i < os.size(); ++i) {
    if (os.category[i].raw >= strings || os.name[i].raw >= strings || os.count[i] == 0) {
      return r.Corrupt("op statistics row " + std::to_string(i) + " is invalid");
    }
    counted += os.count[i];
  }
  // Writers that do not compute them (the SDK) store none.
  if (os.size() > 0 && (t.op_stats_slices != t.slices.size() || counted != t.slices.size())) {
    return r.Corrupt("op statistics do not cover the slice table");
  }
  const CallsiteTable& cs = t.callsites;
  for (size_t i = 0; i < cs.size(); ++i) {
    if ((cs.parent[i] != kNoCallsite && cs.parent[i] >= i) || cs.frame[i].raw >= strings ||
        cs.module[i].raw >= strings || static_cast<uint8_t>(cs.kind[i]) > static_cast<uint8_t>(FrameKind::kKernel)) {
      return r.Corrupt("callsite " + std::to_string(i) + " refers outside its tables");
    }
  }
  for (size_t i = 0; i < t.samples.size(); ++i) {
    if (t.samples.track[i] >= t.tracks.size() ||
        (t.samples.callsite[i] != kNoCallsite && t.samples.callsite[i] >= cs.size())) {
      return r.Corrupt("stack sample " + std::to_string(i) + " refers outside its tables");
    }
  }
  return OkStatus();
}

}  // namespace

Status WriteNativeFile(const Trace& trace, const std::string& path) {
  AtomicFileWriter file;
  RETURN_IF_ERROR(file.Open(path));
  RETURN_IF_ERROR(file.Write(kNativeMagic));
  uint32_t version = kNativeVersion;
  RETURN_IF_ERROR(file.Write(&version, sizeof(version)));
  NativeWriter w(&file, kNativeMagic.size() + sizeof(version));
  RETURN_IF_ERROR(WriteAll(trace, w));
  RETURN_IF_ERROR(file.Write(kEndMagic));
  return file.Commit();
}

StatusOr<std::unique_ptr<Trace>> ReadNativeFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrStatus(path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return ErrStatus(path + ": not a regular file");
  }
  size_t size = static_cast<size_t>(st.st_size);
  // A private writable mapping shares the page cache (no copy); a column
  // someone modifies is copied page by page on first write only. Pages are
  // mapped as they are first read (the kernel maps neighbours around each
  // fault), so a command that reads few columns touches few pages.
  void* base = size == 0 ? nullptr : ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) return ErrStatus(path + ": cannot map: " + std::strerror(errno));
  if (base) ::madvise(base, size, MADV_WILLNEED);
  // The trace's columns point into the mapping, so the trace owns it.
  std::shared_ptr<void> mapping(base, [size](void* p) {
    if (p) ::munmap(p, size);
  });
  NativeReader r(static_cast<const char*>(base), size, path);
  char magic[8];
  uint32_t version = 0;
  RETURN_IF_ERROR(r.Bytes(magic, sizeof(magic)));
  if (std::string_view(magic, 8) != kNativeMagic) return r.Corrupt("not an .aiprof file");
  RETURN_IF_ERROR(r.Bytes(&version, sizeof(version)));
  if (version != kNativeVersion) {
    return ErrStatus(path + ": .aiprof version " + std::to_string(version) + " is not supported (this build reads " +
                     std::to_string(kNativeVersion) + "); re-import the original trace");
  }
  auto trace = std::make_unique<Trace>();
  trace->backing = std::move(mapping);
  RETURN_IF_ERROR(ReadAll(r, trace.get()));
  char end[9];
  RETURN_IF_ERROR(r.Bytes(end, sizeof(end)));
  if (std::string_view(end, 9) != kEndMagic) return r.Corrupt("missing end marker (truncated?)");
  RETURN_IF_ERROR(Validate(*trace, r));
  return trace;
}

}  // namespace aiprof
