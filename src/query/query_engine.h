// SQL over one trace: an in-memory SQLite database whose tables are the
// model's columns read in place (virtual_tables.h) plus a standard library
// of views (docs/query.md), opened read-only and run under limits.
//
// Safety: an authorizer allows only reads (no INSERT/UPDATE/DELETE, CREATE,
// DROP, ATTACH, transactions, or PRAGMAs other than the schema-reading
// ones), extension loading is off, at most 0 databases may be attached; each
// Execute() runs under a row limit, a deadline (checked by SQLite's progress
// handler) and a heap limit (sqlite3_hard_heap_limit64, process-wide while
// the query runs: queries running at once share one, the sum of their
// budgets), and Interrupt() cancels it from another thread or a signal
// handler.
#ifndef AIPROF_SRC_QUERY_QUERY_ENGINE_H_
#define AIPROF_SRC_QUERY_QUERY_ENGINE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "src/base/status.h"

struct sqlite3;
struct sqlite3_context;
struct sqlite3_stmt;
struct sqlite3_value;

namespace aiprof {

struct Trace;
struct QueryTable;

// Defaults documented in docs/query.md.
inline constexpr size_t kDefaultQueryMaxRows = 10000;
inline constexpr double kDefaultQueryTimeoutS = 30;
// Timeouts from here on (9e9 s, ~285 years; inf) mean no limit: their
// nanoseconds would not fit an int64.
inline constexpr double kNoQueryTimeoutFromS = 9e9;
inline constexpr int64_t kDefaultQueryMaxMemoryBytes = int64_t{1} << 30;
inline constexpr size_t kDefaultQueryMaxResultBytes = size_t{1} << 30;
// What servers (mcp, serve) allow a query's longest value: trace names and
// args fit, a value built to stall a worker does not.
inline constexpr size_t kServerQueryMaxValueBytes = size_t{16} << 20;
// The longest SQL text a query may be, and what the servers (mcp) allow:
// SQLite compiles a statement outside the time limit and cancellation (the
// progress handler runs only while it executes, and sqlite3_interrupt is
// checked only between tokens), and its code generation for one CASE of N
// branches takes time growing as N^2 (SQLite 3.40.1: 40,000 WHENs, 1 MB,
// 5.8 s; 800,000 WHENs, 19 MB, still compiling after 10 minutes under
// --timeout 5s, trial_limits). 1 MiB compiles in seconds at worst.
inline constexpr size_t kDefaultQueryMaxSqlBytes = size_t{1} << 20;
inline constexpr size_t kServerQueryMaxSqlBytes = size_t{64} << 10;
// The time limit and cancellation are checked every this many SQLite
// instructions (at most ~1% of a scan's time here).
inline constexpr int kQueryProgressInstructions = 100;

struct QueryLimits {
  size_t max_rows = kDefaultQueryMaxRows;  // rows kept; 0 = no limit
  double timeout_s = kDefaultQueryTimeoutS;                // 0, or kNoQueryTimeoutFromS and above (inf) = no limit
  int64_t max_memory_bytes = kDefaultQueryMaxMemoryBytes;  // SQLite's heap; 0 = no limit
  // The rows kept, as held in memory (each cell's value and text): SQLite's
  // heap limit does not see them. 0 = no limit.
  // Text counts as JSON writes it (JsonEscapedSize: a control byte, <, >, &,
  // DEL or an invalid UTF-8 byte is 6, a quote, backslash or newline 2), so
  // the limit bounds what a server sends too.
  size_t max_result_bytes = kDefaultQueryMaxResultBytes;
  // The longest string or blob the query may make (SQLite's
  // SQLITE_LIMIT_LENGTH; 0 = SQLite's 1e9). One SQLite instruction can
  // take that much work (hex(randomblob(N))), and the time limit and
  // cancellation are only checked between instructions, so this bounds how
  // far a query can run past them.
  size_t max_value_bytes = 0;
  // The longest SQL text (kDefaultQueryMaxSqlBytes, above); 0 = no limit.
  size_t max_sql_bytes = kDefaultQueryMaxSqlBytes;
  // Stops the query when it becomes true (checked by the progress handler,
  // every kQueryProgressInstructions SQLite instructions): a caller's cancellation that may come
  // before the query starts (Interrupt() only stops a query already running).
  const std::atomic<bool>* cancel = nullptr;
};

// A cell: NULL, integer, real or text (blobs are shown as text).
using QueryValue = std::variant<std::monostate, int64_t, double, std::string>;

struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<QueryValue>> rows;
  bool truncated = false;  // the query had more rows than max_rows
  size_t max_rows = 0;     // the limit it ran under
};

class QueryEngine {
 public:
  // Opens a database over `trace`, which must outlive the engine.
  static StatusOr<std::unique_ptr<QueryEngine>> Open(const Trace& trace);
  ~QueryEngine();
  QueryEngine(const QueryEngine&) = delete;
  QueryEngine& operator=(const QueryEngine&) = delete;

  // Runs each statement of `sql` in turn; returns the rows of the last one
  // that has columns. `label` names the query in errors ("q.sql",
  // "command line").
  StatusOr<QueryResult> Execute(std::string_view sql, const QueryLimits& limits, std::string_view label);
  // Stops the running query (safe from a signal handler or another thread).
  void Interrupt();
  // Whether the last Execute() was stopped by its time limit or its cancel
  // flag (the SQL may be fine: serve answers 503, not 400).
  bool stopped_by_limit() const { return timed_out_ || cancelled_; }
  // Tables, their columns and the standard views, as text.
  std::string Schema() const;

  // Visible for testing.
  const std::vector<std::unique_ptr<QueryTable>>& tables() const { return tables_; }

 private:
  QueryEngine() = default;
  static int Progress(void* self);
  // printf() and format(): SQLite's, run on printf_db_ after checking that
  // no width or precision passes the value limit (see query_engine.cc).
  static void Printf(sqlite3_context* context, int argc, sqlite3_value** argv);

  sqlite3* db_ = nullptr;
  sqlite3* printf_db_ = nullptr;             // no tables: SQLite's own printf
  std::vector<sqlite3_stmt*> printf_stmts_;  // "SELECT printf(?1, ..., ?N)" by N - 1
  std::vector<std::unique_ptr<QueryTable>> tables_;
  int64_t deadline_ns_ = 0;  // steady clock; 0 = none
  bool timed_out_ = false;
  bool cancelled_ = false;
  const std::atomic<bool>* cancel_ = nullptr;  // of the running Execute()
  std::atomic<bool> interrupted_{false};
};

// The standard views: name, what it is, and its SQL (docs/query.md lists them).
struct QueryView {
  const char* name;
  const char* doc;
  const char* sql;
};
const std::vector<QueryView>& StandardViews();

}  // namespace aiprof

#endif  // AIPROF_SRC_QUERY_QUERY_ENGINE_H_
