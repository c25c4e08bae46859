#include "src/importers/nsys/nsys_sqlite_importer.h"

#include <sqlite3.h>

#include <algorithm>
#include <climits>
#include <set>
#include <vector>
#include <unordered_map>

#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

constexpr std::string_view kSqliteMagic("SQLite format 3\0", 16);
constexpr const char* kTables[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME",
                                   "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
                                   "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS", "TARGET_INFO_GPU", "COMPOSITE_EVENTS"};

// NVTX_EVENTS.eventType values (nsys documentation).
constexpr int64_t kNvtxMark = 34, kNvtxPushPop = 59, kNvtxStartEnd = 60;

class Stmt {
 public:
  ~Stmt() { sqlite3_finalize(stmt_); }
  Status Prepare(sqlite3* db, const std::string& sql, const std::string& path) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) {
      return ErrStatus(path + ": SQLite error preparing \"" + sql + "\": " + sqlite3_errmsg(db));
    }
    return OkStatus();
  }
  // True while a row is available; an error is reported through `status`.
  bool Step(Status* status, sqlite3* db, const std::string& path) {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) *status = ErrStatus(path + ": SQLite error reading rows: " + sqlite3_errmsg(db));
    return false;
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  bool Null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string_view Text(int col) const {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    return p ? std::string_view(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col)) : std::string_view();
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

struct NsysImport {
  std::string path;
  sqlite3* db = nullptr;
  TraceBuilder* builder;
  std::unordered_map<int64_t, StringId> strings;
  std::unordered_map<uint64_t, uint32_t> device_tracks;

  std::set<std::string> Columns(const std::string& table) {
    std::set<std::string> out;
    Stmt s;
    if (!s.Prepare(db, "PRAGMA table_info(\"" + table + "\")", path).ok()) return out;
    Status st;
    while (s.Step(&st, db, path)) out.insert(std::string(s.Text(1)));
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

  uint32_t DeviceTrack(int64_t device, int64_t stream) {
    uint64_t key = (static_cast<uint64_t>(device) << 32) | static_cast<uint32_t>(stream);
    auto it = device_tracks.find(key);
    if (it != device_tracks.end()) return it->second;
    uint32_t t = builder->ThreadTrack(IdValue::Str(builder->Intern("GPU " + std::to_string(device))), IdValue::Num(stream));
    builder->SetTrackRole(t, TrackKind::kDeviceStream, Layer::kDevice, static_cast<int32_t>(device));
    builder->SetThreadName(t, builder->Intern("stream " + std::to_string(stream)));
    device_tracks.emplace(key, t);
    return t;
  }

  uint32_t HostTrack(int64_t global_tid) {
    return builder->ThreadTrack(IdValue::Num(NsysPid(global_tid)), IdValue::Num(NsysTid(global_tid)));
  }

  void Slice(uint32_t track, int64_t start, int64_t end, StringId name, StringId cat, int64_t corr, const char* table) {
    if (end < start) {
      builder->Diagnose("negative_duration", path + ": " + table, "a row ends before it starts; skipped");
      return;
    }
    builder->AddSlice(track, start, end - start, name, cat, corr, builder->ArgCursor(), 0);
  }

  Status Runtime() {
    if (Columns("CUPTI_ACTIVITY_KIND_RUNTIME").empty()) return OkStatus();
    Stmt s;
    RETURN_IF_ERROR(s.Prepare(db, "SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME", path));
    StringId cat = builder->Intern("cuda_runtime");
    Status st;
    while (s.Step(&st, db, path)) {
      Slice(HostTrack(s.Int(2)), s.Int(0), s.Int(1), Str(s.Int(4)), cat, s.Int(3), "CUPTI_ACTIVITY_KIND_RUNTIME");
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
    while (s.Step(&st, db, path)) {
      Slice(DeviceTrack(s.Int(2), s.Int(3)), s.Int(0), s.Int(1), Str(s.Int(5)), cat, s.Int(4), "CUPTI_ACTIVITY_KIND_KERNEL");
    }
    return st;
  }

  static const char* CopyKindName(int64_t kind) {
    static const char* kNames[] = {"Memcpy Unknown", "Memcpy HtoD", "Memcpy DtoH", "Memcpy HtoA", "Memcpy AtoH",
                                   "Memcpy AtoA",    "Memcpy AtoD", "Memcpy DtoA", "Memcpy DtoD", "Memcpy HtoH",
                                   "Memcpy PtoP"};
    return kind >= 0 && kind <= 10 ? kNames[kind] : "Memcpy";
  }

  Status Copies() {
    if (!Columns("CUPTI_ACTIVITY_KIND_MEMCPY").empty()) {
      Stmt s;
      RETURN_IF_ERROR(s.Prepare(db, "SELECT start, end, deviceId, streamId, correlationId, copyKind FROM "
                                    "CUPTI_ACTIVITY_KIND_MEMCPY", path));
      StringId cat = builder->Intern("gpu_memcpy");
      Status st;
      while (s.Step(&st, db, path)) {
        Slice(DeviceTrack(s.Int(2), s.Int(3)), s.Int(0), s.Int(1), builder->Intern(CopyKindName(s.Int(5))), cat,
              s.Int(4), "CUPTI_ACTIVITY_KIND_MEMCPY");
      }
      RETURN_IF_ERROR(st);
    }
    if (Columns("CUPTI_ACTIVITY_KIND_MEMSET").empty()) return OkStatus();
    Stmt s;
    RETURN_IF_ERROR(s.Prepare(db, "SELECT start, end, deviceId, streamId, correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET", path));
    StringId cat = builder->Intern("gpu_memset"), name = builder->Intern("Memset");
    Status st;
    while (s.Step(&st, db, path)) {
      Slice(DeviceTrack(s.Int(2), s.Int(3)), s.Int(0), s.Int(1), name, cat, s.Int(4), "CUPTI_ACTIVITY_KIND_MEMSET");
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
    while (s.Step(&st, db, path)) {
      int64_t type = s.Int(5);
      StringId name = builder->Intern(type >= 0 && type <= 4 ? kNames[type] : kNames[0]);
      Slice(DeviceTrack(s.Int(2), s.Int(3)), s.Int(0), s.Int(1), name, cat, s.Int(4), "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION");
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
    while (s.Step(&st, db, path)) {
      int64_t type = s.Int(2);
      StringId name = !s.Null(4) ? builder->Intern(s.Text(4)) : !s.Null(5) ? Str(s.Int(5)) : StringId{};
      if (type == kNvtxMark) {
        builder->AddInstant(HostTrack(s.Int(3)), s.Int(0), name, cat, 't', builder->ArgCursor(), 0);
      } else if ((type == kNvtxPushPop || type == kNvtxStartEnd) && !s.Null(1)) {
        Slice(HostTrack(s.Int(3)), s.Int(0), s.Int(1), name, cat, kNoCorrelation, "NVTX_EVENTS");
      }
    }
    return st;
  }

  // CPU samples: COMPOSITE_EVENTS (one row per sample: start, globalTid) and
  // SAMPLING_CALLCHAINS (its frames, stackDepth 0 = leaf; symbol and module
  // are StringIds). Each sample's weight is its thread's median interval
  // between samples (nsys samples on a CPU-cycle period, so no fixed time).
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
    int64_t current = INT64_MIN;
    Status st;
    while (s.Step(&st, db, path)) {
      if (s.Int(0) != current) {
        current = s.Int(0);
        samples.push_back(Pending{HostTrack(s.Int(2)), s.Int(1), kNoCallsite});
      }
      if (s.Null(3)) continue;
      const FrameKind kind = !s.Null(6) && s.Int(6) != 0 ? FrameKind::kKernel : FrameKind::kNative;
      samples.back().callsite = builder->InternCallsite(samples.back().callsite, Str(s.Int(4)), Str(s.Int(5)), kind);
    }
    RETURN_IF_ERROR(st);
    std::unordered_map<uint32_t, std::vector<int64_t>> times;
    for (const Pending& p : samples) times[p.track].push_back(p.ts);
    std::unordered_map<uint32_t, int64_t> weight;
    for (auto& [track, ts] : times) {
      std::sort(ts.begin(), ts.end());
      std::vector<int64_t> gaps;
      for (size_t i = 1; i < ts.size(); ++i) gaps.push_back(ts[i] - ts[i - 1]);
      if (gaps.empty()) continue;
      std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
      weight[track] = gaps[gaps.size() / 2];
    }
    for (const Pending& p : samples) builder->AddStackSample(p.track, p.ts, p.callsite, weight[p.track]);
    return OkStatus();
  }

  Status Gpus() {
    std::set<std::string> cols = Columns("TARGET_INFO_GPU");
    if (!cols.count("id") || !cols.count("name")) return OkStatus();
    Stmt s;
    RETURN_IF_ERROR(s.Prepare(db, "SELECT id, name FROM TARGET_INFO_GPU", path));
    Status st;
    while (s.Step(&st, db, path)) {
      builder->trace()->metadata["gpu." + std::to_string(s.Int(0)) + ".name"] = std::string(s.Text(1));
    }
    return st;
  }

  Status Run() {
    bool any = false;
    for (const char* table : kTables) any = any || !Columns(table).empty();
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

Status ImportNsysSqlite(const std::string& path, TraceBuilder* builder) {
  NsysImport imp{path, nullptr, builder, {}, {}};
  if (sqlite3_open_v2(path.c_str(), &imp.db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::string msg = imp.db ? sqlite3_errmsg(imp.db) : "out of memory";
    sqlite3_close(imp.db);
    return ErrStatus(path + ": cannot open as SQLite: " + msg);
  }
  Status st = imp.Run();
  sqlite3_close(imp.db);
  RETURN_IF_ERROR(st);
  builder->trace()->metadata["source_format"] = "nsys_sqlite";
  return OkStatus();
}

}  // namespace aiprof
