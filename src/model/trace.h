// The normalized trace model every command reads.
//
// Columnar tables (one ChunkedVector per field, declared once in tables.h),
// interned strings and row indices. Importers never write here directly: they go through
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
#include "src/base/status.h"
#include "src/base/string_pool.h"
#include "src/model/diagnostics.h"
#include "src/model/event_kind.h"
#include "src/model/tables.h"

namespace aiprof {

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

// The category of flows from a graph capture's launch call to the kernel a
// graph launch replayed for it (src/importers/graph_capture/).
inline constexpr const char* kGraphCaptureFlowCategory = "graph capture";
// The thread label prefix of the tracks a graph-capture merge adds ("graph
// capture N", negative tid): copies of captured ops re-timed onto their
// replayed kernels, so their time is not host time.
inline constexpr const char* kGraphCaptureTrackLabel = "graph capture ";

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

// Fails when the slices' durations sum past INT64_MAX ns (292 years): every
// total an analysis forms (per op, thread, class, step) is a sum of some of
// them in int64, and none may overflow. Each duration is within 2^61 ns
// (time_range.h), so a few absurd ones can pass one by one and not together.
// The error names `source` and the longest slice.
Status CheckDurationSum(const Trace& trace, const std::string& source);

}  // namespace aiprof

#endif  // AIPROF_SRC_MODEL_TRACE_H_
