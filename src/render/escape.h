// Escaping for every output format. Trace content is untrusted: names,
// categories and args go through these before they reach a report.
#ifndef AIPROF_SRC_RENDER_ESCAPE_H_
#define AIPROF_SRC_RENDER_ESCAPE_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace aiprof {

// JSON string body (without quotes); invalid UTF-8 bytes become U+FFFD.
void AppendJsonEscaped(std::string* out, std::string_view s);
// The bytes AppendJsonEscaped appends for `s` (a result's size as JSON).
size_t JsonEscapedSize(std::string_view s);
std::string JsonString(std::string_view s);  // with quotes
// The same for a page's embedded data that its script shows as text (views'
// names, labels, titles): IsInvisibleControl code points (bidi, C1, line
// separators) become the visible text \uXXXX, as HtmlEscape shows them, since
// textContent and canvas text would still let U+202E reorder a name
// ("rtl\u202egpj.json" read "rtlnosj.jpg").
void AppendDisplayJsonEscaped(std::string* out, std::string_view s);
std::string DisplayJsonString(std::string_view s);  // with quotes
// One CSV cell (RFC 4180 quoting); every CSV writer of aiprof (RenderCsv,
// summary, query, roofline) writes its text cells through this one function,
// since CSV is printed to a terminal when there is no -o. Terminal controls
// are shown as text as EscapeControls shows them: C0 controls other than
// \n, \t and \r, DEL and bytes that are not UTF-8 as \xNN; C1, bidi
// controls and the line/paragraph separators as \uXXXX. \n, \t and \r stay,
// inside quotes, and read back as they were. A CSV reader gets any other
// control back as that text, not its byte (JSON is the format for exact
// values). A cell starting with a tab or CR, or whose first character
// after spaces, tabs and line breaks is = + - @, is prefixed with ' so
// spreadsheets do not run it as a formula.
std::string CsvField(std::string_view s);
// HTML text or attribute value (SVG too): & < > " ' become entities; invalid
// UTF-8 becomes U+FFFD; bidi controls (U+202A..U+202E, U+2066..U+2069,
// U+200E, U+200F, U+061C), C1 controls and the line/paragraph separators
// become the visible text \uXXXX, as TerminalSafe shows them (an entity
// would be decoded back into the character and still reorder the line).
std::string HtmlEscape(std::string_view s);
// Markdown inline text: Markdown punctuation is backslash-escaped, < > & become
// entities (renderers pass raw HTML through), line breaks become spaces,
// bidi controls are shown as \uXXXX as HtmlEscape shows them.
std::string MarkdownEscape(std::string_view s);
// Text for a terminal: control characters and invalid UTF-8 shown as \xNN;
// C1 controls, bidi controls (U+202A..U+202E, U+2066..U+2069, ...) and the
// line/paragraph separators as \uXXXX.
std::string TerminalSafe(std::string_view s);
// The same, keeping \n and \t when `keep_line_breaks` (error messages);
// \r is shown either way (it rewrites the line on a terminal). CsvField
// keeps \r as well: in a quoted cell it is part of a value's line break.
std::string EscapeControls(std::string_view s, bool keep_line_breaks);
// Columns TerminalSafe text takes in a terminal (one per code point).
size_t TerminalWidth(std::string_view s);
// Query's text tables pad a column to its widest cell up to this many
// columns; a longer cell is written whole and shifts only its own line (one
// 1 MiB name padded every row of its table to 1 MiB: 64 MB of report.txt).
inline constexpr size_t kMaxPaddedColumn = 240;
// A text cell of a text table (render::RenderText) is shortened in the
// middle to at most this many columns (ShortenMiddle), so no column is
// padded wider (whatif padded its slice names to 250 columns); the last
// column, which pads nothing, only when the text fits a width
// (TextOptions::width). JSON, YAML, CSV, Markdown and HTML keep the whole
// name.
inline constexpr size_t kMaxTextCellColumns = 80;
// `s` (TerminalSafe text) in at most `columns` columns (TerminalWidth): whole
// when it fits, else its first and last code points around "…", so a
// kernel's name keeps its start and its last template arguments.
std::string ShortenMiddle(std::string_view s, size_t columns);
// Text for a person to read (a table cell, a value, a tree's label in text,
// Markdown and HTML) is cut after this many bytes: one 1 MiB op name laid
// out in a report's tables made Chromium run past its 120 s printing the
// PDF (cut at 4 KiB it prints in 2.3 s, at 16 KiB in 24 s). Real names stay
// whole: the longest C++ symbols of the fixtures' host samples are 2.5 KB.
// JSON, YAML and CSV are not cut (CSV shows terminal controls: CsvField).
inline constexpr size_t kMaxShownBytes = 4 * 1024;
// Prose (paragraphs, details, list items, a tree's text) is cut later.
inline constexpr size_t kMaxShownProseBytes = 4 * kMaxShownBytes;
// `s` whole when it has at most `max_bytes` bytes; else its first bytes (cut
// at a UTF-8 boundary) and "… (N bytes in all)".
std::string ShownText(std::string_view s, size_t max_bytes = kMaxShownBytes);
// The longest prefix of `s` of at most `max_bytes` bytes that ends on a
// UTF-8 sequence boundary (a label cut to the room it has).
std::string_view Utf8Prefix(std::string_view s, size_t max_bytes);
// Utf8Prefix and "…" when it cut (a drawn label).
std::string FitLabel(std::string_view s, size_t max_bytes);

}  // namespace aiprof

#endif  // AIPROF_SRC_RENDER_ESCAPE_H_
