// A result as a document: what a result says, without how any format shows
// it. One function per result builds a Document from the result's struct
// (e.g. ClusterToDocument); the renderers (renderers.h) write any document
// as text, Markdown, HTML, JSON, YAML or CSV and know nothing of analyses.
//
//   Document
//   └── Section (key, title)            nested sections allowed
//       ├── KeyValues  key/label/value with a unit
//       ├── Table      typed columns (key, label, unit), typed cells
//       ├── Series     x/y points with units (a chart)
//       ├── Finding    title, severity, impact as a share of a named time
//       │              base, evidence as key/values
//       ├── Paragraph  a short sentence of plain text
//       ├── List       items of prose, each with a remark and detail lines
//       ├── Chart      a drawn chart (SVG from svg_chart.h) with its data as
//       │              a table: HTML draws it, other formats show the table
//       └── RawHtml    pre-rendered HTML/SVG (an embedded view), escaped by
//                      whoever built it; other formats show its text
//
// Presentation hints a renderer may use or ignore: KeyValues::cards (the
// HTML page shows them as headline cards), Table::sortable (HTML: click a
// column to sort), Table::html_fold (HTML: folded under a summary). A top-level section's key is its HTML id (an
// anchor).
//
// Numbers stay raw (nanoseconds, bytes, fractions) with a Unit; formatting
// them for people is the renderers' job (units.h FormatQuantity). All text is
// plain and untrusted: every renderer escapes it for its format.
//
// CSV: one table, the document's `csv` when set, else its first table.
//
// JSON and YAML: a result with a published schema keeps its machine form
// (`machine` as a Tree, or `machine_json` as the text its schema writer
// produced), which the JSON/YAML renderers write as is, so its output stays
// byte-identical; a document without one gets a generic form from its
// sections (DocumentToTree).
#ifndef AIPROF_SRC_RENDER_DOCUMENT_H_
#define AIPROF_SRC_RENDER_DOCUMENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "src/render/tree.h"
#include "src/render/units.h"

namespace aiprof::render {

// A typed value: null, bool, integer, number or string.
class Value {
 public:
  enum class Kind { kNull, kBool, kInt, kNumber, kString };

  Value() = default;
  static Value Null() { return Value(); }
  static Value Bool(bool b);
  static Value Int(int64_t i);
  static Value Number(double d);  // NaN and infinities are null in machine output
  static Value String(std::string s);
  // This cell's own unit, for a column whose rows differ (e.g. a metric per
  // row); cells without one take their column's.
  Value In(Unit unit) &&;

  Kind kind() const { return kind_; }
  bool boolean() const { return bool_; }
  int64_t integer() const { return int_; }
  double number() const { return kind_ == Kind::kInt ? static_cast<double>(int_) : number_; }
  const std::string& str() const { return str_; }
  const std::optional<Unit>& unit() const { return unit_; }

 private:
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  int64_t int_ = 0;
  double number_ = 0;
  std::string str_;
  std::optional<Unit> unit_;
};

struct KeyValue {
  std::string key;    // machine name: "wall_time_ns"
  std::string label;  // for people: "Wall time"
  Value value;
  Unit unit = Unit::kNone;
  std::string detail = {};  // a remark on the value: "mean ± sd over 6 steps" (may be empty)
};

struct KeyValues {
  std::vector<KeyValue> items;
  bool cards = false;  // headline figures: HTML draws each as a card
};

struct Column {
  std::string key;    // "total_ns"
  std::string label;  // "Total"
  Unit unit = Unit::kNone;
  // HTML: a column of prose (a verdict's reason) shown under its row, across
  // the table, where a cell beside a dozen figures got a few words a line
  // (validate's "why": 60 px, 8 lines a row). Not in a sortable table, whose
  // rows move alone. The other formats show it as any column.
  bool html_below = false;
};

struct Table {
  std::string key;    // machine name; CSV picks a table by it
  std::string title;  // may be empty
  std::vector<Column> columns;
  std::vector<std::vector<Value>> rows;  // each row has one cell per column
  std::string note;   // shown under the table (e.g. "12 more rows not shown")
  bool sortable = false;  // HTML: a click on a column sorts by it
  // HTML: the table folded under this summary line, for a table that only
  // repeats what the page draws above it (the attribution tree's rows);
  // "" shows it open. The other formats show it as any table.
  std::string html_fold = {};
};

struct Series {
  std::string key;
  std::string title;
  std::string x_label, y_label;
  Unit x_unit = Unit::kNone, y_unit = Unit::kNone;
  std::vector<std::pair<double, double>> points;
};

enum class Severity { kInfo, kLow, kMedium, kHigh };

struct Finding {
  std::string key;    // e.g. the rule id
  std::string title;  // one line
  Severity severity = Severity::kInfo;
  std::optional<double> impact;  // fraction of `impact_base`
  std::string impact_base;       // "step time", "wall time": what the share is of
  std::string detail;            // a short paragraph (may be empty)
  std::vector<KeyValue> evidence;
};

struct Paragraph {
  std::string text;
};

// A list of prose items (root causes with their evidence lines, reasons a
// fix was left out): what a table cannot show readably, one long sentence
// per item. `note` is a remark on the item (shown set apart: "[...]",
// italics); `details` are sub-items.
struct ListItem {
  std::string text;
  std::string note;
  std::vector<std::string> details;
};

struct List {
  std::string key;
  std::string title;  // may be empty
  std::vector<ListItem> items;
};

// A chart drawn by its builder (svg_chart.h, every label escaped there) and
// the figures it draws as a table: the HTML renderer shows the drawing with
// the table folded under it; the other formats show the table.
struct Chart {
  std::string key;
  std::string svg;
  Table data;
};

// Pre-rendered HTML or SVG for the HTML renderer (its builder escaped every
// trace string in it); the other formats show `text` instead.
struct RawHtml {
  std::string html;
  std::string text;
};

using Block = std::variant<KeyValues, Table, Series, Finding, Paragraph, List, Chart, RawHtml>;

struct Section {
  std::string key;    // machine name
  std::string title;  // heading for people (may be empty: no heading)
  std::vector<Block> blocks;
  std::vector<Section> sections;

  // Appends a block and returns it (for building in place).
  template <typename T>
  T& Add(T block) {
    blocks.emplace_back(std::move(block));
    return std::get<T>(blocks.back());
  }
  Section& AddSection(std::string section_key, std::string section_title);
};

struct Document {
  std::string key;    // "cluster", "validation": names the result
  std::string title;  // the page / top heading
  std::string generator;  // "aiprof cluster reduce" (HTML meta)
  std::vector<Section> sections;
  // The published machine form, when the result has a schema: a Tree (JSON
  // and YAML written from it as is), or the exact JSON text of an existing
  // schema writer (`machine_json`, JSON only: such a document offers no YAML).
  // Without either the renderers derive one (DocumentToTree).
  std::optional<Tree> machine;
  std::string machine_json;
  // The table CSV writes, when the document's own tables are not one table
  // (whatif: a per-step table per scenario becomes one with a scenario
  // column): CSV's machine form, as `machine` is JSON's. Not shown in the
  // other formats. Without it CSV writes the document's first table.
  std::optional<Table> csv;

  Section& AddSection(std::string section_key, std::string section_title);
};

// The generic machine form of a document without `machine`:
// {"document": key, "title": ..., "sections": {key: {"title":..., "blocks": [...], "sections": {...}}}}
// Tables become lists of objects keyed by column key; units are listed once
// per table ("units": {column: unit}) and per key/value.
Tree DocumentToTree(const Document& doc);

// Helpers for builders.
std::string_view SeverityName(Severity s);  // "info", "low", "medium", "high"

}  // namespace aiprof::render

#endif  // AIPROF_SRC_RENDER_DOCUMENT_H_
