// Query results as a text table, CSV or JSON. Cells are untrusted trace
// content: text escapes control characters and invalid UTF-8 (TerminalSafe),
// CSV quotes, shows terminal controls as text and defuses spreadsheet
// formulas (CsvField), JSON escapes (exact values).
#ifndef AIPROF_SRC_QUERY_QUERY_FORMAT_H_
#define AIPROF_SRC_QUERY_QUERY_FORMAT_H_

#include <string>

#include "src/query/query_engine.h"

namespace aiprof {

// Aligned columns, NULL shown as NULL, a cell longer than kMaxShownBytes
// cut ("… (N bytes in all)"), a last line with the row count and, when the
// row limit was hit, that the rows were cut.
std::string QueryResultToText(const QueryResult& result);
// The same, held to `max_bytes` of text (0 = no limit): past it, an error
// saying so. Each column is padded to its widest cell (up to
// kMaxPaddedColumn), so the text of many columns can be several times what
// QueryLimits::max_result_bytes counts for the rows.
StatusOr<std::string> QueryResultToText(const QueryResult& result, size_t max_bytes);
// A header line, then one line per row (RFC 4180).
std::string QueryResultToCsv(const QueryResult& result);
// {"columns": [...], "rows": [[...], ...], "row_count": N, "truncated": bool, "max_rows": N}
std::string QueryResultToJson(const QueryResult& result);
// A cell as plain text (numbers in shortest round-trip form, NULL empty).
std::string QueryValueText(const QueryValue& value);

}  // namespace aiprof

#endif  // AIPROF_SRC_QUERY_QUERY_FORMAT_H_
