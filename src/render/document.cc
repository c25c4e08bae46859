#include "src/render/document.h"

namespace aiprof::render {

Value Value::Bool(bool b) {
  Value v;
  v.kind_ = Kind::kBool;
  v.bool_ = b;
  return v;
}

Value Value::Int(int64_t i) {
  Value v;
  v.kind_ = Kind::kInt;
  v.int_ = i;
  return v;
}

Value Value::Number(double d) {
  Value v;
  v.kind_ = Kind::kNumber;
  v.number_ = d;
  return v;
}

Value Value::String(std::string s) {
  Value v;
  v.kind_ = Kind::kString;
  v.str_ = std::move(s);
  return v;
}

Value Value::In(Unit unit) && {
  unit_ = unit;
  return std::move(*this);
}

Section& Section::AddSection(std::string section_key, std::string section_title) {
  sections.push_back(Section{std::move(section_key), std::move(section_title), {}, {}});
  return sections.back();
}

Section& Document::AddSection(std::string section_key, std::string section_title) {
  sections.push_back(Section{std::move(section_key), std::move(section_title), {}, {}});
  return sections.back();
}

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kLow: return "low";
    case Severity::kMedium: return "medium";
    case Severity::kHigh: return "high";
  }
  return "info";
}

namespace {

Tree ValueTree(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull: return Tree::Null();
    case Value::Kind::kBool: return Tree::Bool(v.boolean());
    case Value::Kind::kInt: return Tree::Integer(v.integer());
    case Value::Kind::kNumber: return Tree::Number(v.number());
    case Value::Kind::kString: return Tree::String(v.str());
  }
  return Tree::Null();
}

Tree KeyValuesTree(const std::vector<KeyValue>& items) {
  Tree map = Tree::Map();
  for (const KeyValue& kv : items) {
    Tree& entry = map.Set(kv.key, Tree::Map());
    entry.Set("label", Tree::String(kv.label));
    entry.Set("value", ValueTree(kv.value));
    if (kv.unit != Unit::kNone) entry.Set("unit", Tree::String(UnitName(kv.unit)));
    if (!kv.detail.empty()) entry.Set("detail", Tree::String(kv.detail));
  }
  return map;
}

Tree TableTree(const Table& t) {
  Tree out = Tree::Map();
  out.Set("type", Tree::String("table"));
  out.Set("key", Tree::String(t.key));
  if (!t.title.empty()) out.Set("title", Tree::String(t.title));
  Tree& units = out.Set("units", Tree::Map());
  for (const Column& c : t.columns) {
    if (c.unit != Unit::kNone) units.Set(c.key, Tree::String(UnitName(c.unit)));
  }
  Tree& rows = out.Set("rows", Tree::List());
  for (const std::vector<Value>& row : t.rows) {
    Tree& r = rows.Push(Tree::Map());
    for (size_t i = 0; i < t.columns.size() && i < row.size(); ++i) {
      const Value& v = row[i];
      if (!v.unit()) {
        r.Set(t.columns[i].key, ValueTree(v));
        continue;
      }
      Tree& cell = r.Set(t.columns[i].key, Tree::Map());
      cell.Set("value", ValueTree(v));
      cell.Set("unit", Tree::String(UnitName(*v.unit())));
    }
  }
  if (!t.note.empty()) out.Set("note", Tree::String(t.note));
  return out;
}

Tree BlockTree(const Block& block) {
  if (const auto* kv = std::get_if<KeyValues>(&block)) {
    Tree out = Tree::Map();
    out.Set("type", Tree::String("values"));
    out.Set("values", KeyValuesTree(kv->items));
    return out;
  }
  if (const auto* t = std::get_if<Table>(&block)) return TableTree(*t);
  if (const auto* s = std::get_if<Series>(&block)) {
    Tree out = Tree::Map();
    out.Set("type", Tree::String("series"));
    out.Set("key", Tree::String(s->key));
    out.Set("title", Tree::String(s->title));
    out.Set("x_unit", Tree::String(UnitName(s->x_unit)));
    out.Set("y_unit", Tree::String(UnitName(s->y_unit)));
    Tree& points = out.Set("points", Tree::List());
    for (const auto& [x, y] : s->points) {
      Tree& p = points.Push(Tree::List());
      p.Push(Tree::Number(x));
      p.Push(Tree::Number(y));
    }
    return out;
  }
  if (const auto* f = std::get_if<Finding>(&block)) {
    Tree out = Tree::Map();
    out.Set("type", Tree::String("finding"));
    out.Set("key", Tree::String(f->key));
    out.Set("title", Tree::String(f->title));
    out.Set("severity", Tree::String(SeverityName(f->severity)));
    out.Set("impact", f->impact ? Tree::Number(*f->impact) : Tree::Null());
    if (!f->impact_base.empty()) out.Set("impact_base", Tree::String(f->impact_base));
    if (!f->detail.empty()) out.Set("detail", Tree::String(f->detail));
    out.Set("evidence", KeyValuesTree(f->evidence));
    return out;
  }
  if (const auto* p = std::get_if<Paragraph>(&block)) {
    Tree out = Tree::Map();
    out.Set("type", Tree::String("text"));
    out.Set("text", Tree::String(p->text));
    return out;
  }
  if (const auto* l = std::get_if<List>(&block)) {
    Tree out = Tree::Map();
    out.Set("type", Tree::String("list"));
    out.Set("key", Tree::String(l->key));
    if (!l->title.empty()) out.Set("title", Tree::String(l->title));
    Tree& items = out.Set("items", Tree::List());
    for (const ListItem& i : l->items) {
      Tree& item = items.Push(Tree::Map());
      item.Set("text", Tree::String(i.text));
      if (!i.note.empty()) item.Set("note", Tree::String(i.note));
      if (!i.details.empty()) {
        Tree& details = item.Set("details", Tree::List());
        for (const std::string& d : i.details) details.Push(Tree::String(d));
      }
    }
    return out;
  }
  if (const auto* c = std::get_if<Chart>(&block)) {
    Tree out = Tree::Map();
    out.Set("type", Tree::String("chart"));
    out.Set("key", Tree::String(c->key));
    out.Set("data", TableTree(c->data));
    return out;
  }
  const auto& raw = std::get<RawHtml>(block);
  Tree out = Tree::Map();
  out.Set("type", Tree::String("text"));
  out.Set("text", Tree::String(raw.text));
  return out;
}

Tree SectionTree(const Section& s) {
  Tree out = Tree::Map();
  if (!s.title.empty()) out.Set("title", Tree::String(s.title));
  Tree& blocks = out.Set("blocks", Tree::List());
  for (const Block& b : s.blocks) blocks.Push(BlockTree(b));
  if (!s.sections.empty()) {
    Tree& sub = out.Set("sections", Tree::Map());
    for (const Section& c : s.sections) sub.Set(c.key, SectionTree(c));
  }
  return out;
}

}  // namespace

Tree DocumentToTree(const Document& doc) {
  Tree out = Tree::Map();
  out.Set("document", Tree::String(doc.key));
  out.Set("title", Tree::String(doc.title));
  Tree& sections = out.Set("sections", Tree::Map());
  for (const Section& s : doc.sections) sections.Set(s.key, SectionTree(s));
  return out;
}

}  // namespace aiprof::render
