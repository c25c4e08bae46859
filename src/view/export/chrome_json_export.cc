#include "src/view/export/chrome_json_export.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "src/render/escape.h"

namespace aiprof {

void AppendMicros(std::string* out, int64_t ns) {
  uint64_t magnitude = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  if (ns < 0) out->push_back('-');
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), magnitude / 1000);
  out->append(digits, end);
  char frac[4] = {static_cast<char>('0' + magnitude % 1000 / 100), static_cast<char>('0' + magnitude % 100 / 10),
                  static_cast<char>('0' + magnitude % 10), 0};
  out->push_back('.');
  out->append(frac, 3);
}

namespace {


void AppendDouble(std::string* out, double v) {
  if (!std::isfinite(v)) {
    out->append("null");
    return;
  }
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, p);
}

void AppendQuoted(std::string* out, std::string_view s) {
  out->push_back('"');
  AppendJsonEscaped(out, s);
  out->push_back('"');
}

template <typename Int>
void AppendInt(std::string* out, Int v) {
  char buf[24];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, p);
}

bool IsMemoryCounterName(std::string_view name) {
  return name.rfind("Total Allocated (", 0) == 0 || name.rfind("Total Reserved (", 0) == 0;
}

class ChromeJsonWriter {
 public:
  ChromeJsonWriter(const Trace& trace, ViewSink* out, ChromeJsonExportStats* stats, const CriticalPathResult* path)
      : trace_(trace), out_(out), stats_(stats), path_(path) {
    key_correlation_ = FindString("correlation");
  }

  Status Run() {
    std::set<int32_t> ranks;
    for (size_t i = 0; i < trace_.tracks.size(); ++i) ranks.insert(trace_.tracks.rank[i]);
    multi_rank_ = ranks.size() > 1;
    buffer_ = "{\"displayTimeUnit\":\"ns\"";
    WriteTopLevel();
    buffer_ += ",\"traceEvents\":[";
    RETURN_IF_ERROR(WriteMetadataEvents());
    RETURN_IF_ERROR(WriteSlices());
    RETURN_IF_ERROR(WriteInstants());
    RETURN_IF_ERROR(WriteCounters());
    RETURN_IF_ERROR(WriteFlows());
    RETURN_IF_ERROR(WriteCriticalFlows());
    buffer_ += "\n]";
    RETURN_IF_ERROR(WriteSamples());
    buffer_ += "}\n";
    return Flush();
  }

 private:
  StringId FindString(std::string_view s) const {
    for (size_t i = 1; i < trace_.strings.size(); ++i) {
      if (trace_.strings.Get(StringId{static_cast<uint32_t>(i)}) == s) return StringId{static_cast<uint32_t>(i)};
    }
    return StringId{UINT32_MAX};
  }

  void WriteTopLevel() {
    const auto& md = trace_.metadata;
    auto rank = md.find("rank");
    if (!multi_rank_ && rank != md.end()) {
      buffer_ += ",\"distributedInfo\":{\"rank\":";
      buffer_ += std::to_string(std::atoll(rank->second.c_str()));
      if (auto w = md.find("world_size"); w != md.end()) {
        buffer_ += ",\"world_size\":" + std::to_string(std::atoll(w->second.c_str()));
      }
      if (auto b = md.find("backend"); b != md.end()) buffer_ += ",\"backend\":" + JsonString(b->second);
      buffer_ += "}";
    }
    // Raw JSON kept by the importer (it parsed as JSON, so it embeds as JSON).
    if (auto p = md.find("device_properties"); p != md.end() && !p->second.empty()) {
      buffer_ += ",\"deviceProperties\":" + p->second;
    }
  }

  // "pid":…,"tid":… of a track, built once per track.
  void AppendIds(size_t track) {
    if (ids_.empty()) ids_.resize(trace_.tracks.size());
    std::string& ids = ids_[track];
    if (ids.empty()) {
      const TrackTable& t = trace_.tracks;
      ids = "\"pid\":";
      if (multi_rank_) {
        std::string label = "rank " + std::to_string(t.rank[track]) + " pid " +
                            (t.pid_label[track].empty() ? std::to_string(t.pid[track])
                                                        : std::string(trace_.Str(t.pid_label[track])));
        AppendQuoted(&ids, label);
      } else if (DeviceAsPid(track)) {
        AppendInt(&ids, t.device[track]);  // PyTorch's layout: pid = device, so the device comes back
      } else if (!t.pid_label[track].empty()) {
        AppendQuoted(&ids, trace_.Str(t.pid_label[track]));
      } else {
        AppendInt(&ids, t.pid[track]);
      }
      ids += ",\"tid\":";
      if (!t.tid_label[track].empty()) {
        AppendQuoted(&ids, trace_.Str(t.tid_label[track]));
      } else {
        AppendInt(&ids, t.tid[track]);
      }
    }
    buffer_ += ids;
  }

  // A device stream named by a label ("GPU 0" from Nsight) is written with
  // its device index as pid (and the label as process name): a re-import
  // then sees pid = device, tid = stream, as in PyTorch's traces.
  bool DeviceAsPid(size_t track) const {
    const TrackTable& t = trace_.tracks;
    return !multi_rank_ && t.kind[track] == TrackKind::kDeviceStream && t.device[track] != kHostDevice &&
           !t.pid_label[track].empty();
  }

  Status BeginEvent() {
    buffer_ += first_ ? "\n{" : ",\n{";
    first_ = false;
    ++stats_->events;
    if (buffer_.size() >= kViewFlushBytes) return Flush();
    return OkStatus();
  }

  Status WriteMetadataEvents() {
    const TrackTable& t = trace_.tracks;
    std::set<std::tuple<int32_t, int64_t, uint32_t>> named_processes;
    for (size_t i = 0; i < t.size(); ++i) {
      auto key = std::make_tuple(t.rank[i], t.pid[i], t.pid_label[i].raw);
      StringId process_name = !t.process_name[i].empty() ? t.process_name[i] : DeviceAsPid(i) ? t.pid_label[i] : StringId{};
      if (!process_name.empty() && named_processes.insert(key).second) {
        RETURN_IF_ERROR(BeginEvent());
        buffer_ += "\"ph\":\"M\",\"name\":\"process_name\",";
        AppendIds(i);
        buffer_ += ",\"args\":{\"name\":" + JsonString(trace_.Str(process_name)) + "}}";
      }
      if (t.kind[i] == TrackKind::kCounter) continue;
      RETURN_IF_ERROR(BeginEvent());
      buffer_ += "\"ph\":\"M\",\"name\":\"thread_name\",";
      AppendIds(i);
      buffer_ += ",\"args\":{\"name\":" + JsonString(trace_.Str(t.name[i])) + "}}";
    }
    return OkStatus();
  }

  void AppendNameCat(StringId name, StringId category) {
    buffer_ += "\"name\":\"";
    AppendJsonEscaped(&buffer_, trace_.Str(name));
    buffer_ += "\",\"cat\":\"";
    AppendJsonEscaped(&buffer_, trace_.Str(category));
    buffer_ += "\",";
  }

  // ,"args":{…} (nothing when there are none, no correlation to add and
  // the slice is not on the critical path).
  void AppendArgs(uint64_t begin, uint16_t count, int64_t correlation, bool critical = false) {
    bool has_correlation_arg = false;
    for (uint64_t a = begin; a < begin + count; ++a) has_correlation_arg |= trace_.args[a].key == key_correlation_;
    const bool add_correlation = correlation != kNoCorrelation && !has_correlation_arg;
    if (count == 0 && !add_correlation && !critical) return;
    buffer_ += ",\"args\":{";
    for (uint64_t a = begin; a < begin + count; ++a) {
      const Arg& arg = trace_.args[a];
      if (a != begin) buffer_ += ',';
      AppendQuoted(&buffer_, trace_.Str(arg.key));
      buffer_ += ':';
      switch (arg.type) {
        case ArgType::kInt: AppendInt(&buffer_, arg.i); break;
        case ArgType::kUint: AppendInt(&buffer_, arg.u); break;
        case ArgType::kDouble: AppendDouble(&buffer_, arg.d); break;
        case ArgType::kString: AppendQuoted(&buffer_, trace_.Str(StringId{arg.str})); break;
        case ArgType::kJson: buffer_ += trace_.Str(StringId{arg.str}); break;  // parsed as JSON on import
        case ArgType::kBool: buffer_ += arg.i != 0 ? "true" : "false"; break;
        case ArgType::kNull: buffer_ += "null"; break;
      }
    }
    if (add_correlation) {
      if (count > 0) buffer_ += ',';
      buffer_ += "\"correlation\":";
      AppendInt(&buffer_, correlation);
    }
    if (critical) buffer_ += count > 0 || add_correlation ? ",\"critical_path\":1" : "\"critical_path\":1";
    buffer_ += '}';
  }

  Status WriteSlices() {
    const SliceTable& s = trace_.slices;
    for (size_t i = 0; i < s.size(); ++i) {
      RETURN_IF_ERROR(BeginEvent());
      buffer_ += "\"ph\":\"X\",";
      AppendNameCat(s.name[i], s.category[i]);
      AppendIds(s.track[i]);
      buffer_ += ",\"ts\":";
      AppendMicros(&buffer_, s.ts_ns[i]);
      buffer_ += ",\"dur\":";
      AppendMicros(&buffer_, s.dur_ns[i]);
      const bool critical = path_ != nullptr && i < path_->on_path.size() && path_->on_path[i];
      AppendArgs(s.arg_begin[i], s.arg_count[i], s.correlation[i], critical);
      buffer_ += '}';
      ++stats_->slices;
      stats_->critical_slices += critical ? 1 : 0;
    }
    return OkStatus();
  }

  Status WriteInstants() {
    const InstantTable& in = trace_.instants;
    for (size_t i = 0; i < in.size(); ++i) {
      RETURN_IF_ERROR(BeginEvent());
      buffer_ += "\"ph\":\"i\",";
      AppendNameCat(in.name[i], in.category[i]);
      AppendIds(in.track[i]);
      buffer_ += ",\"ts\":";
      AppendMicros(&buffer_, in.ts_ns[i]);
      char scope = in.scope[i] == 'g' || in.scope[i] == 'p' ? in.scope[i] : 't';
      buffer_ += ",\"s\":\"";
      buffer_ += scope;
      buffer_ += '"';
      AppendArgs(in.arg_begin[i], in.arg_count[i], kNoCorrelation);
      buffer_ += '}';
      ++stats_->instants;
    }
    return OkStatus();
  }

  Status WriteCounters() {
    bool has_memory_instants = false;
    const StringId memory = FindString("[memory]");
    for (size_t i = 0; i < trace_.instants.size() && !has_memory_instants; ++i) {
      has_memory_instants = trace_.instants.name[i] == memory;
    }
    const CounterTable& c = trace_.counters;
    for (size_t i = 0; i < c.size(); ++i) {
      std::string_view name = trace_.Str(trace_.tracks.name[c.track[i]]);
      if (has_memory_instants && IsMemoryCounterName(name)) {
        ++stats_->skipped_memory_counters;
        continue;
      }
      RETURN_IF_ERROR(BeginEvent());
      buffer_ += "\"ph\":\"C\",\"name\":";
      AppendQuoted(&buffer_, name);
      buffer_ += ',';
      AppendIds(c.track[i]);
      buffer_ += ",\"ts\":";
      AppendMicros(&buffer_, c.ts_ns[i]);
      buffer_ += ",\"args\":{\"value\":";
      AppendDouble(&buffer_, c.value[i]);
      buffer_ += "}}";
      ++stats_->counter_values;
    }
    return OkStatus();
  }

  // Every flow, launch-to-kernel (category "correlation", also kept as the
  // slices' correlation args) included, as Trace Event Format flow events:
  // "s" at the source slice's start, "f" with "bp":"e" at the target's start
  // (binds to the enclosing slice). A re-import links the same slices once
  // (TraceBuilder skips a flow event pair its correlation ids already linked).
  Status WriteFlows() {
    const FlowTable& f = trace_.flows;
    const SliceTable& s = trace_.slices;
    uint64_t id = 0;
    for (size_t i = 0; i < f.size(); ++i) {
      ++id;
      for (int end = 0; end < 2; ++end) {
        uint32_t slice = end == 0 ? f.from_slice[i] : f.to_slice[i];
        RETURN_IF_ERROR(BeginEvent());
        buffer_ += end == 0 ? "\"ph\":\"s\"," : "\"ph\":\"f\",\"bp\":\"e\",";
        buffer_ += "\"id\":";
        AppendInt(&buffer_, id);
        buffer_ += ",\"name\":\"flow\",\"cat\":";
        AppendQuoted(&buffer_, trace_.Str(f.category[i]));
        buffer_ += ',';
        AppendIds(s.track[slice]);
        buffer_ += ",\"ts\":";
        AppendMicros(&buffer_, s.ts_ns[slice]);
        buffer_ += '}';
      }
      ++stats_->flows;
    }
    return OkStatus();
  }

  // The critical path's dependencies, numbered after the trace's flows.
  // Each flow is drawn where the dependency is: from the source's end (a
  // stream's previous activity, the device work a sync call or a stream
  // waited for, the thread work a hand-off follows) or start (a launch call,
  // a collective's last arrival) to the target's start (launched or waiting
  // work) or end (a sync call, a collective that ends once its last rank
  // arrived). A sync flow drawn start to start went back in time (ResNet50:
  // 6 of 12, copy start after the call's start). An end is drawn
  // kFlowEndInsetNs inside the slice (half of it, rounded up, when shorter): a flow event
  // binds to the slice that contains its time, end excluded (Chrome's
  // rules, aiprof's import), and viewers that read µs as doubles keep 0.25 µs
  // at epoch magnitudes. The target's time is never before the source's.
  static constexpr int64_t kFlowEndInsetNs = 1000;
  int64_t FlowTime(uint32_t slice, bool at_end) const {
    const SliceTable& s = trace_.slices;
    if (!at_end) return s.ts_ns[slice];
    return s.ts_ns[slice] + s.dur_ns[slice] - std::min(kFlowEndInsetNs, (s.dur_ns[slice] + 1) / 2);
  }
  Status WriteCriticalFlows() {
    if (path_ == nullptr) return OkStatus();
    const SliceTable& s = trace_.slices;
    uint64_t id = trace_.flows.size();
    for (const PathEdge& edge : path_->edges) {
      if (edge.from_slice >= s.size() || edge.to_slice >= s.size()) continue;
      ++id;
      const int64_t from_ts = FlowTime(edge.from_slice, DepLeavesFromEnd(edge.kind));
      int64_t to_ts = FlowTime(edge.to_slice, DepArrivesAtEnd(edge.kind));
      // Not before the source while that stays inside the target (a skewed
      // clock can put the target's end before the source's: left as is).
      if (to_ts < from_ts && from_ts < SliceEnd(s, edge.to_slice)) to_ts = from_ts;
      for (int end = 0; end < 2; ++end) {
        const uint32_t slice = end == 0 ? edge.from_slice : edge.to_slice;
        RETURN_IF_ERROR(BeginEvent());
        buffer_ += end == 0 ? "\"ph\":\"s\"," : "\"ph\":\"f\",\"bp\":\"e\",";
        buffer_ += "\"id\":";
        AppendInt(&buffer_, id);
        buffer_ += ",\"name\":";
        AppendQuoted(&buffer_, DepKindName(edge.kind));
        buffer_ += ",\"cat\":\"critical_path\",";
        AppendIds(s.track[slice]);
        buffer_ += ",\"ts\":";
        AppendMicros(&buffer_, end == 0 ? from_ts : to_ts);
        buffer_ += '}';
      }
      ++stats_->critical_flows;
    }
    return OkStatus();
  }

  // CPU stack samples as the Trace Event Format's top-level "stackFrames"
  // (every callsite: "name" the function, "category" the module, "parent")
  // and "samples" (thread ids, ts in µs, "sf" the leaf callsite, weight 1).
  Status WriteSamples() {
    const StackSampleTable& s = trace_.samples;
    if (s.size() == 0) return OkStatus();
    const CallsiteTable& cs = trace_.callsites;
    buffer_ += ",\"stackFrames\":{";
    for (size_t c = 0; c < cs.size(); ++c) {
      if (c != 0) buffer_ += ',';
      buffer_ += '"';
      AppendInt(&buffer_, c);
      buffer_ += "\":{\"name\":";
      AppendQuoted(&buffer_, trace_.Str(cs.frame[c]));
      buffer_ += ",\"category\":";
      AppendQuoted(&buffer_, trace_.Str(cs.module[c]));
      if (cs.parent[c] != kNoCallsite) {
        buffer_ += ",\"parent\":\"";
        AppendInt(&buffer_, cs.parent[c]);
        buffer_ += '"';
      }
      buffer_ += '}';
      if (buffer_.size() >= kViewFlushBytes) RETURN_IF_ERROR(Flush());
    }
    buffer_ += "},\"samples\":[";
    for (size_t i = 0; i < s.size(); ++i) {
      buffer_ += i == 0 ? "\n{" : ",\n{";
      buffer_ += "\"cpu\":0,\"name\":\"cpu-clock\",";
      AppendIds(s.track[i]);
      buffer_ += ",\"ts\":";
      AppendMicros(&buffer_, s.ts_ns[i]);
      if (s.callsite[i] != kNoCallsite) {
        buffer_ += ",\"sf\":\"";
        AppendInt(&buffer_, s.callsite[i]);
        buffer_ += '"';
      }
      buffer_ += ",\"weight\":1}";
      ++stats_->samples;
      if (buffer_.size() >= kViewFlushBytes) RETURN_IF_ERROR(Flush());
    }
    buffer_ += "\n]";
    return OkStatus();
  }

  Status Flush() {
    RETURN_IF_ERROR(out_->Append(buffer_));
    buffer_.clear();
    return OkStatus();
  }

  const Trace& trace_;
  ViewSink* out_;
  ChromeJsonExportStats* stats_;
  const CriticalPathResult* path_;
  std::string buffer_;
  bool first_ = true;
  bool multi_rank_ = false;
  StringId key_correlation_;
  std::vector<std::string> ids_;
};

}  // namespace

Status ExportChromeJson(const Trace& trace, ViewSink* out, ChromeJsonExportStats* stats,
                        const CriticalPathResult* critical_path) {
  ChromeJsonExportStats local;
  ChromeJsonWriter writer(trace, out, stats ? stats : &local, critical_path);
  return writer.Run();
}

}  // namespace aiprof
