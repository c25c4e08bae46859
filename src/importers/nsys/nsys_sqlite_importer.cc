#include "src/importers/nsys/nsys_sqlite_importer.h"

#include <sqlite3.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/base/import_budget.h"
#include "src/base/quantile.h"
#include "src/importers/common/decompressed_copy.h"
#include "src/importers/common/import_confinement.h"
#include "src/model/time_range.h"
#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

constexpr std::string_view kSqliteMagic("SQLite format 3\0", 16);
constexpr const char* kTables[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME",
                                   "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
                                   "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS", "TARGET_INFO_GPU", "COMPOSITE_EVENTS"};

// SQLite's work on one file is bounded: a crafted file (a huge join, a
// pathological index) stops with an error instead of running without limit.
// The budget is in virtual-machine steps, checked every kProgressPeriod
// steps: kStepsBase plus kStepsPerByte for each byte of the file, generous
// for what the importer's queries need (a few steps per byte). docs/importers.md.
constexpr int kProgressPeriod = 10000;
constexpr uint64_t kStepsBase = 100'000'000;
constexpr uint64_t kStepsPerByte = 64;

// NVTX_EVENTS.eventType values (nsys documentation).
constexpr int64_t kNvtxMark = 34, kNvtxPushPop = 59, kNvtxStartEnd = 60;

// An SQLite error as the user should read it: a damaged file (cut short,
// overwritten; SQLITE_CORRUPT or SQLITE_NOTADB) is said to be one, with the
// statement it broke and the row reached.
Status SqliteError(sqlite3* db, const std::string& path, const std::string& doing) {
  const int code = sqlite3_errcode(db);
  if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) {
    return ErrStatus(path + ": truncated or corrupt SQLite database (" + sqlite3_errmsg(db) + ") " + doing);
  }
  return ErrStatus(path + ": SQLite error " + doing + ": " + sqlite3_errmsg(db));
}

class Stmt {
 public:
  ~Stmt() { sqlite3_finalize(stmt_); }
  Status Prepare(sqlite3* db, const std::string& sql, const std::string& path) {
    sql_ = sql;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) {
      return SqliteError(db, path, "preparing \"" + sql + "\"");
    }
    return OkStatus();
  }
  // True while a row is available; an error is reported through `status`.
  bool Step(Status* status, sqlite3* db, const std::string& path) {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return ++rows_, true;
    if (rc != SQLITE_DONE) {
      *status = SqliteError(db, path, "reading row " + std::to_string(rows_ + 1) + " of \"" + sql_ + "\"");
    }
    return false;
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  bool Null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  bool Integer(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_INTEGER; }
  // The column's value as SQLite holds it, for a diagnostic.
  std::string Shown(int col) const {
    switch (sqlite3_column_type(stmt_, col)) {
      case SQLITE_NULL:
        return "NULL";
      case SQLITE_INTEGER:
        return std::to_string(Int(col));
      case SQLITE_BLOB:
        return "a blob";
      default:
        return "'" + std::string(Text(col).substr(0, 40)) + "'";
    }
  }
  std::string_view Text(int col) const {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    return p ? std::string_view(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col)) : std::string_view();
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
  uint64_t rows_ = 0;
};

struct NsysImport {
  std::string path;
  sqlite3* db = nullptr;
  TraceBuilder* builder;
  std::unordered_map<int64_t, StringId> strings;
  std::map<std::pair<int32_t, int64_t>, uint32_t> device_tracks;  // (device, stream) -> track
  // The first error met reading the schema (a damaged file): Run() returns
  // it rather than "no Nsight tables".
  Status schema_error;

  // The columns of `table`, empty when absent. Only a real table counts: a
  // view (which could recurse or join without limit) is refused and counted.
  std::set<std::string> Columns(const std::string& table) {
    std::set<std::string> out;
    Stmt kind;
    Status kst = kind.Prepare(db, "SELECT type FROM sqlite_master WHERE name = '" + table + "' COLLATE NOCASE", path);
    if (!kst.ok() || !kind.Step(&kst, db, path)) {
      if (!kst.ok() && schema_error.ok()) schema_error = kst;
      return out;
    }
    if (kind.Text(0) != "table") {
      builder->Diagnose("nsys_not_a_table", path + ": " + table,
                        "is a " + std::string(kind.Text(0)) + ", not a table; views are not followed, so it is ignored");
      return out;
    }
    Stmt s;
    Status st = s.Prepare(db, "PRAGMA table_info(\"" + table + "\")", path);
    while (st.ok() && s.Step(&st, db, path)) out.insert(std::string(s.Text(1)));
    if (!st.ok() && schema_error.ok()) schema_error = st;
    return out;
  }

  StringId Str(int64_t id) {
    auto it = strings.find(id);
    return it == strings.end() ? builder->Intern("<string " + std::to_string(id) + ">") : it->second;
  }

  Status LoadStrings() {
    if (Columns("StringIds").empty()) return OkStatus();
    Stmt s;
    RETURN_IF_ERROR(s.Prepare(db, "SELECT id, value FROM StringIds", path));
    Status st;
    while (s.Step(&st, db, path)) strings[s.Int(0)] = builder->Intern(s.Text(1));
    return st;
  }

  // The name of string id column `col`: an id that is NULL or not an
  // integer is a malformed row (it read as id 0); the row is kept, named
  // "<string ?>", and counted.
  StringId NameOf(const Stmt& s, int col, const char* table, uint64_t row) {
    if (s.Integer(col)) return Str(s.Int(col));
    builder->Diagnose("nsys_bad_value", path + ": " + table + " row " + std::to_string(row),
                      "the name's string id is " + s.Shown(col) + ", not an integer; kept, named <string ?>");
    return builder->Intern("<string ?>");
  }

  // The device stream track of a row's deviceId and streamId (columns
  // `col`, `col` + 1); kNoTrack, after counting the row, when the device id is
  // not an integer in 0..2^31-1 (the model's device ids are 32-bit: 2^40 was
  // cut to device 0 and its kernels merged into GPU 0's, D6 of the input
  // trial) or the stream is not an integer.
  uint32_t DeviceTrackOf(const Stmt& s, int col, const char* table, uint64_t row) {
    if (!s.Integer(col) || s.Int(col) < 0 || s.Int(col) > INT32_MAX || !s.Integer(col + 1)) {
      bool device_bad = !s.Integer(col) || s.Int(col) < 0 || s.Int(col) > INT32_MAX;
      builder->Diagnose("nsys_bad_value", path + ": " + table + " row " + std::to_string(row),
                        device_bad ? "deviceId " + s.Shown(col) + " is not an integer in 0..2^31-1; row skipped"
                                   : "streamId " + s.Shown(col + 1) + " is not an integer; row skipped");
      return kNoTrack;
    }
    return DeviceTrack(static_cast<int32_t>(s.Int(col)), s.Int(col + 1));
  }

  uint32_t DeviceTrack(int32_t device, int64_t stream) {
    auto key = std::make_pair(device, stream);
    auto it = device_tracks.find(key);
    if (it != device_tracks.end()) return it->second;
    uint32_t t = builder->ThreadTrack(IdValue::Str(builder->Intern("GPU " + std::to_string(device))), IdValue::Num(stream));
    builder->SetTrackRole(t, TrackKind::kDeviceStream, Layer::kDevice, device);
    builder->SetThreadName(t, builder->Intern("stream " + std::to_string(stream)));
    device_tracks.emplace(key, t);
    return t;
  }

  uint32_t HostTrack(int64_t global_tid) {
    return builder->ThreadTrack(IdValue::Num(NsysPid(global_tid)), IdValue::Num(NsysTid(global_tid)));
  }

  // The host track of a row's globalTid (column `col`); kNoTrack, after
  // counting the row, when it is NULL or not an integer (read as 0, the row
  // went to a thread 0 of a process 0 unsaid).
  uint32_t HostTrackOf(const Stmt& s, int col, const char* table, uint64_t row) {
    if (s.Integer(col)) return HostTrack(s.Int(col));
    builder->Diagnose("nsys_bad_value", path + ": " + table + " row " + std::to_string(row),
                      "globalTid " + s.Shown(col) + " is not an integer; row skipped");
    return kNoTrack;
  }

  // A row's correlationId (column `col`): NULL or not an integer is no
  // correlation. Read as 0, every such runtime call and every such device
  // activity shared id 0, and the activity was linked to an unrelated call.
  static int64_t CorrelationOf(const Stmt& s, int col) { return s.Integer(col) ? s.Int(col) : kNoCorrelation; }

  // A row's duration, or false (counted) when it ends before it starts or
  // lies outside the model's range.
  bool DurationOf(int64_t start, int64_t end, const char* table, uint64_t row, int64_t* dur) {
    if (end < start) {
      builder->Diagnose("negative_duration", Where(table, row, start, end), "a row ends before it starts; skipped");
      return false;
    }
    if (!DurationBetween(start, end, dur)) {
      builder->Diagnose("time_out_of_range", Where(table, row, start, end),
                        "start or end outside +-2^61 ns, or longer than 2^61 ns; skipped");
      return false;
    }
    return true;
  }

  // `row` counts the rows read from `table` (1-based), to name a bad one.
  void Slice(uint32_t track, int64_t start, int64_t end, StringId name, StringId cat, int64_t corr, const char* table,
             uint64_t row) {
    int64_t dur = 0;
    if (DurationOf(start, end, table, row, &dur))
      builder->AddSlice(track, start, dur, name, cat, corr, builder->ArgCursor(), 0);
  }

  // The same, with column `bytes_col` of `s` (when >= 0) as the slice's "bytes" arg.
  void Slice(uint32_t track, int64_t start, int64_t end, StringId name, StringId cat, int64_t corr, const char* table,
             uint64_t row, const Stmt& s, int bytes_col, StringId bytes_key) {
    int64_t dur = 0;
    if (!DurationOf(start, end, table, row, &dur)) return;
    const uint64_t begin = builder->ArgCursor();
    const uint16_t count = BytesArg(s, bytes_col, bytes_key);
    builder->AddSlice(track, start, dur, name, cat, corr, begin, count);
  }

  // A row's start and end (columns 0 and 1; `columns` 1: start only) must
  // be integers: sqlite3_column_int64 reads NULL, text and blobs as 0 (found
  // by review: kernels imported at ts 0 with no diagnostic).
  bool Times(const Stmt& s, const char* table, uint64_t row, int columns = 2) {
    for (int c = 0; c < columns; ++c) {
      if (s.Integer(c)) continue;
      builder->Diagnose("nsys_bad_value", path + ": " + table + " row " + std::to_string(row),
                        std::string(c == 0 ? "start" : "end") + " is NULL or not an integer; row skipped");
      return false;
    }
    return true;
  }

  std::string Where(const char* table, uint64_t row, int64_t start, int64_t end) const {
    return path + ": " + table + " row " + std::to_string(row) + " (start " + std::to_string(start) + ", end " +
           std::to_string(end) + ")";
  }

  Status Runtime() {
    if (Columns("CUPTI_ACTIVITY_KIND_RUNTIME").empty()) return OkStatus();
    Stmt s;
    RETURN_IF_ERROR(s.Prepare(db, "SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME", path));
    StringId cat = builder->Intern("cuda_runtime");
    Status st;
    for (uint64_t row = 1; s.Step(&st, db, path); ++row) {
      if (!Times(s, "CUPTI_ACTIVITY_KIND_RUNTIME", row)) continue;
      const uint32_t track = HostTrackOf(s, 2, "CUPTI_ACTIVITY_KIND_RUNTIME", row);
      if (track == kNoTrack) continue;
      Slice(track, s.Int(0), s.Int(1), NameOf(s, 4, "CUPTI_ACTIVITY_KIND_RUNTIME", row), cat, CorrelationOf(s, 3),
            "CUPTI_ACTIVITY_KIND_RUNTIME", row);
    }
    return st;
  }

  Status Kernels() {
    std::set<std::string> cols = Columns("CUPTI_ACTIVITY_KIND_KERNEL");
    if (cols.empty()) return OkStatus();
    std::string name_col = cols.count("demangledName") ? "demangledName" : "shortName";
    Stmt s;
    RETURN_IF_ERROR(s.Prepare(db, "SELECT start, end, deviceId, streamId, correlationId, " + name_col +
                                      " FROM CUPTI_ACTIVITY_KIND_KERNEL", path));
    StringId cat = builder->Intern("kernel");
    Status st;
    for (uint64_t row = 1; s.Step(&st, db, path); ++row) {
      if (!Times(s, "CUPTI_ACTIVITY_KIND_KERNEL", row)) continue;
      uint32_t track = DeviceTrackOf(s, 2, "CUPTI_ACTIVITY_KIND_KERNEL", row);
      if (track == kNoTrack) continue;
      Slice(track, s.Int(0), s.Int(1), NameOf(s, 5, "CUPTI_ACTIVITY_KIND_KERNEL", row), cat, CorrelationOf(s, 4),
            "CUPTI_ACTIVITY_KIND_KERNEL", row);
    }
    return st;
  }

  static const char* CopyKindName(int64_t kind) {
    static const char* kNames[] = {"Memcpy Unknown", "Memcpy HtoD", "Memcpy DtoH", "Memcpy HtoA", "Memcpy AtoH",
                                   "Memcpy AtoA",    "Memcpy AtoD", "Memcpy DtoA", "Memcpy DtoD", "Memcpy HtoH",
                                   "Memcpy PtoP"};
    return kind >= 0 && kind <= 10 ? kNames[kind] : "Memcpy";
  }

  // Nsight's memory kinds (its ENUM_CUDA_MEM_KIND table, which renumbers
  // CUPTI's): the labels Kineto puts in a copy's name ("Pageable", "Pinned",
  // "Device", ...). The database's own table wins where it has one.
  std::vector<std::string> MemoryKindLabels() {
    std::vector<std::string> labels = {"Pageable", "Pinned",        "Device",         "Array",
                                       "Managed",  "Device Static", "Managed Static", "Unknown"};
    std::set<std::string> cols = Columns("ENUM_CUDA_MEM_KIND");
    if (!cols.count("id") || !cols.count("label")) return labels;
    Stmt s;
    Status st = s.Prepare(db, "SELECT id, label FROM ENUM_CUDA_MEM_KIND", path);
    while (st.ok() && s.Step(&st, db, path)) {
      if (!s.Integer(0) || s.Int(0) < 0 || s.Int(0) >= 64) continue;
      if (static_cast<size_t>(s.Int(0)) >= labels.size()) labels.resize(static_cast<size_t>(s.Int(0)) + 1, "Unknown");
      labels[static_cast<size_t>(s.Int(0))] = std::string(s.Text(1).substr(0, 32));
    }
    return labels;
  }

  // The `bytes` column (`col`) as the "bytes" arg Kineto's copies carry,
  // when it is a non-negative integer; returns the arg count (0 or 1).
  uint16_t BytesArg(const Stmt& s, int col, StringId key) {
    if (col < 0 || !s.Integer(col) || s.Int(col) < 0) return 0;
    Arg a;
    a.key = key;
    a.type = ArgType::kInt;
    a.i = s.Int(col);
    builder->AddArg(a);
    return 1;
  }

  // Copies are named as Kineto names them, "Memcpy HtoD (Pageable -> Device)",
  // where the export has srcKind and dstKind (the memcpy analysis counts
  // pageable copies by that name), and carry their size as "bytes".
  Status Copies() {
    const StringId bytes_key = builder->Intern("bytes");
    if (std::set<std::string> cols = Columns("CUPTI_ACTIVITY_KIND_MEMCPY"); !cols.empty()) {
      const bool kinds = cols.count("srcKind") && cols.count("dstKind");
      const bool sized = cols.count("bytes");
      const std::vector<std::string> labels = kinds ? MemoryKindLabels() : std::vector<std::string>();
      auto label = [&](const Stmt& st, int col) {
        return st.Integer(col) && st.Int(col) >= 0 && static_cast<uint64_t>(st.Int(col)) < labels.size()
                   ? labels[static_cast<size_t>(st.Int(col))]
                   : std::string("Unknown");
      };
      Stmt s;
      RETURN_IF_ERROR(s.Prepare(db,
                                std::string("SELECT start, end, deviceId, streamId, correlationId, copyKind") +
                                    (kinds ? ", srcKind, dstKind" : "") + (sized ? ", bytes" : "") +
                                    " FROM CUPTI_ACTIVITY_KIND_MEMCPY",
                                path));
      StringId cat = builder->Intern("gpu_memcpy");
      Status st;
      for (uint64_t row = 1; s.Step(&st, db, path); ++row) {
        if (!Times(s, "CUPTI_ACTIVITY_KIND_MEMCPY", row)) continue;
        // The name first: string ids in the order they always had.
        std::string copy = CopyKindName(s.Int(5));
        if (kinds) copy += " (" + label(s, 6) + " -> " + label(s, 7) + ")";
        StringId name = builder->Intern(copy);
        uint32_t track = DeviceTrackOf(s, 2, "CUPTI_ACTIVITY_KIND_MEMCPY", row);
        if (track == kNoTrack) continue;
        Slice(track, s.Int(0), s.Int(1), name, cat, CorrelationOf(s, 4), "CUPTI_ACTIVITY_KIND_MEMCPY", row, s,
              sized ? (kinds ? 8 : 6) : -1, bytes_key);
      }
      RETURN_IF_ERROR(st);
    }
    std::set<std::string> cols = Columns("CUPTI_ACTIVITY_KIND_MEMSET");
    if (cols.empty()) return OkStatus();
    const bool sized = cols.count("bytes");
    Stmt s;
    RETURN_IF_ERROR(s.Prepare(db,
                              std::string("SELECT start, end, deviceId, streamId, correlationId") +
                                  (sized ? ", bytes" : "") + " FROM CUPTI_ACTIVITY_KIND_MEMSET",
                              path));
    StringId cat = builder->Intern("gpu_memset"), name = builder->Intern("Memset");
    Status st;
    for (uint64_t row = 1; s.Step(&st, db, path); ++row) {
      if (!Times(s, "CUPTI_ACTIVITY_KIND_MEMSET", row)) continue;
      uint32_t track = DeviceTrackOf(s, 2, "CUPTI_ACTIVITY_KIND_MEMSET", row);
      if (track == kNoTrack) continue;
      Slice(track, s.Int(0), s.Int(1), name, cat, CorrelationOf(s, 4), "CUPTI_ACTIVITY_KIND_MEMSET", row, s,
            sized ? 5 : -1, bytes_key);
    }
    return st;
  }

  Status Syncs() {
    if (Columns("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION").empty()) return OkStatus();
    static const char* kNames[] = {"Sync unknown", "Event synchronize", "Stream wait event", "Stream synchronize",
                                   "Context synchronize"};
    Stmt s;
    RETURN_IF_ERROR(s.Prepare(db, "SELECT start, end, deviceId, streamId, correlationId, syncType FROM "
                                  "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", path));
    StringId cat = builder->Intern("cuda_sync");
    Status st;
    for (uint64_t row = 1; s.Step(&st, db, path); ++row) {
      if (!Times(s, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", row)) continue;
      int64_t type = s.Int(5);
      StringId name = builder->Intern(type >= 0 && type <= 4 ? kNames[type] : kNames[0]);
      uint32_t track = DeviceTrackOf(s, 2, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", row);
      if (track == kNoTrack) continue;
      Slice(track, s.Int(0), s.Int(1), name, cat, CorrelationOf(s, 4), "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", row);
    }
    return st;
  }

  Status Nvtx() {
    std::set<std::string> cols = Columns("NVTX_EVENTS");
    if (cols.empty()) return OkStatus();
    std::string text_id = cols.count("textId") ? "textId" : "NULL";
    Stmt s;
    RETURN_IF_ERROR(s.Prepare(db, "SELECT start, end, eventType, globalTid, text, " + text_id + " FROM NVTX_EVENTS", path));
    StringId cat = builder->Intern("user_annotation");
    Status st;
    for (uint64_t row = 1; s.Step(&st, db, path); ++row) {
      int64_t type = s.Int(2);
      StringId name = !s.Null(4) ? builder->Intern(s.Text(4)) : !s.Null(5) ? Str(s.Int(5)) : StringId{};
      if (type == kNvtxMark) {
        if (!Times(s, "NVTX_EVENTS", row, 1)) continue;
        const uint32_t track = HostTrackOf(s, 3, "NVTX_EVENTS", row);
        if (track == kNoTrack) continue;
        builder->AddInstant(track, s.Int(0), name, cat, 't', builder->ArgCursor(), 0);
      } else if (type == kNvtxPushPop || type == kNvtxStartEnd) {
        // A range without an end (still open when the capture stopped) is
        // skipped, and said so.
        if (!Times(s, "NVTX_EVENTS", row)) continue;
        const uint32_t track = HostTrackOf(s, 3, "NVTX_EVENTS", row);
        if (track == kNoTrack) continue;
        Slice(track, s.Int(0), s.Int(1), name, cat, kNoCorrelation, "NVTX_EVENTS", row);
      }
    }
    return st;
  }

  // The value of row `name` of a (name, value) table (META_DATA_CAPTURE,
  // TARGET_INFO_SYSTEM_ENV) when it is a whole number in 1..max; nullopt
  // when the table, the row or such a value is missing.
  Status NamedInt(const char* table, const char* name, int64_t max, std::optional<int64_t>* out) {
    out->reset();
    std::set<std::string> cols = Columns(table);
    if (!cols.count("name") || !cols.count("value")) return OkStatus();
    Stmt s;
    RETURN_IF_ERROR(s.Prepare(db, std::string("SELECT value FROM ") + table + " WHERE name = '" + name + "'", path));
    Status st;
    if (!s.Step(&st, db, path)) return st;
    const std::string_view text = s.Text(0);
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc() && end == text.data() + text.size() && v >= 1 && v <= max) *out = v;
    return OkStatus();
  }

  // CPU samples: COMPOSITE_EVENTS (one row per sample: start, globalTid) and
  // SAMPLING_CALLCHAINS (its frames, stackDepth 0 = leaf; symbol and module
  // are StringIds). A sample's weight is the CPU time it stands for, the
  // meaning it has in every importer and in aiprof's own capture: one figure
  // per capture, the same on every thread (a sleeping thread's samples are
  // far apart because it sleeps, not because each stands for more CPU).
  // SampleWeight() chooses it; the basis is in metadata.
  Status Samples() {
    if (Columns("COMPOSITE_EVENTS").empty()) return OkStatus();
    const bool chains = !Columns("SAMPLING_CALLCHAINS").empty();
    const std::string sql = chains
        ? "SELECT e.id, e.start, e.globalTid, c.stackDepth, c.symbol, c.module, c.kernelMode FROM COMPOSITE_EVENTS e "
          "LEFT JOIN SAMPLING_CALLCHAINS c ON c.id = e.id ORDER BY e.id, c.stackDepth DESC"
        : "SELECT id, start, globalTid, NULL, NULL, NULL, NULL FROM COMPOSITE_EVENTS ORDER BY id";
    Stmt s;
    RETURN_IF_ERROR(s.Prepare(db, sql, path));
    struct Pending {
      uint32_t track;
      int64_t ts;
      uint32_t callsite;
    };
    std::vector<Pending> samples;
    std::map<uint32_t, int64_t> tid_of;  // track -> the thread's tid, for messages
    int64_t current = INT64_MIN;
    Status st;
    bool skipping = false;
    while (s.Step(&st, db, path)) {
      if (s.Int(0) != current) {
        current = s.Int(0);
        skipping = !TimeInRange(s.Int(1));
        if (skipping) {
          builder->Diagnose("time_out_of_range", path + ": COMPOSITE_EVENTS id " + std::to_string(current) + " (start " +
                                                     std::to_string(s.Int(1)) + ")",
                            "a sample time outside +-2^61 ns; skipped");
          continue;
        }
        samples.push_back(Pending{HostTrack(s.Int(2)), s.Int(1), kNoCallsite});
        tid_of.emplace(samples.back().track, NsysTid(s.Int(2)));
      }
      if (skipping || s.Null(3)) continue;
      const FrameKind kind = !s.Null(6) && s.Int(6) != 0 ? FrameKind::kKernel : FrameKind::kNative;
      samples.back().callsite = builder->InternCallsite(samples.back().callsite, Str(s.Int(4)), Str(s.Int(5)), kind);
    }
    RETURN_IF_ERROR(st);
    if (samples.empty()) return OkStatus();
    std::map<uint32_t, std::vector<int64_t>> times;  // per thread, sorted
    for (const Pending& p : samples) times[p.track].push_back(p.ts);
    for (auto& [track, ts] : times) std::sort(ts.begin(), ts.end());
    int64_t weight = 0;
    RETURN_IF_ERROR(SampleWeight(times, tid_of, &weight));
    // No thread is credited more CPU than its own window, first sample to
    // last plus one interval (n samples at the weight span n - 1 intervals
    // and the one before the first): where the capture's weight would, the
    // thread's samples share that window instead, and it is said.
    std::map<uint32_t, int64_t> thread_weight;
    for (const auto& [track, ts] : times) {
      const int64_t n = static_cast<int64_t>(ts.size());
      const int64_t window = ts.back() - ts.front() + weight;
      int64_t w = weight;
      if (weight > window / n) {  // n * weight > window, without the product
        w = window / n;
        builder->Diagnose(
            "nsys_sample_weight_capped", path + ": COMPOSITE_EVENTS, tid " + std::to_string(tid_of[track]),
            std::to_string(n) + " samples at " + std::to_string(weight) +
                " ns each would exceed the thread's window of " + std::to_string(window) +
                " ns (first sample to last, plus one interval); each weighed " + std::to_string(w) + " ns instead");
      }
      thread_weight[track] = w;
    }
    for (const Pending& p : samples) builder->AddStackSample(p.track, p.ts, p.callsite, thread_weight[p.track]);
    return OkStatus();
  }

  // The capture's sample weight (ns), and metadata host_sample_weight_ns and
  // host_sample_weight_basis saying where it came from:
  //  * the stated period: META_DATA_CAPTURE LINUX_PERF_OPTIONS:SAMPLING_PERIOD
  //    (CPU cycles between samples) over TARGET_INFO_SYSTEM_ENV CpuSpeedMhz;
  //  * else, or where the busiest thread (most samples) was sampled more
  //    often than that period allows (its median interval shorter: the
  //    clock ran faster than stated, or the counter was not the cycles the
  //    file names), that thread's median interval between samples: a thread
  //    on the CPU throughout is sampled once per period, and no thread's
  //    samples come closer together than the CPU time each stands for.
  //    CloverLeaf's export states 2,450,000 cycles at 2450 MHz (1 ms) but its
  //    main thread was sampled every 258 us (median), so 1 ms would credit
  //    that thread 1.5 s of CPU in 865 ms.
  // With neither (no period, no thread with two samples) the weight is 0:
  // samples count, time does not, and it is said.
  Status SampleWeight(const std::map<uint32_t, std::vector<int64_t>>& times, const std::map<uint32_t, int64_t>& tid_of,
                      int64_t* weight) {
    constexpr int64_t kMaxPeriodCycles = 1'000'000'000'000, kMaxMhz = 1'000'000;
    std::optional<int64_t> period, mhz;
    RETURN_IF_ERROR(NamedInt("META_DATA_CAPTURE", "LINUX_PERF_OPTIONS:SAMPLING_PERIOD", kMaxPeriodCycles, &period));
    RETURN_IF_ERROR(NamedInt("TARGET_INFO_SYSTEM_ENV", "CpuSpeedMhz", kMaxMhz, &mhz));
    const int64_t stated = period && mhz ? std::max<int64_t>(1, (*period * 1000 + *mhz / 2) / *mhz) : 0;  // in ns
    uint32_t busiest = 0;
    size_t busiest_n = 0;
    int64_t observed = 0;
    for (const auto& [track, ts] : times) {
      if (ts.size() < 2) continue;
      std::vector<int64_t> gaps(ts.size() - 1);
      for (size_t i = 1; i < ts.size(); ++i) gaps[i - 1] = ts[i] - ts[i - 1];
      const int64_t median = std::llround(QuantileSelect(gaps.data(), gaps.size(), 0.5));
      if (median <= 0) continue;  // samples at one instant say nothing of the period
      if (ts.size() > busiest_n || (ts.size() == busiest_n && median < observed)) {
        busiest = track, busiest_n = ts.size(), observed = median;
      }
    }
    const std::string stated_text = period && mhz ? std::to_string(*period) + " cycles at " + std::to_string(*mhz) +
                                                        " MHz = " + std::to_string(stated) + " ns"
                                                  : "";
    std::string basis;
    if (stated > 0 && (observed == 0 || stated <= observed)) {
      *weight = stated;
      basis = "stated sampling period: " + stated_text +
              " (META_DATA_CAPTURE LINUX_PERF_OPTIONS:SAMPLING_PERIOD over TARGET_INFO_SYSTEM_ENV CpuSpeedMhz)";
    } else if (observed > 0) {
      *weight = observed;
      basis =
          "median interval between samples of the busiest thread (tid " + std::to_string(tid_of.at(busiest)) + ", " +
          std::to_string(busiest_n) + " samples); " +
          (stated > 0 ? "the stated period, " + stated_text + ", is longer than that thread's interval, so did not hold"
                      : std::string("the file states no sampling period and CPU clock"));
    } else {
      *weight = 0;
      basis = "unknown: the file states no sampling period and CPU clock, and no thread has two samples";
      builder->Diagnose("nsys_sample_weight_unknown", path + ": COMPOSITE_EVENTS",
                        "no sampling period, CPU clock or thread with two samples: samples weigh 0 ns");
    }
    builder->trace()->metadata["host_sample_weight_ns"] = std::to_string(*weight);
    builder->trace()->metadata["host_sample_weight_basis"] = basis;
    return OkStatus();
  }

  Status Gpus() {
    std::set<std::string> cols = Columns("TARGET_INFO_GPU");
    if (!cols.count("id") || !cols.count("name")) return OkStatus();
    Stmt s;
    RETURN_IF_ERROR(s.Prepare(db, "SELECT id, name FROM TARGET_INFO_GPU", path));
    Status st;
    for (uint64_t row = 1; s.Step(&st, db, path); ++row) {
      // An id that is NULL or text read as 0: its name replaced GPU 0's, and
      // GPU 0's peaks (roofline) were looked up by it. Skipped, counted.
      if (!s.Integer(0)) {
        builder->Diagnose("nsys_bad_value", path + ": TARGET_INFO_GPU row " + std::to_string(row),
                          "id " + s.Shown(0) + " is not an integer; row skipped");
        continue;
      }
      builder->trace()->metadata["gpu." + std::to_string(s.Int(0)) + ".name"] = std::string(s.Text(1));
    }
    return st;
  }

  Status Run() {
    bool any = false;
    for (const char* table : kTables) any = any || !Columns(table).empty();
    RETURN_IF_ERROR(schema_error);
    if (!any) {
      return ErrStatus(path + ": an SQLite database without Nsight Systems tables (CUPTI_ACTIVITY_KIND_*, "
                       "NVTX_EVENTS, TARGET_INFO_GPU); is it an `nsys export --type sqlite` file?");
    }
    RETURN_IF_ERROR(LoadStrings());
    RETURN_IF_ERROR(Runtime());
    RETURN_IF_ERROR(Kernels());
    RETURN_IF_ERROR(Copies());
    RETURN_IF_ERROR(Syncs());
    RETURN_IF_ERROR(Nvtx());
    RETURN_IF_ERROR(Samples());
    return Gpus();
  }
};

}  // namespace

bool DetectNsysSqlite(std::string_view prefix) { return prefix.substr(0, kSqliteMagic.size()) == kSqliteMagic; }

namespace {

struct StepBudget {
  uint64_t steps_left = 0;
  bool exceeded = false;
};

// Called every kProgressPeriod virtual-machine steps; non-zero interrupts.
int CountSteps(void* arg) {
  auto* budget = static_cast<StepBudget*>(arg);
  if (budget->steps_left < static_cast<uint64_t>(kProgressPeriod)) {
    budget->exceeded = true;
    return 1;
  }
  budget->steps_left -= kProgressPeriod;
  return 0;
}

// The input is untrusted: read-only, no triggers or views (a table that is
// really a view is refused by Columns() too), no schema functions, and a step
// budget from the file's size.
void Harden(sqlite3* db, uint64_t file_bytes, StepBudget* budget) {
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  budget->steps_left = kStepsBase + kStepsPerByte * file_bytes;
  sqlite3_progress_handler(db, kProgressPeriod, CountSteps, budget);
}

}  // namespace

Status ImportNsysSqlite(const std::string& path, TraceBuilder* builder) {
  NsysImport imp{path, nullptr, builder, {}, {}, {}};
  RETURN_IF_ERROR(CheckImportPath(path));
  std::error_code ec;
  const uint64_t bytes = std::filesystem::file_size(path, ec);
  RETURN_IF_ERROR(ChargeImportBytes(CurrentImportBudget(), path, ec ? 0 : bytes));  // SQLite reads pages: its size
  // A compressed export's decompressed copy has no name of its own
  // (decompressed_copy.h): SQLite opens it by one that is dropped at once.
  ASSIGN_OR_RETURN(const std::string openable, OpenableName(path));
  const int opened = sqlite3_open_v2(openable.c_str(), &imp.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  DropOpenableName(path);
  if (opened != SQLITE_OK) {
    std::string msg = imp.db ? sqlite3_errmsg(imp.db) : "out of memory";
    sqlite3_close(imp.db);
    return ErrStatus(path + ": cannot open as SQLite: " + msg);
  }
  StepBudget budget;
  Harden(imp.db, ec ? 0 : bytes, &budget);
  const uint64_t allowed = budget.steps_left;
  Status st = imp.Run();
  sqlite3_close(imp.db);
  if (budget.exceeded) {
    return ErrStatus(path + ": stopped after " + std::to_string(allowed) +
                     " SQLite steps, the budget for a file of this size (" + std::to_string(kStepsBase) + " + " +
                     std::to_string(kStepsPerByte) + " per byte; docs/importers.md): is it a crafted database?");
  }
  RETURN_IF_ERROR(st);
  builder->trace()->metadata["source_format"] = "nsys_sqlite";
  return OkStatus();
}

}  // namespace aiprof
