// SQLite virtual tables over the columnar trace model, read in place.
//
// Each model table (TrackTable, SliceTable, ...) is exposed as an eponymous
// virtual table ("slices", "tracks", ...) whose columns are produced by
// walking Table::Columns(): a column added to the model appears in SQL with
// no second declaration (it is named column_N until named in
// virtual_tables.cc; a unit test asks every column to be named). Values are
// read from the ChunkedVectors on demand; nothing is copied except two
// derived columns computed once on first use (slices.parent, 4 bytes per
// slice; the per-track row ranges used by time pushdown).
//
// What pushes down (xBestIndex), in every table: `id` = / < / <= / > / >=
// become a row range. In tables ordered by (track, ts) (slices, samples):
// `track = N` is a binary search for the track's rows, and `ts` = / < / <= /
// > / >= / BETWEEN a binary search inside each track's rows. Everything else
// is a scan, filtered by SQLite. Rows always come out in id order, so
// ORDER BY id is free.
#ifndef AIPROF_SRC_QUERY_VIRTUAL_TABLES_H_
#define AIPROF_SRC_QUERY_VIRTUAL_TABLES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/base/chunked_vector.h"
#include "src/base/status.h"
#include "src/model/tables.h"

struct sqlite3;
struct sqlite3_context;

namespace aiprof {

struct Trace;

// One SQL column: its name, declared type and how to produce row `row`'s value.
struct QueryColumn {
  std::string name;
  std::string type;  // INTEGER, REAL or TEXT
  std::string doc;
  std::function<void(sqlite3_context*, size_t row)> value;
};

// One virtual table over a model table (or over metadata/diagnostics).
struct QueryTable {
  std::string name;
  std::string doc;
  std::function<size_t()> rows;
  std::vector<QueryColumn> columns;  // columns[0] is always `id`, the row index
  // Set when rows are ordered by (track, ts): enables track/ts pushdown.
  const ChunkedVector<TrackId>* sorted_track = nullptr;
  const ChunkedVector<int64_t>* sorted_ts = nullptr;
  // Runs before a scan starts (computes derived columns once); may throw
  // std::bad_alloc, which the scan reports as SQLITE_NOMEM.
  std::function<void()> prepare;
  // Lazily computed [begin, end) row range of each track present (in row
  // order); `order_checked` records that the (track, ts) order was verified
  // (a damaged .aiprof file may break it: pushdown is then turned off).
  struct TrackRange {
    uint32_t track;
    size_t begin, end;
  };
  bool order_checked = false;
  bool order_ok = false;
  std::vector<TrackRange> track_ranges;
  int ColumnIndex(const std::string& column) const;
};

// The tables of `trace`, which must outlive them.
std::vector<std::unique_ptr<QueryTable>> BuildQueryTables(const Trace& trace);

// Registers each table as an eponymous module of `db`; `tables` must outlive `db`.
Status RegisterQueryTables(sqlite3* db, const std::vector<std::unique_ptr<QueryTable>>& tables);

// Counters of the last scans, for tests and the benchmark: rows the cursors
// visited since the last reset. Visible for testing.
uint64_t QueryRowsVisited();
void ResetQueryRowsVisited();

}  // namespace aiprof

#endif  // AIPROF_SRC_QUERY_VIRTUAL_TABLES_H_
