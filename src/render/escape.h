// Escaping for every output format. Trace content is untrusted: names,
// categories and args go through these before they reach a report.
#ifndef AIPROF_SRC_RENDER_ESCAPE_H_
#define AIPROF_SRC_RENDER_ESCAPE_H_

#include <string>
#include <string_view>

namespace aiprof {

// JSON string body (without quotes); invalid UTF-8 bytes become U+FFFD.
void AppendJsonEscaped(std::string* out, std::string_view s);
std::string JsonString(std::string_view s);  // with quotes
// One CSV field (RFC 4180 quoting); a leading = + - @ tab or CR is prefixed
// with ' so spreadsheets do not run it as a formula.
std::string CsvField(std::string_view s);
// HTML text or attribute value: & < > " ' become entities; invalid UTF-8
// becomes U+FFFD.
std::string HtmlEscape(std::string_view s);
// Markdown inline text: Markdown punctuation is backslash-escaped, < > & become
// entities (renderers pass raw HTML through), line breaks become spaces.
std::string MarkdownEscape(std::string_view s);
// Text for a terminal: control characters and invalid UTF-8 shown as \xNN.
std::string TerminalSafe(std::string_view s);

}  // namespace aiprof

#endif  // AIPROF_SRC_RENDER_ESCAPE_H_
