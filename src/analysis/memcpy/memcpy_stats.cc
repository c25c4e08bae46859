#include "src/analysis/memcpy/memcpy_stats.h"

#include <algorithm>
#include <vector>

#include "src/analysis/common/text_format.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/base/ascii.h"

namespace aiprof {
namespace {

constexpr char kMemcpySource[] = "memcpy";

}  // namespace

const char* CopyDirectionName(CopyDirection d) {
  switch (d) {
    case CopyDirection::kHostToDevice: return "HtoD";
    case CopyDirection::kDeviceToHost: return "DtoH";
    case CopyDirection::kDeviceToDevice: return "DtoD";
    case CopyDirection::kPeerToPeer: return "PtoP";
    case CopyDirection::kOther: return "other";
  }
  return "other";
}

CopyDirection ClassifyCopy(std::string_view n) {
  if (Contains(n, "HtoD") || Contains(n, "H2D")) return CopyDirection::kHostToDevice;
  if (Contains(n, "DtoH") || Contains(n, "D2H")) return CopyDirection::kDeviceToHost;
  if (Contains(n, "DtoD") || Contains(n, "D2D")) return CopyDirection::kDeviceToDevice;
  if (Contains(n, "PtoP") || Contains(n, "P2P")) return CopyDirection::kPeerToPeer;
  return CopyDirection::kOther;
}

MemcpyStats ComputeMemcpyStats(const Trace& trace) {
  MemcpyStats st;
  const SliceTable& s = trace.slices;
  std::vector<uint32_t> launcher = LaunchingCalls(trace);
  std::optional<StringId> bytes_key = trace.strings.Find("bytes");
  // MTIA's dma_request names no direction; its "direction" arg does
  // (HOST_TO_DEVICE, DEVICE_TO_HOST, DEVICE_TO_DEVICE).
  std::optional<StringId> direction_key = trace.strings.Find("direction");
  std::vector<std::pair<int64_t, int64_t>> steps;
  for (size_t i = 0; i < trace.steps.size(); ++i) {
    steps.emplace_back(trace.steps.ts_ns[i], trace.steps.ts_ns[i] + trace.steps.dur_ns[i]);
    st.step_time_ns += trace.steps.dur_ns[i];
  }
  std::sort(steps.begin(), steps.end());
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] != EventKind::kMemcpy) continue;
    std::string_view name = trace.Str(s.name[i]);
    CopyDirection direction = ClassifyCopy(name);
    if (direction == CopyDirection::kOther && direction_key) {
      if (const Arg* a = trace.FindSliceArg(i, *direction_key); a && a->type == ArgType::kString) {
        std::string_view d = trace.Str(StringId{a->str});
        direction = d == "HOST_TO_DEVICE"     ? CopyDirection::kHostToDevice
                    : d == "DEVICE_TO_HOST"   ? CopyDirection::kDeviceToHost
                    : d == "DEVICE_TO_DEVICE" ? CopyDirection::kDeviceToDevice
                                              : CopyDirection::kOther;
      }
    }
    CopyTotals& t = st.by_direction[static_cast<size_t>(direction)];
    ++t.count;
    ++st.total;
    t.time_ns += s.dur_ns[i];
    if (const Arg* a = bytes_key ? trace.FindSliceArg(i, *bytes_key) : nullptr) {
      double b = a->type == ArgType::kInt ? static_cast<double>(a->i)
                 : a->type == ArgType::kUint ? static_cast<double>(a->u)
                 : a->type == ArgType::kDouble ? a->d : -1;
      if (b >= 0) t.bytes += b, ++t.with_bytes;
    }
    st.pageable += Contains(name, "Pageable");
    if (launcher[i] != kNoSlice) {
      std::string_view call = trace.Str(s.name[launcher[i]]);
      st.synchronous += Contains(call, "Memcpy") && !Contains(call, "Async");
    }
    auto it = std::upper_bound(steps.begin(), steps.end(), std::make_pair(s.ts_ns[i], INT64_MAX));
    if (it != steps.begin() && s.ts_ns[i] < std::prev(it)->second) st.in_steps_ns += s.dur_ns[i];
  }
  return st;
}

void PublishMemcpyStats(const Trace& trace, const MemcpyStats& st, MetricSet* metrics) {
  bool has_device = false;
  for (size_t i = 0; i < trace.slices.size() && !has_device; ++i) has_device = IsDeviceActivity(trace.slices.kind[i]);
  if (!has_device) {
    const char* why = "CPU-only trace: no device copies";
    metrics->SetUnavailable("pageable_memcpy_count", why);
    metrics->SetUnavailable("memcpy_step_ratio", why);
    return;
  }
  metrics->Set("pageable_memcpy_count", static_cast<double>(st.pageable), kMemcpySource);
  if (st.step_time_ns > 0) {
    metrics->Set("memcpy_step_ratio", static_cast<double>(st.in_steps_ns) / static_cast<double>(st.step_time_ns),
                 kMemcpySource);
  } else {
    metrics->SetUnavailable("memcpy_step_ratio", "no steps in the trace");
  }
  for (size_t d = 0; d < kCopyDirectionCount; ++d) {
    const CopyTotals& t = st.by_direction[d];
    if (t.count == 0) continue;
    metrics->AddEvidence("memcpy", std::string(CopyDirectionName(static_cast<CopyDirection>(d))) + ": " +
                                       std::to_string(t.count) + " copies, " + FormatDurationNs(static_cast<double>(t.time_ns)) +
                                       (t.with_bytes ? ", " + FormatBytes(t.bytes) : std::string(", bytes unknown")));
  }
  if (st.pageable > 0) {
    metrics->AddEvidence("memcpy", std::to_string(st.pageable) + " copies use pageable host memory (not pinned)");
  }
  if (st.synchronous > 0) {
    metrics->AddEvidence("memcpy", std::to_string(st.synchronous) + " copies were issued by a synchronous memcpy call");
  }
}

}  // namespace aiprof
