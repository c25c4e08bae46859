#include "src/importers/ascend/trace_view_importer.h"

#include <simdjson.h>

#include <cstring>
#include <regex>
#include <unordered_map>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "src/base/decimal.h"
#include "src/importers/common/byte_source.h"
#include "src/importers/json/chrome_json_parser.h"
#include "src/importers/json/chrome_json_tokenizer.h"
#include "src/model/trace_builder.h"

namespace aiprof {
namespace od = simdjson::ondemand;

namespace {

enum class AscendProcess : uint8_t { kOther, kPython, kCann, kHardware, kHccl, kOverlap };

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

// True if the event's "id" is a run of more than 19 digits: torch_npu's
// HostToDevice flow ids ("40004068119343529983") can exceed uint64.
bool HasHugeId(const char* data, size_t len) {
  const char* p = static_cast<const char*>(memmem(data, len, "\"id\"", 4));
  if (p == nullptr) return false;
  const char* end = data + len;
  p += 4;
  while (p < end && (*p == ' ' || *p == ':' || *p == '"')) ++p;
  size_t digits = 0;
  while (p < end && *p >= '0' && *p <= '9') ++p, ++digits;
  return digits > 19;
}

// Forwards every event to the Chrome parser and remembers process_name
// metadata by numeric pid, which the role pass needs before Finalize().
// Flow events whose id does not fit 64 bits are handled here instead: the
// id text is hashed (XXH3) so both ends still meet.
class ProcessNameSink : public ChromeJsonSink {
 public:
  ProcessNameSink(const std::string& path, TraceBuilder* builder) : inner_(path, builder), builder_(builder) {}

  void OnEvent(const char* data, size_t len, size_t capacity, uint64_t offset) override {
    if (memmem(data, len, "process_name", 12) != nullptr) Remember(data, len, capacity);
    if (HasHugeId(data, len) && HugeIdFlow(data, len, capacity)) return;
    inner_.OnEvent(data, len, capacity, offset);
  }
  uint64_t hashed_flow_ids() const { return hashed_flow_ids_; }
  void OnTopLevelValue(std::string_view key, const char* data, size_t len, size_t capacity,
                       uint64_t offset) override {
    inner_.OnTopLevelValue(key, data, len, capacity, offset);
  }
  void OnSkippedValue(std::string_view key, uint64_t offset, uint64_t bytes) override {
    inner_.OnSkippedValue(key, offset, bytes);
  }
  const std::unordered_map<int64_t, std::string>& names() const { return names_; }

 private:
  void Remember(const char* data, size_t len, size_t capacity) {
    od::document doc;
    od::object obj;
    if (parser_.iterate(data, len, capacity).get(doc) || doc.get_object().get(obj)) return;
    std::string_view ph, name, value;
    int64_t pid = 0;
    bool has_pid = false;
    for (auto field_r : obj) {
      od::field field;
      std::string_view key;
      if (std::move(field_r).get(field) || field.unescaped_key().get(key)) return;
      od::value v = field.value();
      if (key == "ph") {
        if (v.get_string().get(ph)) return;
      } else if (key == "name") {
        if (v.get_string().get(name)) return;
      } else if (key == "pid") {
        std::string_view raw = v.raw_json_token();
        while (!raw.empty() && (raw.back() == ' ' || raw.back() == ',' || raw.back() == '"')) raw.remove_suffix(1);
        if (!raw.empty() && raw.front() == '"') raw.remove_prefix(1);
        std::optional<int64_t> n = ParseInt64(raw);
        has_pid = n.has_value();
        pid = n.value_or(0);
      } else if (key == "args") {
        od::object args;
        if (v.get_object().get(args) || args["name"].get_string().get(value)) return;
      }
    }
    if (ph == "M" && name == "process_name" && has_pid) names_[pid] = std::string(value);
  }

  static bool Int(od::value v, int64_t* out) {
    std::string_view raw = v.raw_json_token();
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == ',' || raw.back() == '"')) raw.remove_suffix(1);
    if (!raw.empty() && raw.front() == '"') raw.remove_prefix(1);
    std::optional<int64_t> n = ParseInt64(raw);
    *out = n.value_or(0);
    return n.has_value();
  }

  // Adds a flow event with a >64-bit id; false if it is not a usable flow
  // event (the Chrome parser then reports it as usual).
  bool HugeIdFlow(const char* data, size_t len, size_t capacity) {
    od::document doc;
    od::object obj;
    if (parser_.iterate(data, len, capacity).get(doc) || doc.get_object().get(obj)) return false;
    std::string_view ph, id, cat, bp, ts_text;
    int64_t pid = 0, tid = 0;
    for (auto field_r : obj) {
      od::field field;
      std::string_view key;
      if (std::move(field_r).get(field) || field.unescaped_key().get(key)) return false;
      od::value v = field.value();
      if (key == "ph") {
        if (v.get_string().get(ph)) return false;
      } else if (key == "id") {
        id = v.raw_json_token();
      } else if (key == "cat") {
        if (v.get_string().get(cat)) return false;
      } else if (key == "bp") {
        if (v.get_string().get(bp)) return false;
      } else if (key == "ts") {
        ts_text = v.raw_json_token();
      } else if (key == "pid") {
        if (!Int(v, &pid)) return false;
      } else if (key == "tid") {
        if (!Int(v, &tid)) return false;
      }
    }
    if (ph.size() != 1 || (ph[0] != 's' && ph[0] != 't' && ph[0] != 'f')) return false;
    while (!ts_text.empty() && (ts_text.back() == ' ' || ts_text.back() == ',' || ts_text.back() == '"')) ts_text.remove_suffix(1);
    if (!ts_text.empty() && ts_text.front() == '"') ts_text.remove_prefix(1);
    std::optional<int64_t> ts = ParseMicrosToNanos(ts_text);
    if (!ts) return false;
    while (!id.empty() && (id.back() == ' ' || id.back() == ',' || id.back() == '"')) id.remove_suffix(1);
    if (!id.empty() && id.front() == '"') id.remove_prefix(1);
    uint64_t hashed = XXH3_64bits(id.data(), id.size());
    uint32_t track = builder_->ThreadTrack(IdValue::Num(pid), IdValue::Num(tid));
    builder_->AddFlowEvent(hashed, ph[0], track, *ts, ph[0] != 'f' || bp == "e", builder_->Intern(cat));
    ++hashed_flow_ids_;
    return true;
  }

  ChromeJsonParser inner_;
  TraceBuilder* builder_;
  od::parser parser_;
  std::unordered_map<int64_t, std::string> names_;
  uint64_t hashed_flow_ids_ = 0;
};

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

  void AssignCategories(const std::vector<AscendProcess>& roles, size_t first_track, size_t first_slice) {
    Trace* trace = builder->trace();
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
        case AscendProcess::kHccl: {
          std::string_view thread = trace->Str(trace->tracks.name[track]);
          bool group = thread.find("Communication") != std::string_view::npos;
          builder->SetSliceCategory(static_cast<uint32_t>(i), group ? cat_hccl : cat_hccl_task);
          break;
        }
        case AscendProcess::kHardware: {
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

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

int32_t AscendDeviceFromPid(int64_t pid, int64_t host_pid, int32_t fallback) {
  if (host_pid > 0 && pid > 0 && (pid >> 10) == host_pid) return static_cast<int32_t>(pid & 0x1f);
  return fallback;
}

std::string_view AscendTaskCategory(std::string_view task_type, std::string_view name) {
  if (StartsWith(name, "hcom_") || StartsWith(name, "Hccl") || task_type == "HCCL") return "hccl";
  if (task_type == "PCIE_DMA_SQE" || task_type == "SDMA_SQE" || task_type == "SDMA" ||
      task_type == "MEMCPY_ASYNC" || StartsWith(name, "MEMCPY") || name == "SDMA") {
    return "Memcpy";
  }
  if (task_type == "EVENT_RECORD_SQE" || task_type == "EVENT_WAIT_SQE" || task_type == "Notify Wait" ||
      task_type == "Notify Record" || task_type == "Write Value" || task_type == "PLACE_HOLDER_SQE" ||
      task_type == "NOTIFY_WAIT_SQE" || task_type == "NOTIFY_RECORD_SQE" || task_type == "WRITE_VALUE_SQE" ||
      StartsWith(name, "EVENT_") || StartsWith(name, "PROFILING_") || StartsWith(name, "Notify") ||
      name == "Write Value") {
    return "npu_sync";
  }
  return "kernel";  // AI_CORE, AI_VECTOR_CORE, AI_CPU, MIX_AIC/AIV, DSA_SQE, FFTS, "Other"
}

Status ImportAscendTimeline(const std::string& path, int32_t rank, int32_t fallback_device,
                            TraceBuilder* builder) {
  size_t first_track = builder->trace()->tracks.size();
  size_t first_slice = builder->trace()->slices.size();
  ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, ByteSource::Open(path));
  ProcessNameSink sink(path, builder);
  ChromeJsonTokenizer tokenizer(source.get(), &sink);
  RETURN_IF_ERROR(tokenizer.Run());
  if (sink.hashed_flow_ids() > 0) {
    builder->trace()->metadata["hashed_flow_ids"] = std::to_string(sink.hashed_flow_ids());
  }
  RolePass pass{builder, &sink.names(), rank, fallback_device};
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
