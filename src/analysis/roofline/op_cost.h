// FLOP and byte models of tensor ops, from the shapes and dtypes a profiler
// records ("Input Dims" / "Input type" of PyTorch ops).
//
// Every figure here is an estimate from shapes, not a hardware count:
//   - matmul family (mm, addmm, bmm, baddbmm, matmul, linear):
//     FLOPs = 2 · batch · M · K · N, plus batch · M · N for the bias add of
//     addmm, baddbmm and linear with a bias (TraceLens's GEMM.flops_func;
//     torch's own `flops` arg leaves the bias out);
//   - convolution (conv1d/2d/3d, convolution, _convolution, mkldnn_/cudnn_/
//     miopen_convolution): FLOPs = 2 · N · Π(output spatial) · Π(weight dims)
//     (= 2·N·Cout·Hout·Wout·Cin/groups·kh·kw). The trace does not record stride
//     or padding, so the output spatial size comes from `output` (the next
//     op's input, see ops_to_roofline.h) and, without it, is assumed equal to
//     the input's ('same' padding, stride 1): `output_assumed` is then set;
//   - scaled dot-product attention: 2·B·L·S·E (Q·Kᵀ) + 2·B·L·S·Ev (P·V), the
//     softmax not counted; causal (is_causal True in "Concrete Inputs"):
//     halved when L = S (TraceLens's SDPA.flops_func, FlashAttention's
//     benchmark), otherwise scaled by the share of (query, key) pairs a
//     bottom-right-aligned causal mask keeps;
//   - elementwise, normalisation and softmax ops: 1 FLOP per output element
//     (a lower bound for norms and softmax);
//   - bytes moved: Σ tensor inputs + the output, each elements × dtype size,
//     i.e. every operand read or written once from memory (caches ignored).
#ifndef AIPROF_SRC_ANALYSIS_ROOFLINE_OP_COST_H_
#define AIPROF_SRC_ANALYSIS_ROOFLINE_OP_COST_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/analysis/common/op_args.h"

namespace aiprof {

enum class OpFamily { kNone = 0, kMatmul, kConv, kAttention, kElementwise };
const char* OpFamilyName(OpFamily f);

// Arithmetic precision whose peak applies; kOther (integers, bool, unknown)
// uses the fp32 peak (documented in docs/analyses.md).
enum class Precision { kFp32 = 0, kFp64, kFp16, kBf16, kInt8, kOther };
inline constexpr size_t kPrecisionCount = 6;
const char* PrecisionName(Precision p);  // "fp32", "fp64", ... as in devices.yaml
Precision PrecisionOfDtype(std::string_view torch_dtype);

// The family of a PyTorch op name ("aten::addmm" → kMatmul); kNone if no model.
OpFamily ClassifyOp(std::string_view name);

struct OpCost {
  double flops = 0;
  double bytes = 0;
  Precision precision = Precision::kOther;
  bool output_assumed = false;  // conv output size not known, assumed 'same'
};

// Cost of op `name` with these inputs; nullopt if the op has no model or the
// shapes do not fit it. `output` (may be null) is the conv's output shape as
// seen by its consumer; used only when it is [N, Cout, ...] of the right rank.
// `concrete` (may be null) is the op's "Concrete Inputs": attention reads
// is_causal from it.
std::optional<OpCost> EstimateOpCost(std::string_view name, const std::vector<Dims>& dims,
                                     const std::vector<std::string>& types, const Dims* output,
                                     const std::vector<std::string>* concrete = nullptr);

// Position of is_causal among the inputs of an attention op, or -1.
int CausalArgIndex(std::string_view name);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_ROOFLINE_OP_COST_H_
