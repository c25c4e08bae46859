#include "src/serve/run_index.h"

#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>
#include <vector>

#include "src/serve/serve_log.h"

namespace aiprof {
namespace {

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  tag TEXT NOT NULL DEFAULT '',
  service TEXT NOT NULL DEFAULT '',
  size_bytes INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  state TEXT NOT NULL,
  claimed_unix_ms INTEGER NOT NULL DEFAULT 0,
  claimed_by TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '',
  cache TEXT NOT NULL DEFAULT '',
  source_format TEXT NOT NULL DEFAULT '',
  steps INTEGER NOT NULL DEFAULT 0,
  step_p50_ns REAL NOT NULL DEFAULT 0,
  device_util REAL NOT NULL DEFAULT -1,
  top_finding TEXT NOT NULL DEFAULT '',
  top_share REAL NOT NULL DEFAULT 0,
  top_basis TEXT NOT NULL DEFAULT '',
  indexed_unix_ms INTEGER NOT NULL DEFAULT 0,
  convert_ms REAL NOT NULL DEFAULT 0,
  device_util_basis TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS runs_state ON runs(state, id);
)sql";

// Where an index of schema 2 has no claimed_by column (made before it):
// added in place, the schema version unchanged (servers without it ignore
// it, and their claims carry none).
constexpr char kClaimedByColumn[] = "ALTER TABLE runs ADD COLUMN claimed_by TEXT NOT NULL DEFAULT ''";
// Where an index has no device_util_basis column (made before it): added in
// place, as claimed_by; its runs' utilisation then shows no base until they
// are converted again.
constexpr char kDeviceUtilBasisColumn[] = "ALTER TABLE runs ADD COLUMN device_util_basis TEXT NOT NULL DEFAULT ''";
constexpr char kClaimsIndex[] =
    "CREATE INDEX IF NOT EXISTS runs_claimed ON runs(claimed_unix_ms) WHERE claimed_unix_ms != 0";

constexpr char kColumns[] =
    "id, path, name, tag, size_bytes, mtime_ns, state, error, cache, source_format, steps, step_p50_ns, "
    "device_util, top_finding, top_share, top_basis, indexed_unix_ms, convert_ms, service, device_util_basis";

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A prepared statement, finalized on scope exit.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { ok_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) == SQLITE_OK; }
  ~Stmt() { sqlite3_finalize(s_); }
  bool ok() const { return ok_; }
  Stmt& Text(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& Int(int i, int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Stmt& Real(int i, double v) {
    sqlite3_bind_double(s_, i, std::isfinite(v) ? v : 0);
    return *this;
  }
  int Step() { return sqlite3_step(s_); }
  int64_t ColInt(int i) { return sqlite3_column_int64(s_, i); }
  double ColReal(int i) { return sqlite3_column_double(s_, i); }
  std::string ColText(int i) {
    const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(s_, i));
    return t ? std::string(t, static_cast<size_t>(sqlite3_column_bytes(s_, i))) : std::string();
  }

 private:
  sqlite3_stmt* s_ = nullptr;
  bool ok_ = false;
};

// A process's start time (clock ticks after boot, field 22 of
// /proc/<pid>/stat) and its state letter (field 3), or nullopt when
// /proc has no such process.
struct ProcStat {
  char state = '?';
  std::string start;
};
std::optional<ProcStat> ReadProcStat(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  const size_t paren = line.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(paren + 1));
  ProcStat st;
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 3) st.state = field.empty() ? '?' : field[0];
    if (i == 22) st.start = field;
  }
  if (st.start.empty()) return std::nullopt;
  return st;
}

// "<boot id>:<pid namespace inode>:<pid>:<start time>": who this process
// is, for as long as the machine runs ("" where /proc does not tell).
// Worked out again in a forked child (a new pid). Called under a RunIndex's
// mu_; one thread at a time per process is not promised, so each caller
// gets its own copy.
std::string ThisProcess() {
  static std::mutex mu;
  static pid_t for_pid = 0;
  static std::string id;
  std::lock_guard<std::mutex> lock(mu);
  if (for_pid == getpid()) return id;
  for_pid = getpid();
  id.clear();
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string boot;
  struct stat ns;
  const std::string pid = std::to_string(getpid());
  const std::optional<ProcStat> st = ReadProcStat(pid);
  if ((in >> boot) && boot.find(':') == std::string::npos && stat("/proc/self/ns/pid", &ns) == 0 && st) {
    id = boot + ":" + std::to_string(ns.st_ino) + ":" + pid + ":" + st->start;
  }
  return id;
}

// True when the process that `claimer` (ThisProcess() of a server, with
// "@<claim ms>") names is provably gone: it ran on this boot and in this
// pid namespace, and its pid is now no process, a zombie, or a process
// started at another time (the pid used again). False when it may be alive
// or cannot be told (another host, another container, another boot: their
// claims wait for kStaleClaimMs).
bool ClaimerIsGone(const std::string& claimer) {
  auto fields = [](std::string_view v) {
    std::vector<std::string> out;
    for (size_t from = 0;;) {
      const size_t colon = v.find(':', from);
      out.emplace_back(v.substr(from, colon == std::string_view::npos ? std::string_view::npos : colon - from));
      if (colon == std::string_view::npos) return out;
      from = colon + 1;
    }
  };
  const std::string self = ThisProcess();
  const size_t at = claimer.rfind('@');
  if (self.empty() || at == std::string::npos) return false;
  const std::vector<std::string> mine = fields(self), theirs = fields(std::string_view(claimer).substr(0, at));
  if (theirs.size() != 4 || theirs[0] != mine[0] || theirs[1] != mine[1]) return false;  // another boot or namespace
  const std::string& pid = theirs[2];
  if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) return false;
  const std::optional<ProcStat> st = ReadProcStat(pid);
  if (!st) return kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH;
  return st->state == 'Z' || st->state == 'X' || st->start != theirs[3];
}

RunState ParseState(const std::string& s) {
  if (s == "ready") return RunState::kReady;
  if (s == "failed") return RunState::kFailed;
  if (s == "converting") return RunState::kConverting;
  return RunState::kQueued;
}

RunRow ReadRow(Stmt& s) {
  RunRow r;
  r.id = s.ColInt(0);
  r.path = s.ColText(1);
  r.name = s.ColText(2);
  r.tag = s.ColText(3);
  r.size_bytes = s.ColInt(4);
  r.mtime_ns = s.ColInt(5);
  r.state = ParseState(s.ColText(6));
  r.error = s.ColText(7);
  r.cache = s.ColText(8);
  r.source_format = s.ColText(9);
  r.steps = s.ColInt(10);
  r.step_p50_ns = s.ColReal(11);
  r.device_util = s.ColReal(12);
  r.top_finding = s.ColText(13);
  r.top_share = s.ColReal(14);
  r.top_basis = s.ColText(15);
  r.indexed_unix_ms = s.ColInt(16);
  r.convert_ms = s.ColReal(17);
  r.service = s.ColText(18);
  r.device_util_basis = s.ColText(19);
  return r;
}

}  // namespace

const char* RunStateName(RunState s) {
  switch (s) {
    case RunState::kQueued: return "queued";
    case RunState::kConverting: return "converting";
    case RunState::kReady: return "ready";
    case RunState::kFailed: return "failed";
  }
  return "queued";
}

StatusOr<std::unique_ptr<RunIndex>> RunIndex::Open(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) return ErrStatus(path + ": cannot create folder " + parent.string() + ": " + ec.message());
  sqlite3* db = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  std::unique_ptr<RunIndex> index(new RunIndex(db));
  if (rc != SQLITE_OK)
    return ErrStatus(path + ": cannot open database: " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
  sqlite3_busy_timeout(db, 30000);
  // Switching a new database to WAL needs an exclusive lock, which SQLite
  // does not always wait for: retry while another process holds it.
  for (int waited_ms = 0;; waited_ms += 5) {
    const int w = sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
    if (w == SQLITE_OK) break;
    if ((w != SQLITE_BUSY && w != SQLITE_LOCKED) || waited_ms >= 30000) {
      return ErrStatus(path + ": cannot switch to WAL: " + sqlite3_errmsg(db));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  RETURN_IF_ERROR(index->Exec("PRAGMA synchronous=NORMAL"));
  RETURN_IF_ERROR(index->Exec("BEGIN IMMEDIATE"));
  Status schema = index->Exec(kSchema);
  if (schema.ok()) {
    bool has_version = false;
    std::string version;
    {
      Stmt v(db, "SELECT value FROM meta WHERE key = 'schema_version'");
      has_version = v.Step() == SQLITE_ROW;
      if (has_version) version = v.ColText(0);
    }
    if (version == "1") {
      // Version 1 had no service column: add it (existing runs have none).
      schema = index->Exec(
          "ALTER TABLE runs ADD COLUMN service TEXT NOT NULL DEFAULT ''; "
          "UPDATE meta SET value = '2' WHERE key = 'schema_version'");
    } else if (has_version) {
      if (version != std::to_string(kRunIndexSchemaVersion)) {
        schema = ErrStatus(path + ": index schema version " + version + " is not the supported version " +
                           std::to_string(kRunIndexSchemaVersion) + " (remove the file to rebuild the index)");
      }
    } else {
      Stmt set(db, "INSERT INTO meta(key, value) VALUES ('schema_version', ?)");
      set.Text(1, std::to_string(kRunIndexSchemaVersion));
      if (set.Step() != SQLITE_DONE) schema = index->Error("cannot write the schema version");
    }
  }
  if (schema.ok()) {
    Stmt has(db, "SELECT 1 FROM pragma_table_info('runs') WHERE name = 'claimed_by'");
    if (!has.ok()) {
      schema = index->Error("cannot read the runs table's columns");
    } else if (has.Step() != SQLITE_ROW) {
      schema = index->Exec(kClaimedByColumn);
    }
  }
  if (schema.ok()) {
    Stmt has(db, "SELECT 1 FROM pragma_table_info('runs') WHERE name = 'device_util_basis'");
    if (!has.ok()) {
      schema = index->Error("cannot read the runs table's columns");
    } else if (has.Step() != SQLITE_ROW) {
      schema = index->Exec(kDeviceUtilBasisColumn);
    }
  }
  if (schema.ok()) schema = index->Exec(kClaimsIndex);
  if (schema.ok()) {
    Stmt stale(db, "UPDATE runs SET state = 'queued' WHERE state = 'converting' AND claimed_unix_ms < ?");
    stale.Int(1, NowMs() - kStaleClaimMs);
    if (stale.Step() != SQLITE_DONE) schema = index->Error("cannot requeue stale conversions");
  }
  if (!schema.ok()) {
    (void)index->Exec("ROLLBACK");
    return schema;
  }
  RETURN_IF_ERROR(index->Exec("COMMIT"));
  return index;
}

RunIndex::~RunIndex() { sqlite3_close_v2(db_); }

Status RunIndex::Exec(const char* sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
    std::string m = msg ? msg : "unknown error";
    sqlite3_free(msg);
    return ErrStatus(std::string(sqlite3_db_filename(db_, "main")) + ": " + m);
  }
  return OkStatus();
}

Status RunIndex::Error(const char* what) {
  return ErrStatus(std::string(sqlite3_db_filename(db_, "main")) + ": " + what + ": " + sqlite3_errmsg(db_));
}

StatusOr<int64_t> RunIndex::Upsert(const std::string& rel_path, int64_t size_bytes, int64_t mtime_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string name = std::filesystem::path(rel_path).filename().string();
  // A changed file is queued again (its figures are recomputed).
  Stmt s(db_,
         "INSERT INTO runs(path, name, size_bytes, mtime_ns, state) VALUES (?1, ?2, ?3, ?4, 'queued') "
         "ON CONFLICT(path) DO UPDATE SET size_bytes = ?3, mtime_ns = ?4, state = 'queued', error = '' "
         "WHERE size_bytes != ?3 OR mtime_ns != ?4 RETURNING id");
  if (!s.ok()) return Error("cannot prepare the upsert");
  s.Text(1, rel_path).Text(2, name).Int(3, size_bytes).Int(4, mtime_ns);
  const int rc = s.Step();
  if (rc == SQLITE_ROW) return s.ColInt(0);
  if (rc != SQLITE_DONE) return Error("cannot record a run");
  Stmt id(db_, "SELECT id FROM runs WHERE path = ?");
  id.Text(1, rel_path);
  if (id.Step() != SQLITE_ROW) return Error("cannot read a run's id");
  return id.ColInt(0);
}

StatusOr<int64_t> RunIndex::AddUpload(const std::string& rel_path, int64_t size_bytes, int64_t mtime_ns,
                                      const std::string& name, const std::string& service, const std::string& tag) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_,
         "INSERT INTO runs(path, name, service, tag, size_bytes, mtime_ns, state) "
         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'queued') "
         "ON CONFLICT(path) DO UPDATE SET name = ?2, service = ?3, tag = ?4 RETURNING id");
  if (!s.ok()) return Error("cannot prepare the upload");
  s.Text(1, rel_path).Text(2, name).Text(3, service).Text(4, tag).Int(5, size_bytes).Int(6, mtime_ns);
  if (s.Step() != SQLITE_ROW) return Error("cannot record an upload");
  return s.ColInt(0);
}

StatusOr<std::optional<std::pair<int64_t, int64_t>>> RunIndex::Stamp(const std::string& rel_path) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_, "SELECT size_bytes, mtime_ns FROM runs WHERE path = ?");
  s.Text(1, rel_path);
  const int rc = s.Step();
  if (rc == SQLITE_ROW) return std::optional<std::pair<int64_t, int64_t>>(std::make_pair(s.ColInt(0), s.ColInt(1)));
  if (rc != SQLITE_DONE) return Error("cannot read a run");
  return std::optional<std::pair<int64_t, int64_t>>();
}

StatusOr<std::optional<RunRow>> RunIndex::ClaimNext() {
  std::lock_guard<std::mutex> lock(mu_);
  // One statement: of several servers on this database, one wins each run.
  // A run queued again while a converter still has it keeps that claim's
  // time until the converter ends (MarkReady/MarkFailed clear it): it is not
  // claimed a second time meanwhile, where two converters of one run (serve
  // --index-threads above 1, or several servers) wrote the same partial cache
  // file at once. A claim older than kStaleClaimMs is a converter that died.
  RequeueGoneClaimsLocked();
  const std::string sql =
      std::string("UPDATE runs SET state = 'converting', claimed_unix_ms = ?1, claimed_by = ?3 WHERE id = ") +
      "(SELECT id FROM runs WHERE state = 'queued' AND (claimed_unix_ms = 0 OR claimed_unix_ms < ?2) ORDER BY id "
      "LIMIT 1) RETURNING " +
      kColumns;
  Stmt s(db_, sql.c_str());
  if (!s.ok()) return Error("cannot prepare the claim");
  const int64_t now = NowMs();
  s.Int(1, now).Int(2, now - kStaleClaimMs);
  const std::string self = ThisProcess();
  s.Text(3, self.empty() ? self : self + "@" + std::to_string(now));
  const int rc = s.Step();
  if (rc == SQLITE_ROW) return std::optional<RunRow>(ReadRow(s));
  if (rc != SQLITE_DONE) return Error("cannot claim a run");
  return std::optional<RunRow>();
}

// A claim whose converter was a process of this machine that is gone (a
// server killed while it converted) is ended now, its run queued again:
// before, it waited for kStaleClaimMs. The claim counts only if it is the
// one its claimed_by was written with (a server without claimed_by claimed
// since, leaving an older server's name there). Under mu_; a failure leaves
// the claims as they are.
void RunIndex::RequeueGoneClaimsLocked() {
  std::vector<std::pair<int64_t, std::string>> gone;
  {
    Stmt s(db_, "SELECT id, claimed_unix_ms, claimed_by FROM runs WHERE claimed_unix_ms != 0 AND claimed_by != ''");
    while (s.ok() && s.Step() == SQLITE_ROW) {
      const std::string by = s.ColText(2);
      if (by.ends_with("@" + std::to_string(s.ColInt(1))) && ClaimerIsGone(by)) gone.emplace_back(s.ColInt(0), by);
    }
  }
  for (const auto& [id, by] : gone) {
    Stmt s(db_,
           "UPDATE runs SET state = 'queued', claimed_unix_ms = 0, claimed_by = '' "
           "WHERE id = ? AND claimed_by = ? AND state IN ('converting', 'queued')");
    s.Int(1, id).Text(2, by);
    if (s.ok() && s.Step() == SQLITE_DONE && sqlite3_changes(db_) > 0) {
      const std::string pid = by.substr(0, by.rfind(':'));
      ServeLog("run " + std::to_string(id) + ": its converter (pid " + pid.substr(pid.rfind(':') + 1) +
               ") is gone; queued again");
    }
  }
}

Status RunIndex::MarkReady(const RunRow& r) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_,
         "UPDATE runs SET state = 'ready', error = '', cache = ?, source_format = ?, steps = ?, step_p50_ns = ?, "
         "device_util = ?, top_finding = ?, top_share = ?, top_basis = ?, indexed_unix_ms = ?, convert_ms = ?, "
         "device_util_basis = ? WHERE id = ? AND state = 'converting'");
  s.Text(1, r.cache).Text(2, r.source_format).Int(3, r.steps).Real(4, r.step_p50_ns).Real(5, r.device_util);
  s.Text(6, r.top_finding).Real(7, r.top_share).Text(8, r.top_basis).Int(9, NowMs()).Real(10, r.convert_ms);
  s.Text(11, r.device_util >= 0 ? r.device_util_basis : "").Int(12, r.id);
  if (s.Step() != SQLITE_DONE) return Error("cannot record a converted run");
  return EndClaimLocked(r.id);
}

// The converter of run `id` is done with it: a run queued again meanwhile
// may be claimed now (ClaimNext). Under mu_.
Status RunIndex::EndClaimLocked(int64_t id) {
  Stmt s(db_, "UPDATE runs SET claimed_unix_ms = 0, claimed_by = '' WHERE id = ?");
  s.Int(1, id);
  if (s.Step() != SQLITE_DONE) return Error("cannot end a claim");
  return OkStatus();
}

Status RunIndex::MarkFailed(int64_t id, const std::string& error) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_,
         "UPDATE runs SET state = 'failed', error = ?, cache = '', indexed_unix_ms = ? WHERE id = ? AND state = "
         "'converting'");
  s.Text(1, error).Int(2, NowMs()).Int(3, id);
  if (s.Step() != SQLITE_DONE) return Error("cannot record a failed run");
  return EndClaimLocked(id);
}

StatusOr<bool> RunIndex::Delete(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_, "DELETE FROM runs WHERE id = ? AND state != 'converting'");
  s.Int(1, id);
  if (s.Step() != SQLITE_DONE) return Error("cannot delete a run");
  return sqlite3_changes(db_) > 0;
}

StatusOr<bool> RunIndex::Retire(int64_t id, int64_t size_bytes, int64_t mtime_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_,
         "DELETE FROM runs WHERE id = ? AND size_bytes = ? AND mtime_ns = ? AND state != 'converting' AND "
         "(claimed_unix_ms = 0 OR claimed_unix_ms < ?)");
  s.Int(1, id).Int(2, size_bytes).Int(3, mtime_ns).Int(4, NowMs() - kStaleClaimMs);
  if (s.Step() != SQLITE_DONE) return Error("cannot retire a run");
  return sqlite3_changes(db_) > 0;
}

Status RunIndex::SetName(int64_t id, const std::string& name, const std::string& tag) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_, "UPDATE runs SET name = ?, tag = ? WHERE id = ?");
  s.Text(1, name).Text(2, tag).Int(3, id);
  if (s.Step() != SQLITE_DONE) return Error("cannot rename a run");
  return OkStatus();
}

StatusOr<std::vector<RunRow>> RunIndex::List(const std::string& search, size_t limit) {
  std::lock_guard<std::mutex> lock(mu_);
  // instr() on lower(): no LIKE wildcards to escape in the user's text.
  const std::string sql = std::string("SELECT ") + kColumns +
                          " FROM runs WHERE ?1 = '' OR instr(lower(path || ' ' || name || ' ' || tag || ' ' || state "
                          "|| ' ' || top_finding || ' ' || service), lower(?1)) > 0 ORDER BY id DESC LIMIT ?2";
  Stmt s(db_, sql.c_str());
  if (!s.ok()) return Error("cannot prepare the list");
  s.Text(1, search).Int(2, limit == 0 ? -1 : static_cast<int64_t>(limit));
  std::vector<RunRow> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out.push_back(ReadRow(s));
  if (rc != SQLITE_DONE) return Error("cannot list runs");
  return out;
}

StatusOr<std::optional<RunRow>> RunIndex::Get(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string sql = std::string("SELECT ") + kColumns + " FROM runs WHERE id = ?";
  Stmt s(db_, sql.c_str());
  s.Int(1, id);
  const int rc = s.Step();
  if (rc == SQLITE_ROW) return std::optional<RunRow>(ReadRow(s));
  if (rc != SQLITE_DONE) return Error("cannot read a run");
  return std::optional<RunRow>();
}

}  // namespace aiprof
