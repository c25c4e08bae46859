#include "src/analysis/validation/baseline_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace aiprof {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS baselines (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  service TEXT NOT NULL,
  created_unix_ms INTEGER NOT NULL,
  source TEXT NOT NULL,
  source_kind TEXT NOT NULL,
  unit TEXT NOT NULL,
  items_per_sample REAL NOT NULL,
  device_util_missing TEXT NOT NULL,
  summary_json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS baselines_by_service ON baselines(service, id);
CREATE TABLE IF NOT EXISTS baseline_samples (
  baseline_id INTEGER NOT NULL REFERENCES baselines(id) ON DELETE CASCADE,
  series TEXT NOT NULL,
  seq INTEGER NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY (baseline_id, series, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS validations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  service TEXT NOT NULL,
  baseline_id INTEGER,
  created_unix_ms INTEGER NOT NULL,
  before_label TEXT NOT NULL,
  after_label TEXT NOT NULL,
  overall TEXT NOT NULL,
  alert INTEGER NOT NULL,
  headline TEXT NOT NULL,
  report_json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS validations_by_service ON validations(service, id);
CREATE TABLE IF NOT EXISTS cards (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  created_unix_ms INTEGER NOT NULL,
  scene TEXT NOT NULL,
  bottleneck TEXT NOT NULL COLLATE NOCASE,
  fix TEXT NOT NULL,
  metric TEXT NOT NULL,
  statistic TEXT NOT NULL,
  unit TEXT NOT NULL,
  higher_is_better INTEGER NOT NULL,
  before_label TEXT NOT NULL,
  after_label TEXT NOT NULL,
  n_before INTEGER NOT NULL,
  n_after INTEGER NOT NULL,
  before_value REAL NOT NULL,
  after_value REAL NOT NULL,
  change_rel REAL NOT NULL,
  ci_low_rel REAL NOT NULL,
  ci_high_rel REAL NOT NULL,
  confidence REAL NOT NULL,
  p_value REAL NOT NULL,
  test TEXT NOT NULL,
  verdict TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS cards_by_bottleneck ON cards(bottleneck, id);
CREATE TABLE IF NOT EXISTS card_predictions (
  card_id INTEGER PRIMARY KEY REFERENCES cards(id),
  fix_id TEXT NOT NULL,
  source TEXT NOT NULL,
  scenario TEXT NOT NULL,
  predicted_ns REAL NOT NULL,
  predicted_lo_ns REAL NOT NULL,
  predicted_hi_ns REAL NOT NULL,
  measured_ns REAL NOT NULL,
  measured_lo_ns REAL NOT NULL,
  measured_hi_ns REAL NOT NULL,
  statistic TEXT NOT NULL DEFAULT 'median',
  before_input TEXT NOT NULL DEFAULT '',
  after_input TEXT NOT NULL DEFAULT '',
  workload TEXT NOT NULL DEFAULT '',
  before_ns REAL NOT NULL DEFAULT 0);
)sql";

// A prepared statement, finalized on scope exit.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Stmt() { sqlite3_finalize(stmt_); }
  bool ok() const { return rc_ == SQLITE_OK; }
  Stmt& Text(int i, const std::string& s) {
    sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& Int(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Stmt& Real(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  int Step() { return sqlite3_step(stmt_); }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string ColText(int i) const {
    const unsigned char* p = sqlite3_column_text(stmt_, i);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, i))) : "";
  }
  int64_t ColInt(int i) const { return sqlite3_column_int64(stmt_, i); }
  double ColReal(int i) const { return sqlite3_column_double(stmt_, i); }
  bool IsNumber(int i) const {
    const int t = sqlite3_column_type(stmt_, i);
    return t == SQLITE_FLOAT || t == SQLITE_INTEGER;
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

// Rolls back unless committed.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {}
  ~Transaction() {
    if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  int Begin() {
    int rc = sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    open_ = rc == SQLITE_OK;
    return rc;
  }
  int Commit() {
    int rc = sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) open_ = false;
    return rc;
  }

 private:
  sqlite3* db_;
  bool open_ = false;
};

void AddSeries(const std::string& name, const std::vector<double>& values, Stmt* insert, int64_t id, int* rc) {
  for (size_t i = 0; i < values.size() && *rc == SQLITE_DONE; ++i) {
    insert->Int(1, id).Text(2, name).Int(3, static_cast<int64_t>(i)).Real(4, values[i]);
    *rc = insert->Step();
    insert->Reset();
  }
}

KnowledgeCard ReadCard(const Stmt& s) {
  KnowledgeCard c;
  int i = 0;
  c.id = s.ColInt(i++);
  c.created_unix_ms = s.ColInt(i++);
  c.scene = s.ColText(i++);
  c.bottleneck = s.ColText(i++);
  c.fix = s.ColText(i++);
  c.metric = s.ColText(i++);
  c.statistic = s.ColText(i++);
  c.unit = s.ColText(i++);
  c.higher_is_better = s.ColInt(i++) != 0;
  c.before_label = s.ColText(i++);
  c.after_label = s.ColText(i++);
  c.n_before = static_cast<size_t>(s.ColInt(i++));
  c.n_after = static_cast<size_t>(s.ColInt(i++));
  c.before = s.ColReal(i++);
  c.after = s.ColReal(i++);
  c.change_rel = s.ColReal(i++);
  c.ci_low_rel = s.ColReal(i++);
  c.ci_high_rel = s.ColReal(i++);
  c.confidence = s.ColReal(i++);
  c.p_value = s.ColReal(i++);
  c.test = s.ColText(i++);
  c.verdict = s.ColText(i++);
  if (!s.ColText(i + 1).empty()) {  // LEFT JOIN card_predictions: source is NULL without one
    CardPrediction p;
    p.fix_id = s.ColText(i++);
    p.source = s.ColText(i++);
    p.scenario = s.ColText(i++);
    p.predicted_ns = s.ColReal(i++);
    p.predicted_lo_ns = s.ColReal(i++);
    p.predicted_hi_ns = s.ColReal(i++);
    p.measured_ns = s.ColReal(i++);
    p.measured_lo_ns = s.ColReal(i++);
    p.measured_hi_ns = s.ColReal(i++);
    p.statistic = s.ColText(i++);
    p.before_input = s.ColText(i++);
    p.after_input = s.ColText(i++);
    p.workload = s.ColText(i++);
    p.before_ns = s.ColReal(i++);
    c.prediction = p;
  }
  return c;
}

}  // namespace

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

StatusOr<std::string> DefaultBaselineDbPath() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg && *xdg == '/') return std::string(xdg) + "/aiprof/baselines.db";
  const char* home = std::getenv("HOME");
  if (!home || !*home) return ErrStatus("neither XDG_DATA_HOME nor HOME is set; give the database with --db PATH");
  return std::string(home) + "/.local/share/aiprof/baselines.db";
}

Status BaselineStore::Error(const char* what) {
  return ErrStatus(path_ + ": " + what + ": " + sqlite3_errmsg(db_));
}

Status BaselineStore::Exec(const char* sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
    std::string m = msg ? msg : "unknown error";
    sqlite3_free(msg);
    return ErrStatus(path_ + ": " + m);
  }
  return OkStatus();
}

Status BaselineStore::InitSchema() {
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  // Switching a new database to WAL needs an exclusive lock, and SQLite does
  // not always call the busy handler for it: when several processes open a
  // fresh database at once, retry here until the busy timeout.
  for (int waited_ms = 0;; waited_ms += 5) {
    int rc = sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) break;
    if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || waited_ms >= kBusyTimeoutMs) {
      return ErrStatus(path_ + ": cannot switch to WAL: " + sqlite3_errmsg(db_));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  RETURN_IF_ERROR(Exec("PRAGMA synchronous=NORMAL"));
  RETURN_IF_ERROR(Exec("PRAGMA foreign_keys=ON"));
  Transaction tx(db_);
  if (tx.Begin() != SQLITE_OK) return Error("cannot start a transaction");
  RETURN_IF_ERROR(Exec(kSchema));
  Stmt version(db_, "SELECT value FROM meta WHERE key = 'schema_version'");
  if (!version.ok()) return Error("cannot read the schema version");
  if (version.Step() == SQLITE_ROW) {
    std::string v = version.ColText(0);
    if (v != std::to_string(kBaselineSchemaVersion)) {
      return ErrStatus(path_ + ": schema version " + v + " is not the supported version " + std::to_string(kBaselineSchemaVersion));
    }
  } else {
    Stmt set(db_, "INSERT INTO meta(key, value) VALUES ('schema_version', ?)");
    set.Text(1, std::to_string(kBaselineSchemaVersion));
    if (set.Step() != SQLITE_DONE) return Error("cannot write the schema version");
  }
  // card_predictions' later columns, each added to a file made without
  // it. An added column with a default keeps the file readable and writable
  // by the aiprof that made it, so the version stays. A prediction stored
  // before `statistic` existed was made before any mean was stored and reads
  // as a median; one stored before the inputs' identities and the workload
  // reads "" (docs/whatif.md: it corrects no prediction of a known
  // workload); one stored before `before_ns` reads 0 (no before figure).
  struct AddedColumn {
    const char* name;
    const char* definition;
  };
  for (const AddedColumn& added :
       {AddedColumn{"statistic", "TEXT NOT NULL DEFAULT 'median'"},
        AddedColumn{"before_input", "TEXT NOT NULL DEFAULT ''"}, AddedColumn{"after_input", "TEXT NOT NULL DEFAULT ''"},
        AddedColumn{"workload", "TEXT NOT NULL DEFAULT ''"}, AddedColumn{"before_ns", "REAL NOT NULL DEFAULT 0"}}) {
    Stmt col(db_, (std::string("SELECT COUNT(*) FROM pragma_table_info('card_predictions') WHERE name = '") +
                   added.name + "'")
                      .c_str());
    if (!col.ok() || col.Step() != SQLITE_ROW) return Error("cannot read card_predictions' columns");
    if (col.ColInt(0) == 0) {
      RETURN_IF_ERROR(Exec(
          (std::string("ALTER TABLE card_predictions ADD COLUMN ") + added.name + " " + added.definition).c_str()));
    }
  }
  if (tx.Commit() != SQLITE_OK) return Error("cannot create the schema");
  return OkStatus();
}

StatusOr<std::unique_ptr<BaselineStore>> BaselineStore::Open(const std::string& path) {
  std::error_code ec;
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) return ErrStatus(path + ": cannot create folder " + parent.string() + ": " + ec.message());
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  std::unique_ptr<BaselineStore> store(new BaselineStore(db, path));
  if (rc != SQLITE_OK) return ErrStatus(path + ": cannot open database: " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
  // The file may come from elsewhere (--db): its schema runs nothing here
  // (found by review: a view in place of a table hung a read with a
  // recursive CTE, and triggers ran on insert).
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  RETURN_IF_ERROR(store->InitSchema());
  return store;
}

BaselineStore::~BaselineStore() { sqlite3_close_v2(db_); }

StatusOr<int64_t> BaselineStore::SaveBaseline(const std::string& service, const RunSamples& s, const std::string& summary_json) {
  Transaction tx(db_);
  if (tx.Begin() != SQLITE_OK) return Error("cannot start a transaction");
  Stmt ins(db_,
           "INSERT INTO baselines(service, created_unix_ms, source, source_kind, unit, items_per_sample, "
           "device_util_missing, summary_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  if (!ins.ok()) return Error("cannot prepare");
  ins.Text(1, service).Int(2, NowUnixMs()).Text(3, s.label).Text(4, s.source_kind).Text(5, s.unit)
      .Real(6, s.items_per_sample).Text(7, s.device_util_missing).Text(8, summary_json.empty() ? "{}" : summary_json);
  if (ins.Step() != SQLITE_DONE) return Error("cannot store the baseline");
  int64_t id = sqlite3_last_insert_rowid(db_);
  Stmt sample(db_, "INSERT INTO baseline_samples(baseline_id, series, seq, value) VALUES (?, ?, ?, ?)");
  if (!sample.ok()) return Error("cannot prepare");
  int rc = SQLITE_DONE;
  AddSeries("latency_ns", s.latency_ns, &sample, id, &rc);
  AddSeries("throughput", s.throughput, &sample, id, &rc);
  AddSeries("device_util", s.device_util, &sample, id, &rc);
  for (const auto& [name, v] : s.quality) AddSeries("quality:" + name, v, &sample, id, &rc);
  for (const auto& [name, v] : s.op_dur_ns) AddSeries("op:" + name, v, &sample, id, &rc);
  if (rc != SQLITE_DONE) return Error("cannot store the samples");
  if (tx.Commit() != SQLITE_OK) return Error("cannot commit the baseline");
  return id;
}

StatusOr<StoredBaseline> BaselineStore::LatestBaseline(const std::string& service) {
  Stmt q(db_,
         "SELECT id, created_unix_ms, source, source_kind, unit, items_per_sample, device_util_missing, summary_json "
         "FROM baselines WHERE service = ? ORDER BY id DESC LIMIT 1");
  if (!q.ok()) return Error("cannot prepare");
  q.Text(1, service);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return ErrStatus(path_ + ": no baseline for service '" + service + "' (store one with aiprof set-baseline)");
  if (rc != SQLITE_ROW) return Error("cannot read the baseline");
  StoredBaseline b;
  b.id = q.ColInt(0);
  b.service = service;
  b.created_unix_ms = q.ColInt(1);
  b.source = q.ColText(2);
  b.samples.source_kind = "baseline";
  b.samples.unit = q.ColText(4);
  b.samples.items_per_sample = q.ColReal(5);
  b.samples.device_util_missing = q.ColText(6);
  b.summary_json = q.ColText(7);
  b.samples.label = "baseline " + service + " #" + std::to_string(b.id) + " (" + b.source + ")";
  Stmt s(db_, "SELECT series, value FROM baseline_samples WHERE baseline_id = ? ORDER BY series, seq");
  if (!s.ok()) return Error("cannot prepare");
  s.Int(1, b.id);
  while ((rc = s.Step()) == SQLITE_ROW) {
    std::string series = s.ColText(0);
    // A sample is a finite number (a text value read as 0, an inf gave the
    // verdict "improved by 100%": found by review).
    const double v = s.ColReal(1);
    if (!s.IsNumber(1) || !std::isfinite(v)) {
      return ErrStatus(path_ + ": baseline #" + std::to_string(b.id) + " of service '" + service +
                       "' has a sample of " + series + " that is not a finite number: the database is damaged");
    }
    if (series == "latency_ns") b.samples.latency_ns.push_back(v);
    else if (series == "throughput") b.samples.throughput.push_back(v);
    else if (series == "device_util") b.samples.device_util.push_back(v);
    else if (series.rfind("quality:", 0) == 0) b.samples.quality[series.substr(8)].push_back(v);
    else if (series.rfind("op:", 0) == 0) b.samples.op_dur_ns[series.substr(3)].push_back(v);
  }
  if (rc != SQLITE_DONE) return Error("cannot read the baseline samples");
  return b;
}

StatusOr<int64_t> BaselineStore::SaveValidation(const ValidationRecord& r) {
  Transaction tx(db_);
  if (tx.Begin() != SQLITE_OK) return Error("cannot start a transaction");
  Stmt ins(db_,
           "INSERT INTO validations(service, baseline_id, created_unix_ms, before_label, after_label, overall, alert, "
           "headline, report_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!ins.ok()) return Error("cannot prepare");
  ins.Text(1, r.service).Int(3, r.created_unix_ms ? r.created_unix_ms : NowUnixMs()).Text(4, r.before_label)
      .Text(5, r.after_label).Text(6, r.overall).Int(7, r.alert).Text(8, r.headline).Text(9, r.report_json);
  if (r.baseline_id) ins.Int(2, r.baseline_id);
  if (ins.Step() != SQLITE_DONE) return Error("cannot store the validation");
  int64_t id = sqlite3_last_insert_rowid(db_);
  if (tx.Commit() != SQLITE_OK) return Error("cannot commit the validation");
  return id;
}

StatusOr<std::vector<ValidationRecord>> BaselineStore::History(const std::string& service, size_t limit) {
  Stmt q(db_,
         "SELECT id, baseline_id, created_unix_ms, before_label, after_label, overall, alert, headline, report_json "
         "FROM validations WHERE service = ? ORDER BY id DESC LIMIT ?");
  if (!q.ok()) return Error("cannot prepare");
  q.Text(1, service).Int(2, limit == 0 ? -1 : static_cast<int64_t>(limit));
  std::vector<ValidationRecord> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    ValidationRecord r;
    r.id = q.ColInt(0);
    r.service = service;
    r.baseline_id = q.ColInt(1);
    r.created_unix_ms = q.ColInt(2);
    r.before_label = q.ColText(3);
    r.after_label = q.ColText(4);
    r.overall = q.ColText(5);
    r.alert = q.ColInt(6) != 0;
    r.headline = q.ColText(7);
    r.report_json = q.ColText(8);
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return Error("cannot read the history");
  return out;
}

StatusOr<int64_t> BaselineStore::SaveCard(const KnowledgeCard& c) {
  Transaction tx(db_);
  if (tx.Begin() != SQLITE_OK) return Error("cannot start a transaction");
  Stmt ins(db_,
           "INSERT INTO cards(created_unix_ms, scene, bottleneck, fix, metric, statistic, unit, higher_is_better, "
           "before_label, after_label, n_before, n_after, before_value, after_value, change_rel, ci_low_rel, "
           "ci_high_rel, confidence, p_value, test, verdict) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!ins.ok()) return Error("cannot prepare");
  ins.Int(1, c.created_unix_ms ? c.created_unix_ms : NowUnixMs()).Text(2, c.scene).Text(3, c.bottleneck)
      .Text(4, c.fix).Text(5, c.metric).Text(6, c.statistic).Text(7, c.unit).Int(8, c.higher_is_better)
      .Text(9, c.before_label).Text(10, c.after_label).Int(11, static_cast<int64_t>(c.n_before))
      .Int(12, static_cast<int64_t>(c.n_after)).Real(13, c.before).Real(14, c.after).Real(15, c.change_rel)
      .Real(16, c.ci_low_rel).Real(17, c.ci_high_rel).Real(18, c.confidence).Real(19, c.p_value)
      .Text(20, c.test).Text(21, c.verdict);
  if (ins.Step() != SQLITE_DONE) return Error("cannot store the card");
  int64_t id = sqlite3_last_insert_rowid(db_);
  if (c.prediction) {
    const CardPrediction& p = *c.prediction;
    Stmt pred(
        db_,
        "INSERT INTO card_predictions(card_id, fix_id, source, scenario, predicted_ns, predicted_lo_ns, "
        "predicted_hi_ns, measured_ns, measured_lo_ns, measured_hi_ns, statistic, before_input, after_input, workload, "
        "before_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!pred.ok()) return Error("cannot prepare");
    pred.Int(1, id)
        .Text(2, p.fix_id)
        .Text(3, p.source)
        .Text(4, p.scenario)
        .Real(5, p.predicted_ns)
        .Real(6, p.predicted_lo_ns)
        .Real(7, p.predicted_hi_ns)
        .Real(8, p.measured_ns)
        .Real(9, p.measured_lo_ns)
        .Real(10, p.measured_hi_ns)
        .Text(11, p.statistic)
        .Text(12, p.before_input)
        .Text(13, p.after_input)
        .Text(14, p.workload)
        .Real(15, p.before_ns);
    if (pred.Step() != SQLITE_DONE) return Error("cannot store the card's prediction");
  }
  if (tx.Commit() != SQLITE_OK) return Error("cannot commit the card");
  return id;
}

namespace {
// A card's columns and its prediction, if it has one (ReadCard's order).
constexpr char kCardColumns[] =
    "SELECT id, created_unix_ms, scene, bottleneck, fix, metric, cards.statistic, unit, higher_is_better, "
    "before_label, after_label, n_before, n_after, before_value, after_value, change_rel, ci_low_rel, ci_high_rel, "
    "confidence, "
    "p_value, test, verdict, p.fix_id, p.source, p.scenario, p.predicted_ns, p.predicted_lo_ns, p.predicted_hi_ns, "
    "p.measured_ns, p.measured_lo_ns, p.measured_hi_ns, p.statistic, p.before_input, p.after_input, p.workload, "
    "p.before_ns FROM cards LEFT JOIN card_predictions p ON p.card_id = id ";
}  // namespace

StatusOr<std::vector<KnowledgeCard>> BaselineStore::RecentCards(size_t limit) {
  Stmt q(db_, (std::string(kCardColumns) + "ORDER BY id DESC LIMIT ?").c_str());
  if (!q.ok()) return Error("cannot prepare");
  q.Int(1, limit == 0 ? -1 : static_cast<int64_t>(limit));
  std::vector<KnowledgeCard> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) out.push_back(ReadCard(q));
  if (rc != SQLITE_DONE) return Error("cannot read the cards");
  return out;
}

StatusOr<std::vector<KnowledgeCard>> BaselineStore::Cards(std::string_view bottleneck) {
  Stmt q(db_, (std::string(kCardColumns) + "WHERE bottleneck = ? ORDER BY id DESC").c_str());
  if (!q.ok()) return Error("cannot prepare");
  q.Text(1, std::string(bottleneck));
  std::vector<KnowledgeCard> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) out.push_back(ReadCard(q));
  if (rc != SQLITE_DONE) return Error("cannot read the cards");
  return out;
}

}  // namespace aiprof
