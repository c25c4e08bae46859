#include "src/query/query_engine.h"

#include <sqlite3.h>
#include <strings.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>

#include "src/base/clock.h"
#include "src/model/trace.h"
#include "src/query/virtual_tables.h"
#include "src/render/escape.h"

namespace aiprof {
namespace {

constexpr const char* kDeviceKinds = "('kernel', 'memcpy', 'memset', 'collective')";

// PRAGMAs that only read the schema; every other PRAGMA is refused.
bool ReadOnlyPragma(const char* name) {
  static const char* const kAllowed[] = {"table_info", "table_xinfo", "table_list", "function_list",
                                         "module_list", "pragma_list", "collation_list"};
  for (const char* allowed : kAllowed) {
    if (name && strcasecmp(name, allowed) == 0) return true;
  }
  return false;
}

// Allows reads only: SELECT, reading columns, functions other than
// load_extension, recursive CTEs and schema-reading PRAGMAs.
int Authorize(void*, int action, const char* arg1, const char* arg2, const char*, const char*) {
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_FUNCTION:
      // fts3_tokenizer('simple') returns the address of SQLite's tokenizer
      // module: a code pointer for whoever may query (serve, mcp).
      return arg2 && (strcasecmp(arg2, "load_extension") == 0 || strcasecmp(arg2, "fts3_tokenizer") == 0)
                 ? SQLITE_DENY
                 : SQLITE_OK;
    case SQLITE_PRAGMA:
      return ReadOnlyPragma(arg1) ? SQLITE_OK : SQLITE_DENY;
    default:
      return SQLITE_DENY;
  }
}

// ":LINE:COLUMN" in the whole text `sql` of the error of the statement at
// `statement` (a byte offset): SQLite's place in it, else (an unknown
// table has none) the statement's first character.
// ":LINE:COL" of byte `at` of the SQL text.
std::string PlaceOf(std::string_view sql, size_t at) {
  int line = 1, column = 1;
  for (size_t i = 0; i < at; ++i) {
    if (sql[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string ErrorPlace(sqlite3* db, std::string_view sql, size_t statement) {
  const int offset = sqlite3_error_offset(db);
  size_t at = statement;
  if (offset >= 0 && statement + static_cast<size_t>(offset) <= sql.size()) {
    at = statement + static_cast<size_t>(offset);
  } else {
    at = std::min(sql.find_first_not_of(" \t\r\n\f\v", statement), sql.size());
  }
  return PlaceOf(sql, at);
}

// SQLite's heap limit is process-wide, so queries running at once (aiprof
// serve runs several; Python threads may) share one: what SQLite used when
// the first of them began plus the sum of their budgets. A query without a
// limit lifts it while it runs (a sum with "no limit" in it is no limit).
// The limit before them is restored when the last ends.
struct SharedHeapLimit {
  std::mutex mu;
  int active = 0, unlimited = 0;
  sqlite3_int64 base = 0, budget = 0, previous = 0;

  void Apply() {  // under mu
    sqlite3_hard_heap_limit64(active == 0 || unlimited > 0 ? previous : base + budget);
  }
};
SharedHeapLimit& TheHeapLimit() {
  static SharedHeapLimit shared;
  return shared;
}

// Whether the running queries share the limit (for the error's words).
bool HeapLimitShared() {
  SharedHeapLimit& s = TheHeapLimit();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.active > 1;
}

class ScopedHeapLimit {
 public:
  explicit ScopedHeapLimit(int64_t bytes) : bytes_(bytes > 0 ? bytes : 0) {
    SharedHeapLimit& s = TheHeapLimit();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.active++ == 0) {
      s.base = sqlite3_memory_used();
      s.previous = sqlite3_hard_heap_limit64(-1);  // a negative argument only reads it
    }
    s.budget += bytes_;
    s.unlimited += bytes_ == 0;
    s.Apply();
  }
  ~ScopedHeapLimit() {
    SharedHeapLimit& s = TheHeapLimit();
    std::lock_guard<std::mutex> lock(s.mu);
    s.budget -= bytes_;
    s.unlimited -= bytes_ == 0;
    --s.active;
    s.Apply();
  }

 private:
  int64_t bytes_;
};

QueryValue CellValue(sqlite3_stmt* stmt, int i) {
  switch (sqlite3_column_type(stmt, i)) {
    case SQLITE_NULL: return std::monostate{};
    case SQLITE_INTEGER: return static_cast<int64_t>(sqlite3_column_int64(stmt, i));
    case SQLITE_FLOAT: return sqlite3_column_double(stmt, i);
    default: {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
      return std::string(text ? text : "", static_cast<size_t>(sqlite3_column_bytes(stmt, i)));
    }
  }
}

// The widest field printf's format (argv[0]) asks for that makes its
// output at least that long: every width, and the precision of every
// conversion but the string ones (%.*s takes at most that many characters
// of a string: any precision is fine). Literal digits and '*' arguments are
// read as SQLite 3.40's printf reads them (src/printf.c: a '*' argument is
// cast to int, negative ones count by their size; digits wrap at 2^32 and
// keep 31 bits); each conversion but %% and %n takes one argument.
int64_t WidestPrintfField(int argc, sqlite3_value** argv) {
  const auto* f = reinterpret_cast<const char*>(sqlite3_value_text(argv[0]));
  if (f == nullptr) return 0;
  int next = 1;
  auto star = [&]() -> int64_t {
    const int v = static_cast<int>(next < argc ? sqlite3_value_int64(argv[next]) : 0);
    ++next;
    return v < 0 ? -static_cast<int64_t>(v) : v;
  };
  int64_t widest = 0;
  while (*f) {
    if (*f++ != '%') continue;
    int64_t width = 0, precision = 0;
    bool in_precision = false;
    for (; *f && std::strchr("-+ #!0,l.*123456789", *f); ++f) {
      int64_t value = -1;
      if (*f == '.') {
        in_precision = true;
      } else if (*f == '*') {
        value = star();
      } else if (*f >= '1' && *f <= '9') {
        uint32_t digits = 0;
        for (; *f >= '0' && *f <= '9'; ++f) digits = digits * 10 + static_cast<uint32_t>(*f - '0');
        --f;
        value = digits & 0x7fffffff;
      }
      if (value >= 0) (in_precision ? precision : width) = value;
    }
    if (*f == 0) break;
    const char conversion = *f++;
    if (conversion == '%' || conversion == 'n') continue;
    ++next;
    widest = std::max(widest, width);
    if (!std::strchr("szqQw", conversion)) widest = std::max(widest, precision);
  }
  return widest;
}

}  // namespace

const std::vector<QueryView>& StandardViews() {
  static const std::vector<QueryView> views = [] {
    const std::string device = kDeviceKinds;
    static std::vector<std::string> storage;  // keeps the composed SQL alive
    auto compose = [](std::string sql) { return storage.emplace_back(std::move(sql)).c_str(); };
    storage.reserve(32);
    return std::vector<QueryView>{
        {"slice_args", "Args of each slice, one row per (slice, key)",
         compose("SELECT s.id AS slice, a.key, a.type, a.value FROM slices s JOIN args a "
                 "ON a.id >= s.arg_begin AND a.id < s.arg_begin + s.arg_count WHERE s.arg_count > 0")},
        {"instant_args", "Args of each instant, one row per (instant, key)",
         compose("SELECT i.id AS instant, a.key, a.type, a.value FROM instants i JOIN args a "
                 "ON a.id >= i.arg_begin AND a.id < i.arg_begin + i.arg_count WHERE i.arg_count > 0")},
        {"threads", "Thread tracks with their process",
         compose("SELECT id AS track, rank, pid, tid, pid_label, tid_label, name AS thread_name, process_name "
                 "FROM tracks WHERE kind = 'thread'")},
        {"processes", "Host processes (pid per rank) and how many tracks each has",
         compose("SELECT rank, pid, pid_label, max(process_name) AS process_name, count(*) AS tracks "
                 "FROM tracks WHERE device = -1 GROUP BY rank, pid, pid_label")},
        {"devices",
         "Devices per rank (those with device streams): streams, device activities (kernels, copies, "
         "sets, collectives), their summed time (overlaps counted twice), first start and last end",
         compose("SELECT t.rank, t.device, count(DISTINCT t.id) AS streams, count(s.id) AS activities, "
                 "sum(s.dur) AS activity_ns, min(s.ts) AS first_ts, max(s.ts + s.dur) AS last_end "
                 "FROM tracks t LEFT JOIN slices s ON s.track = t.id AND s.kind IN " +
                 device + " WHERE t.device >= 0 AND t.kind = 'device_stream' GROUP BY t.rank, t.device")},
        {"ranks", "Ranks and their tracks: all of them, device streams, devices with streams",
         compose("SELECT rank, count(*) AS tracks, sum(kind = 'device_stream') AS device_tracks, "
                 "count(DISTINCT CASE WHEN kind = 'device_stream' THEN device END) AS devices FROM tracks "
                 "GROUP BY rank")},
        {"slice_detail", "Slices with their track's names, process, rank and device",
         compose("SELECT s.*, t.name AS track_name, t.kind AS track_kind, t.process_name, t.pid, t.tid, t.rank, "
                 "t.device FROM slices s JOIN tracks t ON t.id = s.track")},
        {"top_level_slices", "Slices at depth 0 with their thread or stream name",
         compose("SELECT s.*, t.name AS track_name, t.rank FROM slices s JOIN tracks t ON t.id = s.track "
                 "WHERE s.depth = 0")},
        {"ops", "Every (category, name): count, total, mean, min and max duration (aiprof summary's ops)",
         compose("SELECT category, name, count(*) AS count, sum(dur) AS total_ns, avg(dur) AS mean_ns, "
                 "min(dur) AS min_ns, max(dur) AS max_ns FROM slices GROUP BY category, name")},
        {"kernels", "Device activities (kernels, copies, sets, collectives) with rank, device and stream",
         compose(
             "SELECT s.id, s.ts, s.dur, s.name, s.kind, s.correlation, s.track, t.rank, t.device, "
             "CASE WHEN t.tid < 0 AND t.tid_label GLOB 'stream [0-9]*' AND substr(t.tid_label, 8) NOT GLOB '*[^0-9]*' "
             "THEN CAST(substr(t.tid_label, 8) AS INTEGER) "
             "ELSE t.tid END AS stream FROM slices s JOIN tracks t ON t.id = s.track WHERE s.kind IN " +
             device)},
        {"kernel_stats", "Device activities grouped by name: count, total, mean and max duration",
         compose("SELECT name, kind, count(*) AS count, sum(dur) AS total_ns, avg(dur) AS mean_ns, "
                 "max(dur) AS max_ns FROM slices WHERE kind IN " +
                 device + " GROUP BY name, kind")},
        {"launches",
         "Flows from a host slice to the device activity (kernel, copy, set, collective) it "
         "launched, with the launch delay: activity start minus the launching call's end "
         "(analyze's launch delay is its median over runtime calls that launched kernels or "
         "collectives, each call's first; docs/query.md)",
         compose("SELECT f.from_slice AS launch, f.to_slice AS activity, l.name AS launch_name, "
                 "l.kind AS launch_kind, "
                 "d.name AS activity_name, d.kind AS activity_kind, l.ts AS launch_ts, l.dur AS launch_dur, "
                 "d.ts AS activity_ts, d.ts - (l.ts + l.dur) AS delay_ns, "
                 "f.category FROM flows f JOIN slices l ON l.id = f.from_slice JOIN slices d ON d.id = f.to_slice "
                 "WHERE d.kind IN " +
                 device)},
        {"device_gaps", "Idle gaps on each device stream: from the end of all activity so far to the next start",
         compose("SELECT track, prev_end AS ts, ts - prev_end AS dur, next_slice FROM (SELECT track, ts, "
                 "id AS next_slice, max(ts + dur) OVER (PARTITION BY track ORDER BY ts, id ROWS BETWEEN "
                 "UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end FROM slices WHERE kind IN " +
                 device + ") WHERE ts > prev_end")},
        {"counter_series", "Counter samples with the counter's name, rank and device",
         compose("SELECT c.ts, c.value, t.name AS counter, t.rank, t.device, c.track FROM counters c "
                 "JOIN tracks t ON t.id = c.track")},
        {"sample_frames", "Stack samples with their leaf frame",
         compose("SELECT s.id, s.ts, s.track, s.weight_ns, f.frame, f.module, f.kind FROM samples s "
                 "LEFT JOIN stack_frames f ON f.id = s.callsite")},
    };
  }();
  return views;
}

StatusOr<std::unique_ptr<QueryEngine>> QueryEngine::Open(const Trace& trace) {
  std::unique_ptr<QueryEngine> engine(new QueryEngine());
  int rc = sqlite3_open_v2(":memory:", &engine->db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, nullptr);
  if (rc != SQLITE_OK) return ErrStatus(std::string("cannot open the query database: ") + sqlite3_errstr(rc));
  sqlite3* db = engine->db_;
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
  rc = sqlite3_open_v2(":memory:", &engine->printf_db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, nullptr);
  if (rc != SQLITE_OK) return ErrStatus(std::string("cannot open the query database: ") + sqlite3_errstr(rc));
  sqlite3_progress_handler(engine->printf_db_, kQueryProgressInstructions, &QueryEngine::Progress, engine.get());
  for (const char* name : {"printf", "format"}) {
    sqlite3_create_function(db, name, -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, engine.get(),
                            &QueryEngine::Printf, nullptr, nullptr);
  }
  engine->tables_ = BuildQueryTables(trace);
  RETURN_IF_ERROR(RegisterQueryTables(db, engine->tables_));
  // Sorts and temporary b-trees stay in memory, under the heap limit.
  std::string setup = "PRAGMA temp_store = MEMORY;";
  // Connects each table now: declaring it later would be refused by the authorizer.
  for (const auto& table : engine->tables_) setup += "SELECT * FROM " + table->name + " LIMIT 0;";
  // So are SQLite's JSON table functions (over the args column).
  setup += "SELECT * FROM json_each('[]') LIMIT 0; SELECT * FROM json_tree('[]') LIMIT 0;";
  for (const QueryView& view : StandardViews()) setup += std::string("CREATE VIEW ") + view.name + " AS " + view.sql + ";";
  char* error = nullptr;
  rc = sqlite3_exec(db, setup.c_str(), nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    std::string message = error ? error : sqlite3_errstr(rc);
    sqlite3_free(error);
    return ErrStatus("cannot create the standard views: " + message);
  }
  // From here on: reads only.
  sqlite3_set_authorizer(db, Authorize, nullptr);
  sqlite3_progress_handler(db, kQueryProgressInstructions, &QueryEngine::Progress, engine.get());
  return engine;
}

QueryEngine::~QueryEngine() {
  for (sqlite3_stmt* stmt : printf_stmts_) sqlite3_finalize(stmt);
  sqlite3_close_v2(printf_db_);
  sqlite3_close_v2(db_);
}

// SQLite 3.40's printf() (and its alias format()) runs in one instruction
// and repeats '%c' `precision` times even after its value has passed the
// length limit: printf('%.*c', 2147483647, 'x') took 8 s, past the time
// limit and cancellation, and gave NULL. A result over the limit is NULL
// without an error too. So the engine's printf refuses a field wider than
// the value limit (the result could not be kept anyway), runs SQLite's own
// printf on a connection of its own (no tables; this one's printf is
// this function), and turns a NULL from a format that is not NULL into
// "string or blob too big".
void QueryEngine::Printf(sqlite3_context* context, int argc, sqlite3_value** argv) {
  auto* engine = static_cast<QueryEngine*>(sqlite3_user_data(context));
  const int limit = sqlite3_limit(sqlite3_context_db_handle(context), SQLITE_LIMIT_LENGTH, -1);
  auto too_big = [&](const std::string& what) {
    const std::string message =
        "string or blob too big: " + what + " passes the value limit (" + std::to_string(limit) + " bytes)";
    sqlite3_result_error(context, message.c_str(), -1);
    sqlite3_result_error_code(context, SQLITE_TOOBIG);
  };
  if (argc < 1 || sqlite3_value_type(argv[0]) == SQLITE_NULL) return sqlite3_result_null(context);
  if (const int64_t widest = WidestPrintfField(argc, argv); widest > limit) {
    return too_big("printf's width or precision " + std::to_string(widest));
  }
  if (engine->printf_stmts_.size() < static_cast<size_t>(argc)) engine->printf_stmts_.resize(argc, nullptr);
  sqlite3_stmt*& stmt = engine->printf_stmts_[argc - 1];
  if (stmt == nullptr) {
    std::string sql = "SELECT printf(?1";
    for (int i = 2; i <= argc; ++i) sql += ", ?" + std::to_string(i);
    sql += ")";
    if (sqlite3_prepare_v2(engine->printf_db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      return sqlite3_result_error(context, sqlite3_errmsg(engine->printf_db_), -1);
    }
  }
  sqlite3_limit(engine->printf_db_, SQLITE_LIMIT_LENGTH, limit);
  for (int i = 0; i < argc; ++i) sqlite3_bind_value(stmt, i + 1, argv[i]);
  const int rc = sqlite3_step(stmt);
  if (rc != SQLITE_ROW) {
    sqlite3_result_error(context, sqlite3_errmsg(engine->printf_db_), -1);
    sqlite3_result_error_code(context, rc);
  } else if (sqlite3_column_type(stmt, 0) == SQLITE_NULL) {
    too_big("printf's result");
  } else {
    sqlite3_result_value(context, sqlite3_column_value(stmt, 0));
  }
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
}

int QueryEngine::Progress(void* self) {
  auto* engine = static_cast<QueryEngine*>(self);
  if (engine->interrupted_.load(std::memory_order_relaxed)) return 1;
  if (engine->cancel_ && engine->cancel_->load(std::memory_order_relaxed)) {
    engine->cancelled_ = true;
    return 1;
  }
  if (engine->deadline_ns_ != 0 && MonotonicNs() > engine->deadline_ns_) {
    engine->timed_out_ = true;
    return 1;
  }
  return 0;
}

void QueryEngine::Interrupt() {
  interrupted_.store(true, std::memory_order_relaxed);
  sqlite3_interrupt(db_);
}

StatusOr<QueryResult> QueryEngine::Execute(std::string_view sql, const QueryLimits& limits, std::string_view label) {
  QueryResult result;
  result.max_rows = limits.max_rows;
  timed_out_ = false;
  cancelled_ = false;
  cancel_ = limits.cancel;
  struct ClearCancel {
    const std::atomic<bool>** cancel;
    ~ClearCancel() { *cancel = nullptr; }  // the caller's flag may not outlive this call
  } clear_cancel{&cancel_};
  interrupted_.store(false, std::memory_order_relaxed);
  // A limit past ~292 years (or infinite) is none: converting it to int64 ns
  // was undefined (inf read as "stopped after the time limit"). NaN: none.
  deadline_ns_ = limits.timeout_s > 0 && limits.timeout_s < kNoQueryTimeoutFromS
                     ? MonotonicNs() + static_cast<int64_t>(limits.timeout_s * 1e9)
                     : 0;
  ScopedHeapLimit heap_limit(limits.max_memory_bytes);
  struct ScopedLength {
    sqlite3* db;
    int before;
    ~ScopedLength() { sqlite3_limit(db, SQLITE_LIMIT_LENGTH, before); }
  } length_limit{db_, sqlite3_limit(db_, SQLITE_LIMIT_LENGTH, -1)};
  if (limits.max_value_bytes != 0) {
    sqlite3_limit(db_, SQLITE_LIMIT_LENGTH,
                  static_cast<int>(std::min<size_t>(limits.max_value_bytes, std::numeric_limits<int>::max())));
  }
  const std::string name(label);
  std::string text(sql);
  auto fail = [&](sqlite3_stmt* stmt, int rc, const char* statement) -> Status {
    std::string place = ErrorPlace(db_, text, static_cast<size_t>(statement - text.c_str()));
    std::string message = sqlite3_errmsg(db_);
    sqlite3_finalize(stmt);
    if (cancelled_) {
      message = "cancelled";
    } else if (timed_out_) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g", limits.timeout_s);
      message = std::string("stopped after the time limit (") + seconds + " s)";
    } else if (interrupted_.load()) {
      message = "interrupted";
    } else if (rc == SQLITE_TOOBIG && limits.max_value_bytes != 0 && message.find("value limit") == std::string::npos) {
      const size_t v = limits.max_value_bytes;
      message += " (a value may hold at most " +
                 (v % (size_t{1} << 20) == 0 ? std::to_string(v >> 20) + " MiB" : std::to_string(v) + " bytes") +
                 " here)";
    } else if (rc == SQLITE_NOMEM) {
      message = HeapLimitShared()
                    ? "out of memory: the queries running at once needed more than their shared memory limit"
                    : "out of memory: the query needed more than its memory limit (" +
                          std::to_string(limits.max_memory_bytes >> 20) + " MiB)";
    }
    // A limit stops the query wherever it is: no place.
    if (cancelled_ || timed_out_ || interrupted_.load() || rc == SQLITE_NOMEM) place.clear();
    return ErrStatus("query " + name + place + ": " + message);
  };
  // SQLite reads SQL text up to a NUL byte: past one, prepare made no
  // progress and this loop never ended (a NUL in a serve query's URL held
  // a query worker at full CPU forever, trial_serve2 S6).
  if (const size_t nul = text.find('\0'); nul != std::string::npos) {
    return ErrStatus("query " + name + PlaceOf(text, nul) + ": the SQL holds a NUL byte");
  }
  if (limits.max_sql_bytes != 0 && text.size() > limits.max_sql_bytes) {
    const auto size = [](size_t b) {
      return b % 1024 == 0 ? std::to_string(b >> 10) + " KiB" : std::to_string(b) + " bytes";
    };
    return ErrStatus("query " + name + ": the SQL is " + size(text.size()) + ", over the " +
                     size(limits.max_sql_bytes) +
                     " a query may be here (SQLite's compilation of a statement cannot be stopped, and for some "
                     "long statements takes time growing with the square of their length)");
  }
  const char* next = text.c_str();
  const char* end = text.c_str() + text.size();
  bool have_result = false;
  size_t result_bytes = 0;
  while (next < end) {
    sqlite3_stmt* stmt = nullptr;
    const char* tail = nullptr;
    const char* start = next;
    int rc = sqlite3_prepare_v2(db_, start, static_cast<int>(end - start), &stmt, &tail);
    if (rc != SQLITE_OK) return fail(stmt, rc, start);
    if (tail == nullptr || tail <= start) {  // no progress: never loop on the same text
      sqlite3_finalize(stmt);
      return ErrStatus("query " + name + PlaceOf(text, static_cast<size_t>(start - text.c_str())) +
                       ": SQLite read no statement here");
    }
    next = tail;
    if (!stmt) continue;  // whitespace or a comment
    if (!sqlite3_stmt_readonly(stmt)) {
      // The authorizer refuses every write it is asked about; a statement
      // that asks it nothing (REINDEX of a database without indexes) is
      // refused here.
      sqlite3_finalize(stmt);
      return ErrStatus("query " + name + ": not authorized: only statements that read");
    }
    const int columns = sqlite3_column_count(stmt);
    if (columns > 0) {
      result.columns.clear();
      result.rows.clear();
      result.truncated = false;
      for (int i = 0; i < columns; ++i) result.columns.push_back(sqlite3_column_name(stmt, i));
      have_result = true;
    }
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      if (limits.max_rows != 0 && result.rows.size() >= limits.max_rows) {
        result.truncated = true;
        break;
      }
      std::vector<QueryValue> row;
      row.reserve(columns);
      for (int i = 0; i < columns; ++i) {
        row.push_back(CellValue(stmt, i));
        const std::string* text = std::get_if<std::string>(&row.back());
        result_bytes += sizeof(QueryValue) + (text ? JsonEscapedSize(*text) : 0);
      }
      if (limits.max_result_bytes != 0 && result_bytes > limits.max_result_bytes) {
        sqlite3_finalize(stmt);
        return ErrStatus("query " + name + ": the result passed its size limit (" +
                         std::to_string(limits.max_result_bytes >> 20) + " MiB held; " +
                         std::to_string(result.rows.size()) + " rows before it): select fewer or shorter values");
      }
      result.rows.push_back(std::move(row));
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return fail(stmt, rc, start);
    sqlite3_finalize(stmt);
  }
  if (!have_result) return ErrStatus("query " + name + ": no statement returns rows");
  return result;
}

std::string QueryEngine::Schema() const {
  std::string out = "Tables (virtual, over the trace's columns; times in integer ns):\n";
  for (const auto& table : tables_) {
    out += "\n" + table->name + ": " + table->doc + "\n";
    for (const QueryColumn& column : table->columns) {
      out += "  " + column.name + " " + (column.type.empty() ? "ANY" : column.type);
      if (!column.doc.empty()) out += "  -- " + column.doc;
      out += "\n";
    }
  }
  out += "\nViews (docs/query.md):\n";
  for (const QueryView& view : StandardViews()) {
    out += std::string("\n") + view.name + ": " + view.doc + "\n  " + view.sql + "\n";
  }
  return out;
}

}  // namespace aiprof
