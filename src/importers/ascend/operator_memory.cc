#include "src/importers/ascend/operator_memory.h"

#include <charconv>
#include <climits>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "src/importers/ascend/csv_table.h"
#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * 1024;

// "NPU:3" → 3; nullopt otherwise.
std::optional<int32_t> NpuIndex(std::string_view device) {
  constexpr std::string_view kPrefix = "NPU:";
  if (device.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::string_view digits = device.substr(kPrefix.size());
  int32_t n = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || p != digits.data() + digits.size() || digits.empty() || n < 0) return std::nullopt;
  return n;
}

// An optional column converted to an integer arg: (column, unit, arg key).
struct ScaledColumn {
  const char* column;
  int64_t unit;
  const char* key;
};
constexpr ScaledColumn kOptionalColumns[] = {
    {"Release Time(us)", 1000, "release_ts_ns"},
    {"Duration(us)", 1000, "duration_ns"},
    {"Allocation Total Allocated(MB)", kMiB, "alloc_total_allocated_bytes"},
    {"Allocation Total Reserved(MB)", kMiB, "alloc_total_reserved_bytes"},
    {"Allocation Total Active(MB)", kMiB, "alloc_total_active_bytes"},
    {"Release Total Allocated(MB)", kMiB, "release_total_allocated_bytes"},
    {"Release Total Reserved(MB)", kMiB, "release_total_reserved_bytes"},
    {"Release Total Active(MB)", kMiB, "release_total_active_bytes"},
};

class OperatorMemoryImporter {
 public:
  OperatorMemoryImporter(int32_t rank, TraceBuilder* builder)
      : rank_(rank), builder_(builder), category_(builder->Intern(kOperatorMemoryCategory)),
        pid_label_(builder->Intern("operator memory")), size_key_(builder->Intern("size_bytes")) {}

  Status Run(const std::string& path) {
    ASSIGN_OR_RETURN(CsvTable csv, CsvTable::Open(path));
    RETURN_IF_ERROR(csv.Require({"Name", "Size(KB)", "Allocation Time(us)", "Device Type"}));
    int name = csv.Column("Name"), size = csv.Column("Size(KB)"), alloc = csv.Column("Allocation Time(us)");
    int device = csv.Column("Device Type");
    struct Present {
      int col;
      int64_t unit;
      StringId key;
    };
    std::vector<Present> optional;
    for (const ScaledColumn& c : kOptionalColumns) {
      if (csv.Column(c.column) >= 0) optional.push_back({csv.Column(c.column), c.unit, builder_->Intern(c.key)});
    }
    while (true) {
      ASSIGN_OR_RETURN(bool more, csv.Next());
      if (!more) break;
      std::optional<int64_t> ts = csv.MicrosToNanos(alloc), bytes = csv.Scaled(size, kKiB);
      std::optional<int32_t> npu = NpuIndex(csv.Field(device));
      // An allocation's size is not negative (-5 KB was accepted as -5120
      // bytes, found by review).
      if (!csv.row_ok() || !ts || !bytes || *bytes < 0 || !npu || csv.Field(name).empty()) {
        builder_->Diagnose("bad_operator_memory_row", csv.Where(),
                           "a row has a wrong column count, or no usable Name, Size(KB) (a size ≥ 0), Allocation "
                           "Time(us) or NPU Device Type; skipped");
        continue;
      }
      uint64_t begin = builder_->ArgCursor();
      AddIntArg(size_key_, *bytes);
      uint16_t count = 1;
      for (const Present& p : optional) {
        std::optional<int64_t> v = csv.Scaled(p.col, p.unit);
        if (!v) continue;
        AddIntArg(p.key, *v);
        ++count;
      }
      builder_->AddInstant(Track(*npu), *ts, builder_->Intern(csv.Field(name)), category_, 't', begin, count);
    }
    return OkStatus();
  }

 private:
  void AddIntArg(StringId key, int64_t v) {
    Arg a;
    a.key = key;
    a.type = ArgType::kInt;
    a.i = v;
    builder_->AddArg(a);
  }

  uint32_t Track(int32_t npu) {
    auto it = tracks_.find(npu);
    if (it != tracks_.end()) return it->second;
    uint32_t track = builder_->ThreadTrack(IdValue::Str(pid_label_), IdValue::Num(npu));
    builder_->SetThreadName(track, builder_->Intern("operator memory NPU:" + std::to_string(npu)));
    builder_->SetTrackRole(track, TrackKind::kThread, Layer::kDevice, npu);
    if (rank_ != kNoRank) builder_->SetTrackRank(track, rank_);
    return tracks_.emplace(npu, track).first->second;
  }

  int32_t rank_;
  TraceBuilder* builder_;
  StringId category_, pid_label_, size_key_;
  std::map<int32_t, uint32_t> tracks_;
};

// Integer value of an int/uint arg, else nullopt.
std::optional<int64_t> IntArg(const Arg* a) {
  if (a == nullptr) return std::nullopt;
  if (a->type == ArgType::kInt) return a->i;
  if (a->type == ArgType::kUint && a->u <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(a->u);
  return std::nullopt;
}

// Device slices of one rank keyed by (name, Task Id arg, stream); a key seen
// twice maps to kNoSlice (ambiguous, so never joined).
class TaskIndex {
 public:
  TaskIndex(const Trace& trace, int32_t rank) : trace_(trace) {
    std::optional<StringId> task_key = trace.strings.Find("Task Id");
    if (!task_key) return;
    for (uint32_t i = 0; i < trace.slices.size(); ++i) {
      uint32_t t = trace.slices.track[i];
      if (trace.tracks.kind[t] != TrackKind::kDeviceStream || trace.tracks.rank[t] != rank) continue;
      std::optional<int64_t> task = IntArg(trace.FindSliceArg(i, *task_key));
      if (!task) continue;
      auto [it, inserted] = index_.emplace(Key{trace.slices.name[i].raw, *task, trace.tracks.tid[t]}, i);
      if (!inserted) it->second = kNoSlice;
    }
  }

  uint32_t Find(std::string_view name, int64_t task, int64_t stream) const {
    std::optional<StringId> id = trace_.strings.Find(name);
    if (!id) return kNoSlice;
    auto it = index_.find(Key{id->raw, task, stream});
    return it == index_.end() ? kNoSlice : it->second;
  }

 private:
  using Key = std::tuple<uint32_t, int64_t, int64_t>;
  const Trace& trace_;
  std::map<Key, uint32_t> index_;
};

}  // namespace

Status JoinL2Cache(const std::string& path, int32_t rank, TraceBuilder* builder) {
  ASSIGN_OR_RETURN(CsvTable csv, CsvTable::Open(path));
  RETURN_IF_ERROR(csv.Require({"Stream Id", "Task Id", "Op Name"}));
  int stream = csv.Column("Stream Id"), task = csv.Column("Task Id"), name = csv.Column("Op Name");
  std::vector<std::pair<int, StringId>> rates;
  for (const char* k : {"Hit Rate", "Victim Rate"}) {
    if (csv.Column(k) >= 0) rates.emplace_back(csv.Column(k), builder->Intern(k));
  }
  TaskIndex index(*builder->trace(), rank);
  StringId source = builder->Intern("l2_cache.csv");
  while (true) {
    ASSIGN_OR_RETURN(bool more, csv.Next());
    if (!more) break;
    std::optional<int64_t> s = csv.Integer(stream), t = csv.Integer(task);
    if (!csv.row_ok() || !s || !t) {
      builder->Diagnose("bad_l2_cache_row", csv.Where(), "a row has a wrong column count or no Stream Id / Task Id; skipped");
      continue;
    }
    uint32_t slice = index.Find(csv.Field(name), *t, *s);
    if (slice == kNoSlice) {
      builder->Diagnose("l2_cache_row_unmatched", csv.Where(),
                        "no single device task with this Op Name, Task Id and stream in the timeline; kept unjoined");
    }
    StringId op = builder->Intern(csv.Field(name));
    for (const auto& [col, key] : rates) {
      std::optional<double> v = csv.Number(col);
      if (v) builder->AddOpMetric(slice, rank, source, op, key, *v, StringId{});
    }
  }
  return OkStatus();
}

Status ImportOperatorMemory(const std::string& path, int32_t rank, TraceBuilder* builder) {
  OperatorMemoryImporter importer(rank, builder);
  return importer.Run(path);
}

}  // namespace aiprof
