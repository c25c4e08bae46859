#include "src/analysis/roofline/op_cost.h"

#include <algorithm>
#include <array>

namespace aiprof {
namespace {

struct Tensor {
  const Dims* dims;
  int elem_bytes;
  Precision precision;
  double Elements() const { return static_cast<double>(NumElements(*dims)); }
  double Bytes() const { return Elements() * elem_bytes; }
};

// Tensor operands in order (args whose type is a known dtype).
std::vector<Tensor> Tensors(const std::vector<Dims>& dims, const std::vector<std::string>& types) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < dims.size() && i < types.size(); ++i) {
    int b = BytesPerElement(types[i]);
    if (b > 0) out.push_back({&dims[i], b, PrecisionOfDtype(types[i])});
  }
  return out;
}

double InputBytes(const std::vector<Tensor>& t) {
  double b = 0;
  for (const Tensor& x : t) b += x.Bytes();
  return b;
}

std::string_view Base(std::string_view name) {
  if (name.rfind("aten::", 0) == 0) name.remove_prefix(6);
  return name;
}

template <size_t N>
bool In(std::string_view n, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), n) != set.end();
}

constexpr std::array<std::string_view, 6> kMatmul = {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear"};
constexpr std::array<std::string_view, 10> kConv = {
    "conv1d", "conv2d", "conv3d", "convolution", "_convolution", "mkldnn_convolution",
    "cudnn_convolution", "miopen_convolution", "_nnpack_spatial_convolution", "thnn_conv2d"};
constexpr std::array<std::string_view, 8> kAttention = {
    "scaled_dot_product_attention", "_scaled_dot_product_attention_math", "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_flash_attention_for_cpu", "_flash_attention_forward", "_efficient_attention_forward"};
constexpr std::array<std::string_view, 54> kElementwise = {
    "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "neg", "abs", "exp", "log", "sqrt", "rsqrt",
    "reciprocal", "pow", "relu", "relu_", "gelu", "silu", "silu_", "sigmoid", "sigmoid_", "tanh", "tanh_",
    "hardtanh", "hardtanh_", "leaky_relu", "threshold", "clamp", "clamp_", "clamp_min", "where", "addcmul",
    "addcdiv", "masked_fill", "masked_fill_", "dropout", "softmax", "_softmax", "log_softmax", "_log_softmax",
    "layer_norm", "native_layer_norm", "batch_norm", "native_batch_norm", "_native_batch_norm_legit_no_training",
    "group_norm", "native_group_norm", "rms_norm", "_fused_rms_norm", "erf", "sin", "cos"};

// a [.., M, K] × b [.., K, N] with numpy broadcasting of the batch dims;
// 1-D operands are promoted as matmul does.
std::optional<OpCost> Matmul(const Tensor& a, const Tensor& b, double extra_bytes) {
  Dims da = *a.dims, db = *b.dims;
  if (da.empty() || db.empty()) return std::nullopt;
  if (da.size() == 1) da.insert(da.begin(), 1);
  if (db.size() == 1) db.push_back(1);
  int64_t m = da[da.size() - 2], k = da.back(), n = db.back();
  if (db[db.size() - 2] != k) return std::nullopt;
  double batch = 1;
  size_t ra = da.size() - 2, rb = db.size() - 2;
  for (size_t i = 0; i < std::max(ra, rb); ++i) {
    int64_t x = i < ra ? da[ra - 1 - i] : 1, y = i < rb ? db[rb - 1 - i] : 1;
    batch *= static_cast<double>(std::max(x, y));
  }
  double out_elems = batch * static_cast<double>(m) * static_cast<double>(n);
  OpCost c;
  c.flops = 2 * out_elems * static_cast<double>(k);
  c.bytes = a.Bytes() + b.Bytes() + extra_bytes + out_elems * a.elem_bytes;
  c.precision = a.precision;
  return c;
}

// The bias add: one FLOP per output element (batch · M · N).
std::optional<OpCost> WithBias(std::optional<OpCost> c, double out_elems) {
  if (c) c->flops += out_elems;
  return c;
}

// Output elements of a matmul: FLOPs / (2 K).
double OutElems(const OpCost& c, const Tensor& a) {
  double k = a.dims->empty() ? 1 : static_cast<double>(a.dims->back());
  return k > 0 ? c.flops / (2 * k) : 0;
}

std::optional<OpCost> MatmulFamily(std::string_view n, const std::vector<Tensor>& t) {
  if ((n == "addmm" || n == "baddbmm") && t.size() >= 3) {
    std::optional<OpCost> c = Matmul(t[1], t[2], t[0].Bytes());
    return c ? WithBias(c, OutElems(*c, t[1])) : c;
  }
  if (n == "linear" && t.size() >= 2) {
    // x [.., K] · Wᵀ with W [N, K]: as x · [K, N].
    const Dims& w = *t[1].dims;
    if (w.size() != 2) return std::nullopt;
    Dims wt = {w[1], w[0]};
    Tensor b{&wt, t[1].elem_bytes, t[1].precision};
    bool bias = t.size() >= 3;
    std::optional<OpCost> c = Matmul(t[0], b, bias ? t[2].Bytes() : 0);
    return c && bias ? WithBias(c, OutElems(*c, t[0])) : c;
  }
  if (t.size() >= 2 && n != "addmm" && n != "baddbmm") return Matmul(t[0], t[1], 0);
  return std::nullopt;
}

std::optional<OpCost> Conv(const std::vector<Tensor>& t, const Dims* output) {
  if (t.size() < 2) return std::nullopt;
  const Dims& x = *t[0].dims;
  const Dims& w = *t[1].dims;
  if (x.size() < 3 || w.size() != x.size()) return std::nullopt;
  Dims out = x;
  out[1] = w[0];
  bool assumed = true;
  if (output != nullptr && output->size() == x.size() && (*output)[0] == x[0] && (*output)[1] == w[0]) {
    out = *output;
    assumed = false;
  }
  double out_spatial = 1;
  for (size_t i = 2; i < out.size(); ++i) out_spatial *= static_cast<double>(out[i]);
  double out_elems = static_cast<double>(NumElements(out));
  OpCost c;
  c.flops = 2 * static_cast<double>(x[0]) * out_spatial * static_cast<double>(NumElements(w));
  double bias = t.size() >= 3 && t[2].dims->size() == 1 ? t[2].Bytes() : 0;
  c.bytes = t[0].Bytes() + t[1].Bytes() + bias + out_elems * t[0].elem_bytes;
  c.precision = t[0].precision;
  c.output_assumed = assumed;
  return c;
}

// Share of (query, key) pairs a causal mask keeps: ½ when L = S (the
// convention of TraceLens and FlashAttention's benchmark), else the exact
// share under a bottom-right-aligned mask (query i sees keys ≤ S − L + i).
double CausalShare(double l, double s) {
  if (l == s) return 0.5;
  double kept = 0;
  for (double i = 0; i < l; ++i) kept += std::clamp(s - l + i + 1, 0.0, s);
  return kept / (l * s);
}

std::optional<OpCost> Attention(const std::vector<Tensor>& t, bool causal) {
  if (t.size() < 3) return std::nullopt;
  const Dims &q = *t[0].dims, &k = *t[1].dims, &v = *t[2].dims;
  if (q.size() < 2 || k.size() < 2 || v.size() < 2) return std::nullopt;
  double l = static_cast<double>(q[q.size() - 2]), e = static_cast<double>(q.back());
  double s = static_cast<double>(k[k.size() - 2]), ev = static_cast<double>(v.back());
  if (l <= 0 || e <= 0 || k.back() != q.back()) return std::nullopt;
  double batch = t[0].Elements() / (l * e);
  OpCost c;
  c.flops = 2 * batch * l * s * e + 2 * batch * l * s * ev;
  if (causal) c.flops *= CausalShare(l, s);
  c.bytes = t[0].Bytes() + t[1].Bytes() + t[2].Bytes() + batch * l * ev * t[0].elem_bytes;
  c.precision = t[0].precision;
  return c;
}

std::optional<OpCost> Elementwise(const std::vector<Tensor>& t) {
  if (t.empty()) return std::nullopt;
  double out_elems = 0;
  for (const Tensor& x : t) out_elems = std::max(out_elems, x.Elements());
  OpCost c;
  c.flops = out_elems;
  c.bytes = InputBytes(t) + out_elems * t[0].elem_bytes;
  c.precision = t[0].precision;
  return c;
}

}  // namespace

const char* OpFamilyName(OpFamily f) {
  switch (f) {
    case OpFamily::kMatmul: return "matmul";
    case OpFamily::kConv: return "conv";
    case OpFamily::kAttention: return "attention";
    case OpFamily::kElementwise: return "elementwise";
    case OpFamily::kNone: break;
  }
  return "none";
}

const char* PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFp32: return "fp32";
    case Precision::kFp64: return "fp64";
    case Precision::kFp16: return "fp16";
    case Precision::kBf16: return "bf16";
    case Precision::kInt8: return "int8";
    case Precision::kOther: break;
  }
  return "other";
}

Precision PrecisionOfDtype(std::string_view t) {
  if (t == "float") return Precision::kFp32;
  if (t == "double") return Precision::kFp64;
  if (t == "c10::Half" || t == "half") return Precision::kFp16;
  if (t == "c10::BFloat16" || t == "bfloat16") return Precision::kBf16;
  if (t == "signed char" || t == "unsigned char" || t == "c10::qint8" || t == "c10::quint8") return Precision::kInt8;
  return Precision::kOther;
}

OpFamily ClassifyOp(std::string_view name) {
  std::string_view n = Base(name);
  if (In(n, kMatmul)) return OpFamily::kMatmul;
  if (In(n, kConv)) return OpFamily::kConv;
  if (In(n, kAttention)) return OpFamily::kAttention;
  if (In(n, kElementwise)) return OpFamily::kElementwise;
  return OpFamily::kNone;
}

int CausalArgIndex(std::string_view name) {
  std::string_view n = Base(name);
  if (n == "scaled_dot_product_attention" || n == "_scaled_dot_product_attention_math") return 5;
  if (n == "_scaled_dot_product_flash_attention" || n == "_scaled_dot_product_flash_attention_for_cpu") return 4;
  if (n == "_scaled_dot_product_efficient_attention" || n == "_scaled_dot_product_cudnn_attention") return 6;
  return -1;
}

std::optional<OpCost> EstimateOpCost(std::string_view name, const std::vector<Dims>& dims,
                                     const std::vector<std::string>& types, const Dims* output,
                                     const std::vector<std::string>* concrete) {
  std::vector<Tensor> t = Tensors(dims, types);
  std::optional<OpCost> c;
  switch (ClassifyOp(name)) {
    case OpFamily::kMatmul: c = MatmulFamily(Base(name), t); break;
    case OpFamily::kConv: c = Conv(t, output); break;
    case OpFamily::kAttention: {
      int at = CausalArgIndex(name);
      bool causal = concrete != nullptr && at >= 0 && static_cast<size_t>(at) < concrete->size() &&
                    (*concrete)[static_cast<size_t>(at)] == "True";
      c = Attention(t, causal);
      break;
    }
    case OpFamily::kElementwise: c = Elementwise(t); break;
    case OpFamily::kNone: break;
  }
  return c;
}

}  // namespace aiprof
