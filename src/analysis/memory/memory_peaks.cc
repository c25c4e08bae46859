#include "src/analysis/memory/memory_peaks.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "src/analysis/common/text_format.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/base/decimal.h"

namespace aiprof {
namespace {

constexpr char kMemorySource[] = "memory";

std::optional<double> ArgNumber(const Trace& t, uint64_t begin, uint16_t count, std::optional<StringId> key) {
  if (!key) return std::nullopt;
  for (uint64_t i = begin; i < begin + count; ++i) {
    const Arg& a = t.args[i];
    if (a.key != *key) continue;
    if (a.type == ArgType::kInt) return static_cast<double>(a.i);
    if (a.type == ArgType::kUint) return static_cast<double>(a.u);
    if (a.type == ArgType::kDouble) return a.d;
    return std::nullopt;
  }
  return std::nullopt;
}

// totalGlobalMem of device `id` in the deviceProperties JSON text, or 0.
double CapacityFromProperties(const Trace& t, int64_t id) {
  auto it = t.metadata.find("device_properties");
  if (it == t.metadata.end()) return 0;
  const std::string& p = it->second;
  std::string needle = "\"id\": " + std::to_string(id);
  size_t pos = p.find(needle);
  if (pos == std::string::npos) pos = p.find("\"id\":" + std::to_string(id));
  if (pos == std::string::npos) return 0;
  size_t mem = p.find("\"totalGlobalMem\"", pos);
  size_t next = p.find("\"id\"", pos + 4);
  if (mem == std::string::npos || (next != std::string::npos && mem > next)) return 0;
  size_t colon = p.find(':', mem);
  return colon == std::string::npos ? 0 : std::strtod(p.c_str() + colon + 1, nullptr);
}

// Innermost slice on `track` that encloses `ts`.
uint32_t EnclosingSlice(const Trace& t, const std::vector<uint32_t>& parent,
                        const std::vector<std::pair<uint32_t, uint32_t>>& track_range, uint32_t track, int64_t ts) {
  if (track >= track_range.size()) return kNoSlice;
  auto [b, e] = track_range[track];
  uint32_t lo = b, hi = e;  // last slice with start <= ts
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (t.slices.ts_ns[mid] <= ts) lo = mid + 1; else hi = mid;
  }
  if (lo == b) return kNoSlice;
  for (uint32_t s = lo - 1; s != kNoSlice; s = parent[s]) {
    if (t.slices.ts_ns[s] <= ts && ts <= t.slices.ts_ns[s] + t.slices.dur_ns[s]) return s;
  }
  return kNoSlice;
}

using PeakKey = std::tuple<int32_t, int64_t, int64_t>;  // rank, device type, device id

void PeaksFromMemoryEvents(const Trace& trace, const std::vector<uint32_t>& parent,
                           const std::vector<std::pair<uint32_t, uint32_t>>& track_range,
                           std::map<PeakKey, MemoryPeak>* peaks) {
  auto key = [&](const char* k) { return trace.strings.Find(k); };
  auto alloc_key = key("Total Allocated"), reserved_key = key("Total Reserved");
  auto type_key = key("Device Type"), id_key = key("Device Id");
  if (!alloc_key) return;
  const InstantTable& in = trace.instants;
  for (uint32_t i = 0; i < in.size(); ++i) {
    auto alloc = ArgNumber(trace, in.arg_begin[i], in.arg_count[i], alloc_key);
    if (!alloc) continue;
    int64_t type = static_cast<int64_t>(ArgNumber(trace, in.arg_begin[i], in.arg_count[i], type_key).value_or(0));
    int64_t id = static_cast<int64_t>(ArgNumber(trace, in.arg_begin[i], in.arg_count[i], id_key).value_or(-1));
    int32_t rank = trace.tracks.rank[in.track[i]];
    MemoryPeak& p = (*peaks)[{rank, type, id}];
    p.rank = rank, p.device_type = type, p.device_id = id;
    ++p.events;
    if (*alloc > p.peak_allocated || p.events == 1) {
      p.peak_allocated = *alloc;
      p.peak_allocated_ts_ns = in.ts_ns[i];
      p.peak_allocated_op = EnclosingSlice(trace, parent, track_range, in.track[i], in.ts_ns[i]);
    }
    p.peak_reserved = std::max(p.peak_reserved, ArgNumber(trace, in.arg_begin[i], in.arg_count[i], reserved_key).value_or(0));
  }
}

// A memory_record.csv counter track: "<Component> Total <What>(MB) NPU:<n>".
struct RecordTrack {
  int component_rank;  // 0 PTA+GE, 1 PTA, 2 GE
  std::string component;
  bool allocated;  // else reserved
  int64_t npu;
};

std::optional<RecordTrack> ParseRecordTrack(const Trace& trace, uint32_t track) {
  if (trace.tracks.kind[track] != TrackKind::kCounter ||
      trace.Str(trace.tracks.pid_label[track]) != "memory (memory_record.csv)") {
    return std::nullopt;
  }
  // "(PTA+GE|PTA|GE) Total (Allocated|Reserved)(MB) NPU:N", parsed by hand:
  // the name comes from the file (a regex over 100,000 digits overflowed
  // the stack; an NPU number past int64 threw out of std::stoll).
  std::string_view name = trace.Str(trace.tracks.name[track]);
  auto consume = [&name](std::string_view prefix) {
    if (!name.starts_with(prefix)) return false;
    name.remove_prefix(prefix.size());
    return true;
  };
  static constexpr std::string_view kComponents[] = {"PTA+GE", "PTA", "GE"};  // index: the rank
  int component_rank = 0;
  while (component_rank < 3 && !consume(kComponents[component_rank])) ++component_rank;
  if (component_rank == 3 || !consume(" Total ")) return std::nullopt;
  const bool allocated = consume("Allocated");
  if (!allocated && !consume("Reserved")) return std::nullopt;
  if (!consume("(MB) NPU:") || name.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  const std::optional<int64_t> npu = ParseInt64(name);  // nullopt past int64 or empty
  if (!npu || *npu > INT32_MAX) return std::nullopt;
  return RecordTrack{component_rank, std::string(kComponents[component_rank]), allocated, *npu};
}

// The operator_memory allocation on NPU `npu` of `rank` made at `ts`, else
// the last one before it.
uint32_t AllocationAt(const Trace& trace, int32_t rank, int64_t npu, int64_t ts) {
  std::optional<StringId> category = trace.strings.Find("operator_memory");
  if (!category) return kNoInstant;
  const InstantTable& in = trace.instants;
  uint32_t best = kNoInstant;
  for (uint32_t i = 0; i < in.size(); ++i) {
    uint32_t t = in.track[i];
    if (in.category[i] != *category || trace.tracks.rank[t] != rank || trace.tracks.device[t] != npu) continue;
    if (in.ts_ns[i] > ts) continue;
    if (best == kNoInstant || in.ts_ns[i] > in.ts_ns[best]) best = i;
  }
  return best;
}

// Innermost slice on a host thread track of `rank` enclosing `ts`.
uint32_t HostOpAt(const Trace& trace, const std::vector<uint32_t>& parent,
                  const std::vector<std::pair<uint32_t, uint32_t>>& track_range, int32_t rank, int64_t ts) {
  uint32_t best = kNoSlice;
  for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
    if (trace.tracks.kind[t] != TrackKind::kThread || trace.tracks.device[t] != kHostDevice ||
        trace.tracks.rank[t] != rank) {
      continue;
    }
    uint32_t s = EnclosingSlice(trace, parent, track_range, t, ts);
    if (s == kNoSlice) continue;
    if (best == kNoSlice || trace.slices.depth[s] > trace.slices.depth[best] ||
        (trace.slices.depth[s] == trace.slices.depth[best] && trace.slices.dur_ns[s] < trace.slices.dur_ns[best])) {
      best = s;
    }
  }
  return best;
}

void PeaksFromMemoryRecord(const Trace& trace, const std::vector<uint32_t>& parent,
                           const std::vector<std::pair<uint32_t, uint32_t>>& track_range,
                           std::map<PeakKey, MemoryPeak>* peaks) {
  std::vector<std::optional<RecordTrack>> parsed(trace.tracks.size());
  std::map<PeakKey, int> best_component;  // per device: lowest component_rank seen with Allocated
  for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
    parsed[t] = ParseRecordTrack(trace, t);
    if (!parsed[t] || !parsed[t]->allocated) continue;
    PeakKey k{trace.tracks.rank[t], kNpuDeviceType, parsed[t]->npu};
    auto [it, inserted] = best_component.emplace(k, parsed[t]->component_rank);
    if (!inserted) it->second = std::min(it->second, parsed[t]->component_rank);
  }
  if (best_component.empty()) return;
  std::map<PeakKey, MemoryPeak> found;
  const CounterTable& c = trace.counters;
  for (uint32_t i = 0; i < c.size(); ++i) {
    const std::optional<RecordTrack>& r = parsed[c.track[i]];
    if (!r) continue;
    PeakKey k{trace.tracks.rank[c.track[i]], kNpuDeviceType, r->npu};
    auto best = best_component.find(k);
    if (best == best_component.end() || best->second != r->component_rank) continue;
    MemoryPeak& p = found[k];
    p.rank = std::get<0>(k), p.device_type = kNpuDeviceType, p.device_id = r->npu, p.component = r->component;
    double bytes = std::round(c.value[i] * 1048576.0);
    if (!r->allocated) {
      p.peak_reserved = std::max(p.peak_reserved, bytes);
      continue;
    }
    ++p.events;
    if (bytes > p.peak_allocated || p.events == 1 ||
        (bytes == p.peak_allocated && c.ts_ns[i] < p.peak_allocated_ts_ns)) {
      p.peak_allocated = bytes;
      p.peak_allocated_ts_ns = c.ts_ns[i];
    }
  }
  for (auto& [k, p] : found) {
    if (p.events == 0) continue;
    p.peak_allocation = AllocationAt(trace, p.rank, p.device_id, p.peak_allocated_ts_ns);
    p.peak_allocated_op = HostOpAt(trace, parent, track_range, p.rank, p.peak_allocated_ts_ns);
    (*peaks)[k] = p;
  }
}

}  // namespace

std::string DescribePeak(const Trace& trace, const MemoryPeak& p) {
  std::string device = p.device_type == kNpuDeviceType ? "NPU:" + std::to_string(p.device_id)
                                                       : "device type " + std::to_string(p.device_type) + " id " +
                                                             std::to_string(p.device_id);
  std::string line = "peak allocated " + FormatBytes(p.peak_allocated) + " on " + device;
  if (p.rank != kNoRank) line += " (rank " + std::to_string(p.rank) + ")";
  if (!p.component.empty()) line += " (memory_record.csv " + p.component + ")";
  line += " at ts " + std::to_string(p.peak_allocated_ts_ns) + " ns";
  if (p.peak_allocation != kNoInstant) {
    const InstantTable& in = trace.instants;
    std::optional<StringId> size_key = trace.strings.Find("size_bytes");
    std::optional<double> size =
        ArgNumber(trace, in.arg_begin[p.peak_allocation], in.arg_count[p.peak_allocation], size_key);
    line += ", last allocation " + std::string(trace.Str(in.name[p.peak_allocation])) +
            (size ? " (" + FormatBytes(*size) + ")" : std::string()) + " at ts " +
            std::to_string(in.ts_ns[p.peak_allocation]) + " ns";
  }
  line += p.peak_allocated_op == kNoSlice ? ", no enclosing op"
                                          : ", during " + std::string(trace.Str(trace.slices.name[p.peak_allocated_op]));
  return line;
}

MemoryResult ComputeMemoryPeaks(const Trace& trace) {
  MemoryResult r;
  std::vector<uint32_t> parent = ParentSlices(trace);
  std::vector<std::pair<uint32_t, uint32_t>> track_range = TrackSliceRanges(trace);
  std::map<PeakKey, MemoryPeak> peaks;
  PeaksFromMemoryEvents(trace, parent, track_range, &peaks);
  PeaksFromMemoryRecord(trace, parent, track_range, &peaks);
  for (auto& [k, p] : peaks) {
    if (p.device_type != 0) p.capacity_bytes = CapacityFromProperties(trace, p.device_id);
    r.devices.push_back(p);
  }
  const std::optional<StringId> bytes_key = trace.strings.Find("Bytes");
  if (r.devices.empty() && bytes_key) {
    const InstantTable& in = trace.instants;
    for (uint32_t i = 0; i < in.size(); ++i) {
      r.bytes_only_events += ArgNumber(trace, in.arg_begin[i], in.arg_count[i], bytes_key).has_value();
    }
  }
  return r;
}

std::string NoMemoryPeakReason(const MemoryResult& r) {
  if (r.bytes_only_events > 0) {
    return "the trace's " + std::to_string(r.bytes_only_events) +
           " [memory] events carry each allocation's Bytes only, no Total Allocated: the allocator's total and its "
           "peak are not recorded (their running sum is the net allocated since the trace started, which leaves out "
           "memory allocated before it)";
  }
  return "no [memory] events with Total Allocated and no memory_record.csv allocator rows in the trace "
         "(profile_memory off?)";
}

void PublishMemoryPeaks(const Trace& trace, const MemoryResult& r, MetricSet* metrics) {
  if (r.devices.empty()) {
    const std::string why = NoMemoryPeakReason(r);
    for (const char* m : {"memory_peak_allocated_bytes", "memory_peak_reserved_bytes", "memory_peak_util"}) {
      metrics->SetUnavailable(m, why);
    }
    return;
  }
  bool any_accel = std::any_of(r.devices.begin(), r.devices.end(), [](const MemoryPeak& p) { return p.device_type != 0; });
  const MemoryPeak* top = nullptr;
  double reserved = 0, util = -1;
  for (const MemoryPeak& p : r.devices) {
    if (any_accel && p.device_type == 0) continue;
    if (top == nullptr || p.peak_allocated > top->peak_allocated) top = &p;
    reserved = std::max(reserved, p.peak_reserved);
    double used = p.peak_reserved > 0 ? p.peak_reserved : p.peak_allocated;
    if (p.capacity_bytes > 0) util = std::max(util, used / p.capacity_bytes);
  }
  metrics->Set("memory_peak_allocated_bytes", top->peak_allocated, kMemorySource);
  if (reserved > 0) {
    metrics->Set("memory_peak_reserved_bytes", reserved, kMemorySource);
  } else {
    metrics->SetUnavailable("memory_peak_reserved_bytes", "the allocator reports no reserved memory (0 on CPU)");
  }
  if (util >= 0) {
    metrics->Set("memory_peak_util", util, kMemorySource);
  } else {
    metrics->SetUnavailable("memory_peak_util", "device memory capacity unknown (no totalGlobalMem in deviceProperties)");
  }
  metrics->AddEvidence("memory_pressure", DescribePeak(trace, *top));
}

}  // namespace aiprof
