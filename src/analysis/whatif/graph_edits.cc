#include "src/analysis/whatif/graph_edits.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>

#include "src/analysis/common/op_args.h"
#include "src/analysis/roofline/kernel_class.h"
#include "src/analysis/roofline/op_cost.h"
#include "src/analysis/roofline/ops_to_roofline.h"
#include "src/base/ascii.h"

namespace aiprof {
namespace {

// The precision a kernel's name says it computes in, from its dtype tokens
// (vendor libraries, Triton and CUTLASS name them: `_matmul_ogs_NNT_bf16x
// bf16xmxfp4`, `ampere_fp16_s16816gemm`, `cutlass_tensorop_bf16_s16816fprop`,
// `volta_sgemm_128x64`); nullopt when it names none. bf16 before fp16 (the
// token "f16" is inside "bf16"); a kernel that mixes a narrow weight format
// with bf16 activations (mxfp4, fp8 weights) computes in bf16.
std::optional<Precision> KernelNamePrecision(std::string_view name) {
  auto has = [&](std::string_view t) { return ContainsIgnoreCase(name, t); };
  // Tensile (rocBLAS/hipBLASLt) names its types after the layout:
  // Cijk_Alik_Bljk_BBS_... is bf16 in, bf16 out, fp32 compute; HHS half.
  if (has("_bbs_") || has("_bss_") || has("_bbh_")) return Precision::kBf16;
  if (has("_hhs_") || has("_hss_") || has("_hhh_")) return Precision::kFp16;
  if (has("bf16") || has("bfloat16")) return Precision::kBf16;
  if (has("fp16") || has("f16") || has("half")) return Precision::kFp16;
  if (has("int8") || has("i8gemm") || has("imma")) return Precision::kInt8;
  if (has("fp64") || has("dgemm") || has("double")) return Precision::kFp64;
  if (has("fp32") || has("f32") || has("sgemm") || has("float")) return Precision::kFp32;
  return std::nullopt;
}

std::string CountOf(uint64_t n, const char* what) { return std::to_string(n) + " " + what; }

// Shape costs of host ops, memoised: an op's own (ShapeCostOfSlice), and the
// nearest modelled ancestor's for a device activity's launch. Memory: one
// byte per distinct name, a hash entry per modelled op asked about (never
// a per-slice array: this runs for every scenario with fuse or device).
class Costs {
 public:
  Costs(const Trace& trace, const DependencyGraph& g) : trace_(trace), g_(g), args_(trace) {}

  const std::optional<OpCost>& Own(uint32_t i) {
    static const std::optional<OpCost> kNone;
    if (trace_.slices.kind[i] != EventKind::kCpuOp || !Modelled(trace_.slices.name[i])) return kNone;
    auto it = cost_.find(i);
    if (it == cost_.end()) it = cost_.emplace(i, ShapeCostOfSlice(trace_, i)).first;
    return it->second;
  }

  // The op whose cost applies to device activity k: the launch call's
  // nearest ancestor with a cost (kNoSlice: none).
  uint32_t OpOfDevice(uint32_t k) {
    for (uint32_t h = g_.launch[k]; h != kNoSlice; h = g_.parent[h]) {
      if (Own(h)) return h;
    }
    return kNoSlice;
  }

  // Bytes of the largest tensor input of host op h (0: unknown).
  double LargestInputBytes(uint32_t h) {
    if (h == kNoSlice) return 0;
    auto dims = args_.InputDims(h);
    auto types = args_.InputTypes(h);
    if (!dims || !types) return 0;
    double best = 0;
    for (size_t k = 0; k < dims->size() && k < types->size(); ++k) {
      const int b = BytesPerElement((*types)[k]);
      if (b > 0 && !(*dims)[k].empty()) best = std::max(best, static_cast<double>(NumElements((*dims)[k])) * b);
    }
    return best;
  }

 private:
  bool Modelled(StringId name) {
    if (modelled_.empty()) modelled_.assign(trace_.strings.size(), -1);
    int8_t& m = modelled_[name.raw];
    if (m < 0) m = ClassifyOp(trace_.Str(name)) != OpFamily::kNone ? 1 : 0;
    return m == 1;
  }

  const Trace& trace_;
  const DependencyGraph& g_;
  OpArgReader args_;
  std::vector<int8_t> modelled_;  // per distinct name: -1 not asked yet
  std::unordered_map<uint32_t, std::optional<OpCost>> cost_;
};

std::optional<double> RooflineSeconds(const OpCost& c, const DevicePeaks& d) {
  const std::optional<double> peak = d.PeakFlops(c.precision);
  if (!peak || *peak <= 0 || d.memory_bandwidth_bytes_per_second <= 0) return std::nullopt;
  return std::max(c.flops / *peak, c.bytes / d.memory_bandwidth_bytes_per_second);
}

// Host slices: own multiplier × the parent's, parents first (memoised walk).
void PropagateHost(const DependencyGraph& g, std::vector<float>* own) {
  const size_t n = own->size();
  std::vector<float> out(n, 1.0f);
  std::vector<uint8_t> done(n, 0);
  std::vector<uint32_t> stack;
  for (uint32_t i = 0; i < n; ++i) {
    if (g.on_device[i] || done[i]) continue;
    for (uint32_t h = i; h != kNoSlice && !done[h]; h = g.parent[h]) stack.push_back(h);
    while (!stack.empty()) {
      const uint32_t h = stack.back();
      stack.pop_back();
      const uint32_t u = g.parent[h];
      out[h] = (*own)[h] * (u != kNoSlice ? out[u] : 1.0f);
      done[h] = 1;
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (!g.on_device[i]) (*own)[i] = out[i];
  }
}

class Editor {
 public:
  Editor(const Trace& trace, const DependencyGraph& g, const Scenario& sc, GraphEdits* e)
      : trace_(trace), s_(trace.slices), g_(g), sc_(sc), e_(e), costs_(trace, g) {
    for (uint32_t i = 0; i < s_.size() && !has_device_; ++i) has_device_ = g_.on_device[i];
    host_own_.assign(s_.size(), 1.0f);
    device_own_.assign(s_.size(), 1.0f);
  }

  void Run() {
    bool any = false;
    for (const WhatIfClause& c : sc_.clauses) {
      if (c.kind == WhatIfClause::Kind::kFuse) Fuse(c), any = true;
      if (c.kind == WhatIfClause::Kind::kOverlapComm) OverlapComm(), any = true;
      if (c.kind == WhatIfClause::Kind::kDevice) Device(c), any = true;
    }
    if (!any) return;
    PropagateHost(g_, &host_own_);
    e_->factor.assign(s_.size(), 1.0f);
    for (uint32_t i = 0; i < s_.size(); ++i) e_->factor[i] = g_.on_device[i] ? device_own_[i] : host_own_[i];
  }

 private:
  bool Active(uint32_t i) const { return g_.on_device[i] || trace_.tracks.kind[s_.track[i]] == TrackKind::kThread; }
  bool Matches(uint32_t i, const std::string& p) const {
    return trace_.Str(s_.name[i]).find(p) != std::string_view::npos;
  }

  // Memory-bound by family: elementwise ops (≤ 1 FLOP per element against
  // ≥ 8 bytes of operands, below every device's ridge point in
  // data/devices.yaml). Not by a device's ridge point: a fuse prediction
  // must not change with whether this machine ran `aiprof calibrate`.
  bool MemoryBound(uint32_t op) const { return ClassifyOp(trace_.Str(s_.name[op])) == OpFamily::kElementwise; }

  std::vector<std::vector<uint32_t>> Chains(const std::vector<std::string>& pats) {
    if (next_.empty()) {
      next_.assign(s_.size(), kNoSlice);
      for (uint32_t i = 0; i < s_.size(); ++i) {
        if (Active(i) && g_.prev[i] != kNoSlice) next_[g_.prev[i]] = i;
      }
      used_.assign(s_.size(), 0);
    }
    std::vector<uint32_t> order;
    for (uint32_t i = 0; i < s_.size(); ++i) {
      if (Active(i) && Matches(i, pats[0])) order.push_back(i);
    }
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return std::tie(s_.ts_ns[a], a) < std::tie(s_.ts_ns[b], b); });
    std::vector<std::vector<uint32_t>> out;
    for (uint32_t i : order) {
      if (used_[i]) continue;
      std::vector<uint32_t> chain{i};
      for (size_t k = 1; k < pats.size(); ++k) {
        const uint32_t j = next_[chain.back()];
        if (j == kNoSlice || used_[j] || !Matches(j, pats[k])) break;
        chain.push_back(j);
      }
      if (chain.size() != pats.size()) continue;
      for (uint32_t j : chain) used_[j] = 1;
      out.push_back(std::move(chain));
    }
    return out;
  }

  // The host op a member's shapes come from (itself, or a kernel's op).
  uint32_t OpOf(uint32_t m) { return g_.on_device[m] ? costs_.OpOfDevice(m) : m; }

  void Fuse(const WhatIfClause& c) {
    if (e_->after.empty()) e_->after.assign(s_.size(), kNoSlice);
    const std::vector<std::vector<uint32_t>> chains = Chains(c.chain);
    // Each host member's device work: activities whose launch call is in
    // its subtree (one walk up from each activity).
    std::unordered_map<uint32_t, std::vector<uint32_t>> launched;
    for (const std::vector<uint32_t>& chain : chains) {
      for (uint32_t m : chain) {
        if (!g_.on_device[m]) launched[m];
      }
    }
    for (uint32_t k = 0; k < s_.size() && has_device_ && !launched.empty(); ++k) {
      if (!g_.on_device[k]) continue;
      for (uint32_t h = g_.launch[k]; h != kNoSlice; h = g_.parent[h]) {
        if (auto it = launched.find(h); it != launched.end()) {
          it->second.push_back(k);
          break;
        }
      }
    }
    uint64_t launches = 0, thinned = 0, kept = 0, no_bytes = 0;
    for (const std::vector<uint32_t>& chain : chains) {
      const size_t k = chain.size();
      // Intermediate traffic: member j's largest input, else member j−1's.
      std::vector<double> removed(k, 0);
      for (size_t j = 1; j < k; ++j) {
        double b = costs_.LargestInputBytes(OpOf(chain[j]));
        if (b == 0) b = costs_.LargestInputBytes(OpOf(chain[j - 1]));
        if (b == 0) ++no_bytes;
        removed[j - 1] += b;
        removed[j] += b;
      }
      std::vector<uint32_t> kernels;  // the chain's device work, by start
      for (size_t j = 0; j < k; ++j) {
        const uint32_t m = chain[j];
        float keep = 1.0f;
        const uint32_t op = OpOf(m);
        const std::optional<OpCost> cost = op != kNoSlice ? costs_.Own(op) : std::nullopt;
        if (cost && cost->bytes > 0 && MemoryBound(op)) {
          keep = static_cast<float>(std::clamp(1 - removed[j] / cost->bytes, 0.0, 1.0));
          ++thinned;
        } else {
          ++kept;
        }
        if (g_.on_device[m]) {
          device_own_[m] *= keep;
          kernels.push_back(m);
          continue;
        }
        if (j > 0) e_->after[m] = chain[j - 1];  // no thread gap before it
        const std::vector<uint32_t>& work = launched[m];
        if (!work.empty()) {  // dispatch only: the kernels are the compute
          for (uint32_t kk : work) device_own_[kk] *= keep, kernels.push_back(kk);
          if (j > 0) host_own_[m] = 0.0f;
        } else {
          host_own_[m] *= keep;
        }
      }
      std::sort(kernels.begin(), kernels.end(), [&](uint32_t a, uint32_t b) { return std::tie(s_.ts_ns[a], a) < std::tie(s_.ts_ns[b], b); });
      for (size_t j = 1; j < kernels.size(); ++j) {
        e_->after[kernels[j]] = kernels[j - 1];
        if (g_.launch[kernels[j]] != kNoSlice) host_own_[g_.launch[kernels[j]]] = 0.0f, ++launches;
      }
    }
    e_->notes.push_back("fuse " + Join(c.chain) + ": " + CountOf(chains.size(), "chains") + ", " +
                        CountOf(launches, "launches after a chain's first removed") + ", " +
                        CountOf(thinned, "members lost their intermediate traffic") + ", " +
                        CountOf(kept, "kept their time (compute-bound or no shapes)") +
                        (no_bytes ? ", " + CountOf(no_bytes, "links without shapes (no traffic removed)") : ""));
  }

  static std::string Join(const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& x : v) out += (out.empty() ? "" : " ") + x;
    return out;
  }

  void OverlapComm() {
    const size_t n = s_.size();
    e_->comm.assign(n, 0);
    e_->stream_prev.assign(n, kNoSlice);
    e_->comm_prev.assign(n, kNoSlice);
    uint64_t comms = 0, freed = 0;
    for (uint32_t i = 0; i < n; ++i) e_->comm[i] = g_.on_device[i] && g_.cls[i] == PathClass::kCollective;
    for (uint32_t i = 0; i < n; ++i) {
      if (!g_.on_device[i]) continue;
      uint32_t c = g_.prev[i];
      while (c != kNoSlice && !e_->comm[c]) c = g_.prev[c];
      e_->comm_prev[i] = c;
      uint32_t p = g_.prev[i];
      if (e_->comm[i]) {
        ++comms;
      } else {
        while (p != kNoSlice && e_->comm[p]) p = g_.prev[p];
        freed += p != g_.prev[i] ? 1 : 0;
      }
      e_->stream_prev[i] = p;
    }
    std::string note = "overlap-comm: " + CountOf(comms, "device collectives") + ", " +
                       CountOf(freed, "compute activities no longer wait for one on their stream");
    // Nothing freed: say why, or "+0.00%" reads as "overlap gains nothing"
    // (audit4: MI300 ResNet act-checkpoint, 17 collectives on a stream of
    // their own, 9 compute activities waiting for them through stream waits).
    if (comms == 0) {
      note += ": the trace has no device collective to overlap; nothing changes";
    } else if (freed == 0) {
      uint64_t waits = 0;
      for (uint32_t i = 0; i < n; ++i) {
        const uint32_t w = g_.wait_on[i];
        waits += g_.on_device[i] && !e_->comm[i] && w != kNoSlice && e_->comm[w] ? 1 : 0;
      }
      note +=
          ": nothing to overlap, the collectives already run on streams of their own (no compute follows one on "
          "its stream)" +
          (waits > 0 ? ", and " + CountOf(waits, "compute activities wait for one") +
                           " through a recorded stream wait (the program consumes its result there)"
                     : std::string()) +
          "; the replay keeps what waits for them (stream waits, host syncs, the step's end), so it reproduces "
          "the measured steps. What hiding "
          "the collectives further could gain at most: remove-comm";
    }
    e_->notes.push_back(note);
  }

  void Device(const WhatIfClause& c) {
    if (!sc_.device_to || !sc_.device_from) {
      e_->notes.push_back("device " + c.device + ": not resolved (ResolveScenarioDevices), nothing scaled");
      return;
    }
    const DevicePeaks& to = *sc_.device_to;
    const DevicePeaks& from = *sc_.device_from;
    const double bw = to.memory_bandwidth_bytes_per_second > 0 && from.memory_bandwidth_bytes_per_second > 0
                          ? from.memory_bandwidth_bytes_per_second / to.memory_bandwidth_bytes_per_second
                          : 1.0;
    // The compute-peak ratio of a precision both devices list.
    auto peak_ratio = [&](Precision p) -> std::optional<double> {
      auto a = from.PeakFlops(p), b = to.PeakFlops(p);
      if (a && b && *a > 0 && *b > 0) return *a / *b;
      return std::nullopt;
    };
    // A dense kernel whose name says no precision (Triton's attention, a
    // shapeless GEMM) runs in the precision most of the trace's dense kernel
    // time names (an inference engine serves in one precision); without any,
    // fp32, else bf16, else fp16.
    KernelClassifier classes(trace_);
    auto is_dense = [&](uint32_t k) {
      const KernelClass kc = classes.Of(k);
      return kc == KernelClass::kGemm || kc == KernelClass::kConv || kc == KernelClass::kAttention ||
             kc == KernelClass::kTritonTemplate;
    };
    std::array<double, kPrecisionCount> named_time{};
    if (has_device_) {
      for (uint32_t k = 0; k < s_.size(); ++k) {
        if (!g_.on_device[k] || s_.kind[k] != EventKind::kKernel || !is_dense(k)) continue;
        if (auto p = KernelNamePrecision(trace_.Str(s_.name[k]))) {
          named_time[static_cast<size_t>(*p)] += static_cast<double>(s_.dur_ns[k]);
        }
      }
    }
    std::optional<double> compute;
    std::string compute_from = "fp32's, else bf16's";
    const size_t most =
        static_cast<size_t>(std::max_element(named_time.begin(), named_time.end()) - named_time.begin());
    if (named_time[most] > 0 && (compute = peak_ratio(static_cast<Precision>(most)))) {
      compute_from = std::string(PrecisionName(static_cast<Precision>(most))) + "'s, the trace's named precision";
    }
    for (Precision p : {Precision::kFp32, Precision::kBf16, Precision::kFp16}) {
      if (!compute) compute = peak_ratio(p);
    }
    uint64_t roofline = 0, by_compute = 0, by_named_precision = 0, by_bw = 0, unchanged = 0;
    auto ratio_of = [&](uint32_t op) -> std::optional<double> {
      if (op == kNoSlice) return std::nullopt;
      const std::optional<OpCost>& cost = costs_.Own(op);
      if (!cost) return std::nullopt;
      auto t_from = RooflineSeconds(*cost, from), t_to = RooflineSeconds(*cost, to);
      if (!t_from || !t_to || *t_from <= 0) return std::nullopt;
      return *t_to / *t_from;
    };
    if (!has_device_) {
      for (uint32_t i = 0; i < s_.size(); ++i) {
        if (g_.on_device[i] || s_.kind[i] != EventKind::kCpuOp) continue;
        bool top = true;
        for (uint32_t u = g_.parent[i]; u != kNoSlice && top; u = g_.parent[u]) top = s_.kind[u] != EventKind::kCpuOp;
        if (!top) continue;
        const std::optional<double> r = ratio_of(i);
        host_own_[i] *= static_cast<float>(r ? *r : bw);
        ++(r ? roofline : by_bw);
      }
    } else {
      for (uint32_t k = 0; k < s_.size(); ++k) {
        if (!g_.on_device[k]) continue;
        const EventKind kind = s_.kind[k];
        const std::string_view name = trace_.Str(s_.name[k]);
        double r = 1;
        if (g_.cls[k] == PathClass::kCollective) {
          ++unchanged;
        } else if (kind == EventKind::kMemcpy) {
          const bool d2d = name.find("DtoD") != std::string_view::npos;
          r = d2d ? bw : 1;
          ++(d2d ? by_bw : unchanged);
        } else if (std::optional<double> x = kind == EventKind::kMemset ? std::nullopt : ratio_of(costs_.OpOfDevice(k))) {
          r = *x, ++roofline;
        } else {
          const bool dense = is_dense(k);
          const std::optional<Precision> named = dense ? KernelNamePrecision(name) : std::nullopt;
          const std::optional<double> named_ratio = named ? peak_ratio(*named) : std::nullopt;
          if (named_ratio) {
            r = *named_ratio, ++by_compute, ++by_named_precision;
          } else if (dense && compute) {
            r = *compute, ++by_compute;
          } else {
            r = bw, ++by_bw;
          }
        }
        device_own_[k] *= static_cast<float>(r);
      }
    }
    e_->notes.push_back("device " + to.name + " (from " + from.name + "): " +
                        CountOf(roofline, has_device_ ? "kernels by their op's roofline time"
                                                      : "top-level ops by their roofline time") +
                        ", " +
                        CountOf(by_compute, "GEMM/conv/attention kernels without shapes by the compute-peak ratio") +
                        " (" + std::to_string(by_named_precision) + " of the precision their name says, the others " +
                        compute_from + "), " + CountOf(by_bw, "by the memory-bandwidth ratio (no shapes)") + ", " +
                        CountOf(unchanged, "collectives and host copies unchanged") + "; host work unchanged");
  }

  const Trace& trace_;
  const SliceTable& s_;
  const DependencyGraph& g_;
  const Scenario& sc_;
  GraphEdits* e_;
  Costs costs_;
  bool has_device_ = false;
  std::vector<float> host_own_, device_own_;
  std::vector<uint32_t> next_;
  std::vector<uint8_t> used_;
};

}  // namespace

GraphEdits BuildGraphEdits(const Trace& trace, const DependencyGraph& g, const Scenario& scenario) {
  GraphEdits e;
  const bool any = std::any_of(scenario.clauses.begin(), scenario.clauses.end(), [](const WhatIfClause& c) {
    return c.kind == WhatIfClause::Kind::kFuse || c.kind == WhatIfClause::Kind::kOverlapComm ||
           c.kind == WhatIfClause::Kind::kDevice;
  });
  if (any) Editor(trace, g, scenario, &e).Run();  // nothing allocated otherwise
  return e;
}

}  // namespace aiprof
