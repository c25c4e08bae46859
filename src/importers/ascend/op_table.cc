#include "src/importers/ascend/op_table.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <vector>

#include "src/importers/ascend/csv_table.h"
#include "src/importers/ascend/folder_member.h"
#include "src/importers/ascend/trace_view_importer.h"
#include "src/model/time_range.h"
#include "src/model/trace_builder.h"

namespace aiprof {

const OpTableSpec kKernelDetailsSpec = {"Name", "Start Time(us)", "Duration(us)", "Type", "Accelerator Core",
                                        "Stream ID", "kernel_details.csv"};
const OpTableSpec kOpSummarySpec = {"Op Name", "Task Start Time(us)", "Task Duration(us)", "OP Type", "Task Type",
                                    "Stream ID", "op_summary.csv"};
const OpTableSpec kTaskTimeSpec = {"kernel_name", "task_start(us)", "task_time(us)", "kernel_type", "kernel_type",
                                   "stream_id", "task_time.csv"};

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kNoModelId = 4294967295.0;  // Ascend writes UINT32_MAX for "no model"

struct Columns {
  int name, start, dur, type, core, stream;
};

StatusOr<Columns> RequireSpec(const CsvTable& csv, const OpTableSpec& spec) {
  RETURN_IF_ERROR(csv.Require({spec.name, spec.start_us, spec.dur_us, spec.type}));
  return Columns{csv.Column(spec.name), csv.Column(spec.start_us), csv.Column(spec.dur_us), csv.Column(spec.type),
                 csv.Column(spec.core), csv.Column(spec.stream)};
}

// Device slices of one rank by name, each list sorted by start.
class SliceIndex {
 public:
  SliceIndex(const Trace& trace, int32_t rank) : trace_(trace) {
    const SliceTable& s = trace.slices;
    for (size_t i = 0; i < s.size(); ++i) {
      uint32_t t = s.track[i];
      if (trace.tracks.kind[t] != TrackKind::kDeviceStream || trace.tracks.rank[t] != rank) continue;
      by_name_[s.name[i].raw].push_back(static_cast<uint32_t>(i));
    }
    for (auto& [name, list] : by_name_) {
      std::sort(list.begin(), list.end(), [&s](uint32_t a, uint32_t b) { return s.ts_ns[a] < s.ts_ns[b]; });
    }
  }
  bool empty() const { return by_name_.empty(); }

  // The slice named `name` starting closest to ts_ns, within the tolerance.
  uint32_t Find(std::string_view name, int64_t ts_ns) const {
    std::optional<StringId> id = trace_.strings.Find(name);
    if (!id) return kNoSlice;
    auto it = by_name_.find(id->raw);
    if (it == by_name_.end()) return kNoSlice;
    const std::vector<uint32_t>& list = it->second;
    const auto& ts = trace_.slices.ts_ns;
    auto pos = std::lower_bound(list.begin(), list.end(), ts_ns, [&ts](uint32_t s, int64_t v) { return ts[s] < v; });
    uint32_t best = kNoSlice;
    int64_t best_gap = kJoinToleranceNs + 1;
    for (auto p : {pos, pos == list.begin() ? pos : pos - 1}) {
      if (p == list.end()) continue;
      int64_t gap = std::llabs(ts[*p] - ts_ns);
      if (gap < best_gap) best_gap = gap, best = *p;
    }
    return best;
  }

 private:
  const Trace& trace_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> by_name_;
};

// Adds every column of the current row except name and start as op metrics.
void AddRowMetrics(const CsvTable& csv, const Columns& c, const std::vector<StringId>& keys, uint32_t slice,
                   int32_t rank, StringId source, TraceBuilder* builder) {
  StringId op = builder->Intern(csv.Field(c.name));
  for (size_t k = 0; k < keys.size(); ++k) {
    int col = static_cast<int>(k);
    if (col == c.name || col == c.start) continue;
    std::string_view raw = StripQuotes(csv.Field(col));
    if (IsMissingValue(raw)) continue;
    std::optional<double> num = csv.Number(col);
    if (num && *num == kNoModelId && csv.header()[k] == "Model ID") continue;
    builder->AddOpMetric(slice, rank, source, op, keys[k], num ? *num : kNaN, num ? StringId{} : builder->Intern(raw));
  }
}

// A Stream ID that is there but not a non-negative integer (no Stream ID,
// N/A or empty, is the communication track's).
bool BadStreamId(const CsvTable& csv, int col) {
  std::optional<int64_t> id = csv.Integer(col);
  return id ? *id < 0 : !IsMissingValue(StripQuotes(csv.Field(col)));
}

std::vector<StringId> InternHeader(const CsvTable& csv, TraceBuilder* builder) {
  std::vector<StringId> keys;
  for (const std::string& h : csv.header()) keys.push_back(builder->Intern(h));
  return keys;
}

// The file's name without its folder or a compression suffix: a source's
// name is the same for op_statistic.csv and op_statistic.csv.gz.
std::string Basename(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return std::string(MemberName(slash == std::string::npos ? path : path.substr(slash + 1)));
}

}  // namespace

Status AddOpTableSlices(const std::string& path, const OpTableSpec& spec, int32_t rank, int32_t device,
                        TraceBuilder* builder) {
  ASSIGN_OR_RETURN(CsvTable csv, CsvTable::Open(path));
  ASSIGN_OR_RETURN(Columns c, RequireSpec(csv, spec));
  std::unordered_map<int64_t, uint32_t> tracks;
  StringId pid_label = builder->Intern("NPU " + std::to_string(device));
  while (true) {
    ASSIGN_OR_RETURN(bool more, csv.Next());
    if (!more) break;
    std::optional<int64_t> ts = csv.MicrosToNanos(c.start), dur = csv.MicrosToNanos(c.dur);
    if (!csv.row_ok() || !ts || !dur || *dur < 0) {
      builder->Diagnose("bad_op_row", csv.Where(), "a row has a wrong column count or no usable start/duration; skipped");
      continue;
    }
    // No Stream ID (N/A, empty, no column) is the communication track; one
    // that is there but not a non-negative integer is a bad row (it was put
    // on the HCCL track: D13 of the input trial).
    if (BadStreamId(csv, c.stream)) {
      builder->Diagnose(
          "bad_op_row", csv.Where(),
          "Stream ID '" + std::string(csv.Field(c.stream).substr(0, 40)) + "' is not a non-negative integer; skipped");
      continue;
    }
    int64_t stream = csv.Integer(c.stream).value_or(-1);
    auto [it, inserted] = tracks.emplace(stream, 0);
    if (inserted) {
      it->second = builder->ThreadTrack(IdValue::Str(pid_label), IdValue::Num(stream));
      builder->SetThreadName(it->second, builder->Intern(stream < 0 ? "HCCL" : "Stream " + std::to_string(stream)));
      builder->SetTrackRole(it->second, TrackKind::kDeviceStream, stream < 0 ? Layer::kCommunication : Layer::kDevice,
                            device);
      if (rank != kNoRank) builder->SetTrackRank(it->second, rank);
    }
    std::string_view core = csv.Field(c.core);
    StringId cat = builder->Intern(AscendTaskCategory(core, csv.Field(c.name)));
    builder->AddSlice(it->second, *ts, *dur, builder->Intern(csv.Field(c.name)), cat, kNoCorrelation,
                      builder->ArgCursor(), 0);
  }
  return OkStatus();
}

Status JoinOpTable(const std::string& path, const OpTableSpec& spec, int32_t rank, bool rows_checked,
                   TraceBuilder* builder) {
  ASSIGN_OR_RETURN(CsvTable csv, CsvTable::Open(path));
  ASSIGN_OR_RETURN(Columns c, RequireSpec(csv, spec));
  SliceIndex index(*builder->trace(), rank);
  std::vector<StringId> keys = InternHeader(csv, builder);
  StringId source = builder->Intern(spec.source);
  while (true) {
    ASSIGN_OR_RETURN(bool more, csv.Next());
    if (!more) break;
    std::optional<int64_t> ts = csv.MicrosToNanos(c.start);
    // A row AddOpTableSlices skipped (no usable duration) has no slice to
    // join: it was counted there as bad_op_row, not again as unmatched
    // (found by review: one row counted as "skipped" and "kept unjoined").
    std::optional<int64_t> dur = rows_checked ? csv.MicrosToNanos(c.dur) : std::optional<int64_t>(0);
    if (!csv.row_ok() || !ts || !dur || *dur < 0 || (rows_checked && BadStreamId(csv, c.stream))) {
      if (!rows_checked) {
        builder->Diagnose("bad_op_row", csv.Where(), "a row has a wrong column count or no usable start time; skipped");
      }
      continue;
    }
    uint32_t slice = index.Find(csv.Field(c.name), *ts);
    if (slice == kNoSlice) {
      builder->Diagnose("op_row_unmatched", csv.Where(),
                        "a row has no device task of that name starting within 1 us in the timeline; kept unjoined");
    }
    AddRowMetrics(csv, c, keys, slice, rank, source, builder);
  }
  return OkStatus();
}

Status ImportAggregateCsv(const std::string& path, int32_t rank, const char* op_column,
                          std::initializer_list<std::string_view> required, TraceBuilder* builder) {
  ASSIGN_OR_RETURN(CsvTable csv, CsvTable::Open(path));
  RETURN_IF_ERROR(csv.Require({op_column}));
  RETURN_IF_ERROR(csv.Require(required));
  int op_col = csv.Column(op_column);
  std::vector<StringId> keys = InternHeader(csv, builder);
  StringId source = builder->Intern(Basename(path));
  while (true) {
    ASSIGN_OR_RETURN(bool more, csv.Next());
    if (!more) break;
    if (!csv.row_ok()) {
      builder->Diagnose("bad_aggregate_row", csv.Where(), "a row has a wrong column count; skipped");
      continue;
    }
    StringId op = builder->Intern(csv.Field(op_col));
    for (size_t k = 0; k < keys.size(); ++k) {
      int col = static_cast<int>(k);
      if (col == op_col || IsMissingValue(csv.Field(col))) continue;
      std::optional<double> num = csv.Number(col);
      builder->AddOpMetric(kNoSlice, rank, source, op, keys[k], num ? *num : kNaN,
                           num ? StringId{} : builder->Intern(csv.Field(col)));
    }
  }
  return OkStatus();
}

Status ImportOpStatistic(const std::string& path, int32_t rank, TraceBuilder* builder) {
  return ImportAggregateCsv(path, rank, "OP Type", {"Count", "Total Time(us)"}, builder);
}

Status ImportStepTraceTime(const std::string& path, int32_t rank, TraceBuilder* builder) {
  ASSIGN_OR_RETURN(CsvTable csv, CsvTable::Open(path));
  int step = csv.Column("Step") >= 0 ? csv.Column("Step") : csv.Column("Iteration ID");
  if (step < 0) RETURN_IF_ERROR(csv.Require({"Step"}));
  int device = csv.Column("Device_id");
  std::vector<StringId> keys = InternHeader(csv, builder);
  StringId source = builder->Intern(Basename(path));
  while (true) {
    ASSIGN_OR_RETURN(bool more, csv.Next());
    if (!more) break;
    if (!csv.row_ok()) {
      builder->Diagnose("bad_step_trace_row", csv.Where(), "a row has a wrong column count; skipped");
      continue;
    }
    // A value that is there but does not read (text, an exponent, past
    // +-2^61 ns) is counted, naming file, line and column (they were dropped
    // silently: D10 of the input trial); N/A and empty mean no value.
    std::optional<int64_t> number = csv.Integer(step);
    if (!number && !IsMissingValue(StripQuotes(csv.Field(step)))) {
      builder->Diagnose(
          "bad_step_trace_row", csv.Where(),
          "the step number '" + std::string(csv.Field(step).substr(0, 40)) + "' is not an integer; skipped");
      continue;
    }
    for (size_t k = 0; k < keys.size(); ++k) {
      int col = static_cast<int>(k);
      if (col == step || col == device) continue;
      std::optional<int64_t> ns = csv.MicrosToNanos(col);
      if (ns && !TimeInRange(*ns)) ns.reset();
      if (!ns) {
        if (!IsMissingValue(StripQuotes(csv.Field(col)))) {
          builder->Diagnose("bad_step_trace_value", csv.Where() + " column \"" + csv.header()[k] + "\"",
                            "'" + std::string(csv.Field(col).substr(0, 40)) +
                                "' is not a time in us within +-2^61 ns; this value skipped");
        }
        continue;
      }
      builder->AddStepBreakdown(rank, number.value_or(-1), source, keys[k], *ns);
    }
  }
  return OkStatus();
}

Status ImportMemoryRecord(const std::string& path, int32_t rank, TraceBuilder* builder) {
  ASSIGN_OR_RETURN(CsvTable csv, CsvTable::Open(path));
  RETURN_IF_ERROR(csv.Require({"Component", "Timestamp(us)"}));
  int component = csv.Column("Component"), ts_col = csv.Column("Timestamp(us)");
  int device_col = csv.Column("Device Type") >= 0 ? csv.Column("Device Type") : csv.Column("Device");
  std::vector<int> value_cols;
  for (size_t k = 0; k < csv.header().size(); ++k) {
    const std::string& h = csv.header()[k];
    if (h.find("(MB)") != std::string::npos || h.find("(KB)") != std::string::npos) value_cols.push_back(static_cast<int>(k));
  }
  StringId pid = builder->Intern("memory (" + Basename(path) + ")");
  std::unordered_map<std::string, uint32_t> tracks;
  std::string name;
  while (true) {
    ASSIGN_OR_RETURN(bool more, csv.Next());
    if (!more) break;
    std::optional<int64_t> ts = csv.MicrosToNanos(ts_col);
    if (!csv.row_ok() || !ts) {
      builder->Diagnose("bad_memory_row", csv.Where(), "a row has a wrong column count or no usable timestamp; skipped");
      continue;
    }
    std::string_view dev = csv.Field(device_col);
    int32_t device = kHostDevice;
    if (dev.substr(0, 4) == "NPU:") device = static_cast<int32_t>(std::strtol(std::string(dev.substr(4)).c_str(), nullptr, 10));
    for (int col : value_cols) {
      std::optional<double> v = csv.Number(col);
      if (!v) continue;
      name.assign(csv.Field(component)).append(" ").append(csv.header()[col]).append(" ").append(dev);
      auto it = tracks.find(name);  // find first: emplace would allocate a node per row
      if (it == tracks.end()) {
        uint32_t track = builder->CounterTrack(IdValue::Str(pid), builder->Intern(name), device);
        if (rank != kNoRank) builder->SetTrackRank(track, rank);
        it = tracks.emplace(name, track).first;
      }
      builder->AddCounter(it->second, *ts, *v);
    }
  }
  return OkStatus();
}

}  // namespace aiprof
