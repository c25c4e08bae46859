#include "src/render/renderers.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <variant>

#include "src/render/escape.h"
#include "src/render/page.h"
#include "src/render/svg_chart.h"

namespace aiprof::render {
namespace {

// ------------------------------------------------------------ shared

// A cell or value for people, unescaped: numbers by their unit.
std::string Plain(const Value& v, Unit column_unit) {
  Unit unit = v.unit().value_or(column_unit);
  switch (v.kind()) {
    case Value::Kind::kNull: return "—";
    case Value::Kind::kBool: return v.boolean() ? "yes" : "no";
    case Value::Kind::kInt:
      if (unit == Unit::kNone) return std::to_string(v.integer());
      return FormatQuantity(v.number(), unit);
    case Value::Kind::kNumber: return FormatQuantity(v.number(), unit);
    case Value::Kind::kString: return v.str();
  }
  return "";
}

bool IsNumeric(const Value& v) { return v.kind() == Value::Kind::kInt || v.kind() == Value::Kind::kNumber; }

// What a sortable HTML table sorts a cell by: the raw number, else the text.
std::string SortKey(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull: return "";
    case Value::Kind::kBool: return v.boolean() ? "1" : "0";
    case Value::Kind::kInt: return std::to_string(v.integer());
    case Value::Kind::kNumber: return std::isfinite(v.number()) ? fmt::format("{}", v.number()) : "";
    case Value::Kind::kString: return v.str();
  }
  return "";
}

std::string SeverityLabel(Severity s) {
  switch (s) {
    case Severity::kInfo: return "INFO";
    case Severity::kLow: return "LOW";
    case Severity::kMedium: return "MEDIUM";
    case Severity::kHigh: return "HIGH";
  }
  return "";
}

// "12.5% of step time", or "" without an impact.
std::string ImpactText(const Finding& f) {
  if (!f.impact) return "";
  std::string out = FormatQuantity(*f.impact, Unit::kFraction);
  if (!f.impact_base.empty()) out += " of " + f.impact_base;
  return out;
}

// A walker over sections that calls the format's writers; depth 0 is the
// document's own title.
template <typename Writer>
void Walk(const Section& s, int depth, Writer* w) {
  if constexpr (requires { w->Enter(s, depth); }) w->Enter(s, depth);
  if (!s.title.empty()) w->Heading(s.title, depth);
  for (const Block& b : s.blocks) std::visit([&](const auto& block) { w->Write(block); }, b);
  for (const Section& c : s.sections) Walk(c, depth + 1, w);
  if constexpr (requires { w->Leave(s, depth); }) w->Leave(s, depth);
}

template <typename Writer>
void WalkDocument(const Document& doc, Writer* w) {
  if (!doc.title.empty()) w->Heading(doc.title, 0);
  for (const Section& s : doc.sections) Walk(s, 1, w);
}

// ------------------------------------------------------------ text

// Bytes of the first `columns` code points of `s`.
size_t PrefixBytes(std::string_view s, size_t columns) {
  size_t seen = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (seen == columns) return i;
    ++seen;
  }
  return s.size();
}

// `text` (TerminalSafe, one line) after `first` (a prefix `first_width`
// columns wide), broken at spaces into lines of at most `width` columns,
// each further line after `rest` (spaces); a word longer than a line is
// split. With `width` 0, or when it fits, one line as it is.
std::string Wrapped(std::string_view text, std::string_view first, size_t first_width, std::string_view rest,
                    size_t width) {
  std::string out(first);
  if (width == 0 || first_width + TerminalWidth(text) <= width) return out.append(text) + "\n";
  const size_t room = width > rest.size() + 8 ? width - rest.size() : 8;  // a further line's columns
  auto new_line = [&] {
    while (out.ends_with(' ')) out.pop_back();
    out.append("\n").append(rest);
  };
  size_t col = first_width;
  bool fresh = true;  // no word on this line yet
  // A prefix wider than the further lines' may stand alone on its line.
  bool breakable = first_width > rest.size();
  for (size_t i = 0; i < text.size();) {
    const size_t j = std::min(text.find(' ', i), text.size());
    std::string_view word = text.substr(i, j - i);
    i = j + 1;
    if (word.empty()) continue;
    size_t w = TerminalWidth(word);
    // A word no line holds is split from where the line is (below).
    const bool split = w > room;
    if ((!fresh || breakable) && col + (fresh ? 0 : 1) + (split ? 1 : w) > width) {
      new_line();
      col = rest.size();
      fresh = true;
    } else if (!fresh) {
      out += ' ';
      ++col;
    }
    breakable = false;
    while (col + w > width && w > room) {  // a word no line holds: split
      const size_t take = width > col ? width - col : 1;
      const size_t bytes = PrefixBytes(word, take);
      out.append(word.substr(0, bytes));
      word.remove_prefix(bytes);
      w -= take;
      new_line();
      col = rest.size();
    }
    out.append(word);
    col += w;
    fresh = false;
  }
  return out + "\n";
}

// Columns of the longest space-separated word of `s`.
size_t LongestWord(std::string_view s) {
  size_t longest = 0;
  for (size_t i = 0; i <= s.size();) {
    const size_t j = std::min(s.find(' ', i), s.size());
    longest = std::max(longest, TerminalWidth(s.substr(i, j - i)));
    i = j + 1;
  }
  return longest;
}

// `s` broken at spaces into lines of at most `width` columns (a longer word
// on a line of its own).
std::vector<std::string> WordLines(std::string_view s, size_t width) {
  std::vector<std::string> lines(1);
  for (size_t i = 0; i <= s.size();) {
    const size_t j = std::min(s.find(' ', i), s.size());
    const std::string_view word = s.substr(i, j - i);
    i = j + 1;
    if (word.empty()) continue;
    if (!lines.back().empty() && TerminalWidth(lines.back()) + 1 + TerminalWidth(word) > width) lines.emplace_back();
    if (!lines.back().empty()) lines.back() += ' ';
    lines.back() += word;
  }
  return lines;
}

class TextWriter {
 public:
  explicit TextWriter(const TextOptions& o) : options_(o) {}
  std::string Take() { return std::move(out_); }

  void Heading(const std::string& title, int depth) {
    if (!out_.empty() && !out_.ends_with("\n\n")) out_ += "\n";
    std::string t = Wrapped(TerminalSafe(title), "", 0, "", options_.width);
    t.pop_back();  // its "\n"
    out_ += Color("1", t) + "\n";
    size_t underline = 0;
    for (size_t start = 0; start <= t.size();) {
      const size_t end = std::min(t.find('\n', start), t.size());
      underline = std::max(underline, TerminalWidth(std::string_view(t).substr(start, end - start)));
      start = end + 1;
    }
    if (depth <= 1) out_ += std::string(underline, depth == 0 ? '=' : '-') + "\n";
  }
  void Write(const KeyValues& kv) {
    size_t width = 0;
    for (const KeyValue& i : kv.items) width = std::max(width, TerminalWidth(TerminalSafe(i.label)));
    // A value too long for the line goes on under itself, or 6 columns in
    // when the labels take half the line.
    const size_t value_column = 2 + width + 2;
    const std::string rest(value_column <= options_.width / 2 ? value_column : 6, ' ');
    for (const KeyValue& i : kv.items) {
      std::string label = TerminalSafe(i.label);
      std::string value = TerminalSafe(Plain(i.value, i.unit));
      if (!i.detail.empty()) value += " (" + TerminalSafe(i.detail) + ")";
      out_ += Wrapped(value, "  " + label + ":" + std::string(width - TerminalWidth(label) + 1, ' '), value_column,
                      rest, options_.width);
    }
  }
  void Write(const Table& t) {
    if (!t.title.empty()) out_ += Wrapped(TerminalSafe(t.title), "", 0, "", options_.width);
    // A column of figures (any numeric cell) is right-aligned and never
    // cut, a text column is.
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    std::vector<bool> right(t.columns.size(), false);
    for (const Column& c : t.columns) header.push_back(TerminalSafe(c.label));
    for (const auto& row : t.rows) {
      std::vector<std::string>& line = rows.emplace_back();
      for (size_t c = 0; c < t.columns.size(); ++c) {
        const Value& v = c < row.size() ? row[c] : Value();
        line.push_back(TerminalSafe(Plain(v, t.columns[c].unit)));
        if (IsNumeric(v)) right[c] = true;
      }
    }
    const std::vector<size_t> width = ColumnWidths(header, rows, right);
    auto emit = [&](std::vector<std::string>& line) {
      std::string text = " ";
      for (size_t c = 0; c < line.size(); ++c) {
        if (!right[c]) line[c] = ShortenMiddle(line[c], width[c]);
        std::string pad(width[c] - std::min(width[c], TerminalWidth(line[c])), ' ');
        text += " " + (right[c] ? pad + line[c] : line[c] + (c + 1 < line.size() ? pad : ""));
      }
      while (text.ends_with(' ')) text.pop_back();
      out_ += text + "\n";
    };
    // A figure's label wider than its column is broken at spaces over
    // several header lines, the last one above the figures.
    std::vector<std::vector<std::string>> labels;
    size_t header_lines = 1;
    for (size_t c = 0; c < header.size(); ++c) {
      labels.push_back(right[c] && TerminalWidth(header[c]) > width[c] ? WordLines(header[c], width[c])
                                                                       : std::vector<std::string>{header[c]});
      header_lines = std::max(header_lines, labels.back().size());
    }
    for (size_t k = 0; k < header_lines; ++k) {
      std::vector<std::string> line;
      for (const auto& l : labels) line.push_back(k + l.size() >= header_lines ? l[k + l.size() - header_lines] : "");
      emit(line);
    }
    for (auto& line : rows) emit(line);
    if (!t.note.empty()) out_ += Wrapped(TerminalSafe(t.note), "  ", 2, "  ", options_.width);
  }
  void Write(const Series& s) {
    out_ += "  " + TerminalSafe(s.title) + ": " + std::to_string(s.points.size()) + " points";
    if (!s.points.empty()) {
      auto [lo, hi] = std::minmax_element(s.points.begin(), s.points.end(),
                                          [](const auto& a, const auto& b) { return a.second < b.second; });
      out_ += ", " + TerminalSafe(s.y_label) + " from " + FormatQuantity(lo->second, s.y_unit) + " to " +
              FormatQuantity(hi->second, s.y_unit);
    }
    out_ += "\n";
  }
  void Write(const Finding& f) {
    std::string sev = "[" + SeverityLabel(f.severity) + "]";
    const size_t sev_width = 2 + sev.size() + 1;
    if (f.severity == Severity::kHigh) sev = Color("1;31", sev);
    if (f.severity == Severity::kMedium) sev = Color("1;33", sev);
    std::string title = TerminalSafe(f.title);
    std::string impact = ImpactText(f);
    if (!impact.empty()) title += " (" + TerminalSafe(impact) + ")";
    out_ += Wrapped(title, "  " + sev + " ", sev_width, "      ", options_.width);
    if (!f.detail.empty()) out_ += Wrapped(TerminalSafe(f.detail), "      ", 6, "      ", options_.width);
    for (const KeyValue& e : f.evidence) {
      out_ += Wrapped(TerminalSafe(e.label) + ": " + TerminalSafe(Plain(e.value, e.unit)), "      ", 6, "        ",
                      options_.width);
    }
  }
  void Write(const Paragraph& p) { out_ += Wrapped(TerminalSafe(p.text), "", 0, "", options_.width); }
  void Write(const List& l) {
    if (!l.title.empty()) out_ += Wrapped(TerminalSafe(l.title), "", 0, "", options_.width);
    for (const ListItem& i : l.items) {
      std::string text = TerminalSafe(i.text);
      if (!i.note.empty()) text += " " + Color("2", "[" + TerminalSafe(i.note) + "]");
      out_ += Wrapped(text, "  - ", 4, "    ", options_.width);
      for (const std::string& d : i.details) out_ += Wrapped(TerminalSafe(d), "      ", 6, "        ", options_.width);
    }
  }
  void Write(const Chart& c) { Write(c.data); }
  void Write(const RawHtml& r) {
    if (!r.text.empty()) out_ += Wrapped(TerminalSafe(r.text), "", 0, "", options_.width);
  }

 private:
  // Each column's width: its widest shown cell, its label's included (a
  // text cell at most kMaxTextCellColumns, but for the last column's when
  // there is no width to fit). Then, while the line (2 columns
  // of indent, 1 between columns) is wider than options_.width: a figure's
  // label may take several lines (its longest word wide), and the widest
  // text column loses a column, down to kMinFittedColumns or its own width.
  std::vector<size_t> ColumnWidths(const std::vector<std::string>& header,
                                   const std::vector<std::vector<std::string>>& rows,
                                   const std::vector<bool>& right) const {
    std::vector<size_t> width(right.size(), 0);
    for (const auto& line : rows) {
      for (size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], TerminalWidth(line[c]));
    }
    size_t line = 1;
    for (size_t c = 0; c < width.size(); ++c) {
      // The last column pads nothing: without a width to fit, it stays whole
      // (a metric's description, a name's whole text in a file).
      const size_t most = c + 1 == width.size() && options_.width == 0 ? SIZE_MAX : kMaxTextCellColumns;
      if (!right[c]) width[c] = std::min(std::max(width[c], TerminalWidth(header[c])), most);
      line += 1 + (right[c] ? std::max(width[c], TerminalWidth(header[c])) : width[c]);
    }
    for (size_t c = 0; c < width.size(); ++c) {
      if (right[c]) {
        const bool fold = options_.width != 0 && line > options_.width;
        width[c] = std::max(width[c], fold ? LongestWord(header[c]) : TerminalWidth(header[c]));
      }
    }
    if (options_.width == 0) return width;
    line = 1;
    for (size_t w : width) line += 1 + w;
    while (line > options_.width) {
      size_t widest = width.size();
      for (size_t c = 0; c < width.size(); ++c) {
        if (!right[c] && width[c] > kMinFittedColumns && (widest == width.size() || width[c] > width[widest])) {
          widest = c;
        }
      }
      if (widest == width.size()) break;  // only figures and narrow text left
      --width[widest];
      --line;
    }
    return width;
  }
  std::string Color(const char* code, const std::string& s) const {
    return options_.color ? std::string("\x1b[") + code + "m" + s + "\x1b[0m" : s;
  }
  TextOptions options_;
  std::string out_;
};

// ------------------------------------------------------------ Markdown

class MarkdownWriter {
 public:
  std::string Take() { return std::move(out_); }

  void Heading(const std::string& title, int depth) {
    if (!out_.empty() && !out_.ends_with("\n\n")) out_ += "\n";
    out_ += std::string(static_cast<size_t>(std::min(depth, 5) + 1), '#') + " " + MarkdownEscape(title) + "\n\n";
  }
  void Write(const KeyValues& kv) {
    for (const KeyValue& i : kv.items) {
      out_ += "- **" + MarkdownEscape(i.label) + ":** " + MarkdownEscape(Plain(i.value, i.unit));
      if (!i.detail.empty()) out_ += " — " + MarkdownEscape(i.detail);
      out_ += "\n";
    }
    out_ += "\n";
  }
  void Write(const Table& t) {
    if (!t.title.empty()) out_ += "**" + MarkdownEscape(t.title) + "**\n\n";
    std::string header = "|", rule = "|";
    for (size_t c = 0; c < t.columns.size(); ++c) {
      header += " " + MarkdownEscape(t.columns[c].label) + " |";
      bool numeric = !t.rows.empty() && c < t.rows[0].size() && IsNumeric(t.rows[0][c]);
      rule += numeric ? " ---: |" : " --- |";
    }
    out_ += header + "\n" + rule + "\n";
    for (const auto& row : t.rows) {
      std::string line = "|";
      for (size_t c = 0; c < t.columns.size(); ++c) {
        std::string cell = MarkdownEscape(Plain(c < row.size() ? row[c] : Value(), t.columns[c].unit));
        // A cell's leading spaces (a tree's depth) as no-break spaces: GFM
        // trims the spaces around a cell's text.
        size_t lead = 0;
        while (lead < cell.size() && cell[lead] == ' ') ++lead;
        if (lead > 0) {
          std::string nbsp;
          for (size_t k = 0; k < lead; ++k) nbsp += "\u00a0";
          cell = nbsp + cell.substr(lead);
        }
        line += " " + cell + " |";
      }
      out_ += line + "\n";
    }
    if (!t.note.empty()) out_ += "\n" + MarkdownEscape(t.note) + "\n";
    out_ += "\n";
  }
  void Write(const Series& s) {
    Table t;
    t.title = s.title;
    t.columns = {{"x", s.x_label, s.x_unit}, {"y", s.y_label, s.y_unit}};
    for (const auto& [x, y] : s.points) t.rows.push_back({Value::Number(x), Value::Number(y)});
    Write(t);
  }
  void Write(const Finding& f) {
    out_ += "- **" + SeverityLabel(f.severity) + "** " + MarkdownEscape(f.title);
    std::string impact = ImpactText(f);
    if (!impact.empty()) out_ += " (" + MarkdownEscape(impact) + ")";
    out_ += "\n";
    if (!f.detail.empty()) out_ += "  " + MarkdownEscape(f.detail) + "\n";
    for (const KeyValue& e : f.evidence) {
      out_ += "  - " + MarkdownEscape(e.label) + ": " + MarkdownEscape(Plain(e.value, e.unit)) + "\n";
    }
    out_ += "\n";
  }
  void Write(const Paragraph& p) { out_ += MarkdownEscape(p.text) + "\n\n"; }
  void Write(const List& l) {
    if (!l.title.empty()) out_ += "**" + MarkdownEscape(l.title) + "**\n\n";
    for (const ListItem& i : l.items) {
      out_ += "- " + MarkdownEscape(i.text);
      if (!i.note.empty()) out_ += " — *" + MarkdownEscape(i.note) + "*";
      out_ += "\n";
      for (const std::string& d : i.details) out_ += "  - " + MarkdownEscape(d) + "\n";
    }
    out_ += "\n";
  }
  void Write(const Chart& c) { Write(c.data); }
  void Write(const RawHtml& r) {
    if (!r.text.empty()) out_ += MarkdownEscape(r.text) + "\n\n";
  }

 private:
  std::string out_;
};

// ------------------------------------------------------------ HTML

constexpr std::string_view kDocumentStyle =
    "body{font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,sans-serif;margin:24px auto;max-width:1000px;"
    "padding:0 1em;color:#222;line-height:1.4;overflow-wrap:break-word}"
    // A name without spaces (a mangled kernel, a path) breaks where it
    // would run past its box instead of widening the page (text, lists, the
    // attribution tree, cards, key/values); a table cell keeps its words
    // whole unless it is td.long (below).
    "h1{font-size:22px;overflow-wrap:anywhere}h2{font-size:18px;border-bottom:1px solid "
    "#ddd;padding-bottom:4px;margin-top:28px}"
    // A cell with a long token (a file path) breaks it (td.long) rather than
    // widen its table past the page.
    "h3{font-size:15px}table{border-collapse:collapse;font-size:13px;margin:8px 0}"
    "th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f3f3f3}"
    "td.long{overflow-wrap:anywhere;min-width:8em}td.indent{white-space:pre-wrap}"
    // A table wider than the text even so (validate's 14 metric columns) may
    // use the window's width right of the text column (its box reaches 24 px
    // short of the window's right edge; a table narrower than the text keeps
    // its width) and scrolls inside that box beyond it; the page keeps its
    // width.
    "div.table{overflow-x:auto;width:calc(100% + (100vw - 100%) / 2 - 24px);max-width:calc(100vw - 48px)}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    // A key/value list's labels take at most 45% of the width (a long
    // label wraps), its values the rest, however long their words.
    "dl.kv{display:grid;grid-template-columns:fit-content(45%) minmax(0,1fr);gap:2px 12px}dl.kv dt{color:#555}"
    "dl.kv dd{margin:0;min-width:0}"
    ".finding{border-left:4px solid #1f77b4;padding:4px 12px;margin:12px 0;background:#fcfcff}"
    ".finding.high{border-color:#d62728}.finding.medium{border-color:#ff7f0e}.finding.low{border-color:#2ca02c}"
    ".sev{font-size:11px;padding:1px 6px;border-radius:8px;background:#eee;margin-right:6px}"
    ".note{color:#666;font-size:13px}svg.chart{max-width:100%;height:auto}"
    ".cards{display:flex;flex-wrap:wrap;gap:12px}"
    ".card{flex:1 1 210px;min-width:0;border:1px solid #ddd;border-radius:6px;padding:10px 12px;background:#fafafa}"
    ".card "
    ".k{font-size:12px;color:#666;text-transform:uppercase;letter-spacing:.04em}"
    ".card .v{font-size:20px;font-weight:600;margin:2px 0}.card .s{font-size:12px;color:#444}"
    "table.sortable th{cursor:pointer;user-select:none}figure.chart{margin:6px 0}"
    // A row's prose under it (Column::html_below): one block with its row.
    "tr:has(+ tr.below) td{border-bottom:none}tr.below td{border-top:none;padding-top:0;color:#333}"
    "tr.below .k{color:#666;margin-right:4px}"
    "details.chart-data summary,details.fold summary{font-size:12px;color:#666;cursor:pointer}"
    // An embedded view is most of the window tall: the timeline's panel
    // (details, selection, legend) takes 190 px of it, its tracks the rest.
    "iframe.view{width:100%;height:max(520px,min(85vh,900px));border:1px solid #ddd}"
    ".svg-view svg{max-width:100%;height:auto}"
    "@media "
    "print{body{max-width:none;margin:0}div.table{overflow:visible;width:auto;max-width:none}"
    "h2{break-after:avoid}svg.chart,.finding,.card,tr{break-inside:avoid}"
    // Print shows a folded table open, in place of what it repeats (the
    // attribution tree, whose closed nodes would not print).
    "details.fold::details-content{content-visibility:visible;display:block}details.fold>summary,"
    "div.attribution-tree{display:none}"
    "iframe.view,details.chart-data{display:none}}";

// A text cell with a token longer than this (a path, a URL) gets class
// "long": the token may break anywhere instead of widening its column.
constexpr size_t kLongToken = 32;

size_t LongestToken(std::string_view text) {
  size_t longest = 0, run = 0;
  for (char ch : text) {
    run = ch == ' ' ? 0 : run + 1;
    longest = std::max(longest, run);
  }
  return longest;
}

// Sorts a table.sortable by the clicked column (cells' data-v: the raw number
// or the text); a second click reverses.
constexpr std::string_view kSortScript = R"JS(
document.querySelectorAll('table.sortable').forEach(function(table){
  table.querySelectorAll('th').forEach(function(th, col){
    th.addEventListener('click', function(){
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var asc = th.getAttribute('data-dir') !== 'asc';
      table.querySelectorAll('th').forEach(function(h){ h.removeAttribute('data-dir'); });
      th.setAttribute('data-dir', asc ? 'asc' : 'desc');
      rows.sort(function(a, b){
        var x = a.cells[col].getAttribute('data-v'), y = b.cells[col].getAttribute('data-v');
        var nx = parseFloat(x), ny = parseFloat(y), r;
        if (!isNaN(nx) && !isNaN(ny)) r = nx - ny; else r = String(x).localeCompare(String(y));
        return asc ? r : -r;
      });
      rows.forEach(function(r){ body.appendChild(r); });
    });
  });
});
)JS";

bool HasSortable(const Section& s) {
  for (const Block& b : s.blocks) {
    if (const auto* t = std::get_if<Table>(&b); t && t->sortable) return true;
  }
  return std::any_of(s.sections.begin(), s.sections.end(), HasSortable);
}

class HtmlWriter {
 public:
  std::string Take() { return std::move(out_); }

  void Heading(const std::string& title, int depth) {
    int level = std::min(depth + 1, 6);
    out_ += fmt::format("<h{}>{}</h{}>\n", level, HtmlEscape(title), level);
  }
  // A top-level section is an HTML section whose id is its key (an anchor).
  void Enter(const Section& s, int depth) {
    if (depth == 1 && !s.key.empty()) out_ += "<section id=\"" + HtmlEscape(s.key) + "\">\n";
  }
  void Leave(const Section& s, int depth) {
    if (depth == 1 && !s.key.empty()) out_ += "</section>\n";
  }
  void Write(const KeyValues& kv) {
    if (kv.cards) {
      out_ += "<div class=\"cards\">";
      for (const KeyValue& i : kv.items) {
        out_ += "<div class=\"card\" data-key=\"" + HtmlEscape(i.key) + "\"><div class=\"k\">" + HtmlEscape(i.label) +
                "</div><div class=\"v\">" + HtmlEscape(Plain(i.value, i.unit)) + "</div><div class=\"s\">" +
                HtmlEscape(i.detail) + "</div></div>";
      }
      out_ += "</div>\n";
      return;
    }
    out_ += "<dl class=\"kv\">";
    for (const KeyValue& i : kv.items) {
      out_ += "<dt>" + HtmlEscape(i.label) + "</dt><dd>" + HtmlEscape(Plain(i.value, i.unit));
      if (!i.detail.empty()) out_ += " <span class=\"note\">" + HtmlEscape(i.detail) + "</span>";
      out_ += "</dd>";
    }
    out_ += "</dl>\n";
  }
  void Write(const Table& t) {
    if (!t.html_fold.empty()) out_ += "<details class=\"fold\"><summary>" + HtmlEscape(t.html_fold) + "</summary>";
    out_ +=
        "<div class=\"table\"><table data-key=\"" + HtmlEscape(t.key) + (t.sortable ? "\" class=\"sortable\">" : "\">");
    if (!t.title.empty()) out_ += "<caption>" + HtmlEscape(t.title) + "</caption>";
    const auto below = [&t](size_t c) { return t.columns[c].html_below && !t.sortable; };
    size_t across = 0;
    out_ += "<thead><tr>";
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (below(c)) continue;
      out_ += "<th>" + HtmlEscape(t.columns[c].label) + "</th>";
      ++across;
    }
    out_ += "</tr></thead><tbody>\n";
    for (const auto& row : t.rows) {
      out_ += "<tr>";
      std::string under;
      for (size_t c = 0; c < t.columns.size(); ++c) {
        const Value& v = c < row.size() ? row[c] : Value();
        if (below(c)) {
          if (const std::string text = Plain(v, t.columns[c].unit); !text.empty()) {
            under += "<tr class=\"below\"><td colspan=\"" + std::to_string(across) + "\"><span class=\"k\">" +
                     HtmlEscape(t.columns[c].label) + "</span> " + HtmlEscape(text) + "</td></tr>\n";
          }
          continue;
        }
        const std::string text = Plain(v, t.columns[c].unit);
        // Leading spaces are a cell's indentation (a tree's depth): kept
        // (td.indent) where HTML would collapse them.
        const bool indent = !IsNumeric(v) && !text.empty() && text[0] == ' ';
        out_ += IsNumeric(v)                      ? "<td class=\"n\""
                : LongestToken(text) > kLongToken ? (indent ? "<td class=\"long indent\"" : "<td class=\"long\"")
                : indent                          ? "<td class=\"indent\""
                                                  : "<td";
        if (t.sortable) out_ += " data-v=\"" + HtmlEscape(SortKey(v)) + "\"";
        out_ += ">" + HtmlEscape(text) + "</td>";
      }
      out_ += "</tr>\n" + under;
    }
    out_ += "</tbody></table></div>\n";
    if (!t.note.empty()) out_ += "<p class=\"note\">" + HtmlEscape(t.note) + "</p>\n";
    if (!t.html_fold.empty()) out_ += "</details>\n";
  }
  void Write(const Series& s) {
    ChartSeries series{s.y_label, ChartPalette()[0], {}};
    std::vector<double> x;
    for (const auto& [px, py] : s.points) {
      x.push_back(px);
      series.values.push_back(py);
    }
    out_ += AreaChart(s.title, x, {series}, std::string(UnitName(s.y_unit))) + "\n";
  }
  void Write(const Finding& f) {
    std::string sev(SeverityName(f.severity));
    out_ += "<div class=\"finding " + sev + "\"><p><span class=\"sev\">" + SeverityLabel(f.severity) + "</span><b>" +
            HtmlEscape(f.title) + "</b>";
    std::string impact = ImpactText(f);
    if (!impact.empty()) out_ += " (" + HtmlEscape(impact) + ")";
    out_ += "</p>";
    if (!f.detail.empty()) out_ += "<p>" + HtmlEscape(f.detail) + "</p>";
    if (!f.evidence.empty()) Write(KeyValues{f.evidence});
    out_ += "</div>\n";
  }
  void Write(const Paragraph& p) { out_ += "<p>" + HtmlEscape(p.text) + "</p>\n"; }
  void Write(const List& l) {
    if (!l.title.empty()) out_ += "<p><b>" + HtmlEscape(l.title) + "</b></p>\n";
    out_ += "<ul data-key=\"" + HtmlEscape(l.key) + "\">";
    for (const ListItem& i : l.items) {
      out_ += "<li>" + HtmlEscape(i.text);
      if (!i.note.empty()) out_ += " <span class=\"note\">(" + HtmlEscape(i.note) + ")</span>";
      if (!i.details.empty()) {
        out_ += "<ul>";
        for (const std::string& d : i.details) out_ += "<li>" + HtmlEscape(d) + "</li>";
        out_ += "</ul>";
      }
      out_ += "</li>";
    }
    out_ += "</ul>\n";
  }
  void Write(const Chart& c) {
    out_ += "<figure class=\"chart\" data-key=\"" + HtmlEscape(c.key) + "\">" + c.svg +
            "<details class=\"chart-data\"><summary>The figures</summary>";
    Write(c.data);
    out_ += "</details></figure>\n";
  }
  void Write(const RawHtml& r) { out_ += r.html + "\n"; }

 private:
  std::string out_;
};

bool HasTable(const Section& s) {
  for (const Block& b : s.blocks) {
    if (std::holds_alternative<Table>(b) || std::holds_alternative<Chart>(b)) return true;
  }
  return std::any_of(s.sections.begin(), s.sections.end(), HasTable);
}

const Table* FindTable(const Section& s, std::string_view key) {
  for (const Block& b : s.blocks) {
    const Table* t = std::get_if<Table>(&b);
    if (const auto* c = std::get_if<Chart>(&b)) t = &c->data;
    if (t && (key.empty() || t->key == key)) return t;
  }
  for (const Section& c : s.sections) {
    if (const Table* t = FindTable(c, key)) return t;
  }
  return nullptr;
}

// ------------------------------------------------------------ for people

// Calls text(string, max_bytes) for every string a person reads in `s` and
// its subsections, and value(v) for every value; const or not, so one walk
// both finds and cuts.
template <typename SectionT, typename TextFn, typename ValueFn>
void VisitShown(SectionT& s, TextFn&& text, ValueFn&& value) {
  auto key_value = [&](auto& kv) {
    text(kv.label, kMaxShownBytes);
    value(kv.value);
    text(kv.detail, kMaxShownProseBytes);
  };
  auto table = [&](auto& t) {
    text(t.title, kMaxShownBytes);
    text(t.note, kMaxShownProseBytes);
    for (auto& c : t.columns) text(c.label, kMaxShownBytes);
    for (auto& row : t.rows) {
      for (auto& v : row) value(v);
    }
  };
  text(s.title, kMaxShownBytes);
  for (auto& b : s.blocks) {
    std::visit(
        [&](auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, KeyValues>) {
            for (auto& kv : x.items) key_value(kv);
          } else if constexpr (std::is_same_v<T, Table>) {
            table(x);
          } else if constexpr (std::is_same_v<T, Series>) {
            text(x.title, kMaxShownBytes);
          } else if constexpr (std::is_same_v<T, Finding>) {
            text(x.title, kMaxShownBytes);
            text(x.detail, kMaxShownProseBytes);
            for (auto& kv : x.evidence) key_value(kv);
          } else if constexpr (std::is_same_v<T, Paragraph>) {
            text(x.text, kMaxShownProseBytes);
          } else if constexpr (std::is_same_v<T, List>) {
            text(x.title, kMaxShownBytes);
            for (auto& i : x.items) {
              text(i.text, kMaxShownProseBytes);
              text(i.note, kMaxShownProseBytes);
              for (auto& d : i.details) text(d, kMaxShownProseBytes);
            }
          } else if constexpr (std::is_same_v<T, Chart>) {
            table(x.data);  // the drawing cuts its own labels (svg_chart.cc)
          } else if constexpr (std::is_same_v<T, RawHtml>) {
            text(x.text, kMaxShownProseBytes);  // the HTML is its builder's
          }
        },
        b);
  }
  for (auto& c : s.sections) VisitShown(c, text, value);
}

bool TooLongValue(const Value& v) { return v.kind() == Value::Kind::kString && v.str().size() > kMaxShownBytes; }

// The document as text, Markdown and HTML show it: every string a person
// reads cut (ShownText), in a copy only when one is too long (the usual
// document is shown as it is); the machine forms (JSON, YAML, CSV) read the
// document itself, uncut (CSV still shows terminal controls as text:
// CsvField).
class ForPeople {
 public:
  explicit ForPeople(const Document& doc) : shown_(&doc) {
    bool too_long = doc.title.size() > kMaxShownBytes;
    for (const Section& s : doc.sections) {
      VisitShown(
          s, [&](const std::string& t, size_t max) { too_long |= t.size() > max; },
          [&](const Value& v) { too_long |= TooLongValue(v); });
    }
    if (!too_long) return;
    cut_.key = doc.key;
    cut_.title = ShownText(doc.title);
    cut_.generator = doc.generator;
    cut_.sections = doc.sections;
    for (Section& s : cut_.sections) {
      VisitShown(
          s,
          [](std::string& t, size_t max) {
            if (t.size() > max) t = ShownText(t, max);
          },
          [](Value& v) {
            if (!TooLongValue(v)) return;
            Value cut = Value::String(ShownText(v.str()));
            v = v.unit() ? std::move(cut).In(*v.unit()) : std::move(cut);
          });
    }
    shown_ = &cut_;
  }
  const Document& doc() const { return *shown_; }

 private:
  Document cut_;
  const Document* shown_;
};

std::atomic<size_t> default_text_width{0};

}  // namespace

size_t DefaultTextWidth() { return default_text_width.load(std::memory_order_relaxed); }
void SetDefaultTextWidth(size_t columns) { default_text_width.store(columns, std::memory_order_relaxed); }

std::string RenderText(const Document& doc, const TextOptions& options) {
  TextWriter w(options);
  WalkDocument(ForPeople(doc).doc(), &w);
  return w.Take();
}

std::string RenderMarkdown(const Document& doc) {
  MarkdownWriter w;
  WalkDocument(ForPeople(doc).doc(), &w);
  std::string out = w.Take();
  while (out.size() > 1 && out.ends_with("\n\n")) out.pop_back();
  return out;
}

std::string RenderHtmlBody(const Document& doc) {
  HtmlWriter w;
  WalkDocument(ForPeople(doc).doc(), &w);
  return w.Take();
}

std::string RenderHtmlPage(const Document& doc, const HtmlPageOptions& options) {
  const std::string title = ShownText(doc.title);  // the page holds a view of it
  PageSpec page;
  page.title = title;
  page.generator = doc.generator;
  page.styles = {kDocumentStyle};
  if (std::any_of(doc.sections.begin(), doc.sections.end(), HasSortable)) page.scripts.push_back(kSortScript);
  page.embedded_pages = options.embedded_pages;
  return RenderPage(page, RenderHtmlBody(doc));
}

std::string RenderJson(const Document& doc) {
  if (!doc.machine_json.empty()) return doc.machine_json;
  return TreeToJson(doc.machine ? *doc.machine : DocumentToTree(doc));
}

StatusOr<std::string> RenderYaml(const Document& doc) {
  if (doc.machine) return TreeToYaml(*doc.machine);
  if (!doc.machine_json.empty()) return ErrStatus("the " + doc.key + " result has no YAML form (use JSON)");
  return TreeToYaml(DocumentToTree(doc));
}

StatusOr<std::string> RenderCsv(const Document& doc, std::string_view table_key) {
  const Table* table = table_key.empty() && doc.csv ? &*doc.csv : nullptr;
  for (size_t k = 0; !table && k < doc.sections.size(); ++k) table = FindTable(doc.sections[k], table_key);
  if (!table) {
    return ErrStatus(table_key.empty() ? "the " + doc.key + " result has no table to write as CSV"
                                       : "the " + doc.key + " result has no table " + std::string(table_key));
  }
  std::string out;
  for (size_t c = 0; c < table->columns.size(); ++c) {
    const Column& col = table->columns[c];
    std::string head = col.key;
    if (col.unit != Unit::kNone && col.unit != Unit::kCount) head += " (" + std::string(UnitName(col.unit)) + ")";
    out += (c ? "," : "") + CsvField(head);
  }
  out += "\r\n";
  for (const auto& row : table->rows) {
    for (size_t c = 0; c < table->columns.size(); ++c) {
      const Value& v = c < row.size() ? row[c] : Value();
      std::string cell;
      switch (v.kind()) {
        case Value::Kind::kNull: break;
        case Value::Kind::kBool: cell = v.boolean() ? "true" : "false"; break;
        case Value::Kind::kInt: cell = std::to_string(v.integer()); break;
        case Value::Kind::kNumber: cell = fmt::format("{}", v.number()); break;
        // CsvField shows terminal controls as text (ESC, BEL, C1, bidi).
        case Value::Kind::kString: cell = CsvField(v.str()); break;
      }
      out += (c ? "," : "") + cell;
    }
    out += "\r\n";
  }
  return out;
}

std::vector<OutputFormat> DocumentFormats(const Document& doc) {
  std::vector<OutputFormat> formats = {TextFormat(), MarkdownFormat(), HtmlFormat(), JsonFormat()};
  if (doc.machine || doc.machine_json.empty()) formats.push_back(YamlFormat());
  if (doc.csv || std::any_of(doc.sections.begin(), doc.sections.end(), HasTable)) formats.push_back(CsvFormat());
  return formats;
}

StatusOr<std::string> RenderDocument(const Document& doc, std::string_view format, const TextOptions& text) {
  if (format == "text") return RenderText(doc, text);
  if (format == "md") return RenderMarkdown(doc);
  if (format == "html") return RenderHtmlPage(doc);
  if (format == "json") return RenderJson(doc);
  if (format == "yaml") return RenderYaml(doc);
  if (format == "csv") return RenderCsv(doc);
  return ErrStatus("unknown output format " + std::string(format));
}

}  // namespace aiprof::render
