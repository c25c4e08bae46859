// The normalized trace model every command reads.
//
// Columnar tables (one ChunkedVector per field), interned strings and typed
// row indices. Importers never write here directly: they go through
// TraceBuilder (trace_builder.h), which also sorts and links in Finalize().
// After Finalize():
//   - slices are ordered by (track, start, longest first) and carry depth;
//   - all timestamps are absolute integer nanoseconds;
//   - flows link host launches to device activity (correlation ids and
//     s/t/f flow events), steps come from ProfilerStep#N markers (else from
//     "## step N ##" / "step N" annotations).
#ifndef AIPROF_SRC_MODEL_TRACE_H_
#define AIPROF_SRC_MODEL_TRACE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "src/base/chunked_vector.h"
#include "src/base/string_pool.h"
#include "src/model/diagnostics.h"
#include "src/model/event_kind.h"

namespace aiprof {

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

struct TrackTable {
  ChunkedVector<TrackKind> kind;
  ChunkedVector<Layer> layer;
  ChunkedVector<int64_t> pid;         // numeric pid (device index on GPU tracks)
  ChunkedVector<int64_t> tid;         // numeric tid (stream on GPU tracks)
  ChunkedVector<StringId> pid_label;  // textual pid as written when not numeric
  ChunkedVector<StringId> tid_label;
  ChunkedVector<StringId> name;          // thread_name / "stream 7" / counter name
  ChunkedVector<StringId> process_name;  // process_name metadata
  ChunkedVector<int32_t> rank;           // kNoRank when unknown
  ChunkedVector<int32_t> device;         // kHostDevice for host tracks
  // Every column, in declaration order (the .aiprof file's order too):
  // Columns(table, f) calls f(column) for each; `Self` may be const.
  template <typename Self, typename F>
  static void Columns(Self& t, F&& f) {
    f(t.kind); f(t.layer); f(t.pid); f(t.tid); f(t.pid_label); f(t.tid_label); f(t.name); f(t.process_name);
    f(t.rank); f(t.device);
  }
  size_t size() const { return kind.size(); }
};

// A typed argument value; strings and nested JSON are interned.
enum class ArgType : uint8_t { kInt = 0, kUint, kDouble, kString, kJson, kBool, kNull };
struct Arg {
  StringId key;
  ArgType type;
  // The bytes between type and value, explicit and zero: args are written
  // to .aiprof files as they are in memory, so no byte may be left undefined.
  uint8_t reserved[3] = {0, 0, 0};
  union {
    int64_t i;
    uint64_t u;
    double d;
    uint32_t str;  // StringId.raw for kString / kJson
  };
};
static_assert(sizeof(Arg) == 16, "args are 16 bytes each");

struct SliceTable {
  ChunkedVector<int64_t> ts_ns;
  ChunkedVector<int64_t> dur_ns;
  ChunkedVector<StringId> name;
  ChunkedVector<StringId> category;
  ChunkedVector<EventKind> kind;
  ChunkedVector<uint32_t> track;
  ChunkedVector<uint16_t> depth;
  ChunkedVector<int64_t> correlation;  // launch↔device correlation, or kNoCorrelation
  ChunkedVector<uint64_t> arg_begin;   // into Trace::args
  ChunkedVector<uint16_t> arg_count;
  // Every column, in declaration order (the .aiprof file's order too):
  // Columns(table, f) calls f(column) for each; `Self` may be const.
  template <typename Self, typename F>
  static void Columns(Self& t, F&& f) {
    f(t.ts_ns); f(t.dur_ns); f(t.name); f(t.category); f(t.kind); f(t.track); f(t.depth); f(t.correlation);
    f(t.arg_begin); f(t.arg_count);
  }
  size_t size() const { return ts_ns.size(); }
};

struct InstantTable {
  ChunkedVector<int64_t> ts_ns;
  ChunkedVector<StringId> name;
  ChunkedVector<StringId> category;
  ChunkedVector<uint32_t> track;
  ChunkedVector<char> scope;  // 't' thread, 'p' process, 'g' global
  ChunkedVector<uint64_t> arg_begin;
  ChunkedVector<uint16_t> arg_count;
  // Every column, in declaration order (the .aiprof file's order too):
  // Columns(table, f) calls f(column) for each; `Self` may be const.
  template <typename Self, typename F>
  static void Columns(Self& t, F&& f) {
    f(t.ts_ns); f(t.name); f(t.category); f(t.track); f(t.scope); f(t.arg_begin); f(t.arg_count);
  }
  size_t size() const { return ts_ns.size(); }
};

struct CounterTable {
  ChunkedVector<int64_t> ts_ns;
  ChunkedVector<uint32_t> track;  // a kCounter track
  ChunkedVector<double> value;
  // Every column, in declaration order (the .aiprof file's order too):
  // Columns(table, f) calls f(column) for each; `Self` may be const.
  template <typename Self, typename F>
  static void Columns(Self& t, F&& f) {
    f(t.ts_ns); f(t.track); f(t.value);
  }
  size_t size() const { return ts_ns.size(); }
};

struct FlowTable {
  ChunkedVector<uint32_t> from_slice;
  ChunkedVector<uint32_t> to_slice;
  ChunkedVector<uint64_t> flow_id;  // exact, may exceed 2^53
  ChunkedVector<StringId> category;  // "ac2g", "correlation", "fwdbwd", ...
  // Every column, in declaration order (the .aiprof file's order too):
  // Columns(table, f) calls f(column) for each; `Self` may be const.
  template <typename Self, typename F>
  static void Columns(Self& t, F&& f) {
    f(t.from_slice); f(t.to_slice); f(t.flow_id); f(t.category);
  }
  size_t size() const { return from_slice.size(); }
};

struct StepTable {
  ChunkedVector<StringId> name;
  ChunkedVector<int64_t> number;  // N of ProfilerStep#N / "## step N ##", or -1
  ChunkedVector<int64_t> ts_ns;
  ChunkedVector<int64_t> dur_ns;
  ChunkedVector<uint32_t> track;
  ChunkedVector<int32_t> rank;
  // Every column, in declaration order (the .aiprof file's order too):
  // Columns(table, f) calls f(column) for each; `Self` may be const.
  template <typename Self, typename F>
  static void Columns(Self& t, F&& f) {
    f(t.name); f(t.number); f(t.ts_ns); f(t.dur_ns); f(t.track); f(t.rank);
  }
  size_t size() const { return ts_ns.size(); }
};

// Per-op figures that are not timeline events: PMU columns of Ascend's
// kernel_details.csv / op_summary, op_statistic rows, communication.json
// times. One row per (op, key); `slice` is the finalized slice the row was
// joined to, or kNoSlice for aggregate rows (op_statistic, communication).
struct OpMetricTable {
  ChunkedVector<uint32_t> slice;
  ChunkedVector<int32_t> rank;
  ChunkedVector<StringId> source;  // file the row came from, e.g. "kernel_details.csv"
  ChunkedVector<StringId> op;      // op name (or op type for aggregate rows)
  ChunkedVector<StringId> key;     // column name as written, e.g. "aic_mac_ratio"
  ChunkedVector<double> value;     // numeric value; NaN when the value is text
  ChunkedVector<StringId> text;    // text value, empty when numeric
  // Every column, in declaration order (the .aiprof file's order too):
  // Columns(table, f) calls f(column) for each; `Self` may be const.
  template <typename Self, typename F>
  static void Columns(Self& t, F&& f) {
    f(t.slice); f(t.rank); f(t.source); f(t.op); f(t.key); f(t.value); f(t.text);
  }
  size_t size() const { return slice.size(); }
};

// A step's time breakdown as a profiler wrote it (Ascend step_trace_time.csv:
// Computing, Communication(Not Overlapped), Overlapped, Free, Preparing...),
// one row per (rank, step, key).
struct StepBreakdownTable {
  ChunkedVector<int32_t> rank;
  ChunkedVector<int64_t> step;     // step number, -1 when unknown
  ChunkedVector<StringId> source;  // file name
  ChunkedVector<StringId> key;     // column name as written
  ChunkedVector<int64_t> value_ns;
  // Every column, in declaration order (the .aiprof file's order too):
  // Columns(table, f) calls f(column) for each; `Self` may be const.
  template <typename Self, typename F>
  static void Columns(Self& t, F&& f) {
    f(t.rank); f(t.step); f(t.source); f(t.key); f(t.value_ns);
  }
  size_t size() const { return rank.size(); }
};

// What a stack frame is: native code, an interpreter's frame (Python), a
// kernel-mode frame, or unknown (an address that did not symbolise).
enum class FrameKind : uint8_t { kUnknown = 0, kNative, kPython, kKernel };

// The call-site tree of stack samples (Perfetto's stack_profile_callsite):
// one row per distinct (parent, frame, module); a sample names its leaf, and
// the stack is the chain of parents to a root (parent == kNoCallsite).
// Parents always precede their children.
struct CallsiteTable {
  ChunkedVector<uint32_t> parent;  // kNoCallsite for a root frame
  ChunkedVector<uint32_t> depth;   // 0 for a root
  ChunkedVector<StringId> frame;   // function name, or "0x7f..." when unsymbolised
  ChunkedVector<StringId> module;  // binary or library path, "[python]", "[kernel]"
  ChunkedVector<FrameKind> kind;
  // Every column, in declaration order (the .aiprof file's order too):
  // Columns(table, f) calls f(column) for each; `Self` may be const.
  template <typename Self, typename F>
  static void Columns(Self& t, F&& f) {
    f(t.parent); f(t.depth); f(t.frame); f(t.module); f(t.kind);
  }
  size_t size() const { return parent.size(); }
};

// Stack samples (perf_event CPU samples, Nsight Systems' sampling call
// chains): one row per sample, ordered by (track, ts) after Finalize().
struct StackSampleTable {
  ChunkedVector<int64_t> ts_ns;
  ChunkedVector<uint32_t> track;     // the sampled thread's track
  ChunkedVector<uint32_t> callsite;  // leaf frame in CallsiteTable (kNoCallsite: no stack)
  ChunkedVector<int64_t> weight_ns;  // time the sample stands for (the sampling period)
  // Every column, in declaration order (the .aiprof file's order too):
  // Columns(table, f) calls f(column) for each; `Self` may be const.
  template <typename Self, typename F>
  static void Columns(Self& t, F&& f) {
    f(t.ts_ns); f(t.track); f(t.callsite); f(t.weight_ns);
  }
  size_t size() const { return ts_ns.size(); }
};

// Duration statistics of the slices of each (category, name): an index of
// the slice table, written into .aiprof files so that op figures reload
// without a pass over every slice. Rows in first-seen order of the slices.
struct OpStatTable {
  ChunkedVector<StringId> category;
  ChunkedVector<StringId> name;
  ChunkedVector<uint64_t> count;
  ChunkedVector<int64_t> total_ns;  // saturates at INT64_MAX
  ChunkedVector<int64_t> max_ns;
  ChunkedVector<double> p50_ns;     // exact, interpolated between closest ranks
  ChunkedVector<double> p99_ns;
  template <typename Self, typename F>
  static void Columns(Self& t, F&& f) {
    f(t.category); f(t.name); f(t.count); f(t.total_ns); f(t.max_ns); f(t.p50_ns); f(t.p99_ns);
  }
  size_t size() const { return category.size(); }
};

struct Trace {
  // Memory the columns and strings may point into (a mapped .aiprof file);
  // declared first so it is destroyed last.
  std::shared_ptr<void> backing;
  StringPool strings;
  TrackTable tracks;
  SliceTable slices;
  InstantTable instants;
  CounterTable counters;
  FlowTable flows;
  StepTable steps;
  OpMetricTable op_metrics;
  StepBreakdownTable step_breakdown;
  CallsiteTable callsites;
  StackSampleTable samples;
  // Filled when loaded from an .aiprof file; describes the slice table as
  // it was then (op_stats_slices rows), see OpStatsCurrent().
  OpStatTable op_stats;
  uint64_t op_stats_slices = 0;
  ChunkedVector<Arg> args;
  // Free-form facts about the run: rank, world_size, device names, source format.
  std::map<std::string, std::string> metadata;
  Diagnostics diagnostics;

  std::string_view Str(StringId id) const { return strings.Get(id); }
  // Args of slice `s`, as [begin, begin+count) into `args`.
  const Arg* FindSliceArg(uint32_t slice, StringId key) const;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_MODEL_TRACE_H_
