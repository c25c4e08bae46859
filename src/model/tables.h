// The model's tables, declared once.
//
// Each table is one X-macro list below: AIPROF_<TABLE>_COLUMNS(C) calls
// C(type, name, ref, export) for every column, in the order the columns are
// stored in .aiprof files. From that one list come
//   - the table struct: a ChunkedVector<type> per column;
//   - Table::Row and Table::Append(row): one row, every column (the builder's
//     methods append through it, so a new column cannot be forgotten there);
//   - Table::Columns(t, f): f(column) per column (native file, merge, query,
//     permutations);
//   - Table::ColumnsWithInfo(t, f): f(ColumnInfo, column), with the column's
//     name, what its values refer to (`ref`: the native reader checks every
//     reference generically) and whether Python's tables export it;
//   - Table::kName, Table::kColumnCount.
// A new column is one line in its list (and a bump of kNativeVersion, since
// the file's layout follows the lists).
//
// `ref` is a ColumnRef: kString (a StringId), kTrack / kSlice / kCallsite
// (a row of that table), kOptional* (the same or UINT32_MAX: kNoSlice,
// kNoCallsite), kEarlierRow (a row of the same table before this one, or
// UINT32_MAX), kNone. `export` is kPython when aiprof.Trace's tables
// (python/analysis_module.cc) carry the column, else kInternal.
#ifndef AIPROF_SRC_MODEL_TABLES_H_
#define AIPROF_SRC_MODEL_TABLES_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "src/base/chunked_vector.h"
#include "src/base/string_pool.h"
#include "src/model/event_kind.h"

namespace aiprof {

// A row of one of the model's tables, typed by the table: a TrackId cannot
// be passed where a SliceId is expected, nor a bare integer stored in a
// column that refers to tracks, without saying so (TrackId{i}). Reading one
// gives its row index (implicitly: `t.tracks.kind[t.slices.track[i]]`), so
// indexing and comparing with the kNo* markers read as before.
template <typename Table>
class RowId {
 public:
  constexpr RowId() = default;
  constexpr explicit RowId(uint32_t raw) : raw_(raw) {}
  constexpr operator uint32_t() const { return raw_; }  // NOLINT: the row index, for indexing
  constexpr uint32_t raw() const { return raw_; }

 private:
  uint32_t raw_ = 0;
};
struct TrackTable;
struct SliceTable;
struct CallsiteTable;
using TrackId = RowId<TrackTable>;
using SliceId = RowId<SliceTable>;
using CallsiteId = RowId<CallsiteTable>;
static_assert(sizeof(TrackId) == sizeof(uint32_t) && std::is_trivially_copyable_v<TrackId>);

template <typename T>
inline constexpr bool kIsRowId = false;
template <typename Table>
inline constexpr bool kIsRowId<RowId<Table>> = true;

inline constexpr uint32_t kNoTrack = UINT32_MAX;
inline constexpr uint32_t kNoSlice = UINT32_MAX;
inline constexpr int64_t kNoCorrelation = -1;
inline constexpr int32_t kNoRank = -1;
inline constexpr int32_t kHostDevice = -1;
inline constexpr uint32_t kNoCallsite = UINT32_MAX;

enum class Layer : uint8_t {
  kUnknown = 0,
  kApplication,
  kFramework,
  kRuntime,
  kDevice,
  kCommunication,
  kHost,
};
const char* LayerName(Layer layer);

enum class TrackKind : uint8_t { kThread = 0, kDeviceStream, kCounter, kSpans };
const char* TrackKindName(TrackKind kind);

// What a stack frame is: native code, an interpreter's frame (Python), a
// kernel-mode frame, or unknown (an address that did not symbolise).
enum class FrameKind : uint8_t { kUnknown = 0, kNative, kPython, kKernel };
const char* FrameKindName(FrameKind kind);

// The model's enums: how many values, and each value's name (Python's
// categorical columns, SQL, the native reader's range check).
template <typename E>
struct EnumInfo;
template <>
struct EnumInfo<EventKind> {
  static constexpr int kCount = static_cast<int>(EventKind::kTraceSpan) + 1;
  static const char* Name(EventKind v) { return EventKindName(v); }
};
template <>
struct EnumInfo<Layer> {
  static constexpr int kCount = static_cast<int>(Layer::kHost) + 1;
  static const char* Name(Layer v) { return LayerName(v); }
};
template <>
struct EnumInfo<TrackKind> {
  static constexpr int kCount = static_cast<int>(TrackKind::kSpans) + 1;
  static const char* Name(TrackKind v) { return TrackKindName(v); }
};
template <>
struct EnumInfo<FrameKind> {
  static constexpr int kCount = static_cast<int>(FrameKind::kKernel) + 1;
  static const char* Name(FrameKind v) { return FrameKindName(v); }
};

// What a column's values refer to.
enum class ColumnRef : uint8_t {
  kNone,
  kString,
  kTrack,
  kSlice,
  kOptionalSlice,
  kOptionalCallsite,
  kEarlierRow,
};
enum class ColumnExport : uint8_t { kInternal, kPython };

struct ColumnInfo {
  const char* name;
  ColumnRef ref;
  ColumnExport exported;
};

// --- The tables ------------------------------------------------------------

#define AIPROF_TRACK_COLUMNS(C)                                                              \
  C(TrackKind, kind, kNone, kPython)                                                         \
  C(Layer, layer, kNone, kPython)                                                            \
  C(int64_t, pid, kNone, kPython)         /* numeric pid (device index on GPU tracks) */     \
  C(int64_t, tid, kNone, kPython)         /* numeric tid (stream on GPU tracks) */           \
  C(StringId, pid_label, kString, kInternal) /* textual pid as written when not numeric */   \
  C(StringId, tid_label, kString, kInternal)                                                 \
  C(StringId, name, kString, kPython)     /* thread_name / "stream 7" / counter name */      \
  C(StringId, process_name, kString, kPython) /* process_name metadata */                    \
  C(int32_t, rank, kNone, kPython)        /* kNoRank when unknown */                         \
  C(int32_t, device, kNone, kPython)      /* kHostDevice for host tracks */

#define AIPROF_SLICE_COLUMNS(C)                                                              \
  C(int64_t, ts_ns, kNone, kPython)                                                          \
  C(int64_t, dur_ns, kNone, kPython)                                                         \
  C(StringId, name, kString, kPython)                                                        \
  C(StringId, category, kString, kPython)                                                    \
  C(EventKind, kind, kNone, kPython)                                                         \
  C(TrackId, track, kTrack, kPython)                                                         \
  C(uint16_t, depth, kNone, kPython)                                                         \
  C(int64_t, correlation, kNone, kPython) /* launch<->device correlation, or kNoCorrelation */ \
  C(uint64_t, arg_begin, kNone, kInternal) /* into Trace::args */                            \
  C(uint16_t, arg_count, kNone, kInternal)

#define AIPROF_INSTANT_COLUMNS(C)                                                            \
  C(int64_t, ts_ns, kNone, kInternal)                                                        \
  C(StringId, name, kString, kInternal)                                                      \
  C(StringId, category, kString, kInternal)                                                  \
  C(TrackId, track, kTrack, kInternal)                                                       \
  C(char, scope, kNone, kInternal) /* 't' thread, 'p' process, 'g' global */                 \
  C(uint64_t, arg_begin, kNone, kInternal)                                                   \
  C(uint16_t, arg_count, kNone, kInternal)

#define AIPROF_COUNTER_COLUMNS(C)                                                            \
  C(int64_t, ts_ns, kNone, kPython)                                                          \
  C(TrackId, track, kTrack, kPython) /* a kCounter track */                                 \
  C(double, value, kNone, kPython)

#define AIPROF_FLOW_COLUMNS(C)                                                               \
  C(SliceId, from_slice, kSlice, kPython)                                                   \
  C(SliceId, to_slice, kSlice, kPython)                                                     \
  C(uint64_t, flow_id, kNone, kPython)      /* exact, may exceed 2^53 */                     \
  C(StringId, category, kString, kPython)   /* "ac2g", "correlation", "fwdbwd", ... */

#define AIPROF_STEP_COLUMNS(C)                                                               \
  C(StringId, name, kString, kPython)                                                        \
  C(int64_t, number, kNone, kPython) /* N of ProfilerStep#N / "## step N ##", or -1 */       \
  C(int64_t, ts_ns, kNone, kPython)                                                          \
  C(int64_t, dur_ns, kNone, kPython)                                                         \
  C(TrackId, track, kTrack, kPython)                                                         \
  C(int32_t, rank, kNone, kPython)

// Per-op figures that are not timeline events: PMU columns of Ascend's
// kernel_details.csv / op_summary, op_statistic rows, communication.json
// times. One row per (op, key); `slice` is the finalized slice the row was
// joined to, or kNoSlice for aggregate rows (op_statistic, communication).
#define AIPROF_OP_METRIC_COLUMNS(C)                                                          \
  C(SliceId, slice, kOptionalSlice, kInternal)                                              \
  C(int32_t, rank, kNone, kInternal)                                                         \
  C(StringId, source, kString, kInternal) /* file the row came from, e.g. "kernel_details.csv" */ \
  C(StringId, op, kString, kInternal)     /* op name (or op type for aggregate rows) */      \
  C(StringId, key, kString, kInternal)    /* column name as written, e.g. "aic_mac_ratio" */ \
  C(double, value, kNone, kInternal)      /* numeric value; NaN when the value is text */    \
  C(StringId, text, kString, kInternal)   /* text value, empty when numeric */

// A step's time breakdown as a profiler wrote it (Ascend step_trace_time.csv:
// Computing, Communication(Not Overlapped), Overlapped, Free, Preparing...),
// one row per (rank, step, key).
#define AIPROF_STEP_BREAKDOWN_COLUMNS(C)                                                     \
  C(int32_t, rank, kNone, kInternal)                                                         \
  C(int64_t, step, kNone, kInternal)      /* step number, -1 when unknown */                 \
  C(StringId, source, kString, kInternal) /* file name */                                    \
  C(StringId, key, kString, kInternal)    /* column name as written */                       \
  C(int64_t, value_ns, kNone, kInternal)

// The call-site tree of stack samples (Perfetto's stack_profile_callsite):
// one row per distinct (parent, frame, module); a sample names its leaf, and
// the stack is the chain of parents to a root (parent == kNoCallsite).
// Parents always precede their children.
#define AIPROF_CALLSITE_COLUMNS(C)                                                           \
  C(CallsiteId, parent, kEarlierRow, kInternal) /* kNoCallsite for a root frame */             \
  C(uint32_t, depth, kNone, kInternal)        /* 0 for a root */                             \
  C(StringId, frame, kString, kInternal)  /* function name, or "0x7f..." when unsymbolised */ \
  C(StringId, module, kString, kInternal) /* binary or library path, "[python]", "[kernel]" */ \
  C(FrameKind, kind, kNone, kInternal)

// Stack samples (perf_event CPU samples, Nsight Systems' sampling call
// chains): one row per sample, ordered by (track, ts) after Finalize().
#define AIPROF_STACK_SAMPLE_COLUMNS(C)                                                       \
  C(int64_t, ts_ns, kNone, kInternal)                                                        \
  C(TrackId, track, kTrack, kInternal)                    /* the sampled thread's track */   \
  C(CallsiteId, callsite, kOptionalCallsite, kInternal)     /* leaf frame (kNoCallsite: no stack) */ \
  C(int64_t, weight_ns, kNone, kInternal) /* time the sample stands for (the sampling period) */

// Duration statistics of the slices of each (category, name): an index of
// the slice table, written into .aiprof files so that op figures reload
// without a pass over every slice. Rows in first-seen order of the slices.
#define AIPROF_OP_STAT_COLUMNS(C)                                                            \
  C(StringId, category, kString, kInternal)                                                  \
  C(StringId, name, kString, kInternal)                                                      \
  C(uint64_t, count, kNone, kInternal)                                                       \
  C(int64_t, total_ns, kNone, kInternal) /* saturates at INT64_MAX */                        \
  C(int64_t, max_ns, kNone, kInternal)                                                       \
  C(double, p50_ns, kNone, kInternal)    /* exact, interpolated between closest ranks */     \
  C(double, p99_ns, kNone, kInternal)

// --- What each list generates ---------------------------------------------

#define AIPROF_COLUMN_FIELD_(type, name, ref, exported) ChunkedVector<type> name;
#define AIPROF_ROW_FIELD_(type, name, ref, exported) type name{};
#define AIPROF_APPEND_(type, name, ref, exported) name.push_back(row.name);
#define AIPROF_VISIT_(type, name, ref, exported) f(t.name);
#define AIPROF_VISIT_INFO_(type, name, ref, exported) \
  f(ColumnInfo{#name, ColumnRef::ref, ColumnExport::exported}, t.name);
#define AIPROF_COUNT_(type, name, ref, exported) +1

#define AIPROF_DECLARE_TABLE_(Table, table_name, COLUMNS)                               \
  struct Table {                                                                        \
    static constexpr const char* kName = table_name;                                    \
    static constexpr size_t kColumnCount = 0 COLUMNS(AIPROF_COUNT_);                    \
    COLUMNS(AIPROF_COLUMN_FIELD_)                                                       \
    /* One row, every column (designated initialisers name them). */                    \
    struct Row {                                                                        \
      COLUMNS(AIPROF_ROW_FIELD_)                                                        \
    };                                                                                  \
    void Append(const Row& row) { COLUMNS(AIPROF_APPEND_) }                             \
    /* Every column, in declaration order (the .aiprof file's order too); */           \
    /* `Self` may be const. */                                                          \
    template <typename Self, typename F>                                                \
    static void Columns(Self& t, F&& f) {                                               \
      COLUMNS(AIPROF_VISIT_)                                                            \
    }                                                                                   \
    template <typename Self, typename F>                                                \
    static void ColumnsWithInfo(Self& t, F&& f) {                                       \
      COLUMNS(AIPROF_VISIT_INFO_)                                                       \
    }                                                                                   \
    size_t size() const;                                                                \
  };

AIPROF_DECLARE_TABLE_(TrackTable, "track", AIPROF_TRACK_COLUMNS)
AIPROF_DECLARE_TABLE_(SliceTable, "slice", AIPROF_SLICE_COLUMNS)
AIPROF_DECLARE_TABLE_(InstantTable, "instant", AIPROF_INSTANT_COLUMNS)
AIPROF_DECLARE_TABLE_(CounterTable, "counter", AIPROF_COUNTER_COLUMNS)
AIPROF_DECLARE_TABLE_(FlowTable, "flow", AIPROF_FLOW_COLUMNS)
AIPROF_DECLARE_TABLE_(StepTable, "step", AIPROF_STEP_COLUMNS)
AIPROF_DECLARE_TABLE_(OpMetricTable, "op metric", AIPROF_OP_METRIC_COLUMNS)
AIPROF_DECLARE_TABLE_(StepBreakdownTable, "step breakdown", AIPROF_STEP_BREAKDOWN_COLUMNS)
AIPROF_DECLARE_TABLE_(CallsiteTable, "callsite", AIPROF_CALLSITE_COLUMNS)
AIPROF_DECLARE_TABLE_(StackSampleTable, "stack sample", AIPROF_STACK_SAMPLE_COLUMNS)
AIPROF_DECLARE_TABLE_(OpStatTable, "op statistics", AIPROF_OP_STAT_COLUMNS)

// A table's row count: its first column's length (all are equal).
inline size_t TrackTable::size() const { return kind.size(); }
inline size_t SliceTable::size() const { return ts_ns.size(); }
inline size_t InstantTable::size() const { return ts_ns.size(); }
inline size_t CounterTable::size() const { return ts_ns.size(); }
inline size_t FlowTable::size() const { return from_slice.size(); }
inline size_t StepTable::size() const { return ts_ns.size(); }
inline size_t OpMetricTable::size() const { return slice.size(); }
inline size_t StepBreakdownTable::size() const { return rank.size(); }
inline size_t CallsiteTable::size() const { return parent.size(); }
inline size_t StackSampleTable::size() const { return ts_ns.size(); }
inline size_t OpStatTable::size() const { return category.size(); }

// Where slice i ends: its start plus its duration.
inline int64_t SliceEnd(const SliceTable& s, uint32_t i) { return s.ts_ns[i] + s.dur_ns[i]; }

#undef AIPROF_DECLARE_TABLE_
#undef AIPROF_COLUMN_FIELD_
#undef AIPROF_ROW_FIELD_
#undef AIPROF_APPEND_
#undef AIPROF_VISIT_
#undef AIPROF_VISIT_INFO_
#undef AIPROF_COUNT_

}  // namespace aiprof

#endif  // AIPROF_SRC_MODEL_TABLES_H_
