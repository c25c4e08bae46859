#include "src/model/native_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "src/base/atomic_file.h"
#include "src/base/mapped_inputs.h"
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

// Every byte written goes into the running XXH3-64 of the current block;
// Seal() ends the block with its checksum (version 6 on).
class NativeWriter {
 public:
  explicit NativeWriter(AtomicFileWriter* w) : w_(w) { XXH3_64bits_reset(&hash_); }
  Status Write(const void* data, size_t n) {
    pos_ += n;
    XXH3_64bits_update(&hash_, data, n);
    return w_->Write(data, n);
  }
  Status Write(std::string_view s) { return Write(s.data(), s.size()); }
  // Writes the checksum of the bytes since the previous one and starts the next block.
  Status Seal() {
    uint64_t sum = XXH3_64bits_digest(&hash_);
    XXH3_64bits_reset(&hash_);
    pos_ += sizeof(sum);
    return w_->Write(&sum, sizeof(sum));
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
    return Seal();
  }

 private:
  AtomicFileWriter* w_;
  uint64_t pos_ = 0;
  XXH3_state_t hash_;
};

// A block of the file and the checksum stored after it.
struct SealedBlock {
  std::string what;  // "column ts_ns of the slice table"
  uint64_t begin, end, sum;
};

// Reads from the whole file mapped into memory: columns are used in place
// (no copy), strings are views into the mapping. In a checked file each
// block's stored checksum is collected as the block ends and all are
// compared at once after the last (VerifyChecksums), side by side.
class NativeReader {
 public:
  NativeReader(const char* base, uint64_t size, std::string path) : base_(base), size_(size), path_(std::move(path)) {}
  void set_checked(bool checked) { checked_ = checked; }
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
  // Ends the block `what` (the bytes since the previous one): reads its checksum.
  Status Seal(std::string what) {
    if (!checked_) return OkStatus();
    SealedBlock block{std::move(what), block_begin_, pos_, 0};
    RETURN_IF_ERROR(U64(&block.sum));
    block_begin_ = pos_;
    blocks_.push_back(std::move(block));
    return OkStatus();
  }
  // OK, or an error naming the first block whose bytes do not match their checksum.
  Status VerifyChecksums() const {
    std::vector<uint64_t> computed(blocks_.size());
    ParallelFor(blocks_.size(), WorkerThreads(), [&](size_t i) {
      computed[i] = XXH3_64bits(base_ + blocks_[i].begin, blocks_[i].end - blocks_[i].begin);
    });
    for (size_t i = 0; i < blocks_.size(); ++i) {
      const SealedBlock& b = blocks_[i];
      if (computed[i] == b.sum) continue;
      char sums[64];
      std::snprintf(sums, sizeof(sums), "stored %016llx, computed %016llx", static_cast<unsigned long long>(b.sum),
                    static_cast<unsigned long long>(computed[i]));
      return ErrStatus(path_ + ": corrupt .aiprof file at byte " + std::to_string(b.begin) + ": bytes " +
                       std::to_string(b.begin) + "-" + std::to_string(b.end - 1) + " (" + b.what +
                       ") do not match their checksum (" + sums + ")");
    }
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
  uint64_t size() const { return size_; }

 private:
  const char* base_;
  uint64_t size_;
  std::string path_;
  uint64_t pos_ = 0;
  bool checked_ = true;
  uint64_t block_begin_ = 0;
  std::vector<SealedBlock> blocks_;
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
  Table::ColumnsWithInfo(*table, [&](const ColumnInfo& info, auto& column) {
    if (!status.ok()) return;
    status = first ? r.Column(&column) : r.Column(&column, rows);
    if (status.ok()) status = r.Seal(std::string("column ") + info.name + " of the " + Table::kName + " table");
    if (first) rows = column.size();
    first = false;
  });
  return status;
}

// Blocks: the header and string table, each column (the op statistics'
// first with the slice count before it), the metadata, the diagnostics.
Status WriteAll(const Trace& t, NativeWriter& w) {
  RETURN_IF_ERROR(w.Write(kNativeMagic));
  RETURN_IF_ERROR(w.Write(&kNativeVersion, sizeof(kNativeVersion)));
  RETURN_IF_ERROR(w.U64(t.strings.size()));
  for (size_t i = 0; i < t.strings.size(); ++i)
    RETURN_IF_ERROR(w.Str(t.strings.Get(StringId{static_cast<uint32_t>(i)})));
  RETURN_IF_ERROR(w.Seal());
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
  RETURN_IF_ERROR(w.Seal());
  // The file written is checked, whatever the one read was.
  const auto& diags = t.diagnostics.entries();
  RETURN_IF_ERROR(w.U64(diags.size() - diags.count(std::string(kNativeUncheckedDiagnostic))));
  for (const auto& [kind, e] : diags) {
    if (kind == kNativeUncheckedDiagnostic) continue;
    RETURN_IF_ERROR(w.Str(kind));
    RETURN_IF_ERROR(w.U64(e.count));
    RETURN_IF_ERROR(w.Str(e.first_where));
    RETURN_IF_ERROR(w.Str(e.description));
  }
  RETURN_IF_ERROR(w.Seal());
  return w.Write(kEndMagic);
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
  RETURN_IF_ERROR(r.Seal("header and string table"));
  RETURN_IF_ERROR(ReadTable(r, &t->tracks));
  RETURN_IF_ERROR(ReadTable(r, &t->slices));
  RETURN_IF_ERROR(r.Column(&t->args));
  RETURN_IF_ERROR(r.Seal("column args"));
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
    RETURN_IF_ERROR(r.Str(&key));
    RETURN_IF_ERROR(r.Str(&value));
    t->metadata[key] = value;
  }
  RETURN_IF_ERROR(r.Seal("metadata"));
  RETURN_IF_ERROR(r.U64(&n));
  for (uint64_t i = 0; i < n; ++i) {
    std::string kind;
    DiagnosticEntry e;
    RETURN_IF_ERROR(r.Str(&kind));
    RETURN_IF_ERROR(r.U64(&e.count));
    RETURN_IF_ERROR(r.Str(&e.first_where));
    RETURN_IF_ERROR(r.Str(&e.description));
    t->diagnostics.mutable_entries()[kind] = e;
  }
  return r.Seal("diagnostics");
}

// Ids stored in columns must point into their tables: every column's
// ColumnRef (tables.h) says where, and enum columns hold one of their
// values. Each column is checked whole in a branch-free block loop the
// compiler vectorises; only a column that fails is walked row by row to name
// the first bad row.
struct Bounds {
  uint64_t strings, tracks, slices, callsites;
};

template <typename T>
uint64_t RawValue(T v) {
  if constexpr (std::is_same_v<T, StringId>) {
    return v.raw;
  } else if constexpr (std::is_enum_v<T>) {
    return static_cast<uint64_t>(v);
  } else {
    return static_cast<uint64_t>(v);
  }
}

// True when `v`, in row `row`, is a value the column may hold.
inline bool RefOk(ColumnRef ref, uint64_t v, uint64_t row, const Bounds& b) {
  constexpr uint64_t kNone = UINT32_MAX;
  switch (ref) {
    case ColumnRef::kNone:
      return true;
    case ColumnRef::kString:
      return v < b.strings;
    case ColumnRef::kTrack:
      return v < b.tracks;
    case ColumnRef::kSlice:
      return v < b.slices;
    case ColumnRef::kOptionalSlice:
      return v == kNone || v < b.slices;
    case ColumnRef::kOptionalCallsite:
      return v == kNone || v < b.callsites;
    case ColumnRef::kEarlierRow:
      return v == kNone || v < row;
  }
  return false;
}

// OK, or the first row of `column` holding a value it may not hold.
template <typename T>
Status CheckColumn(const char* table, const ColumnInfo& info, const ChunkedVector<T>& column, const Bounds& b,
                   const NativeReader& r) {
  if constexpr (std::is_floating_point_v<T>) return OkStatus();
  uint64_t limit = UINT64_MAX;  // values must be below it (enums: their count)
  if constexpr (std::is_enum_v<T>) limit = EnumInfo<T>::kCount;
  if (info.ref == ColumnRef::kNone && limit == UINT64_MAX) return OkStatus();
  bool ok = true;
  for (size_t blk = 0, row = 0; blk < column.block_count(); ++blk) {
    const T* p = column.block(blk);
    for (size_t i = 0, n = column.block_items(blk); i < n; ++i, ++row) {
      uint64_t v = RawValue(p[i]);
      ok &= (v < limit) & RefOk(info.ref, v, row, b);
    }
  }
  if (ok) return OkStatus();
  for (size_t row = 0; row < column.size(); ++row) {
    uint64_t v = RawValue(column[row]);
    std::string where = std::string(table) + " " + std::to_string(row) + ": " + info.name + " = " + std::to_string(v);
    if (v >= limit) return r.Corrupt(where + " is not one of its values");
    if (!RefOk(info.ref, v, row, b)) return r.Corrupt(where + " refers outside its table");
  }
  return OkStatus();
}

template <typename Table>
Status CheckTable(const Table& t, const Bounds& b, const NativeReader& r) {
  Status status = OkStatus();
  Table::ColumnsWithInfo(t, [&](const ColumnInfo& info, const auto& column) {
    if (status.ok()) status = CheckColumn(Table::kName, info, column, b, r);
  });
  return status;
}

// Times as TraceBuilder admits them (time_range.h), so no end overflows; the
// slices in the order every analysis relies on (by track, then start: found
// by review, reordered slices moved op coverage from 75% to 0%); and args
// within the args table. One pass over the blocks.
bool SliceSpansLookValid(const Trace& t) {
  const SliceTable& s = t.slices;
  uint32_t last_track = 0;
  int64_t last_ts = INT64_MIN;
  for (size_t b = 0; b < s.ts_ns.block_count(); ++b) {
    const int64_t* ts = s.ts_ns.block(b);
    const int64_t* dur = s.dur_ns.block(b);
    const auto* track = s.track.block(b);
    bool ok = true;
    for (size_t i = 0, n = s.ts_ns.block_items(b); i < n; ++i) {
      const uint32_t k = track[i].raw();
      ok &= SpanInRange(ts[i], dur[i]) & (k > last_track || (k == last_track && ts[i] >= last_ts));
      last_track = k;
      last_ts = ts[i];
    }
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

Status CheckSliceSpans(const Trace& t, const NativeReader& r) {
  for (size_t i = 0; i < t.slices.size(); ++i) {
    if (t.slices.arg_begin[i] + t.slices.arg_count[i] > t.args.size()) {
      return r.Corrupt("slice " + std::to_string(i) + " refers outside the args table");
    }
    if (!SpanInRange(t.slices.ts_ns[i], t.slices.dur_ns[i])) {
      return r.Corrupt("slice " + std::to_string(i) + " has ts " + std::to_string(t.slices.ts_ns[i]) + " ns, dur " +
                       std::to_string(t.slices.dur_ns[i]) + " ns: outside +-2^61 ns or negative");
    }
    if (i > 0 && (t.slices.track[i] < t.slices.track[i - 1] ||
                  (t.slices.track[i] == t.slices.track[i - 1] && t.slices.ts_ns[i] < t.slices.ts_ns[i - 1]))) {
      return r.Corrupt("slice " + std::to_string(i) + " is out of order (slices are sorted by track, then start)");
    }
  }
  return r.Corrupt("slices hold impossible times or args");
}

Status CheckArgs(const Trace& t, uint32_t strings, const NativeReader& r) {
  for (size_t i = 0; i < t.args.size(); ++i) {
    ArgType ty = t.args[i].type;
    if (t.args[i].key.raw >= strings || static_cast<uint8_t>(ty) > static_cast<uint8_t>(ArgType::kNull) ||
        ((ty == ArgType::kString || ty == ArgType::kJson) && t.args[i].str >= strings)) {
      return r.Corrupt("arg " + std::to_string(i) + " refers outside the string table");
    }
  }
  return r.Corrupt("args refer outside the string table");
}

// Times of the other tables in the model's range (the slices' are checked
// with their spans). Found by review: a step of ts = dur = INT64_MAX
// overflowed a dozen analyses and printed a step of -9223372036.85 s.
Status CheckTimes(const Trace& t, const NativeReader& r) {
  auto bad_time = [&](const char* table, size_t i, int64_t ts) {
    return r.Corrupt(std::string(table) + " row " + std::to_string(i) + " has ts " + std::to_string(ts) +
                     " ns: outside +-2^61 ns");
  };
  for (size_t i = 0; i < t.steps.size(); ++i) {
    if (!SpanInRange(t.steps.ts_ns[i], t.steps.dur_ns[i])) {
      return r.Corrupt("step " + std::to_string(i) + " has ts " + std::to_string(t.steps.ts_ns[i]) + " ns, dur " +
                       std::to_string(t.steps.dur_ns[i]) + " ns: outside +-2^61 ns or negative");
    }
  }
  for (size_t i = 0; i < t.instants.size(); ++i) {
    if (!TimeInRange(t.instants.ts_ns[i])) return bad_time("instant", i, t.instants.ts_ns[i]);
  }
  for (size_t i = 0; i < t.counters.size(); ++i) {
    if (!TimeInRange(t.counters.ts_ns[i])) return bad_time("counter", i, t.counters.ts_ns[i]);
  }
  for (size_t i = 0; i < t.samples.size(); ++i) {
    if (!TimeInRange(t.samples.ts_ns[i])) return bad_time("sample", i, t.samples.ts_ns[i]);
  }
  return OkStatus();
}

Status Validate(const Trace& t, const NativeReader& r) {
  uint32_t strings = static_cast<uint32_t>(t.strings.size());
  const Bounds b{strings, t.tracks.size(), t.slices.size(), t.callsites.size()};
  // The two big tables' checks run side by side.
  Status slice_refs = OkStatus();
  bool spans_ok = true, args_ok = true;
  ParallelFor(2, WorkerThreads(), [&](size_t which) {
    if (which == 0) {
      slice_refs = CheckTable(t.slices, b, r);
      spans_ok = SliceSpansLookValid(t);
    } else {
      args_ok = ArgsLookValid(t, strings);
    }
  });
  RETURN_IF_ERROR(slice_refs);
  if (!spans_ok) return CheckSliceSpans(t, r);
  if (!args_ok) return CheckArgs(t, strings, r);
  RETURN_IF_ERROR(CheckTable(t.tracks, b, r));
  for (size_t i = 0; i < t.instants.size(); ++i) {
    if (t.instants.arg_begin[i] + t.instants.arg_count[i] > t.args.size()) {
      return r.Corrupt("instant " + std::to_string(i) + " refers outside the args table");
    }
  }
  RETURN_IF_ERROR(CheckTable(t.instants, b, r));
  RETURN_IF_ERROR(CheckTable(t.counters, b, r));
  RETURN_IF_ERROR(CheckTable(t.flows, b, r));
  RETURN_IF_ERROR(CheckTable(t.steps, b, r));
  RETURN_IF_ERROR(CheckTable(t.op_metrics, b, r));
  RETURN_IF_ERROR(CheckTable(t.step_breakdown, b, r));
  RETURN_IF_ERROR(CheckTable(t.callsites, b, r));
  RETURN_IF_ERROR(CheckTable(t.samples, b, r));
  RETURN_IF_ERROR(CheckTable(t.op_stats, b, r));
  return CheckTimes(t, r);
}

// After Validate (the slices' tracks and the tracks' labels are checked).
// The stored op statistics count what ComputeOpStats counts: every slice
// but the graph-capture copies (found by a documentation trial: a replay
// imported with its capture was refused, the check counted the copies).
// A table that counts them too was written before the statistics left them
// out (version 5): it is dropped, and the statistics computed again on use.
Status CheckOpStats(Trace* t, const NativeReader& r) {
  const OpStatTable& os = t->op_stats;
  uint64_t counted = 0;
  for (size_t i = 0; i < os.size(); ++i) {
    if (os.count[i] == 0) return r.Corrupt("op statistics row " + std::to_string(i) + " counts no slice");
    counted += os.count[i];
  }
  // Writers that do not compute them store none.
  if (os.size() == 0) return OkStatus();
  if (t->op_stats_slices != t->slices.size()) return r.Corrupt("op statistics do not cover the slice table");
  const uint64_t expected = OpStatsCountedSlices(*t);
  if (counted == expected) return OkStatus();
  if (counted != t->slices.size()) return r.Corrupt("op statistics do not cover the slice table");
  t->op_stats = OpStatTable();
  t->op_stats_slices = 0;
  return OkStatus();
}

}  // namespace

Status WriteNativeFile(const Trace& trace, const std::string& path) {
  AtomicFileWriter file;
  RETURN_IF_ERROR(file.Open(path));
  NativeWriter w(&file);
  RETURN_IF_ERROR(WriteAll(trace, w));
  return file.Commit();
}

StatusOr<std::unique_ptr<Trace>> ReadNativeFile(const std::string& path, const NativeReadOptions& options) {
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
  // The trace's columns point into the mapping, so the trace owns it. It is
  // named for the SIGBUS handler: a file truncated while it is mapped.
  const int slot = base ? RegisterMappedInput(base, size, path) : -1;
  std::shared_ptr<void> mapping(base, [size, slot](void* p) {
    UnregisterMappedInput(slot);
    if (p) ::munmap(p, size);
  });
  NativeReader r(static_cast<const char*>(base), size, path);
  char magic[8];
  uint32_t version = 0;
  RETURN_IF_ERROR(r.Bytes(magic, sizeof(magic)));
  if (std::string_view(magic, 8) != kNativeMagic) return r.Corrupt("not an .aiprof file");
  RETURN_IF_ERROR(r.Bytes(&version, sizeof(version)));
  if (version != kNativeVersion && version != kNativeUncheckedVersion) {
    return ErrStatus(path + ": .aiprof version " + std::to_string(version) + " is not supported (this build reads " +
                     std::to_string(kNativeVersion) + " and " + std::to_string(kNativeUncheckedVersion) +
                     "); re-import the original trace");
  }
  r.set_checked(version == kNativeVersion);
  auto trace = std::make_unique<Trace>();
  trace->backing = std::move(mapping);
  RETURN_IF_ERROR(ReadAll(r, trace.get()));
  char end[9];
  RETURN_IF_ERROR(r.Bytes(end, sizeof(end)));
  if (std::string_view(end, 9) != kEndMagic) return r.Corrupt("missing end marker (truncated?)");
  if (r.pos() != r.size()) {
    return r.Corrupt(std::to_string(r.size() - r.pos()) +
                     " bytes after the end marker (appended to, or two files in one?)");
  }
  if (options.verify_checksums) RETURN_IF_ERROR(r.VerifyChecksums());
  RETURN_IF_ERROR(Validate(*trace, r));
  RETURN_IF_ERROR(CheckOpStats(trace.get(), r));
  if (version == kNativeUncheckedVersion) {
    trace->diagnostics.mutable_entries()[std::string(kNativeUncheckedDiagnostic)] = DiagnosticEntry{
        1, path,
        "an .aiprof file of version 5 has no checksums: only its structure and references were checked, "
        "so a changed value would go unnoticed; `aiprof import` it with -o to write a checked version-6 file"};
  }
  return trace;
}

}  // namespace aiprof
