#include "src/query/query_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "src/render/escape.h"

namespace aiprof {
namespace {

std::string DoubleText(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(d);
}

bool IsNumber(const QueryValue& v) {
  return std::holds_alternative<int64_t>(v) || std::holds_alternative<double>(v);
}

std::string TruncationNote(const QueryResult& result) {
  return "rows cut at the row limit (--max-rows " + std::to_string(result.max_rows) + "); more rows matched";
}

}  // namespace

std::string QueryValueText(const QueryValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) return DoubleText(*d);
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  return "";
}

namespace {

// A cell as the text table shows it.
std::string TextCell(const QueryValue& value) {
  return std::holds_alternative<std::monostate>(value) ? "NULL" : TerminalSafe(ShownText(QueryValueText(value)));
}

}  // namespace

StatusOr<std::string> QueryResultToText(const QueryResult& result, size_t max_bytes) {
  const size_t n = result.columns.size();
  std::vector<std::string> header(n);
  std::vector<size_t> width(n);
  for (size_t c = 0; c < n; ++c) {
    header[c] = TerminalSafe(ShownText(result.columns[c]));
    width[c] = TerminalWidth(header[c]);
  }
  // The widths first, without keeping the cells (each is made again when
  // its line is written): kept, they cost ~32 bytes a cell beyond the rows.
  for (const auto& row : result.rows) {
    for (size_t c = 0; c < n && c < row.size(); ++c) {
      // Cut at kMaxShownBytes, as the other text tables (one 10 MB name
      // made a 10 MB line per row); CSV and JSON keep every byte.
      width[c] = std::max(width[c], std::min(TerminalWidth(TextCell(row[c])), kMaxPaddedColumn));
    }
  }
  auto pad = [](std::string* line, const std::string& s, size_t w, bool right) {
    const size_t fill = w - std::min(w, TerminalWidth(s));
    if (right) line->append(fill, ' ');
    *line += s;
    if (!right) line->append(fill, ' ');
  };
  std::string text;
  std::string line;
  for (size_t c = 0; c < n; ++c) {
    if (c) line += "  ";
    pad(&line, header[c], width[c], false);
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  text += line + "\n";
  line.clear();
  for (size_t c = 0; c < n; ++c) {
    if (c) line += "  ";
    line.append(width[c], '-');
  }
  text += line + "\n";
  for (size_t r = 0; r < result.rows.size(); ++r) {
    line.clear();
    for (size_t c = 0; c < n; ++c) {
      if (c) line += "  ";
      const bool have = c < result.rows[r].size();
      pad(&line, have ? TextCell(result.rows[r][c]) : std::string(), width[c], have && IsNumber(result.rows[r][c]));
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    // Every column is as wide as its widest cell (up to kMaxPaddedColumn),
    // so a table of many columns, one wide cell in each, is many times the
    // size of its values (1,990 columns of NULL under one row of 240
    // characters: 40 bytes a cell held, 242 written).
    if (max_bytes != 0 && text.size() + line.size() + 1 > max_bytes) {
      char held[32];
      std::snprintf(held, sizeof held, "%.1f", static_cast<double>(max_bytes) / (1 << 20));
      return ErrStatus("the text table passed its size limit (" + std::string(held) + " MiB at row " +
                       std::to_string(r + 1) + " of " + std::to_string(result.rows.size()) +
                       ": each column is padded to its widest value, up to " + std::to_string(kMaxPaddedColumn) +
                       " characters): select fewer columns, or write csv or json (each value once)");
    }
    text += line + "\n";
  }
  text += "(" + std::to_string(result.rows.size()) + (result.rows.size() == 1 ? " row" : " rows");
  if (result.truncated) text += "; " + TruncationNote(result);
  text += ")\n";
  return text;
}

std::string QueryResultToText(const QueryResult& result) { return *QueryResultToText(result, 0); }

std::string QueryResultToCsv(const QueryResult& result) {
  std::string out;
  for (size_t c = 0; c < result.columns.size(); ++c) {
    if (c) out += ',';
    out += CsvField(result.columns[c]);
  }
  out += "\r\n";
  for (const auto& row : result.rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      if (c) out += ',';
      // Numbers are written as they are (a negative number is data, not a formula).
      out += IsNumber(row[c]) ? QueryValueText(row[c]) : CsvField(QueryValueText(row[c]));
    }
    out += "\r\n";
  }
  return out;
}

std::string QueryResultToJson(const QueryResult& result) {
  std::string out = "{\"columns\":[";
  for (size_t c = 0; c < result.columns.size(); ++c) {
    if (c) out += ',';
    out += JsonString(result.columns[c]);
  }
  out += "],\"rows\":[";
  for (size_t r = 0; r < result.rows.size(); ++r) {
    if (r) out += ',';
    out += '[';
    const auto& row = result.rows[r];
    for (size_t c = 0; c < row.size(); ++c) {
      if (c) out += ',';
      const QueryValue& v = row[c];
      if (const auto* d = std::get_if<double>(&v); d && !std::isfinite(*d)) {
        out += "null";
      } else if (std::holds_alternative<std::string>(v)) {
        out += JsonString(std::get<std::string>(v));
      } else if (std::holds_alternative<std::monostate>(v)) {
        out += "null";
      } else {
        out += QueryValueText(v);
      }
    }
    out += ']';
  }
  out += "],\"row_count\":" + std::to_string(result.rows.size());
  out += ",\"truncated\":" + std::string(result.truncated ? "true" : "false");
  out += ",\"max_rows\":" + std::to_string(result.max_rows) + "}\n";
  return out;
}

}  // namespace aiprof
