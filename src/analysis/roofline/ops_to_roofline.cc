#include "src/analysis/roofline/ops_to_roofline.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "src/analysis/common/op_args.h"
#include "src/analysis/common/text_format.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/roofline/cpu_calibration.h"
#include "src/analysis/metrics/metric_set.h"

namespace aiprof {
namespace {

// Slices examined after a convolution when looking for its consumer.
constexpr size_t kConsumerScan = 64;

double Div(double a, double b) { return b > 0 ? a / b : 0; }

// First input of a later op on the same thread shaped [N, Cout, ...]. Ops
// with no input of the convolution's rank cannot consume its output and are
// passed over (training's BatchNorm counts its batches with an
// `aten::add_` of scalars between the convolution and the batch_norm that
// reads its output); the first op that has such an input decides.
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
    bool same_rank = false;
    for (const Dims& d : *dims) {
      if (d.size() != in[0].size()) continue;
      same_rank = true;
      if (d[0] == in[0][0] && d[1] == in[1][0]) return d;
    }
    if (same_rank) return std::nullopt;  // the next op that could consume it does not
  }
  return std::nullopt;
}

// A recorded int[] argument (ParseIntList) with one value per spatial
// dimension, a single value broadcast to all `n`.
std::optional<std::vector<int64_t>> IntList(std::string_view text, size_t n) {
  std::optional<Dims> v = ParseIntList(text);
  if (v && v->size() == 1 && n > 1) v->assign(n, (*v)[0]);
  if (!v || v->size() != n) return std::nullopt;
  return v;
}

// A convolution's output shape from its recorded arguments ("Concrete
// Inputs", PyTorch 2.x with record_shapes): aten::conv{1,2,3}d(input,
// weight, bias, stride, padding, dilation, groups) and
// aten::convolution/_convolution(..., stride, padding, dilation, transposed,
// ...), per spatial dimension floor((in + 2·pad − dil·(k − 1) − 1) / stride)
// + 1 (PyTorch's Conv2d documentation); padding 'valid' is 0, 'same' keeps
// the input size. Transposed convolutions and other argument orders
// (mkldnn_convolution) give nullopt.
std::optional<Dims> ConvOutputFromArgs(std::string_view name, const std::vector<Dims>& in,
                                       const std::vector<std::string>& concrete) {
  std::string_view base = name.substr(name.rfind(':') == std::string_view::npos ? 0 : name.rfind(':') + 1);
  const bool conv_nd = base == "conv1d" || base == "conv2d" || base == "conv3d";
  if (!conv_nd && base != "convolution" && base != "_convolution") return std::nullopt;
  if (in.size() < 2 || concrete.size() < 6 || in[0].size() < 3 || in[1].size() != in[0].size()) return std::nullopt;
  if (!conv_nd && (concrete.size() < 7 || (concrete[6] != "False" && concrete[6] != "0"))) return std::nullopt;
  const Dims& x = in[0];
  const Dims& w = in[1];
  const size_t n = x.size() - 2;
  auto stride = IntList(concrete[3], n);
  auto dilation = IntList(concrete[5], n);
  if (!stride || !dilation) return std::nullopt;
  Dims out = x;
  out[1] = w[0];
  if (concrete[4] == "same" || concrete[4] == "'same'") return out;
  std::optional<std::vector<int64_t>> pad;
  if (concrete[4] == "valid" || concrete[4] == "'valid'") {
    pad = std::vector<int64_t>(n, 0);
  } else {
    pad = IntList(concrete[4], n);
  }
  if (!pad) return std::nullopt;
  for (size_t d = 0; d < n; ++d) {
    const int64_t s = (*stride)[d], dil = (*dilation)[d], p = (*pad)[d];
    if (s <= 0 || dil <= 0 || p < 0) return std::nullopt;
    const int64_t span = x[d + 2] + 2 * p - dil * (w[d + 2] - 1) - 1;
    if (span < 0) return std::nullopt;
    out[d + 2] = span / s + 1;
  }
  return out;
}

std::optional<OpCost> ShapeCost(const Trace& trace, const OpArgReader& args, uint32_t i) {
  auto dims = args.InputDims(i);
  auto types = args.InputTypes(i);
  if (!dims || !types) return std::nullopt;
  std::string_view name = trace.Str(trace.slices.name[i]);
  std::optional<Dims> out;
  OpFamily family = ClassifyOp(name);
  std::optional<std::vector<std::string>> concrete;
  if (family == OpFamily::kAttention || family == OpFamily::kConv) concrete = args.ConcreteInputs(i);
  if (family == OpFamily::kConv && concrete) out = ConvOutputFromArgs(name, *dims, *concrete);
  if (family == OpFamily::kConv && !out) out = ConvOutput(trace, args, i, *dims);
  return EstimateOpCost(name, *dims, *types, out ? &*out : nullptr, concrete ? &*concrete : nullptr);
}

struct RooflineScan {
  const Trace& trace;
  OpArgReader args;
  std::vector<uint32_t> parent;
  std::vector<uint8_t> modelled;  // cpu_op with a FLOP model
  std::vector<uint8_t> root;      // modelled, no modelled ancestor
  std::vector<uint32_t> root_of;  // the root at or above each slice, or kNoSlice
  std::vector<double> trace_flops;  // empty when no slice has a `flops` arg

  explicit RooflineScan(const Trace& t) : trace(t), args(t), parent(ParentSlices(t)) {}

  void MarkRoots() {
    const SliceTable& s = trace.slices;
    modelled.assign(s.size(), 0);
    root.assign(s.size(), 0);
    root_of.assign(s.size(), kNoSlice);
    // One pass, parents preceding children (ParentSlices' order): walking
    // each op's ancestors was quadratic in the nesting depth
    // (test/data/handmade/deep_nesting.py). under_modelled: a modelled op
    // encloses the slice.
    std::vector<uint8_t> under_modelled(s.size(), 0);
    for (uint32_t i = 0; i < s.size(); ++i) {
      modelled[i] = s.kind[i] == EventKind::kCpuOp && ClassifyOp(trace.Str(s.name[i])) != OpFamily::kNone;
      const uint32_t p = parent[i];
      under_modelled[i] = p != kNoSlice && (modelled[p] || under_modelled[p]);
      root[i] = modelled[i] && !under_modelled[i];
      root_of[i] = root[i] ? i : p == kNoSlice ? kNoSlice : root_of[p];
    }
  }

  // The root at or above `i`, or kNoSlice.
  uint32_t RootOf(uint32_t i) const { return i == kNoSlice ? kNoSlice : root_of[i]; }

  // Profiler `flops` args, summed onto their root; a `flops` under another
  // slice with `flops` (below the root) is not counted again.
  void CollectTraceFlops() {
    // 8 bytes a slice only where the trace has `flops` args at all.
    std::optional<StringId> key = trace.strings.Find("flops");
    if (!key) return;
    trace_flops.assign(trace.slices.size(), 0);
    // has_flops[i]: slice i has a `flops` arg; flops_above[i]: a slice above
    // i, up to and including its root, has one. One pass, parents first.
    std::vector<uint8_t> has_flops(trace.slices.size(), 0), flops_above(trace.slices.size(), 0);
    for (uint32_t i = 0; i < trace.slices.size(); ++i) {
      const Arg* a = trace.FindSliceArg(i, *key);
      has_flops[i] = a != nullptr;
      const uint32_t up = parent[i];
      flops_above[i] = up != kNoSlice && (has_flops[up] || (!root[up] && flops_above[up]));
      if (a == nullptr) continue;
      double f = a->type == ArgType::kInt ? static_cast<double>(a->i)
                 : a->type == ArgType::kUint ? static_cast<double>(a->u)
                 : a->type == ArgType::kDouble ? a->d : 0;
      if (!(f > 0)) continue;
      const bool nested = !root[i] && flops_above[i];
      const uint32_t p = RootOf(i);
      if (p != kNoSlice && !nested) trace_flops[p] += f;
    }
  }
};

// Device time per root: kernels attributed through their launching call
// (or, without one, the host op a flow links them to: torch_npu),
// except kernels already placed as device tasks (`placed`), whose roots are
// marked in `*covered` instead.
std::vector<int64_t> DeviceTimes(const Trace& trace, const RooflineScan& scan, const std::vector<uint8_t>& placed,
                                 std::vector<uint8_t>* covered, bool* any_kernel) {
  const SliceTable& s = trace.slices;
  covered->assign(s.size(), 0);
  // No kernel (a CPU-only trace): no device time to give, and no per-slice
  // arrays (16 bytes a slice with the launch links below).
  *any_kernel = false;
  for (uint32_t k = 0; k < s.size() && !*any_kernel; ++k) *any_kernel = s.kind[k] == EventKind::kKernel;
  if (!*any_kernel) return {};
  std::vector<int64_t> t(s.size(), 0);
  std::vector<uint32_t> launcher = OpLaunchingCalls(trace);
  const std::vector<uint32_t> launching_op = LaunchingOps(trace);
  for (uint32_t k = 0; k < s.size(); ++k) {
    if (s.kind[k] != EventKind::kKernel) continue;
    // The launching call's op, else the op a flow links the kernel to
    // (torch_npu's CANN calls run on a task-queue thread with no op).
    uint32_t r = launcher[k] == kNoSlice ? kNoSlice : scan.RootOf(launcher[k]);
    if (r == kNoSlice && launching_op[k] != kNoSlice) r = scan.RootOf(launching_op[k]);
    if (r == kNoSlice) continue;
    if (placed[k]) {
      (*covered)[r] = 1;
    } else {
      t[r] += s.dur_ns[k];
    }
  }
  return t;
}

// One op instance to place.
struct Instance {
  std::optional<double> flops;  // nullopt: unknown
  double bytes = 0;
  BytesSource bytes_source = BytesSource::kShapes;
  Precision precision = Precision::kOther;
  int64_t time_ns = 0;
};

void AddBound(const Instance& x, const DevicePeaks& device, RooflineRow* row, RooflineResult* r) {
  std::optional<double> peak = device.PeakFlops(x.precision);
  if (!x.flops || !peak) return;
  r->time_with_peak_ns += x.time_ns;
  r->flops_with_peak += *x.flops;
  r->peak_flop_ns += static_cast<double>(x.time_ns) * *peak;
  if (!(x.bytes > 0) || !(device.memory_bandwidth_bytes_per_second > 0)) return;
  r->time_bound_known_ns += x.time_ns;
  if (*x.flops / x.bytes < *peak / device.memory_bandwidth_bytes_per_second) {
    row->memory_bound_time_ns += x.time_ns;
    r->memory_bound_time_ns += x.time_ns;
  }
}

void AddInstance(const Instance& x, const DevicePeaks* device, RooflineRow* row, RooflineResult* r) {
  row->count++;
  row->time_ns += x.time_ns;
  row->bytes += x.bytes;
  r->ops++;
  r->time_ns += x.time_ns;
  r->bytes += x.bytes;
  if (x.bytes_source == BytesSource::kPmu) {
    r->pmu_bytes += x.bytes;
    r->time_with_pmu_bytes_ns += x.time_ns;
  }
  if (x.flops) {
    row->flops += *x.flops;
    r->flops += *x.flops;
    r->time_with_flops_ns += x.time_ns;
  }
  if (device != nullptr) AddBound(x, *device, row, r);
}

// Rows by (name, precision, bytes source, FLOPs known, device task).
class RowIndex {
 public:
  RooflineRow& Get(const Trace& trace, StringId name, OpFamily family, const Instance& x, bool device_task,
                   RooflineResult* r) {
    int flags = static_cast<int>(x.bytes_source) * 4 + (x.flops ? 2 : 0) + (device_task ? 1 : 0);
    auto key = std::make_tuple(name.raw, static_cast<int>(x.precision), flags);
    auto [it, added] = index_.emplace(key, r->rows.size());
    if (added) {
      RooflineRow row{std::string(trace.Str(name)), family, x.precision};
      row.bytes_source = x.bytes_source;
      row.flops_known = x.flops.has_value();
      row.device_task = device_task;
      r->rows.push_back(std::move(row));
    }
    return r->rows[it->second];
  }

 private:
  std::map<std::tuple<uint32_t, int, int>, size_t> index_;
};

void CountDeviceTask(const DeviceTaskCost& c, RooflineResult* r) {
  r->device_tasks++;
  r->device_tasks_with_flops += c.flops.has_value();
  r->device_tasks_pmu_bytes += c.bytes && c.bytes_source == BytesSource::kPmu;
  r->device_tasks_shape_bytes += c.bytes && c.bytes_source == BytesSource::kShapes;
  r->device_tasks_onchip_pmu_only += c.onchip_pmu_only;
}

// Places the device tasks that have FLOPs or bytes; marks them in `*placed`.
void AddDeviceTasks(const Trace& trace, const DevicePeaks* device, RowIndex* rows, std::vector<uint8_t>* placed,
                    RooflineResult* r) {
  DeviceTaskScan scan = ScanDeviceTasks(trace);
  r->onchip_pmu_columns = std::move(scan.onchip_pmu_columns);
  for (const DeviceTaskCost& c : scan.tasks) {
    CountDeviceTask(c, r);
    if (!c.flops && !c.bytes) continue;
    int64_t t_ns = trace.slices.dur_ns[c.slice];
    if (t_ns <= 0) {
      r->device_tasks_without_time++;
      continue;
    }
    (*placed)[c.slice] = 1;
    r->device_ops++;
    Instance x{c.flops, c.bytes.value_or(0), c.bytes_source, c.precision, t_ns};
    AddInstance(x, device, &rows->Get(trace, trace.slices.name[c.slice], c.family, x, true, r), r);
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
    if (std::optional<DevicePeaks> d = CalibrateOnFirstNeed()) return d;
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
  if (secs > 0) p.achieved_bytes_per_second = row.bytes / secs;
  if (row.flops_known && row.bytes > 0) p.arithmetic_intensity_flops_per_byte = row.flops / row.bytes;
  if (row.flops_known && secs > 0) p.achieved_flops_per_second = row.flops / secs;
  if (device == nullptr) return p;
  double bw = device->memory_bandwidth_bytes_per_second;
  if (bw > 0 && p.achieved_bytes_per_second) p.bandwidth_utilization = *p.achieved_bytes_per_second / bw;
  std::optional<double> peak = device->PeakFlops(row.precision);
  if (!peak) return p;
  if (p.achieved_flops_per_second) p.compute_utilization = *p.achieved_flops_per_second / *peak;
  if (!p.arithmetic_intensity_flops_per_byte || !(bw > 0)) return p;
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
  const SliceTable& s = trace.slices;
  RowIndex rows;
  std::vector<uint8_t> placed(s.size(), 0);
  AddDeviceTasks(trace, device, &rows, &placed, &r);
  RooflineScan scan(trace);
  scan.MarkRoots();
  scan.CollectTraceFlops();
  bool any_kernel = false;
  std::vector<uint8_t> covered;
  std::vector<int64_t> device_ns = DeviceTimes(trace, scan, placed, &covered, &any_kernel);
  r.device_time = any_kernel;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (!scan.root[i]) continue;
    std::optional<OpCost> cost = ShapeCost(trace, scan.args, i);
    if (!cost) {
      r.ops_without_shapes++;
      continue;
    }
    if (covered[i]) {
      r.ops_on_device_tasks++;
      continue;
    }
    int64_t t_ns = any_kernel ? device_ns[i] : s.dur_ns[i];
    if (any_kernel && t_ns == 0) {
      r.ops_without_time++;
      continue;
    }
    bool from_trace = !scan.trace_flops.empty() && scan.trace_flops[i] > 0;
    if (from_trace) cost->flops = scan.trace_flops[i];
    r.any_flops_estimated |= !from_trace;
    Instance x{cost->flops, cost->bytes, BytesSource::kShapes, cost->precision, t_ns};
    std::string_view name = trace.Str(s.name[i]);
    RooflineRow& row = rows.Get(trace, s.name[i], ClassifyOp(name), x, false, &r);
    row.flops_from_trace += from_trace;
    row.output_assumed += !from_trace && cost->output_assumed;
    AddInstance(x, device, &row, &r);
  }
  r.any_flops_estimated |= r.device_tasks_with_flops > 0;
  std::stable_sort(r.rows.begin(), r.rows.end(),
                   [](const RooflineRow& a, const RooflineRow& b) { return a.time_ns > b.time_ns; });
  return r;
}

namespace {

const char* SourceNote(const RooflineRow& row) {
  if (row.bytes_source == BytesSource::kShapes) return "estimate from shapes";
  return row.flops_from_trace == row.count ? "bytes measured by the PMU" : "FLOPs from shapes, bytes measured by the PMU";
}

void AddBoundEvidence(const RooflineResult& r, MetricSet* m) {
  size_t mem = 0, comp = 0;
  double bw = r.device->memory_bandwidth_bytes_per_second;
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
                       "; " + FormatPercent(p.ai_utilization.value_or(0)) + " of attainable (" + SourceNote(row) + ")";
    m->AddEvidence(is_mem ? "memory_bound" : "compute_bound", line);
  }
}

// Why FLOP-based figures are unavailable although some op was placed.
std::string NoFlopsReason(const RooflineResult& r) {
  if (r.time_with_flops_ns <= 0) {
    return "no placed op has a FLOP model (device tasks: op types/shapes/formats without a sound model)";
  }
  return "device " + r.device->name + " gives no peak for the precisions of these ops";
}

}  // namespace

void PublishRoofline(const RooflineResult& r, const std::string& device_problem, MetricSet* m) {
  const char* kSource = "roofline";
  const char* names[] = {"compute_util", "memory_bandwidth_util", "memory_bound_time_ratio"};
  auto unavailable = [&](const std::string& why) {
    for (const char* n : names) m->SetUnavailable(n, why);
  };
  if (r.ops == 0 || r.time_ns <= 0) {
    return unavailable(
        "no timed tensor op with a FLOP model and recorded shapes (profile with record_shapes=True), and no device "
        "task with main-memory PMU bandwidth (aic_metrics=Memory)");
  }
  if (!r.device) return unavailable(device_problem.empty() ? "no device peaks" : device_problem);
  double bw = r.device->memory_bandwidth_bytes_per_second;
  bool all_pmu = r.time_with_pmu_bytes_ns == r.time_ns;
  m->Set("memory_bandwidth_util", Div(r.bytes, static_cast<double>(r.time_ns) * 1e-9 * bw), kSource, all_pmu);
  if (r.time_with_peak_ns <= 0 || r.peak_flop_ns <= 0) {
    m->SetUnavailable("compute_util", NoFlopsReason(r));
  } else {
    m->Set("compute_util", r.flops_with_peak / (r.peak_flop_ns * 1e-9), kSource, false);
  }
  if (r.time_bound_known_ns <= 0) {
    m->SetUnavailable("memory_bound_time_ratio", r.time_with_peak_ns <= 0 ? NoFlopsReason(r) : "no placed op moved a byte");
  } else {
    m->Set("memory_bound_time_ratio",
           static_cast<double>(r.memory_bound_time_ns) / static_cast<double>(r.time_bound_known_ns), kSource, false);
  }
  AddBoundEvidence(r, m);
}

namespace {

std::string Count(uint64_t n) { return std::to_string(n); }

}  // namespace

std::vector<std::string> DescribeDeviceTasks(const RooflineResult& r) {
  if (r.device_tasks == 0) return {};
  std::vector<std::string> out = {
      Count(r.device_tasks) + " device tasks with a kernel_details/op_summary row, " + Count(r.device_ops) +
      " placed: FLOPs from shapes for " + Count(r.device_tasks_with_flops) + " (others: no sound model for the op " +
      "type/shapes/formats, unavailable); main-memory bytes from the PMU for " + Count(r.device_tasks_pmu_bytes) +
      ", from shapes for " + Count(r.device_tasks_shape_bytes) + ", unavailable for " +
      Count(r.device_tasks - r.device_tasks_pmu_bytes - r.device_tasks_shape_bytes)};
  if (r.device_tasks_onchip_pmu_only > 0) {
    std::string cols;
    for (const std::string& c : r.onchip_pmu_columns) cols += (cols.empty() ? "" : ", ") + c;
    out.push_back("  " + Count(r.device_tasks_onchip_pmu_only) +
                  " tasks have PMU bandwidth of on-chip levels only (" + cols +
                  "): not main-memory traffic, so their DRAM bytes are unavailable (profile with aic_metrics=Memory)");
  }
  return out;
}

}  // namespace aiprof
