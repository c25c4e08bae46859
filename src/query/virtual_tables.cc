#include "src/query/virtual_tables.h"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <new>
#include <string_view>
#include <type_traits>

#include "src/model/event_kind.h"
#include "src/model/slice_nesting.h"
#include "src/model/trace.h"
#include "src/render/escape.h"

namespace aiprof {
namespace {

std::atomic<uint64_t> g_rows_visited{0};

const char* ArgTypeName(ArgType type) {
  switch (type) {
    case ArgType::kInt: return "int";
    case ArgType::kUint: return "uint";
    case ArgType::kDouble: return "double";
    case ArgType::kString: return "string";
    case ArgType::kJson: return "json";
    case ArgType::kBool: return "bool";
    case ArgType::kNull: return "null";
  }
  return "unknown";
}

// Text, '' included (SQLite reads a null pointer as NULL).
void ResultText(sqlite3_context* ctx, std::string_view s) {
  if (s.empty()) return sqlite3_result_text(ctx, "", 0, SQLITE_STATIC);
  sqlite3_result_text64(ctx, s.data(), s.size(), SQLITE_STATIC, SQLITE_UTF8);
}

void ResultUint64(sqlite3_context* ctx, uint64_t v) {
  if (v <= static_cast<uint64_t>(INT64_MAX)) {
    sqlite3_result_int64(ctx, static_cast<int64_t>(v));
  } else {  // exact, as text: SQLite integers are signed 64-bit
    std::string text = std::to_string(v);
    sqlite3_result_text64(ctx, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  }
}

// The SQL column of one model column: its type follows the C++ type; enums
// become their names, ids equal to UINT32_MAX (kNoTrack, kNoSlice,
// kNoCallsite) become NULL, uint64 beyond INT64_MAX becomes exact text.
template <typename T>
QueryColumn ModelColumn(const Trace& trace, const ChunkedVector<T>& col, std::string name) {
  QueryColumn c;
  c.name = std::move(name);
  if constexpr (std::is_same_v<T, StringId>) {
    c.type = "TEXT";
    c.value = [&trace, &col](sqlite3_context* ctx, size_t row) {
      if (col[row].empty()) return sqlite3_result_null(ctx);  // an unset name or label
      ResultText(ctx, trace.Str(col[row]));
    };
  } else if constexpr (std::is_same_v<T, EventKind>) {
    c.type = "TEXT";
    c.value = [&col](sqlite3_context* ctx, size_t row) { ResultText(ctx, EventKindName(col[row])); };
  } else if constexpr (std::is_same_v<T, Layer>) {
    c.type = "TEXT";
    c.value = [&col](sqlite3_context* ctx, size_t row) { ResultText(ctx, LayerName(col[row])); };
  } else if constexpr (std::is_same_v<T, TrackKind>) {
    c.type = "TEXT";
    c.value = [&col](sqlite3_context* ctx, size_t row) { ResultText(ctx, TrackKindName(col[row])); };
  } else if constexpr (std::is_same_v<T, FrameKind>) {
    c.type = "TEXT";
    c.value = [&col](sqlite3_context* ctx, size_t row) { ResultText(ctx, FrameKindName(col[row])); };
  } else if constexpr (std::is_same_v<T, char>) {
    c.type = "TEXT";
    c.value = [&col](sqlite3_context* ctx, size_t row) {
      if (col[row] == 0) return sqlite3_result_null(ctx);
      ResultText(ctx, std::string_view(&col[row], 1));
    };
  } else if constexpr (std::is_floating_point_v<T>) {
    c.type = "REAL";
    c.value = [&col](sqlite3_context* ctx, size_t row) { sqlite3_result_double(ctx, col[row]); };
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    c.type = "INTEGER";
    c.value = [&col](sqlite3_context* ctx, size_t row) { ResultUint64(ctx, col[row]); };
  } else if constexpr (std::is_same_v<T, uint32_t> || kIsRowId<T>) {
    c.type = "INTEGER";
    c.value = [&col](sqlite3_context* ctx, size_t row) {
      if (col[row] == UINT32_MAX) return sqlite3_result_null(ctx);
      sqlite3_result_int64(ctx, col[row]);
    };
  } else {
    static_assert(std::is_integral_v<T>, "add a mapping for this column type");
    c.type = "INTEGER";
    c.value = [&col](sqlite3_context* ctx, size_t row) { sqlite3_result_int64(ctx, static_cast<int64_t>(col[row])); };
  }
  return c;
}

// Appends the columns of model table `t` in Table::Columns order, named by
// `names` (a column the list does not name yet is column_N).
template <typename Table>
void AddModelColumns(const Trace& trace, const Table& t, std::initializer_list<const char*> names, QueryTable* out) {
  size_t i = 0;
  Table::Columns(t, [&](const auto& column) {
    std::string name = i < names.size() ? names.begin()[i] : "column_" + std::to_string(i);
    out->columns.push_back(ModelColumn(trace, column, std::move(name)));
    ++i;
  });
}

std::unique_ptr<QueryTable> NewTable(std::string name, std::string doc, std::function<size_t()> rows) {
  auto t = std::make_unique<QueryTable>();
  t->name = std::move(name);
  t->doc = std::move(doc);
  t->rows = std::move(rows);
  t->columns.push_back(QueryColumn{"id", "INTEGER", "row index (0-based); other tables refer to it",
                                   [](sqlite3_context* ctx, size_t row) {
                                     sqlite3_result_int64(ctx, static_cast<int64_t>(row));
                                   }});
  return t;
}

void Document(QueryTable* t, std::initializer_list<std::pair<const char*, const char*>> docs) {
  for (const auto& [name, doc] : docs) {
    int i = t->ColumnIndex(name);
    if (i >= 0) t->columns[i].doc = doc;
  }
}

// The args of [begin, begin+count) as a JSON object text.
std::string ArgsJson(const Trace& trace, uint64_t begin, uint16_t count) {
  std::string out = "{";
  for (uint64_t a = begin; a < begin + count && a < trace.args.size(); ++a) {
    const Arg& arg = trace.args[a];
    if (a != begin) out += ',';
    out += JsonString(trace.Str(arg.key));
    out += ':';
    switch (arg.type) {
      case ArgType::kInt: out += std::to_string(arg.i); break;
      case ArgType::kUint: out += std::to_string(arg.u); break;
      case ArgType::kDouble: {
        if (!std::isfinite(arg.d)) {
          out += "null";
        } else {
          char buf[32];
          std::snprintf(buf, sizeof(buf), "%.17g", arg.d);
          out += buf;
        }
        break;
      }
      case ArgType::kString: out += JsonString(trace.Str(StringId{arg.str})); break;
      case ArgType::kJson: out += trace.Str(StringId{arg.str}); break;  // parsed as JSON on import
      case ArgType::kBool: out += arg.i != 0 ? "true" : "false"; break;
      case ArgType::kNull: out += "null"; break;
    }
  }
  out += '}';
  return out;
}

QueryColumn ArgsColumn(const Trace& trace, const ChunkedVector<uint64_t>& begin, const ChunkedVector<uint16_t>& count) {
  return QueryColumn{"args", "TEXT", "args as a JSON object text (use json_extract(args, '$.key'))",
                     [&trace, &begin, &count](sqlite3_context* ctx, size_t row) {
                       std::string json = ArgsJson(trace, begin[row], count[row]);
                       sqlite3_result_text64(ctx, json.data(), json.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
                     }};
}

// slices.parent and slices.self_ns, in one walk over each track's rows
// (src/model/slice_nesting.h, the flame graph's rule too). parent: the
// innermost open slice that encloses the slice; a slice that starts inside
// another and outlives it (counted at import as slice_partial_overlap) is
// not its child, and its parent is the next open slice out that encloses
// it, or none. self_ns: as aiprof summary's self time, each instant of the
// track to the innermost (latest started) slice open at it.
struct ParentColumn {
  std::vector<uint32_t> parent;
  std::vector<int64_t> self_ns;
  bool computed = false;
  void Compute(const SliceTable& s) {
    if (computed) return;
    parent.assign(s.size(), kNoSlice);
    self_ns.assign(s.size(), 0);
    for (size_t begin = 0; begin < s.size();) {
      size_t end = begin;
      while (end < s.size() && s.track[end] == s.track[begin]) ++end;
      SweepTrackNesting<uint32_t>(
          s, begin, end, [](size_t) { return true; },
          [this](size_t i, const uint32_t* up) {
            parent[i] = up ? *up : kNoSlice;
            return static_cast<uint32_t>(i);
          },
          [this](uint32_t i, int64_t ns) { self_ns[i] += ns; });
      begin = end;
    }
    computed = true;
  }
};

void AddTracks(const Trace& trace, std::vector<std::unique_ptr<QueryTable>>* out) {
  const TrackTable& t = trace.tracks;
  auto table = NewTable("tracks", "Threads, device streams, counter and span tracks", [&t] { return t.size(); });
  AddModelColumns(trace, t, {"kind", "layer", "pid", "tid", "pid_label", "tid_label", "name", "process_name",
                             "rank", "device"}, table.get());
  Document(table.get(), {{"kind", "thread, device_stream, counter or spans"},
                         {"layer", "application, framework, runtime, device, communication, host or unknown"},
                         {"pid", "numeric pid (device index on device tracks)"},
                         {"tid", "numeric tid (stream on device tracks)"},
                         {"pid_label", "pid as written when not numeric"},
                         {"tid_label", "tid as written when not numeric"},
                         {"name", "thread name, \"stream 7\" or counter name"},
                         {"rank", "rank, -1 when unknown"},
                         {"device", "device index, -1 for host tracks"}});
  out->push_back(std::move(table));
}

void AddSlices(const Trace& trace, std::vector<std::unique_ptr<QueryTable>>* out) {
  const SliceTable& s = trace.slices;
  auto table = NewTable("slices", "Complete events (ops, kernels, annotations), ordered by (track, ts, longest first)",
                        [&s] { return s.size(); });
  AddModelColumns(trace, s, {"ts", "dur", "name", "category", "kind", "track", "depth", "correlation", "arg_begin",
                             "arg_count"}, table.get());
  auto parent = std::make_shared<ParentColumn>();
  table->prepare = [parent, &s] { parent->Compute(s); };
  table->columns.push_back(QueryColumn{"parent", "INTEGER",
                                       "innermost slice of the track that encloses this one (usually one level up), "
                                       "NULL when none does",
                                       [parent](sqlite3_context* ctx, size_t row) {
                                         uint32_t p = parent->parent[row];
                                         if (p == kNoSlice) return sqlite3_result_null(ctx);
                                         sqlite3_result_int64(ctx, p);
                                       }});
  table->columns.push_back(ArgsColumn(trace, s.arg_begin, s.arg_count));
  table->columns.push_back(
      QueryColumn{"self_ns", "INTEGER",
                  "self time, integer ns: the track's time in which this is the innermost "
                  "(latest started) open slice, as aiprof summary's self time",
                  [parent](sqlite3_context* ctx, size_t row) { sqlite3_result_int64(ctx, parent->self_ns[row]); }});
  Document(table.get(), {{"ts", "start, integer ns (absolute, as the trace's clock)"},
                         {"dur", "duration, integer ns"},
                         {"kind", "cpu_op, kernel, memcpy, runtime, ... (EventKind)"},
                         {"track", "tracks.id"},
                         {"depth", "nesting depth on the track, 0 at top level"},
                         {"correlation", "launch/device correlation id, -1 when none"},
                         {"arg_begin", "first args.id of this slice"},
                         {"arg_count", "number of args"}});
  table->sorted_track = &s.track;
  table->sorted_ts = &s.ts_ns;
  out->push_back(std::move(table));
}

void AddArgs(const Trace& trace, std::vector<std::unique_ptr<QueryTable>>* out) {
  const ChunkedVector<Arg>& args = trace.args;
  auto table = NewTable("args", "Typed args of slices and instants (slices.arg_begin .. arg_begin+arg_count-1)",
                        [&args] { return args.size(); });
  table->columns.push_back(QueryColumn{"key", "TEXT", "arg name", [&trace, &args](sqlite3_context* ctx, size_t row) {
                                         ResultText(ctx, trace.Str(args[row].key));
                                       }});
  table->columns.push_back(QueryColumn{"type", "TEXT", "int, uint, double, string, json, bool or null",
                                       [&args](sqlite3_context* ctx, size_t row) {
                                         ResultText(ctx, ArgTypeName(args[row].type));
                                       }});
  table->columns.push_back(QueryColumn{
      "value", "", "the value in its SQL type (json as text, bool as 0/1)",
      [&trace, &args](sqlite3_context* ctx, size_t row) {
        const Arg& a = args[row];
        switch (a.type) {
          case ArgType::kInt: return sqlite3_result_int64(ctx, a.i);
          case ArgType::kUint: return ResultUint64(ctx, a.u);
          case ArgType::kDouble: return sqlite3_result_double(ctx, a.d);
          case ArgType::kString:
          case ArgType::kJson: return ResultText(ctx, trace.Str(StringId{a.str}));
          case ArgType::kBool: return sqlite3_result_int64(ctx, a.i != 0);
          case ArgType::kNull: return sqlite3_result_null(ctx);
        }
        sqlite3_result_null(ctx);
      }});
  out->push_back(std::move(table));
}

void AddInstants(const Trace& trace, std::vector<std::unique_ptr<QueryTable>>* out) {
  const InstantTable& t = trace.instants;
  auto table = NewTable("instants", "Instant events", [&t] { return t.size(); });
  AddModelColumns(trace, t, {"ts", "name", "category", "track", "scope", "arg_begin", "arg_count"}, table.get());
  table->columns.push_back(ArgsColumn(trace, t.arg_begin, t.arg_count));
  Document(table.get(), {{"ts", "integer ns"}, {"scope", "t thread, p process, g global"}, {"track", "tracks.id"}});
  out->push_back(std::move(table));
}

void AddSimpleTables(const Trace& trace, std::vector<std::unique_ptr<QueryTable>>* out) {
  {
    const CounterTable& t = trace.counters;
    auto table = NewTable("counters", "Counter samples (C events, memory totals per device)", [&t] { return t.size(); });
    AddModelColumns(trace, t, {"ts", "track", "value"}, table.get());
    Document(table.get(), {{"ts", "integer ns"}, {"track", "tracks.id of a counter track (its name is the counter)"}});
    out->push_back(std::move(table));
  }
  {
    const FlowTable& t = trace.flows;
    auto table = NewTable("flows", "Flows between slices (launch to kernel, s/t/f flow events)", [&t] { return t.size(); });
    AddModelColumns(trace, t, {"from_slice", "to_slice", "flow_id", "category"}, table.get());
    Document(table.get(), {{"from_slice", "slices.id"}, {"to_slice", "slices.id"},
                           {"flow_id", "flow id as written (text when beyond 2^63)"}});
    out->push_back(std::move(table));
  }
  {
    const StepTable& t = trace.steps;
    auto table = NewTable("steps", "Steps (ProfilerStep#N, else step annotations, else a periodic op pattern: trace metadata steps.from)", [&t] { return t.size(); });
    AddModelColumns(trace, t, {"name", "number", "ts", "dur", "track", "rank"}, table.get());
    Document(table.get(), {{"number", "N of ProfilerStep#N, -1 when unknown"}, {"ts", "integer ns"},
                           {"dur", "integer ns"}});
    out->push_back(std::move(table));
  }
  {
    const OpMetricTable& t = trace.op_metrics;
    auto table = NewTable("op_metrics", "Per-op figures that are not timeline events (Ascend PMU columns, op_statistic)",
                          [&t] { return t.size(); });
    AddModelColumns(trace, t, {"slice", "rank", "source", "op", "key", "value", "text"}, table.get());
    Document(table.get(), {{"slice", "slices.id the row was joined to, NULL for aggregate rows"},
                           {"value", "numeric value, NULL when the value is text"}});
    out->push_back(std::move(table));
  }
  {
    const StepBreakdownTable& t = trace.step_breakdown;
    auto table = NewTable("step_breakdown", "Step time breakdown as the profiler wrote it (step_trace_time.csv)",
                          [&t] { return t.size(); });
    AddModelColumns(trace, t, {"rank", "step", "source", "key", "value_ns"}, table.get());
    out->push_back(std::move(table));
  }
  {
    const CallsiteTable& t = trace.callsites;
    auto table = NewTable("stack_frames", "Call-site tree of stack samples: one row per (parent, frame, module)",
                          [&t] { return t.size(); });
    AddModelColumns(trace, t, {"parent", "depth", "frame", "module", "kind"}, table.get());
    Document(table.get(), {{"parent", "stack_frames.id, NULL for a root frame"},
                           {"kind", "native, python, kernel or unknown"}});
    out->push_back(std::move(table));
  }
  {
    const StackSampleTable& t = trace.samples;
    auto table = NewTable("samples", "Stack samples, ordered by (track, ts)", [&t] { return t.size(); });
    AddModelColumns(trace, t, {"ts", "track", "callsite", "weight_ns"}, table.get());
    Document(table.get(), {{"callsite", "stack_frames.id of the leaf frame, NULL without a stack"},
                           {"weight_ns", "time the sample stands for (sampling period)"}});
    table->sorted_track = &t.track;
    table->sorted_ts = &t.ts_ns;
    out->push_back(std::move(table));
  }
}

void AddMetadataAndDiagnostics(const Trace& trace, std::vector<std::unique_ptr<QueryTable>>* out) {
  auto meta = std::make_shared<std::vector<const std::pair<const std::string, std::string>*>>();
  for (const auto& entry : trace.metadata) meta->push_back(&entry);
  auto table = NewTable("metadata", "Facts about the run: rank, world size, device names, source format",
                        [meta] { return meta->size(); });
  table->columns.push_back(QueryColumn{"key", "TEXT", "", [meta](sqlite3_context* ctx, size_t row) {
                                         ResultText(ctx, (*meta)[row]->first);
                                       }});
  table->columns.push_back(QueryColumn{"value", "TEXT", "", [meta](sqlite3_context* ctx, size_t row) {
                                         ResultText(ctx, (*meta)[row]->second);
                                       }});
  out->push_back(std::move(table));

  auto diag = std::make_shared<std::vector<const std::pair<const std::string, DiagnosticEntry>*>>();
  for (const auto& entry : trace.diagnostics.entries()) diag->push_back(&entry);
  table = NewTable("diagnostics", "Import diagnostics: malformed records counted by kind", [diag] { return diag->size(); });
  table->columns.push_back(QueryColumn{"kind", "TEXT", "", [diag](sqlite3_context* ctx, size_t row) {
                                         ResultText(ctx, (*diag)[row]->first);
                                       }});
  table->columns.push_back(QueryColumn{"count", "INTEGER", "", [diag](sqlite3_context* ctx, size_t row) {
                                         ResultUint64(ctx, (*diag)[row]->second.count);
                                       }});
  table->columns.push_back(QueryColumn{"first_where", "TEXT", "file and place of the first one",
                                       [diag](sqlite3_context* ctx, size_t row) {
                                         ResultText(ctx, (*diag)[row]->second.first_where);
                                       }});
  table->columns.push_back(QueryColumn{"description", "TEXT", "", [diag](sqlite3_context* ctx, size_t row) {
                                         ResultText(ctx, (*diag)[row]->second.description);
                                       }});
  out->push_back(std::move(table));
}

// ---- The sqlite3_module over a QueryTable ----

struct VTab : sqlite3_vtab {
  QueryTable* table = nullptr;
};

struct Cursor : sqlite3_vtab_cursor {
  QueryTable* table = nullptr;
  std::vector<std::pair<size_t, size_t>> ranges;  // [begin, end) row ranges, ascending
  size_t range = 0;
  size_t row = 0;
};

// Verifies the (track, ts) order once and records each track's row range.
bool EnsureOrder(QueryTable* t) {
  if (t->order_checked) return t->order_ok;
  t->order_checked = true;
  t->track_ranges.clear();
  const auto& track = *t->sorted_track;
  const auto& ts = *t->sorted_ts;
  const size_t n = track.size();
  size_t begin = 0;
  for (size_t i = 1; i <= n; ++i) {
    if (i < n && track[i] == track[i - 1]) {
      if (ts[i] < ts[i - 1]) return t->order_ok = false;
      continue;
    }
    if (i < n && track[i] < track[i - 1]) return t->order_ok = false;
    t->track_ranges.push_back({track[begin], begin, i});
    begin = i;
  }
  return t->order_ok = true;
}

int Connect(sqlite3* db, void* aux, int, const char* const*, sqlite3_vtab** out, char** err) {
  auto* table = static_cast<QueryTable*>(aux);
  std::string ddl = "CREATE TABLE x(";
  for (size_t i = 0; i < table->columns.size(); ++i) {
    if (i) ddl += ", ";
    ddl += "\"" + table->columns[i].name + "\" " + table->columns[i].type;
  }
  ddl += ")";
  int rc = sqlite3_declare_vtab(db, ddl.c_str());
  if (rc != SQLITE_OK) {
    *err = sqlite3_mprintf("cannot declare %s: %s", table->name.c_str(), sqlite3_errmsg(db));
    return rc;
  }
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  auto* vtab = new (std::nothrow) VTab();
  if (!vtab) return SQLITE_NOMEM;
  vtab->table = table;
  *out = vtab;
  return SQLITE_OK;
}

int Disconnect(sqlite3_vtab* vtab) {
  delete static_cast<VTab*>(vtab);
  return SQLITE_OK;
}

char OpCode(unsigned char op) {
  switch (op) {
    case SQLITE_INDEX_CONSTRAINT_EQ: return '=';
    case SQLITE_INDEX_CONSTRAINT_GT: return '>';
    case SQLITE_INDEX_CONSTRAINT_GE: return 'g';
    case SQLITE_INDEX_CONSTRAINT_LT: return '<';
    case SQLITE_INDEX_CONSTRAINT_LE: return 'l';
    default: return 0;
  }
}

// idxStr holds one (column, op) pair per argv value: column 'i' id, 'k' track, 't' ts.
int BestIndex(sqlite3_vtab* vtab, sqlite3_index_info* info) {
  QueryTable* t = static_cast<VTab*>(vtab)->table;
  const bool sorted = t->sorted_track != nullptr;
  const int ts_col = sorted ? t->ColumnIndex("ts") : -2;
  const int track_col = sorted ? t->ColumnIndex("track") : -2;
  std::string plan;
  bool id_eq = false, id_range = false, track_eq = false, ts_range = false;
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    if (!c.usable) continue;
    const char op = OpCode(c.op);
    if (!op) continue;
    char column = 0;
    if (c.iColumn == 0 || c.iColumn == -1) column = 'i';
    else if (c.iColumn == ts_col) column = 't';
    else if (c.iColumn == track_col) column = 'k';
    if (!column) continue;
    plan += column;
    plan += op;
    info->aConstraintUsage[i].argvIndex = static_cast<int>(plan.size() / 2);
    info->aConstraintUsage[i].omit = 0;  // SQLite re-checks: pushdown may return a superset
    if (column == 'i') (op == '=' ? id_eq : id_range) = true;
    if (column == 'k' && op == '=') track_eq = true;
    if (column == 't') ts_range = true;
  }
  double rows = static_cast<double>(std::max<size_t>(t->rows(), 1));
  if (id_eq) {
    rows = 1;
    info->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
  } else {
    if (id_range) rows /= 4;
    if (track_eq) rows /= 10;
    if (ts_range) rows /= 10;
  }
  info->estimatedRows = static_cast<sqlite3_int64>(std::max(rows, 1.0));
  info->estimatedCost = std::max(rows, 1.0) + (plan.empty() ? 0 : 20);
  if (info->nOrderBy == 1 && (info->aOrderBy[0].iColumn == 0 || info->aOrderBy[0].iColumn == -1) &&
      !info->aOrderBy[0].desc) {
    info->orderByConsumed = 1;  // rows come out in id order
  }
  if (!plan.empty()) {
    info->idxStr = sqlite3_mprintf("%s", plan.c_str());
    if (!info->idxStr) return SQLITE_NOMEM;
    info->needToFreeIdxStr = 1;
  }
  return SQLITE_OK;
}

int Open(sqlite3_vtab* vtab, sqlite3_vtab_cursor** out) {
  auto* cursor = new (std::nothrow) Cursor();
  if (!cursor) return SQLITE_NOMEM;
  cursor->table = static_cast<VTab*>(vtab)->table;
  *out = cursor;
  return SQLITE_OK;
}

int Close(sqlite3_vtab_cursor* cursor) {
  delete static_cast<Cursor*>(cursor);
  return SQLITE_OK;
}

// Narrows the inclusive range [*lo, *hi] by `value op x`, to a superset of
// the rows SQLite will keep (it re-checks every row). Text and blob values
// do not narrow. A comparison with NULL holds for no row: the range is
// empty (a join on slices.parent looked up every top-level slice's NULL
// parent by scanning the whole table: 20 s on the ResNet50 trace).
void Narrow(sqlite3_value* value, char op, int64_t* lo, int64_t* hi) {
  int64_t floor_v, ceil_v;
  const int type = sqlite3_value_type(value);
  if (type == SQLITE_NULL) {
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    return;
  }
  if (type == SQLITE_INTEGER) {
    floor_v = ceil_v = sqlite3_value_int64(value);
  } else if (type == SQLITE_FLOAT) {
    double d = sqlite3_value_double(value);
    if (std::isnan(d)) return;
    constexpr double kMax = 9.2e18;  // inside int64
    floor_v = d <= -kMax ? INT64_MIN : d >= kMax ? INT64_MAX : static_cast<int64_t>(std::floor(d));
    ceil_v = d <= -kMax ? INT64_MIN : d >= kMax ? INT64_MAX : static_cast<int64_t>(std::ceil(d));
  } else {
    return;
  }
  switch (op) {
    case '=': *lo = std::max(*lo, floor_v); *hi = std::min(*hi, ceil_v); break;
    case '>':
    case 'g': *lo = std::max(*lo, floor_v); break;
    case '<':
    case 'l': *hi = std::min(*hi, ceil_v); break;
  }
  if (op == '>' && type == SQLITE_INTEGER) {
    if (floor_v == INT64_MAX) *hi = INT64_MIN;  // nothing is greater
    else *lo = std::max(*lo, floor_v + 1);
  }
  if (op == '<' && type == SQLITE_INTEGER) {
    if (ceil_v == INT64_MIN) *lo = INT64_MAX;
    else *hi = std::min(*hi, ceil_v - 1);
  }
}

// First row in [begin, end) whose ts is >= v (ts ascending there).
size_t LowerBound(const ChunkedVector<int64_t>& ts, size_t begin, size_t end, int64_t v) {
  while (begin < end) {
    size_t mid = begin + (end - begin) / 2;
    if (ts[mid] < v) begin = mid + 1;
    else end = mid;
  }
  return begin;
}

void PlanRanges(QueryTable* t, int64_t id_lo, int64_t id_hi, int64_t track_lo, int64_t track_hi, int64_t ts_lo,
                int64_t ts_hi, bool by_track, Cursor* cursor) {
  cursor->ranges.clear();
  const int64_t n = static_cast<int64_t>(t->rows());
  const size_t begin = static_cast<size_t>(std::max<int64_t>(id_lo, 0));
  const size_t end = static_cast<size_t>(std::max<int64_t>(std::min(id_hi, n - 1) + 1, 0));
  if (begin >= end || track_lo > track_hi || ts_lo > ts_hi) return;
  if (!by_track || !EnsureOrder(t)) {
    cursor->ranges.push_back({begin, end});
    return;
  }
  const auto& tracks = t->track_ranges;
  auto it = std::lower_bound(tracks.begin(), tracks.end(), track_lo,
                             [](const QueryTable::TrackRange& r, int64_t v) { return r.track < v; });
  for (; it != tracks.end() && it->track <= track_hi; ++it) {
    size_t b = std::max(it->begin, begin), e = std::min(it->end, end);
    if (b >= e) continue;
    if (ts_lo != INT64_MIN) b = LowerBound(*t->sorted_ts, b, e, ts_lo);
    if (ts_hi != INT64_MAX) e = LowerBound(*t->sorted_ts, b, e, ts_hi == INT64_MAX ? ts_hi : ts_hi + 1);
    if (b < e) cursor->ranges.push_back({b, e});
  }
}

int Filter(sqlite3_vtab_cursor* base, int, const char* plan, int argc, sqlite3_value** argv) {
  auto* cursor = static_cast<Cursor*>(base);
  QueryTable* t = cursor->table;
  try {
    if (t->prepare) t->prepare();
  } catch (const std::bad_alloc&) {
    return SQLITE_NOMEM;
  }
  int64_t id_lo = INT64_MIN, id_hi = INT64_MAX, track_lo = INT64_MIN, track_hi = INT64_MAX;
  int64_t ts_lo = INT64_MIN, ts_hi = INT64_MAX;
  bool by_track = false;
  for (int i = 0; plan && i < argc && plan[2 * i]; ++i) {
    const char column = plan[2 * i], op = plan[2 * i + 1];
    if (column == 'i') Narrow(argv[i], op, &id_lo, &id_hi);
    if (column == 'k') Narrow(argv[i], op, &track_lo, &track_hi);
    if (column == 't') Narrow(argv[i], op, &ts_lo, &ts_hi);
    by_track |= column != 'i';
  }
  try {
    PlanRanges(t, id_lo, id_hi, track_lo, track_hi, ts_lo, ts_hi, by_track, cursor);
  } catch (const std::bad_alloc&) {
    return SQLITE_NOMEM;
  }
  cursor->range = 0;
  cursor->row = cursor->ranges.empty() ? 0 : cursor->ranges[0].first;
  if (!cursor->ranges.empty()) g_rows_visited.fetch_add(1, std::memory_order_relaxed);
  return SQLITE_OK;
}

int Next(sqlite3_vtab_cursor* base) {
  auto* cursor = static_cast<Cursor*>(base);
  if (++cursor->row >= cursor->ranges[cursor->range].second) {
    if (++cursor->range < cursor->ranges.size()) cursor->row = cursor->ranges[cursor->range].first;
  }
  if (cursor->range < cursor->ranges.size()) g_rows_visited.fetch_add(1, std::memory_order_relaxed);
  return SQLITE_OK;
}

int Eof(sqlite3_vtab_cursor* base) {
  auto* cursor = static_cast<Cursor*>(base);
  return cursor->range >= cursor->ranges.size();
}

int Column(sqlite3_vtab_cursor* base, sqlite3_context* ctx, int column) {
  auto* cursor = static_cast<Cursor*>(base);
  cursor->table->columns[column].value(ctx, cursor->row);
  return SQLITE_OK;
}

int Rowid(sqlite3_vtab_cursor* base, sqlite3_int64* rowid) {
  *rowid = static_cast<sqlite3_int64>(static_cast<Cursor*>(base)->row);
  return SQLITE_OK;
}

// Eponymous-only (xCreate null) and read-only (xUpdate null).
const sqlite3_module* Module() {
  static const sqlite3_module module = [] {
    sqlite3_module m;
    std::memset(&m, 0, sizeof(m));
    m.xConnect = Connect;
    m.xBestIndex = BestIndex;
    m.xDisconnect = Disconnect;
    m.xOpen = Open;
    m.xClose = Close;
    m.xFilter = Filter;
    m.xNext = Next;
    m.xEof = Eof;
    m.xColumn = Column;
    m.xRowid = Rowid;
    return m;
  }();
  return &module;
}

}  // namespace

int QueryTable::ColumnIndex(const std::string& column) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == column) return static_cast<int>(i);
  }
  return -1;
}

std::vector<std::unique_ptr<QueryTable>> BuildQueryTables(const Trace& trace) {
  std::vector<std::unique_ptr<QueryTable>> out;
  AddSlices(trace, &out);
  AddArgs(trace, &out);
  AddTracks(trace, &out);
  AddInstants(trace, &out);
  AddSimpleTables(trace, &out);
  AddMetadataAndDiagnostics(trace, &out);
  return out;
}

Status RegisterQueryTables(sqlite3* db, const std::vector<std::unique_ptr<QueryTable>>& tables) {
  for (const auto& table : tables) {
    int rc = sqlite3_create_module_v2(db, table->name.c_str(), Module(), table.get(), nullptr);
    if (rc != SQLITE_OK) return ErrStatus("cannot register table " + table->name + ": " + sqlite3_errmsg(db));
  }
  return OkStatus();
}

uint64_t QueryRowsVisited() { return g_rows_visited.load(std::memory_order_relaxed); }
void ResetQueryRowsVisited() { g_rows_visited.store(0, std::memory_order_relaxed); }

}  // namespace aiprof
