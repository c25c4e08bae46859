// One renderer per output format over documents (document.h). Renderers know
// nothing of analyses: they walk sections and blocks, format numbers by
// their unit (units.h) and escape every string for their format
// (escape.h). A new format is one renderer here plus one line in
// RenderDocument.
#ifndef AIPROF_SRC_RENDER_RENDERERS_H_
#define AIPROF_SRC_RENDER_RENDERERS_H_

#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"
#include "src/render/document.h"
#include "src/render/format.h"

namespace aiprof::render {

// The line width TextOptions take unless told: 0 (no limit) unless the CLI
// set one (`--width N`, or the terminal's width when it writes to one).
size_t DefaultTextWidth();
void SetDefaultTextWidth(size_t columns);

struct TextOptions {
  bool color = false;  // ANSI colours for headings and severities
  // Columns a line may take (0: no limit). A table's text cells are
  // shortened in the middle to kMaxTextCellColumns (escape.h) either way
  // (the last column's only with a width: it pads nothing);
  // to fit this width the widest text columns are shortened further, down
  // to kMinFittedColumns each (figures are never cut: a table of more
  // figures than fit stays wider), and prose (paragraphs, findings, list
  // items, key/values, notes) is broken at spaces into indented lines.
  size_t width = DefaultTextWidth();
};
// The narrowest a text column is shortened to fit TextOptions::width.
inline constexpr size_t kMinFittedColumns = 12;

// Terminal text: every string through TerminalSafe; tables padded to their
// shown cells only, long text cells shortened in the middle (TextOptions).
std::string RenderText(const Document& doc, const TextOptions& options = {});
// Markdown: every string through MarkdownEscape (tables as pipe tables).
std::string RenderMarkdown(const Document& doc);
// The HTML of the document's sections (no page around it): every string
// through HtmlEscape; RawHtml blocks as they are.
std::string RenderHtmlBody(const Document& doc);
// What a page adds to its document: the aiprof pages it shows in
// <iframe srcdoc> (RawHtml blocks), whose scripts the page's CSP must allow.
struct HtmlPageOptions {
  std::vector<std::string_view> embedded_pages;
};
// A whole page: RenderHtmlBody in the page shell (page.h) with the
// documents' style, the sort script when a table is sortable, and the CSP.
std::string RenderHtmlPage(const Document& doc, const HtmlPageOptions& options = {});
// JSON: the published machine form when the document has one, else
// DocumentToTree.
std::string RenderJson(const Document& doc);
// YAML: as JSON; a document whose machine form is only JSON text has none
// (error).
StatusOr<std::string> RenderYaml(const Document& doc);
// CSV (RFC 4180, every cell through CsvField: terminal controls shown as
// text): the table keyed `table_key`, or when "" the document's `csv` table
// if it has one, else its first table (error when there is none). Raw numbers, units in the header ("total (ns)").
StatusOr<std::string> RenderCsv(const Document& doc, std::string_view table_key = "");

// The formats every document offers: text, md, html, json, yaml (unless it
// has only machine JSON) and csv (when it has a table or a `csv` table).
std::vector<OutputFormat> DocumentFormats(const Document& doc);
// Renders `doc` as `format` (a name from DocumentFormats).
StatusOr<std::string> RenderDocument(const Document& doc, std::string_view format,
                                     const TextOptions& text = {});

}  // namespace aiprof::render

#endif  // AIPROF_SRC_RENDER_RENDERERS_H_
