#include "src/importers/ascend/csv_table.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>

#include "src/base/decimal.h"
#include "src/importers/common/byte_source.h"
#include "src/importers/common/import_confinement.h"

namespace aiprof {
namespace {

std::string_view Trim(std::string_view v) {
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r')) v.remove_suffix(1);
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  return v;
}

}  // namespace

bool IsMissingValue(std::string_view v) {
  return v.empty() || v == "N/A" || v == "NA" || v == "-" || v == "None" || v == "\"N/A\"";
}

std::string_view StripQuotes(std::string_view v) {
  while (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  return v;
}

StatusOr<CsvTable> CsvTable::Open(const std::string& path) {
  RETURN_IF_ERROR(CheckFolderMember(path));
  CsvTable t;
  t.path_ = path;
  ASSIGN_OR_RETURN(t.source_, ByteSource::Open(path));
  t.Refill();
  return ReadHeader(std::move(t));
}

StatusOr<CsvTable> CsvTable::FromText(std::string path, std::string text) {
  CsvTable t;
  t.path_ = std::move(path);
  t.text_ = std::move(text);
  return ReadHeader(std::move(t));
}

CsvTable::CsvTable() = default;
CsvTable::~CsvTable() = default;
CsvTable::CsvTable(CsvTable&&) noexcept = default;
CsvTable& CsvTable::operator=(CsvTable&&) noexcept = default;

bool CsvTable::Refill() {
  if (!source_) return false;
  text_.resize(kCsvReadChunkBytes);
  StatusOr<size_t> got = source_->Read(text_.data(), text_.size());
  const size_t n = got.ok() ? *got : 0;
  text_.resize(n);
  pos_ = 0;
  if (n == 0) {
    if (!got.ok()) stopped_ = got.status();
    source_.reset();
  }
  return n > 0;
}

Status CsvTable::ReadFailure() const { return stopped_; }  // ByteSource's message names the file

StatusOr<CsvTable> CsvTable::ReadHeader(CsvTable t) {
  if (t.text_.substr(0, 3) == "\xEF\xBB\xBF") t.pos_ = 3;
  ASSIGN_OR_RETURN(bool has_header, t.ReadRecord());
  if (!has_header || (t.fields_used_ == 1 && Trim(t.fields_[0]).empty())) {
    return ErrStatus(t.path_ + ":line 1: the CSV file is empty (no header row)");
  }
  for (size_t i = 0; i < t.fields_used_; ++i) t.header_.emplace_back(Trim(t.fields_[i]));
  return t;
}

int CsvTable::Column(std::string_view name) const {
  for (size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return static_cast<int>(i);
  }
  return -1;
}

Status CsvTable::Require(std::initializer_list<std::string_view> names) const {
  for (std::string_view name : names) {
    if (Column(name) >= 0) continue;
    std::string have;
    for (const std::string& h : header_) have += (have.empty() ? "" : ", ") + h;
    return ErrStatus(path_ + ":line 1: missing column \"" + std::string(name) + "\" (the header has: " + have + ")");
  }
  return OkStatus();
}

Status CsvTable::FieldTooLarge() const {
  return ErrStatus(path_ + ":line " + std::to_string(row_line_) + ": a field over " +
                   std::to_string(kMaxCsvFieldBytes >> 20) +
                   " MiB (the CSV reader's limit; a profiler table's fields are names and numbers)");
}

StatusOr<bool> CsvTable::ReadRecord() {
  fields_used_ = 0;
  if (pos_ >= text_.size() && !Refill()) {
    RETURN_IF_ERROR(ReadFailure());
    return false;
  }
  row_line_ = line_;
  auto field = [this]() -> std::string& {
    if (fields_used_ == fields_.size()) fields_.emplace_back();
    std::string& f = fields_[fields_used_++];
    f.clear();
    return f;
  };
  std::string* cur = &field();
  bool in_quotes = false;
  while (pos_ < text_.size() || Refill()) {
    char c = text_[pos_++];
    if (in_quotes) {
      if (c == '"') {
        if ((pos_ < text_.size() || Refill()) && text_[pos_] == '"') {
          cur->push_back('"');
          ++pos_;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line_;
        cur->push_back(c);
        if (cur->size() > kMaxCsvFieldBytes) return FieldTooLarge();
      }
      continue;
    }
    if (c == '"') {
      in_quotes = true;
    } else if (c == ',') {
      cur = &field();
    } else if (c == '\n') {
      ++line_;
      last_had_newline_ = true;
      return true;
    } else if (c != '\r') {
      cur->push_back(c);
      if (cur->size() > kMaxCsvFieldBytes) return FieldTooLarge();
    }
  }
  RETURN_IF_ERROR(ReadFailure());
  if (in_quotes) {
    return ErrStatus(path_ + ":line " + std::to_string(row_line_) +
                     ": the file ends inside a quoted value (truncated CSV)");
  }
  last_had_newline_ = false;
  return true;
}

StatusOr<bool> CsvTable::Next() {
  while (true) {
    ASSIGN_OR_RETURN(bool more, ReadRecord());
    if (!more) return false;
    if (fields_used_ == 1 && Trim(fields_[0]).empty()) continue;  // blank line
    if (!last_had_newline_ && fields_used_ < header_.size()) {
      return ErrStatus(Where() + ": the last row has " + std::to_string(fields_used_) + " of " +
                       std::to_string(header_.size()) + " columns (truncated CSV)");
    }
    return true;
  }
}

std::string_view CsvTable::Field(int col) const {
  if (col < 0 || static_cast<size_t>(col) >= fields_used_) return {};
  return Trim(fields_[col]);
}

std::optional<double> CsvTable::Number(int col) const {
  std::string_view v = StripQuotes(Field(col));
  if (IsMissingValue(v)) return std::nullopt;
  double d = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (ec != std::errc() || p != v.data() + v.size()) return std::nullopt;
  return d;
}

std::optional<int64_t> CsvTable::MicrosToNanos(int col) const {
  std::string_view v = StripQuotes(Field(col));
  if (IsMissingValue(v)) return std::nullopt;
  return ParseMicrosToNanos(v);
}

std::optional<int64_t> CsvTable::Integer(int col) const {
  std::string_view v = StripQuotes(Field(col));
  if (IsMissingValue(v)) return std::nullopt;
  return ParseInt64(v);
}

std::optional<int64_t> CsvTable::Scaled(int col, int64_t unit) const {
  std::string_view v = StripQuotes(Field(col));
  if (IsMissingValue(v)) return std::nullopt;
  return ParseDecimalTimes(v, unit);
}

std::optional<int64_t> ParseDecimalTimes(std::string_view text, int64_t unit) {
  constexpr size_t kMaxFractionDigits = 30;  // 10^30 × 2^31 still fits in 128 bits
  bool negative = !text.empty() && text[0] == '-';
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) text.remove_prefix(1);
  size_t dot = text.find('.');
  std::string_view whole = text.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  if ((whole.empty() && frac.empty()) || unit <= 0 || unit > INT32_MAX) return std::nullopt;
  auto all_digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!all_digits(whole) || !all_digits(frac)) return std::nullopt;
  __int128 int_part = 0, frac_num = 0, frac_den = 1;
  for (char c : whole) {
    int_part = int_part * 10 + (c - '0');
    if (int_part > INT64_MAX) return std::nullopt;
  }
  for (size_t i = 0; i < std::min(frac.size(), kMaxFractionDigits); ++i) {
    frac_num = frac_num * 10 + (frac[i] - '0');
    frac_den *= 10;
  }
  __int128 scaled = frac_num * unit;
  __int128 result = int_part * unit + scaled / frac_den + ((scaled % frac_den) * 2 >= frac_den ? 1 : 0);
  if (result > INT64_MAX) return std::nullopt;
  return static_cast<int64_t>(negative ? -result : result);
}

std::string CsvTable::Where() const { return path_ + ":line " + std::to_string(row_line_); }

}  // namespace aiprof
