#include "src/importers/ascend/trace_view_importer.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <map>
#include <optional>
#include <regex>
#include <tuple>
#include <unordered_map>

#include "src/importers/json/chrome_json_importer.h"
#include "src/model/trace_builder.h"

namespace aiprof {

namespace {

enum class AscendProcess : uint8_t { kOther, kPython, kCann, kHardware, kHccl, kOverlap };

// How far a hardware task may reach outside the span HCCL gives its task:
// both views are written from one record, to the ns (level0/level1 fixtures).
constexpr int64_t kHcclTaskToleranceNs = 1000;

AscendProcess ClassifyProcess(std::string_view name) {
  if (name == "Python") return AscendProcess::kPython;
  if (name == "CANN" || name == "AscendCL" || name == "Runtime" || name == "GE" || name == "Node") {
    return AscendProcess::kCann;
  }
  if (name == "Ascend Hardware" || name == "Task Scheduler") return AscendProcess::kHardware;
  if (name == "HCCL" || name == "Communication") return AscendProcess::kHccl;
  if (name == "Overlap Analysis") return AscendProcess::kOverlap;
  return AscendProcess::kOther;
}

struct RolePass {
  TraceBuilder* builder;
  const std::unordered_map<int64_t, std::string>* names;
  int32_t rank;
  int32_t fallback_device;
  int64_t host_pid = -1;

  AscendProcess ProcessOf(uint32_t track) const {
    const TrackTable& t = builder->trace()->tracks;
    if (!t.pid_label[track].empty()) return AscendProcess::kOther;
    auto it = names->find(t.pid[track]);
    return it == names->end() ? AscendProcess::kOther : ClassifyProcess(it->second);
  }

  void Run(size_t first_track, size_t first_slice) {
    for (const auto& [pid, name] : *names) {
      if (name == "Python") host_pid = pid;
    }
    std::vector<AscendProcess> roles = AssignTracks(first_track);
    AssignCategories(roles, first_track, first_slice);
  }

  std::vector<AscendProcess> AssignTracks(size_t first_track) {
    TrackTable& t = builder->trace()->tracks;
    std::vector<AscendProcess> roles(t.size(), AscendProcess::kOther);
    for (size_t i = first_track; i < t.size(); ++i) {
      uint32_t track = static_cast<uint32_t>(i);
      if (rank != kNoRank) builder->SetTrackRank(track, rank);
      AscendProcess p = ProcessOf(track);
      roles[i] = p;
      int32_t device = AscendDeviceFromPid(t.pid[i], host_pid, fallback_device);
      bool known = names->count(t.pid[i]) > 0;
      if (t.kind[i] == TrackKind::kCounter) {
        if (known && p != AscendProcess::kPython) builder->SetTrackRole(track, TrackKind::kCounter, Layer::kDevice, device);
        continue;
      }
      switch (p) {
        case AscendProcess::kCann:
          builder->SetTrackRole(track, TrackKind::kThread, Layer::kRuntime, kHostDevice);
          break;
        case AscendProcess::kHardware:
          builder->SetTrackRole(track, TrackKind::kDeviceStream, Layer::kDevice, device);
          break;
        case AscendProcess::kHccl:
          builder->SetTrackRole(track, TrackKind::kDeviceStream, Layer::kCommunication, device);
          break;
        case AscendProcess::kOverlap:
          builder->SetTrackRole(track, TrackKind::kSpans, Layer::kDevice, device);
          break;
        case AscendProcess::kPython:
        case AscendProcess::kOther:
          break;
      }
    }
    return roles;
  }

  // An integer arg of slice `i` under the first of `keys` it has (a key no
  // slice has is not interned: std::nullopt).
  std::optional<int64_t> IntArg(uint32_t i, std::initializer_list<std::optional<StringId>> keys) const {
    const Trace* trace = builder->trace();
    for (const std::optional<StringId>& key : keys) {
      if (!key) continue;
      const Arg* a = trace->FindSliceArg(i, *key);
      if (a == nullptr) continue;
      if (a->type == ArgType::kInt) return a->i;
      if (a->type == ArgType::kUint && a->u <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(a->u);
    }
    return std::nullopt;
  }

  // HCCL's tasks, for finding them again on the Ascend Hardware streams:
  // each collective (Group N Communication) by (device, connection_id), the
  // id its hardware tasks (SDMA, Notify Wait, Write Value...) carry too, and
  // each task its Plane threads list by (device, stream id, task id), which
  // the hardware view gives as Physic Stream Id and Task Id; with the span
  // each covers. Level0 files list no Plane tasks, so both are needed.
  using TaskKey = std::tuple<int32_t, int64_t, int64_t>;  // device, stream (or -1), task (or connection) id
  using Spans = std::map<TaskKey, std::pair<int64_t, int64_t>>;
  Spans HcclTaskSpans(const std::vector<AscendProcess>& roles, size_t first_track, size_t first_slice) {
    Spans spans;
    const Trace* trace = builder->trace();
    const StringPool& strings = builder->trace()->strings;  // looked up, not interned: the trace is left as it was
    const std::optional<StringId> stream_key = strings.Find("stream id"), task_key = strings.Find("task id");
    const std::optional<StringId> connection_key = strings.Find("connection_id");
    for (size_t i = first_slice; i < trace->slices.size(); ++i) {
      const uint32_t track = trace->slices.track[i], slice = static_cast<uint32_t>(i);
      if (track < first_track || roles[track] != AscendProcess::kHccl) continue;
      std::optional<int64_t> stream = -1, task = IntArg(slice, {connection_key});
      if (!IsGroupTrack(track)) stream = IntArg(slice, {stream_key}), task = IntArg(slice, {task_key});
      if (!stream || !task) continue;
      const int64_t start = trace->slices.ts_ns[i], end = start + trace->slices.dur_ns[i];
      auto [it, fresh] = spans.try_emplace({trace->tracks.device[track], *stream, *task}, start, end);
      if (!fresh) it->second = {std::min(it->second.first, start), std::max(it->second.second, end)};
    }
    return spans;
  }

  bool IsGroupTrack(uint32_t track) const {
    const Trace* trace = builder->trace();
    return trace->Str(trace->tracks.name[track]).find("Communication") != std::string_view::npos;
  }

  void AssignCategories(const std::vector<AscendProcess>& roles, size_t first_track, size_t first_slice) {
    Trace* trace = builder->trace();
    const Spans hccl_tasks = HcclTaskSpans(roles, first_track, first_slice);
    const StringPool& strings = trace->strings;
    const std::optional<StringId> key_physic_stream = strings.Find("Physic Stream Id");
    const std::optional<StringId> key_stream = strings.Find("Stream Id"), key_task_id = strings.Find("Task Id");
    const std::optional<StringId> key_connection = strings.Find("connection_id");
    // A hardware task is one of HCCL's when HCCL lists its connection id, or
    // its stream and task id, over a span that holds it (ids are reused: task
    // ids wrap around, so the span decides).
    auto listed = [&](uint32_t i, int64_t stream, std::optional<int64_t> id) {
      if (!id) return false;
      auto it = hccl_tasks.find({trace->tracks.device[trace->slices.track[i]], stream, *id});
      const int64_t start = trace->slices.ts_ns[i], end = start + trace->slices.dur_ns[i];
      return it != hccl_tasks.end() && start >= it->second.first - kHcclTaskToleranceNs &&
             end <= it->second.second + kHcclTaskToleranceNs;
    };
    auto is_hccl_task = [&](uint32_t i) {
      if (hccl_tasks.empty()) return false;
      if (listed(i, -1, IntArg(i, {key_connection}))) return true;
      std::optional<int64_t> stream = IntArg(i, {key_physic_stream, key_stream});
      return listed(i, stream.value_or(trace->tracks.tid[trace->slices.track[i]]), IntArg(i, {key_task_id}));
    };
    StringId key_task_type = builder->Intern("Task Type");
    StringId cat_cann = builder->Intern("cann"), cat_overlap = builder->Intern("overlap_analysis");
    StringId cat_hccl = builder->Intern("hccl"), cat_hccl_task = builder->Intern("hccl_task");
    std::unordered_map<uint64_t, StringId> task_cache;  // task type << 32 | name → category
    for (size_t i = first_slice; i < trace->slices.size(); ++i) {
      if (!trace->slices.category[i].empty()) continue;
      uint32_t track = trace->slices.track[i];
      if (track < first_track) continue;
      switch (roles[track]) {
        case AscendProcess::kCann:
          builder->SetSliceCategory(static_cast<uint32_t>(i), cat_cann);
          break;
        case AscendProcess::kOverlap:
          builder->SetSliceCategory(static_cast<uint32_t>(i), cat_overlap);
          break;
        case AscendProcess::kHccl:
          builder->SetSliceCategory(static_cast<uint32_t>(i), IsGroupTrack(track) ? cat_hccl : cat_hccl_task);
          break;
        case AscendProcess::kHardware: {
          if (is_hccl_task(static_cast<uint32_t>(i))) {
            builder->SetSliceCategory(static_cast<uint32_t>(i), cat_hccl_task);
            break;
          }
          const Arg* a = trace->FindSliceArg(static_cast<uint32_t>(i), key_task_type);
          uint32_t type = a && a->type == ArgType::kString ? a->str : 0;
          uint64_t key = (uint64_t{type} << 32) | trace->slices.name[i].raw;
          auto it = task_cache.find(key);
          if (it == task_cache.end()) {
            std::string_view cat = AscendTaskCategory(trace->Str(StringId{type}), trace->Str(trace->slices.name[i]));
            it = task_cache.emplace(key, builder->Intern(cat)).first;
          }
          builder->SetSliceCategory(static_cast<uint32_t>(i), it->second);
          break;
        }
        default:
          break;
      }
    }
  }
};

}  // namespace

int32_t AscendDeviceFromPid(int64_t pid, int64_t host_pid, int32_t fallback) {
  if (host_pid > 0 && pid > 0 && (pid >> 10) == host_pid) return static_cast<int32_t>(pid & 0x1f);
  return fallback;
}

std::string_view AscendTaskCategory(std::string_view task_type, std::string_view name) {
  if (name.starts_with("hcom_") || name.starts_with("Hccl") || task_type == "HCCL") return "hccl";
  // HCCL's own transfers (its TaskType SDMA / RDMA): part of a collective,
  // whose group track already has its time. A program's copies are
  // MEMCPY_ASYNC tasks of type SDMA_SQE or PCIE_DMA_SQE, which are the only
  // SDMA time msprof-analyze counts as copies.
  if (task_type == "SDMA" || task_type == "RDMA" || (task_type.empty() && (name == "SDMA" || name == "RDMA"))) {
    return "hccl_task";
  }
  if (task_type == "PCIE_DMA_SQE" || task_type == "SDMA_SQE" || task_type == "MEMCPY_ASYNC" ||
      name.starts_with("MEMCPY")) {
    return "Memcpy";
  }
  if (task_type == "EVENT_RECORD_SQE" || task_type == "EVENT_WAIT_SQE" || task_type == "Notify Wait" ||
      task_type == "Notify Record" || task_type == "Write Value" || task_type == "PLACE_HOLDER_SQE" ||
      task_type == "NOTIFY_WAIT_SQE" || task_type == "NOTIFY_RECORD_SQE" || task_type == "WRITE_VALUE_SQE" ||
      name.starts_with("EVENT_") || name.starts_with("PROFILING_") || name.starts_with("Notify") ||
      name == "Write Value") {
    return "npu_sync";
  }
  return "kernel";  // AI_CORE, AI_VECTOR_CORE, AI_CPU, MIX_AIC/AIV, DSA_SQE, FFTS, "Other"
}

Status ImportAscendTimeline(const std::string& path, int32_t rank, int32_t fallback_device,
                            TraceBuilder* builder) {
  size_t first_track = builder->trace()->tracks.size();
  size_t first_slice = builder->trace()->slices.size();
  size_t first_name = builder->process_name_count();
  std::string compression;
  // The Chrome JSON import, on every core; it also hashes the HostToDevice
  // flow ids that exceed 64 bits, so both ends still meet.
  RETURN_IF_ERROR(ParseChromeJsonEvents(path, builder, DefaultChromeJsonOptions(), &compression));
  // Process names by numeric pid (the last one wins), for the role pass.
  std::unordered_map<int64_t, std::string> names;
  for (const auto& [pid, name] : builder->ProcessNamesSince(first_name)) {
    if (!pid.is_string) names[pid.num] = std::string(builder->trace()->Str(name));
  }
  RolePass pass{builder, &names, rank, fallback_device};
  pass.Run(first_track, first_slice);
  if (rank != kNoRank) builder->SetDefaultRank(rank);
  return OkStatus();
}

bool DetectAscendTimeline(std::string_view prefix) {
  if (prefix.substr(0, 3) == "\xEF\xBB\xBF") prefix.remove_prefix(3);
  size_t first = prefix.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || prefix[first] != '[') return false;
  // torch_npu and msprof write ts as a string ("ts": "1736408883704643.212");
  // Kineto and Chrome tools write numbers.
  static const std::regex kStringTs(R"re("ts"\s*:\s*"[0-9])re");
  std::string text(prefix);
  return std::regex_search(text, kStringTs) || text.find("Ascend Hardware") != std::string::npos ||
         text.find("torch_to_npu") != std::string::npos;
}

Status ImportAscendTimelineFile(const std::string& path, TraceBuilder* builder) {
  RETURN_IF_ERROR(ImportAscendTimeline(path, kNoRank, 0, builder));
  builder->trace()->metadata["source_format"] = "ascend_trace_view";
  return OkStatus();
}

}  // namespace aiprof
