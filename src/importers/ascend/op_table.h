// Per-op tables of Ascend profilers, one row per device task:
// torch_npu's kernel_details.csv and msprof's op_summary_*.csv.
//
// With a timeline, rows are joined (after Finalize) to the device slice of
// the same name starting within kJoinToleranceNs, and every other column
// becomes an op metric of that slice (PMU columns of any aic_metrics type,
// Block Dim/Num, shapes, OP State...). Without a timeline, rows become the
// device slices themselves (one "Stream N" track per Stream ID).
#ifndef AIPROF_SRC_IMPORTERS_ASCEND_OP_TABLE_H_
#define AIPROF_SRC_IMPORTERS_ASCEND_OP_TABLE_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "src/base/status.h"

namespace aiprof {

class TraceBuilder;

// Column names of one per-task table layout (all exact, as the tools write them).
struct OpTableSpec {
  const char* name;       // "Name" / "Op Name"
  const char* start_us;   // "Start Time(us)" / "Task Start Time(us)"
  const char* dur_us;     // "Duration(us)" / "Task Duration(us)"
  const char* type;       // "Type" / "OP Type"
  const char* core;       // "Accelerator Core" / "Task Type"
  const char* stream;     // "Stream ID"; optional in the file
  const char* source;     // label stored with each metric
};
extern const OpTableSpec kKernelDetailsSpec;
extern const OpTableSpec kOpSummarySpec;
extern const OpTableSpec kTaskTimeSpec;

inline constexpr int64_t kJoinToleranceNs = 1000;

// Adds each row as a device slice (when there is no timeline); before Finalize.
Status AddOpTableSlices(const std::string& path, const OpTableSpec& spec, int32_t rank, int32_t device,
                        TraceBuilder* builder);
// Joins rows to the finalized device slices of `rank`; unmatched rows are
// counted as the diagnostic "op_row_unmatched". `rows_checked`: the rows
// were already read by AddOpTableSlices, so bad rows are not counted twice.
Status JoinOpTable(const std::string& path, const OpTableSpec& spec, int32_t rank, bool rows_checked,
                   TraceBuilder* builder);

// A table of aggregate rows keyed by `op_column` (op_statistic by "OP Type",
// api_statistic by "API Name"): every other column becomes an op metric.
Status ImportAggregateCsv(const std::string& path, int32_t rank, const char* op_column,
                          std::initializer_list<std::string_view> required, TraceBuilder* builder);
// op_statistic.csv / op_statistic_*.csv: aggregate op metrics by OP Type.
Status ImportOpStatistic(const std::string& path, int32_t rank, TraceBuilder* builder);
// step_trace_time.csv / step_trace_*.csv: the step breakdown table.
Status ImportStepTraceTime(const std::string& path, int32_t rank, TraceBuilder* builder);
// memory_record.csv (MB) / msprof memory files (KB): one counter track per
// (component, column); the unit stays in the track name as written.
Status ImportMemoryRecord(const std::string& path, int32_t rank, TraceBuilder* builder);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_ASCEND_OP_TABLE_H_
