// Reads the CSV files Ascend's profilers write (kernel_details.csv,
// op_statistic.csv, step_trace_time.csv, msprof's op_summary_*.csv, ...).
//
// RFC 4180 quoting (doubled quotes, newlines inside quotes), CRLF or LF, and
// Ascend's quirks: values ending in a TAB ("1736408883704643.212\t"), "N/A"
// for missing, shapes written """32,3,224,224""". Columns are looked up by
// their header name, exactly as written: a renamed column is an error, not a
// guess. The file is streamed through a buffer of kCsvReadChunkBytes (it was
// read whole before the field limit applied: a link to /dev/zero took 2.1 GB,
// D14 of the input trial) and must be a regular file; rows are cut into
// reused buffers, so reading a row allocates nothing once warm. The file is
// read through ByteSource: a gzip'd or zstd'd table (kernel_details.csv.gz
// of a `gzip -r`'d folder) reads as the plain one, under the same limits,
// and the thread's import budget counts its (decompressed) bytes.
#ifndef AIPROF_SRC_IMPORTERS_ASCEND_CSV_TABLE_H_
#define AIPROF_SRC_IMPORTERS_ASCEND_CSV_TABLE_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"

namespace aiprof {

class ByteSource;

// One field of a CSV table is at most this long (a 200 MB field took 1.46 GB
// and was accepted, found by review): past it the read is an error naming
// the file and line.
inline constexpr size_t kMaxCsvFieldBytes = size_t{1} << 20;
// The file is read in chunks of this size.
inline constexpr size_t kCsvReadChunkBytes = size_t{1} << 16;

class CsvTable {
 public:
  // Opens `path` (a regular file: CheckFolderMember) and reads its header
  // row. An empty file or a header-only file without columns is an error
  // naming the file.
  static StatusOr<CsvTable> Open(const std::string& path);
  // Visible for testing: parses `text` as if read from `path`.
  static StatusOr<CsvTable> FromText(std::string path, std::string text);
  ~CsvTable();
  CsvTable(CsvTable&&) noexcept;
  CsvTable& operator=(CsvTable&&) noexcept;

  // Index of the column named exactly `name`, or -1.
  int Column(std::string_view name) const;
  // Error naming the file, line 1 and the first missing column.
  Status Require(std::initializer_list<std::string_view> names) const;

  // Advances to the next data row. Returns false at the end. A row cut short
  // by the end of the file (unterminated quote, or fewer fields than the
  // header on the last line) is an error naming the file and line; other
  // rows with a wrong field count are reported by `row_ok()` == false.
  StatusOr<bool> Next();
  bool row_ok() const { return fields_used_ == header_.size(); }
  size_t field_count() const { return fields_used_; }

  // Field `col` of the current row with surrounding blanks and TABs removed;
  // empty for col < 0 or a short row.
  std::string_view Field(int col) const;
  // Field as a number; nullopt for empty, "N/A" or text.
  std::optional<double> Number(int col) const;
  // Field as decimal microseconds → integer nanoseconds (exact).
  std::optional<int64_t> MicrosToNanos(int col) const;
  std::optional<int64_t> Integer(int col) const;
  // Field as decimal text times `unit` (e.g. KB → bytes: 1024), exact.
  std::optional<int64_t> Scaled(int col, int64_t unit) const;

  const std::vector<std::string>& header() const { return header_; }
  const std::string& path() const { return path_; }
  uint64_t line() const { return row_line_; }
  // "path:line N" of the current row.
  std::string Where() const;

 private:
  CsvTable();
  // Cuts one record into fields_; returns false at end of input.
  StatusOr<bool> ReadRecord();
  Status FieldTooLarge() const;
  // Reads the next chunk into text_ (pos_ 0); false at the end of input or
  // when the read failed (ReadFailure says why).
  bool Refill();
  // Why reading stopped early: ByteSource's error (a read error, a cut or
  // damaged compressed stream, the expansion limit, or the thread's import
  // budget: src/base/import_budget.h, serve's limits); ok at the end of input.
  Status ReadFailure() const;
  static StatusOr<CsvTable> ReadHeader(CsvTable t);

  std::string path_;
  std::unique_ptr<ByteSource> source_;  // null: all of the text is in text_
  std::string text_;                    // the current chunk
  Status stopped_;                      // why the source stopped early
  size_t pos_ = 0;
  uint64_t line_ = 1;      // line of text_[pos_]
  uint64_t row_line_ = 0;  // first line of the current record
  bool last_had_newline_ = true;
  std::vector<std::string> header_;
  std::vector<std::string> fields_;
  size_t fields_used_ = 0;
};

// Plain decimal text ("18816.5", "-954.37060546875"; no exponent) times
// `unit`, rounded half away from zero, computed on integers so no digit is
// lost: "954.37060546875" MB × 1048576 = 1000730112 bytes exactly. nullopt
// for other text or an int64 overflow. Fraction digits past the 30th are
// ignored.
std::optional<int64_t> ParseDecimalTimes(std::string_view text, int64_t unit);

// "N/A", "NA", "-", "" and "None" mean "no value" in Ascend files.
bool IsMissingValue(std::string_view v);
// Removes quotes left around a value ("""32,3""" reads as "32,3" with its
// quotes), so shapes come out as 32,3.
std::string_view StripQuotes(std::string_view v);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_ASCEND_CSV_TABLE_H_
