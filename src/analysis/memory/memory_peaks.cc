#include "src/analysis/memory/memory_peaks.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "src/analysis/common/text_format.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/metrics/metric_set.h"

namespace aiprof {
namespace {

constexpr char kSource[] = "memory";

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

}  // namespace

MemoryResult ComputeMemoryPeaks(const Trace& trace) {
  MemoryResult r;
  auto key = [&](const char* k) { return trace.strings.Find(k); };
  auto alloc_key = key("Total Allocated"), reserved_key = key("Total Reserved");
  auto type_key = key("Device Type"), id_key = key("Device Id");
  if (!alloc_key) return r;
  std::vector<uint32_t> parent = ParentSlices(trace);
  std::vector<std::pair<uint32_t, uint32_t>> track_range(trace.tracks.size(), {0, 0});
  for (uint32_t i = 0; i < trace.slices.size(); ++i) {
    uint32_t t = trace.slices.track[i];
    if (track_range[t].second == 0) track_range[t].first = i;
    track_range[t].second = i + 1;
  }
  std::map<std::tuple<int32_t, int64_t, int64_t>, MemoryPeak> peaks;
  const InstantTable& in = trace.instants;
  for (uint32_t i = 0; i < in.size(); ++i) {
    auto alloc = ArgNumber(trace, in.arg_begin[i], in.arg_count[i], alloc_key);
    if (!alloc) continue;
    int64_t type = static_cast<int64_t>(ArgNumber(trace, in.arg_begin[i], in.arg_count[i], type_key).value_or(0));
    int64_t id = static_cast<int64_t>(ArgNumber(trace, in.arg_begin[i], in.arg_count[i], id_key).value_or(-1));
    int32_t rank = trace.tracks.rank[in.track[i]];
    MemoryPeak& p = peaks[{rank, type, id}];
    p.rank = rank, p.device_type = type, p.device_id = id;
    ++p.events;
    if (*alloc > p.peak_allocated || p.events == 1) {
      p.peak_allocated = *alloc;
      p.peak_allocated_ts_ns = in.ts_ns[i];
      p.peak_allocated_op = EnclosingSlice(trace, parent, track_range, in.track[i], in.ts_ns[i]);
    }
    p.peak_reserved = std::max(p.peak_reserved, ArgNumber(trace, in.arg_begin[i], in.arg_count[i], reserved_key).value_or(0));
  }
  for (auto& [k, p] : peaks) {
    if (p.device_type != 0) p.capacity_bytes = CapacityFromProperties(trace, p.device_id);
    r.devices.push_back(p);
  }
  return r;
}

void PublishMemoryPeaks(const Trace& trace, const MemoryResult& r, MetricSet* metrics) {
  if (r.devices.empty()) {
    const char* why = "no [memory] events with Total Allocated in the trace (profile_memory off?)";
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
  metrics->Set("memory_peak_allocated_bytes", top->peak_allocated, kSource);
  if (reserved > 0) {
    metrics->Set("memory_peak_reserved_bytes", reserved, kSource);
  } else {
    metrics->SetUnavailable("memory_peak_reserved_bytes", "the allocator reports no reserved memory (0 on CPU)");
  }
  if (util >= 0) {
    metrics->Set("memory_peak_util", util, kSource);
  } else {
    metrics->SetUnavailable("memory_peak_util", "device memory capacity unknown (no totalGlobalMem in deviceProperties)");
  }
  std::string op = top->peak_allocated_op == kNoSlice ? "no enclosing op"
                                                      : "during " + std::string(trace.Str(trace.slices.name[top->peak_allocated_op]));
  metrics->AddEvidence("memory_pressure", "peak allocated " + FormatBytes(top->peak_allocated) + " on device type " +
                                              std::to_string(top->device_type) + " id " + std::to_string(top->device_id) +
                                              " at ts " + std::to_string(top->peak_allocated_ts_ns) + " ns, " + op);
}

}  // namespace aiprof
