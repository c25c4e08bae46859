#include "src/analysis/roofline/op_metrics_to_device_cost.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_map>
#include <utility>

namespace aiprof {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr uint32_t kNoRow = UINT32_MAX;
constexpr double kBytesPerGigabyte = 1e9;
constexpr double kSecondsPerMicrosecond = 1e-6;

// The op-metric columns read here; everything else is ignored.
enum class Field : uint8_t {
  kIgnore = 0, kType, kInputShapes, kInputTypes, kInputFormats, kOutputShapes,
  kCubeRead, kCubeWrite, kVectorRead, kVectorWrite, kCubeTime, kVectorTime, kOnChipBandwidth,
};

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Field FieldOfColumn(std::string_view c) {
  if (c == "Type" || c == "OP Type") return Field::kType;
  if (c == "Input Shapes") return Field::kInputShapes;
  if (c == "Input Data Types") return Field::kInputTypes;
  if (c == "Input Formats") return Field::kInputFormats;
  if (c == "Output Shapes") return Field::kOutputShapes;
  if (c == "aic_main_mem_read_bw(GB/s)" || c == "main_mem_read_bw(GB/s)") return Field::kCubeRead;
  if (c == "aic_main_mem_write_bw(GB/s)" || c == "main_mem_write_bw(GB/s)") return Field::kCubeWrite;
  if (c == "aiv_main_mem_read_bw(GB/s)") return Field::kVectorRead;
  if (c == "aiv_main_mem_write_bw(GB/s)") return Field::kVectorWrite;
  if (c == "aicore_time(us)") return Field::kCubeTime;
  if (c == "aiv_time(us)") return Field::kVectorTime;
  // Other bandwidth columns are on-chip levels (l0a/l0b/l0c, l1, l2, ub).
  if (c.find("_bw") != std::string_view::npos && EndsWith(c, "(GB/s)")) return Field::kOnChipBandwidth;
  return Field::kIgnore;
}

// What one task's row says, as read from op_metrics.
struct RowFields {
  CoreMemoryBandwidth cube{kNaN, kNaN, kNaN};
  CoreMemoryBandwidth vector{kNaN, kNaN, kNaN};
  StringId type, input_shapes, input_types, input_formats, output_shapes;
  double input_shapes_number = kNaN, output_shapes_number = kNaN;  // a 1-D shape read as a number
  bool onchip_bandwidth = false;
};

bool Usable(double gb_per_second) { return std::isfinite(gb_per_second) && gb_per_second >= 0; }

// Bytes of one side; `*usable` set when it has a bandwidth over a positive time.
double SideBytes(const CoreMemoryBandwidth& s, bool* usable) {
  if (!(s.core_time_us > 0) || !std::isfinite(s.core_time_us)) return 0;
  bool r = Usable(s.read_gigabytes_per_second), w = Usable(s.write_gigabytes_per_second);
  if (!r && !w) return 0;
  *usable = true;
  double gb_per_second = (r ? s.read_gigabytes_per_second : 0) + (w ? s.write_gigabytes_per_second : 0);
  return gb_per_second * kBytesPerGigabyte * s.core_time_us * kSecondsPerMicrosecond;
}

// "a,b;;c" → {{a,b},{},{c}}; nullopt on a non-numeric dim.
std::optional<std::vector<Dims>> ParseShapes(std::string_view text) {
  std::vector<Dims> out;
  size_t start = 0;
  while (true) {
    size_t end = text.find(';', start);
    std::string_view one = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    Dims d;
    int64_t v = 0;
    bool digits = false;
    for (char c : one) {
      if (c >= '0' && c <= '9') {
        v = v * 10 + (c - '0');
        digits = true;
      } else if (c == ',' && digits) {
        d.push_back(v), v = 0, digits = false;
      } else if (c != ' ') {
        return std::nullopt;
      }
    }
    if (digits) d.push_back(v);
    out.push_back(std::move(d));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

std::vector<std::string_view> SplitSemicolons(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t end = text.find(';', start);
    out.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

std::string_view WithoutFormatPrefix(std::string_view f) {
  if (f.rfind("FORMAT_", 0) == 0) f.remove_prefix(7);
  return f;
}

// Formats whose shapes are the logical shapes (not fractal/blocked layouts).
bool PlainFormat(std::string_view f) {
  f = WithoutFormatPrefix(f);
  return f.empty() || f == "ND" || f == "NCHW" || f == "NHWC" || f == "NCL" || f == "NCDHW" || f == "NDHWC";
}

bool AllPlain(const std::vector<std::string_view>& formats) {
  return std::all_of(formats.begin(), formats.end(), PlainFormat);
}

bool ChannelsFirst(std::string_view f) {
  f = WithoutFormatPrefix(f);
  return f == "NCHW" || f == "NCDHW";
}

constexpr std::array<std::string_view, 6> kAscendMatmul = {"MatMul",      "MatMulV2",      "MatMulV3",
                                                           "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"};
constexpr std::array<std::string_view, 2> kAscendConv = {"Conv2D", "Conv3D"};
// Ascend op type → aten op of op_cost.h's elementwise family.
constexpr std::array<std::pair<std::string_view, std::string_view>, 31> kAscendElementwise = {{
    {"Add", "add"}, {"AddV2", "add"}, {"Adds", "add"}, {"Sub", "sub"}, {"Mul", "mul"}, {"Muls", "mul"},
    {"RealDiv", "div"}, {"Div", "div"}, {"Neg", "neg"}, {"Abs", "abs"}, {"Exp", "exp"}, {"Log", "log"},
    {"Sqrt", "sqrt"}, {"Rsqrt", "rsqrt"}, {"Reciprocal", "reciprocal"}, {"Pow", "pow"}, {"Relu", "relu"},
    {"Gelu", "gelu"}, {"FastGelu", "gelu"}, {"Swish", "silu"}, {"Silu", "silu"}, {"Sigmoid", "sigmoid"},
    {"Tanh", "tanh"}, {"SoftmaxV2", "softmax"}, {"LayerNorm", "layer_norm"}, {"LayerNormV3", "layer_norm"},
    {"RmsNorm", "rms_norm"}, {"Erf", "erf"}, {"Sin", "sin"}, {"Cos", "cos"}, {"ClipByValue", "clamp"},
}};

std::string_view AtenElementwise(std::string_view op_type) {
  for (const auto& [ascend, aten] : kAscendElementwise) {
    if (ascend == op_type) return aten;
  }
  return {};
}

OpFamily AscendFamily(std::string_view op_type) {
  if (std::find(kAscendMatmul.begin(), kAscendMatmul.end(), op_type) != kAscendMatmul.end()) return OpFamily::kMatmul;
  if (std::find(kAscendConv.begin(), kAscendConv.end(), op_type) != kAscendConv.end()) return OpFamily::kConv;
  if (!AtenElementwise(op_type).empty()) return OpFamily::kElementwise;
  return OpFamily::kNone;
}

// Puts the last two dims of `d` in the order (first, second) = (want, other);
// false when `want` is neither of them.
bool OrientLastTwo(int64_t want, Dims* d) {
  size_t n = d->size();
  if ((*d)[n - 2] == want) return true;
  if ((*d)[n - 1] != want) return false;
  std::swap((*d)[n - 2], (*d)[n - 1]);
  return true;
}

// a·b with the transposes resolved from the output [.., M, N].
std::optional<OpCost> MatmulFromOutput(std::vector<Dims> in, const std::vector<std::string>& types, const Dims& out) {
  if (in.size() < 2 || types.size() < 2 || in[0].size() < 2 || in[1].size() < 2 || out.size() < 2) return std::nullopt;
  int64_t m = out[out.size() - 2], n = out.back();
  Dims& a = in[0];
  Dims& b = in[1];
  if (!OrientLastTwo(m, &a)) return std::nullopt;  // a = [.., M, K]
  int64_t k = a.back();
  if (!OrientLastTwo(k, &b) || b.back() != n) return std::nullopt;  // b = [.., K, N]
  return EstimateOpCost("aten::matmul", {a, b}, {types[0], types[1]}, nullptr);
}

std::optional<OpCost> ConvFromOutput(const std::vector<Dims>& in, const std::vector<std::string>& types,
                                     const std::vector<std::string_view>& formats, const Dims& out) {
  if (formats.size() < 2 || !ChannelsFirst(formats[0]) || !ChannelsFirst(formats[1])) return std::nullopt;
  std::optional<OpCost> c = EstimateOpCost("aten::conv2d", in, types, &out);
  if (!c || c->output_assumed) return std::nullopt;  // the output must be known, never assumed
  return c;
}

std::string_view NumberText(double v, char (*buf)[32]) {
  if (!std::isfinite(v) || v < 0 || v != std::floor(v)) return {};
  int n = std::snprintf(*buf, sizeof(*buf), "%.0f", v);
  return std::string_view(*buf, n > 0 ? static_cast<size_t>(n) : 0);
}

}  // namespace

const char* BytesSourceName(BytesSource s) { return s == BytesSource::kPmu ? "pmu" : "shapes"; }

std::optional<double> PmuMainMemoryBytes(const CoreMemoryBandwidth& cube, const CoreMemoryBandwidth& vector) {
  bool usable = false;
  double bytes = SideBytes(cube, &usable) + SideBytes(vector, &usable);
  if (!usable) return std::nullopt;
  return bytes;
}

std::string_view TorchDtypeOfAscend(std::string_view t) {
  if (t.rfind("DT_", 0) == 0) t.remove_prefix(3);
  if (t == "FLOAT" || t == "FLOAT32") return "float";
  if (t == "FLOAT16") return "c10::Half";
  if (t == "BF16" || t == "BFLOAT16") return "c10::BFloat16";
  if (t == "DOUBLE") return "double";
  if (t == "INT8") return "signed char";
  if (t == "UINT8") return "unsigned char";
  if (t == "INT16") return "short int";
  if (t == "INT32") return "int";
  if (t == "INT64") return "long int";
  if (t == "BOOL") return "bool";
  return "";
}

std::optional<OpCost> AscendOpCost(const AscendShapes& row) {
  OpFamily family = AscendFamily(row.op_type);
  if (family == OpFamily::kNone) return std::nullopt;  // checked first: no parsing for unmodelled ops
  std::optional<std::vector<Dims>> in = ParseShapes(row.input_shapes);
  std::optional<std::vector<Dims>> out = ParseShapes(row.output_shapes);
  if (!in || !out || out->empty()) return std::nullopt;
  std::vector<std::string> types;
  for (std::string_view t : SplitSemicolons(row.input_types)) types.emplace_back(TorchDtypeOfAscend(t));
  std::vector<std::string_view> formats =
      row.input_formats.empty() ? std::vector<std::string_view>{} : SplitSemicolons(row.input_formats);
  if (family == OpFamily::kConv) return ConvFromOutput(*in, types, formats, (*out)[0]);
  if (!AllPlain(formats)) return std::nullopt;
  if (family == OpFamily::kMatmul) return MatmulFromOutput(std::move(*in), types, (*out)[0]);
  return EstimateOpCost(AtenElementwise(row.op_type), *in, types, nullptr);
}

namespace {

class TaskCollector {
 public:
  explicit TaskCollector(const Trace& trace) : trace_(trace), row_of_(trace.slices.size(), kNoRow) {}

  void Collect() {
    const OpMetricTable& m = trace_.op_metrics;
    std::optional<StringId> details = trace_.strings.Find("kernel_details.csv");
    std::optional<StringId> summary = trace_.strings.Find("op_summary.csv");
    if (!details && !summary) return;
    for (size_t i = 0; i < m.size(); ++i) {
      uint32_t s = m.slice[i];
      if (s == kNoSlice || s >= trace_.slices.size() || trace_.slices.kind[s] != EventKind::kKernel) continue;
      if (!(details && m.source[i] == *details) && !(summary && m.source[i] == *summary)) continue;
      Field f = FieldOf(m.key[i]);
      if (f == Field::kIgnore) continue;
      if (f == Field::kOnChipBandwidth && std::isfinite(m.value[i]) &&
          std::find(onchip_keys_.begin(), onchip_keys_.end(), m.key[i]) == onchip_keys_.end()) {
        onchip_keys_.push_back(m.key[i]);  // a handful of distinct columns
      }
      Store(f, m.value[i], m.text[i], &Row(s));
    }
  }

  DeviceTaskScan Finish() {
    DeviceTaskScan scan;
    for (uint32_t s = 0; s < row_of_.size(); ++s) {
      if (row_of_[s] == kNoRow) continue;
      scan.tasks.push_back(Cost(s, rows_[row_of_[s]]));
    }
    for (StringId key : onchip_keys_) scan.onchip_pmu_columns.emplace_back(trace_.Str(key));
    std::sort(scan.onchip_pmu_columns.begin(), scan.onchip_pmu_columns.end());
    return scan;
  }

 private:
  Field FieldOf(StringId key) {
    auto it = field_of_.find(key.raw);  // a handful of distinct columns: inserted once each
    if (it == field_of_.end()) it = field_of_.emplace(key.raw, FieldOfColumn(trace_.Str(key))).first;
    return it->second;
  }

  RowFields& Row(uint32_t s) {
    if (row_of_[s] == kNoRow) {
      row_of_[s] = static_cast<uint32_t>(rows_.size());
      rows_.emplace_back();
    }
    return rows_[row_of_[s]];
  }

  void Store(Field f, double v, StringId text, RowFields* r) {
    switch (f) {
      case Field::kType: r->type = text; break;
      case Field::kInputShapes: r->input_shapes = text, r->input_shapes_number = v; break;
      case Field::kInputTypes: r->input_types = text; break;
      case Field::kInputFormats: r->input_formats = text; break;
      case Field::kOutputShapes: r->output_shapes = text, r->output_shapes_number = v; break;
      case Field::kCubeRead: r->cube.read_gigabytes_per_second = v; break;
      case Field::kCubeWrite: r->cube.write_gigabytes_per_second = v; break;
      case Field::kVectorRead: r->vector.read_gigabytes_per_second = v; break;
      case Field::kVectorWrite: r->vector.write_gigabytes_per_second = v; break;
      case Field::kCubeTime: r->cube.core_time_us = v; break;
      case Field::kVectorTime: r->vector.core_time_us = v; break;
      case Field::kOnChipBandwidth: r->onchip_bandwidth = r->onchip_bandwidth || std::isfinite(v); break;
      case Field::kIgnore: break;
    }
  }

  // Shape text, or a 1-D shape the importer read as a number.
  std::string_view ShapeText(StringId text, double number, char (*buf)[32]) const {
    std::string_view t = trace_.Str(text);
    return t.empty() ? NumberText(number, buf) : t;
  }

  DeviceTaskCost Cost(uint32_t s, const RowFields& r) const {
    DeviceTaskCost c;
    c.slice = s;
    char in_buf[32], out_buf[32];
    AscendShapes shapes{trace_.Str(r.type), ShapeText(r.input_shapes, r.input_shapes_number, &in_buf),
                        trace_.Str(r.input_types), trace_.Str(r.input_formats),
                        ShapeText(r.output_shapes, r.output_shapes_number, &out_buf)};
    c.family = AscendFamily(shapes.op_type);
    std::string_view first_type = shapes.input_types.substr(0, shapes.input_types.find(';'));
    c.precision = PrecisionOfDtype(TorchDtypeOfAscend(first_type));
    std::optional<OpCost> shape_cost = AscendOpCost(shapes);
    if (shape_cost) c.flops = shape_cost->flops, c.precision = shape_cost->precision;
    c.bytes = PmuMainMemoryBytes(r.cube, r.vector);
    if (c.bytes) {
      c.bytes_source = BytesSource::kPmu;
    } else if (shape_cost) {
      c.bytes = shape_cost->bytes;
    }
    c.onchip_pmu_only = r.onchip_bandwidth && !std::isfinite(r.cube.read_gigabytes_per_second) &&
                        !std::isfinite(r.cube.write_gigabytes_per_second) &&
                        !std::isfinite(r.vector.read_gigabytes_per_second) &&
                        !std::isfinite(r.vector.write_gigabytes_per_second);
    return c;
  }

  const Trace& trace_;
  std::vector<uint32_t> row_of_;  // slice → index in rows_
  std::vector<RowFields> rows_;
  std::unordered_map<uint32_t, Field> field_of_;  // column key → field
  std::vector<StringId> onchip_keys_;  // on-chip bandwidth columns with a value
};

}  // namespace

DeviceTaskScan ScanDeviceTasks(const Trace& trace) {
  TaskCollector c(trace);
  c.Collect();
  return c.Finish();
}

}  // namespace aiprof
