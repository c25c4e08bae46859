#include "src/analysis/roofline/ops_to_roofline.h"

#include <algorithm>
#include <map>
#include <utility>

#include "src/analysis/common/op_args.h"
#include "src/analysis/common/text_format.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/metrics/metric_set.h"

namespace aiprof {
namespace {

// Slices examined after a convolution when looking for its consumer.
constexpr size_t kConsumerScan = 64;

double Div(double a, double b) { return b > 0 ? a / b : 0; }

// First input of a later op on the same thread shaped [N, Cout, ...].
std::optional<Dims> ConvOutput(const Trace& trace, const OpArgReader& args, uint32_t i, const std::vector<Dims>& in) {
  const SliceTable& s = trace.slices;
  if (in.size() < 2 || in[0].size() < 3 || in[1].empty()) return std::nullopt;
  int64_t end = s.ts_ns[i] + s.dur_ns[i];
  size_t seen = 0;
  for (uint32_t j = i + 1; j < s.size() && s.track[j] == s.track[i] && seen < kConsumerScan; ++j) {
    if (s.ts_ns[j] < end || s.kind[j] != EventKind::kCpuOp) continue;
    ++seen;
    auto dims = args.InputDims(j);
    if (!dims) continue;
    for (const Dims& d : *dims) {
      if (d.size() == in[0].size() && d[0] == in[0][0] && d[1] == in[1][0]) return d;
    }
    return std::nullopt;  // the next op with shapes does not consume it
  }
  return std::nullopt;
}

std::optional<OpCost> ShapeCost(const Trace& trace, const OpArgReader& args, uint32_t i) {
  auto dims = args.InputDims(i);
  auto types = args.InputTypes(i);
  if (!dims || !types) return std::nullopt;
  std::string_view name = trace.Str(trace.slices.name[i]);
  std::optional<Dims> out;
  if (ClassifyOp(name) == OpFamily::kConv) out = ConvOutput(trace, args, i, *dims);
  return EstimateOpCost(name, *dims, *types, out ? &*out : nullptr);
}

struct Scan {
  const Trace& trace;
  OpArgReader args;
  std::vector<uint32_t> parent;
  std::vector<uint8_t> modelled;  // cpu_op with a FLOP model
  std::vector<uint8_t> root;      // modelled, no modelled ancestor
  std::vector<double> trace_flops;

  explicit Scan(const Trace& t) : trace(t), args(t), parent(ParentSlices(t)) {}

  void MarkRoots() {
    const SliceTable& s = trace.slices;
    modelled.assign(s.size(), 0);
    root.assign(s.size(), 0);
    for (uint32_t i = 0; i < s.size(); ++i) {
      modelled[i] = s.kind[i] == EventKind::kCpuOp && ClassifyOp(trace.Str(s.name[i])) != OpFamily::kNone;
    }
    for (uint32_t i = 0; i < s.size(); ++i) {
      if (!modelled[i]) continue;
      uint32_t p = parent[i];
      while (p != kNoSlice && !modelled[p]) p = parent[p];
      root[i] = p == kNoSlice;
    }
  }

  // The root at or above `i`, or kNoSlice.
  uint32_t RootOf(uint32_t i) const {
    while (i != kNoSlice && !root[i]) i = parent[i];
    return i;
  }

  // Profiler `flops` args, summed onto their root; a `flops` under another
  // slice with `flops` (below the root) is not counted again.
  void CollectTraceFlops() {
    trace_flops.assign(trace.slices.size(), 0);
    std::optional<StringId> key = trace.strings.Find("flops");
    if (!key) return;
    for (uint32_t i = 0; i < trace.slices.size(); ++i) {
      const Arg* a = trace.FindSliceArg(i, *key);
      if (a == nullptr) continue;
      double f = a->type == ArgType::kInt ? static_cast<double>(a->i)
                 : a->type == ArgType::kUint ? static_cast<double>(a->u)
                 : a->type == ArgType::kDouble ? a->d : 0;
      if (!(f > 0)) continue;
      bool nested = false;
      uint32_t p = i;
      while (p != kNoSlice && !root[p]) {
        p = parent[p];
        if (p != kNoSlice && trace.FindSliceArg(p, *key) != nullptr) nested = true;
      }
      if (p != kNoSlice && !nested) trace_flops[p] += f;
    }
  }

};

// Device time per root: kernels attributed through their launching call.
std::vector<int64_t> DeviceTimes(const Trace& trace, const Scan& scan, bool* any_kernel) {
  const SliceTable& s = trace.slices;
  std::vector<int64_t> t(s.size(), 0);
  std::vector<uint32_t> launcher = LaunchingCalls(trace);
  *any_kernel = false;
  for (uint32_t k = 0; k < s.size(); ++k) {
    if (s.kind[k] != EventKind::kKernel) continue;
    *any_kernel = true;
    uint32_t r = launcher[k] == kNoSlice ? kNoSlice : scan.RootOf(launcher[k]);
    if (r != kNoSlice) t[r] += s.dur_ns[k];
  }
  return t;
}

void AddInstance(const OpCost& c, int64_t t_ns, const DevicePeaks* device, RooflineRow* row, RooflineResult* r) {
  row->count++;
  row->time_ns += t_ns;
  row->flops += c.flops;
  row->bytes += c.bytes;
  r->ops++;
  r->time_ns += t_ns;
  r->flops += c.flops;
  r->bytes += c.bytes;
  if (device == nullptr) return;
  std::optional<double> peak = device->PeakFlops(c.precision);
  if (!peak) return;
  r->time_with_peak_ns += t_ns;
  r->flops_with_peak += c.flops;
  r->peak_flop_ns += static_cast<double>(t_ns) * *peak;
  double ridge = Div(*peak, device->memory_bandwidth_bytes_per_second);
  if (Div(c.flops, c.bytes) < ridge) {
    row->memory_bound_time_ns += t_ns;
    r->memory_bound_time_ns += t_ns;
  }
}

}  // namespace

std::optional<OpCost> ShapeCostOfSlice(const Trace& trace, uint32_t slice) {
  return ShapeCost(trace, OpArgReader(trace), slice);
}

std::optional<DevicePeaks> ResolveDevice(const Trace& trace, const std::string& name,
                                         const std::string& devices_file, std::string* problem) {
  StatusOr<std::vector<DevicePeaks>> devices = LoadDevices(devices_file);
  if (!devices.ok()) {
    *problem = devices.status().message();
    return std::nullopt;
  }
  if (!name.empty()) {
    if (const DevicePeaks* d = FindDevice(*devices, name)) return *d;
    std::string known;
    for (const DevicePeaks& d : *devices) known += (known.empty() ? "" : ", ") + d.name;
    *problem = "unknown device '" + name + "' (known: " + known + ")";
    return std::nullopt;
  }
  if (const DevicePeaks* d = DetectDevice(*devices, trace.metadata)) return *d;
  bool device_activity = false;
  for (size_t i = 0; i < trace.slices.size() && !device_activity; ++i) {
    device_activity = IsDeviceActivity(trace.slices.kind[i]);
  }
  if (!device_activity) {
    if (const DevicePeaks* d = FindDevice(*devices, kCalibratedCpuName)) return *d;
    *problem = "no device peaks for this CPU trace: run `aiprof calibrate` (saves \"" + std::string(kCalibratedCpuName) +
               "\") or pass --device NAME";
    return std::nullopt;
  }
  *problem = "the trace names no known device: pass --device NAME (see data/devices.yaml)";
  return std::nullopt;
}

const char* BoundName(Bound b) {
  switch (b) {
    case Bound::kCompute: return "compute";
    case Bound::kMemory: return "memory";
    case Bound::kUnknown: break;
  }
  return "unknown";
}

RooflinePoint EvaluateRow(const RooflineRow& row, const DevicePeaks* device) {
  RooflinePoint p;
  double secs = static_cast<double>(row.time_ns) * 1e-9;
  if (row.bytes > 0) p.arithmetic_intensity_flops_per_byte = row.flops / row.bytes;
  if (secs > 0) {
    p.achieved_flops_per_second = row.flops / secs;
    p.achieved_bytes_per_second = row.bytes / secs;
  }
  if (device == nullptr) return p;
  std::optional<double> peak = device->PeakFlops(row.precision);
  double bw = device->memory_bandwidth_bytes_per_second;
  if (!peak || !(bw > 0)) return p;
  if (p.achieved_bytes_per_second) p.bandwidth_utilization = *p.achieved_bytes_per_second / bw;
  if (p.achieved_flops_per_second) p.compute_utilization = *p.achieved_flops_per_second / *peak;
  if (!p.arithmetic_intensity_flops_per_byte) return p;
  double ai = *p.arithmetic_intensity_flops_per_byte;
  p.bound = ai < *peak / bw ? Bound::kMemory : Bound::kCompute;
  p.attainable_flops_per_second = std::min(*peak, ai * bw);
  if (p.achieved_flops_per_second && *p.attainable_flops_per_second > 0) {
    p.ai_utilization = *p.achieved_flops_per_second / *p.attainable_flops_per_second;
  }
  return p;
}

RooflineResult ComputeRoofline(const Trace& trace, const DevicePeaks* device) {
  RooflineResult r;
  if (device != nullptr) r.device = *device;
  Scan scan(trace);
  scan.MarkRoots();
  scan.CollectTraceFlops();
  bool any_kernel = false;
  std::vector<int64_t> device_ns = DeviceTimes(trace, scan, &any_kernel);
  r.device_time = any_kernel;
  const SliceTable& s = trace.slices;
  std::map<std::pair<uint32_t, int>, size_t> row_of;  // (name, precision) → row
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (!scan.root[i]) continue;
    std::string_view name = trace.Str(s.name[i]);
    std::optional<OpCost> cost = ShapeCost(trace, scan.args, i);
    if (!cost) {
      r.ops_without_shapes++;
      continue;
    }
    int64_t t_ns = any_kernel ? device_ns[i] : s.dur_ns[i];
    if (any_kernel && t_ns == 0) {
      r.ops_without_time++;
      continue;
    }
    bool from_trace = scan.trace_flops[i] > 0;
    if (from_trace) cost->flops = scan.trace_flops[i];
    r.any_flops_estimated |= !from_trace;
    auto key = std::make_pair(s.name[i].raw, static_cast<int>(cost->precision));
    auto [it, added] = row_of.emplace(key, r.rows.size());
    if (added) {
      r.rows.push_back(RooflineRow{std::string(name), ClassifyOp(name), cost->precision});
    }
    RooflineRow& row = r.rows[it->second];
    row.flops_from_trace += from_trace;
    row.output_assumed += !from_trace && cost->output_assumed;
    AddInstance(*cost, t_ns, device, &row, &r);
  }
  std::stable_sort(r.rows.begin(), r.rows.end(),
                   [](const RooflineRow& a, const RooflineRow& b) { return a.time_ns > b.time_ns; });
  return r;
}

void PublishRoofline(const RooflineResult& r, const std::string& device_problem, MetricSet* m) {
  const char* kSource = "roofline";
  const char* names[] = {"compute_util", "memory_bandwidth_util", "memory_bound_time_ratio"};
  auto unavailable = [&](const std::string& why) {
    for (const char* n : names) m->SetUnavailable(n, why);
  };
  if (r.ops == 0 || r.time_ns <= 0) {
    return unavailable("no timed tensor op with a FLOP model and recorded shapes (profile with record_shapes=True)");
  }
  if (!r.device) return unavailable(device_problem.empty() ? "no device peaks" : device_problem);
  if (r.time_with_peak_ns <= 0 || r.peak_flop_ns <= 0) {
    return unavailable("device " + r.device->name + " gives no peak for the precisions of these ops");
  }
  m->Set("compute_util", r.flops_with_peak / (r.peak_flop_ns * 1e-9), kSource, false);
  double bw = r.device->memory_bandwidth_bytes_per_second;
  m->Set("memory_bandwidth_util", Div(r.bytes, static_cast<double>(r.time_ns) * 1e-9 * bw), kSource, false);
  m->Set("memory_bound_time_ratio",
         static_cast<double>(r.memory_bound_time_ns) / static_cast<double>(r.time_with_peak_ns), kSource, false);
  size_t mem = 0, comp = 0;
  for (const RooflineRow& row : r.rows) {
    RooflinePoint p = EvaluateRow(row, &*r.device);
    if (p.bound == Bound::kUnknown) continue;
    bool is_mem = p.bound == Bound::kMemory;
    if ((is_mem ? mem : comp) >= kRooflineEvidenceRows) continue;
    ++(is_mem ? mem : comp);
    std::string line = row.name + " (" + PrecisionName(row.precision) + ", x" + std::to_string(row.count) + ", " +
                       FormatDurationNs(static_cast<double>(row.time_ns)) + "): " +
                       FormatFixed(p.arithmetic_intensity_flops_per_byte.value_or(0), 2) + " FLOP/byte vs ridge " +
                       FormatFixed(Div(*r.device->PeakFlops(row.precision), bw), 2) + " on " + r.device->name +
                       "; " + FormatPercent(p.ai_utilization.value_or(0)) + " of attainable (estimate from shapes)";
    m->AddEvidence(is_mem ? "memory_bound" : "compute_bound", line);
  }
}

}  // namespace aiprof
