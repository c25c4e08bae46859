#include "src/analysis/diff/attribution_diff.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "src/analysis/common/steps.h"
#include "src/analysis/layout/layout_conversions.h"
#include "src/base/ascii.h"

namespace aiprof {

const char* DiffChangeName(DiffChange c) {
  switch (c) {
    case DiffChange::kUnchanged: return "unchanged";
    case DiffChange::kSlower: return "slower";
    case DiffChange::kFaster: return "faster";
    case DiffChange::kAdded: return "added";
    case DiffChange::kRemoved: return "removed";
    case DiffChange::kCallsRemoved: return "calls_removed";
    case DiffChange::kCallsAdded: return "calls_added";
  }
  return "?";
}

const char* DiffPerCallName(DiffPerCall c) {
  switch (c) {
    case DiffPerCall::kNone: return "";
    case DiffPerCall::kUnchanged: return "unchanged";
    case DiffPerCall::kSlower: return "slower";
    case DiffPerCall::kFaster: return "faster";
  }
  return "?";
}

bool DiffCallsChanged(double a_ns, double a_calls, double b_calls, double min_effect) {
  if (a_calls <= 0 || b_calls <= 0 || b_calls == a_calls) return false;
  return std::fabs(b_calls - a_calls) >= min_effect * a_calls &&
         std::fabs(DiffCallsNs(a_ns, a_calls, b_calls)) >= kDiffMinDeltaNs;
}

const char* DiffMatchName(DiffMatch m) {
  switch (m) {
    case DiffMatch::kNone: return "";
    case DiffMatch::kName: return "name";
    case DiffMatch::kMap: return "map";
    case DiffMatch::kLaunchOrder: return "through op";
    case DiffMatch::kRole: return "role";
    case DiffMatch::kThread: return "thread";
    case DiffMatch::kPosition: return "by position, unverified";
  }
  return "?";
}

const char* DiffKernelKindName(DiffKernelKind k) {
  switch (k) {
    case DiffKernelKind::kUnknown: return "unknown";
    case DiffKernelKind::kMatrix: return "matrix";
    case DiffKernelKind::kAttention: return "attention";
    case DiffKernelKind::kNorm: return "norm";
    case DiffKernelKind::kReduction: return "reduction";
    case DiffKernelKind::kElementwise: return "elementwise";
    case DiffKernelKind::kLayout: return "layout";
    case DiffKernelKind::kDataMovement: return "data movement";
  }
  return "?";
}


DiffKernelKind DiffKernelKindOf(OpClass c, std::string_view name) {
  switch (c) {
    case OpClass::kConvolution:
    case OpClass::kGemm: return DiffKernelKind::kMatrix;
    case OpClass::kAttention: return DiffKernelKind::kAttention;
    case OpClass::kNormalisation: return DiffKernelKind::kNorm;
    case OpClass::kReduction: return DiffKernelKind::kReduction;
    case OpClass::kElementwise: return DiffKernelKind::kElementwise;
    case OpClass::kDataMovement: return DiffKernelKind::kDataMovement;
    case OpClass::kOther: break;
  }
  // The layout analysis's named conversions (transposes that copy, NCHW<->NHWC,
  // TransData), and permute kernels.
  if (IsNamedConversion(name, /*device_kernel=*/true) || ContainsIgnoreCase(name, "permute")) {
    return DiffKernelKind::kLayout;
  }
  return DiffKernelKind::kUnknown;
}

const char* DiffShapeMatchName(DiffShapeMatch m) {
  switch (m) {
    case DiffShapeMatch::kNone: return "";
    case DiffShapeMatch::kSite: return "call site + shape";
    case DiffShapeMatch::kFunction: return "function + shape";
    case DiffShapeMatch::kShape: return "shape";
    case DiffShapeMatch::kSiteShapeChanged: return "call site, shape changed";
  }
  return "?";
}

bool DiffStepsDiffer(const AttributionDiff& d) { return d.available && d.steps_kind_a != d.steps_kind_b; }

bool DiffRunsUnrelated(const AttributionDiff& d) {
  return d.available && d.step_a_ns > 0 && d.step_b_ns > 0 && d.removed_ns > kDiffUnrelatedShare * d.step_a_ns &&
         d.added_ns > kDiffUnrelatedShare * d.step_b_ns;
}

bool DiffRunHostBound(double device_ns, double host_step_ns) {
  return host_step_ns > 0 && device_ns <= kDiffHostBoundShare * host_step_ns;
}

bool DiffBothHostBound(const AttributionDiff& d) {
  const DiffNodes& n = d.nodes;
  return d.available && n.size() > 0 && n.a_device_ns[0] > 0 && n.b_device_ns[0] > 0 &&
         DiffRunHostBound(n.a_device_ns[0], d.step_a_ns) && DiffRunHostBound(n.b_device_ns[0], d.step_b_ns);
}

namespace {
// What a run's steps are, in words and as a kind, from one FindSteps.
std::string DescribeSteps(const Trace& trace, bool pseudo, DiffStepsKind* kind) {
  *kind = DiffStepsKind::kNone;
  if (pseudo) return "no steps: the main thread's span";
  const StepList l = FindSteps(trace);
  if (l.from_pattern) {
    *kind = DiffStepsKind::kPattern;
    return "steps inferred from a repeating op pattern (periodic step #N; the trace has no step markers)";
  }
  if (l.source == "timeline") {
    *kind = DiffStepsKind::kRecorded;
    return l.hook_source.empty()
               ? "the recorded step span (ProfilerStep#N)"
               : "the recorded step span (ProfilerStep#N, marked by aiprof trace on " + l.hook_source + ")";
  }
  *kind = DiffStepsKind::kFile;
  return "the steps of " + l.source;
}
}  // namespace

std::string DiffStepsText(const Trace& trace, bool pseudo) {
  DiffStepsKind kind;
  return DescribeSteps(trace, pseudo, &kind);
}

std::string DiffShapeLabel(const AttributionResult& r, uint32_t row) {
  const AttributionResult::OpShapes& o = r.op_shapes;
  return row < o.size() ? o.labels[o.shape[row]] : std::string();
}

std::string_view SiteFunction(std::string_view site, std::string* scratch) {
  // "file(line): function": drop "(line)" when it is digits.
  const size_t open = site.find('(');
  const size_t close = open == std::string_view::npos ? open : site.find(')', open);
  if (close == std::string_view::npos || close == open + 1) return site;
  for (size_t i = open + 1; i < close; ++i) {
    if (site[i] < '0' || site[i] > '9') return site;
  }
  scratch->assign(site.substr(0, open));
  scratch->append(site.substr(close + 1));
  return *scratch;
}

std::string DiffSiteLabel(const AttributionResult& r, uint32_t row) {
  const AttributionResult::OpShapes& o = r.op_shapes;
  return row < o.size() && row < o.site.size() ? o.site_labels[o.site[row]] : std::string();
}

namespace {
std::string PairText(const std::string& la, const std::string& lb, bool has_a, bool has_b) {
  if (!has_a) return lb;
  if (has_b && lb != la) return la + " → " + lb;
  return la;
}
}  // namespace

std::string DiffRowSite(const AttributionResult& ra, const AttributionResult& rb, const DiffShapes& s, uint32_t row) {
  const bool has_a = s.a[row] != kNoNode, has_b = s.b[row] != kNoNode;
  std::string t = PairText(has_a ? DiffSiteLabel(ra, s.a[row]) : "", has_b ? DiffSiteLabel(rb, s.b[row]) : "", has_a,
                           has_b);
  return t.empty() ? "(no call stack)" : t;
}

std::string DiffRowShape(const AttributionResult& ra, const AttributionResult& rb, const DiffShapes& s, uint32_t row) {
  const bool has_a = s.a[row] != kNoNode, has_b = s.b[row] != kNoNode;
  std::string t = PairText(has_a ? DiffShapeLabel(ra, s.a[row]) : "", has_b ? DiffShapeLabel(rb, s.b[row]) : "",
                           has_a, has_b);
  return t.empty() ? "(no Input Dims)" : t;
}

std::string DiffNoStatsText(DiffNoStats why) {
  switch (why) {
    case DiffNoStats::kNone: return "";
    case DiffNoStats::kOneRun: return "in one run only";
    case DiffNoStats::kFewSteps:
      return "fewer than " + std::to_string(kDiffMinStepsForStats) + " steady steps in a run";
    case DiffNoStats::kUnchanged: return "unchanged by the thresholds";
  }
  return "?";
}

namespace {

// PyTorch's cuDNN and MIOpen ops of one computation are one op across
// hardware: "aten::cudnn_convolution" ↔ "aten::miopen_convolution",
// "aten::cudnn_batch_norm(_backward)" ↔ "aten::miopen_batch_norm(_backward)",
// "aten::cudnn_convolution_transpose" ↔ "aten::miopen_convolution_transpose",
// "aten::_cudnn_rnn" ↔ "aten::miopen_rnn". The name with its library written
// "<dnn>" ("aten::<dnn>_convolution"); empty for other names. A built-in
// entry after the user's map (docs/diff.md, Name map).
std::string VendorTwinOp(std::string_view name) {
  const size_t colon = name.rfind("::");
  const std::string_view ns = colon == std::string_view::npos ? std::string_view() : name.substr(0, colon + 2);
  std::string_view base = colon == std::string_view::npos ? name : name.substr(colon + 2);
  if (base.starts_with("_")) base.remove_prefix(1);
  for (std::string_view lib : {"cudnn_", "miopen_"}) {
    if (base.size() > lib.size() && base.starts_with(lib)) {
      return std::string(ns) + "<dnn>_" + std::string(base.substr(lib.size()));
    }
  }
  return {};
}

// One run's tree, prepared for the alignment: children in CSR (index order,
// which is order of first appearance) and one key per node.
struct Side {
  const Trace* trace = nullptr;
  const AttributionResult* r = nullptr;
  std::vector<uint32_t> child_begin, child;
  std::vector<uint64_t> key;
  std::vector<uint8_t> mapped;  // the key comes from a map entry
  std::vector<uint8_t> twin;    // the key comes from a built-in vendor twin (VendorTwinOp)
  std::vector<uint32_t> entry_names;  // per map entry: distinct names it matched

  void Prepare(const Trace& t, const AttributionResult& res, int side, const DiffNameMap* map) {
    trace = &t;
    r = &res;
    const AttributionNodes& n = res.nodes;
    child_begin.assign(n.size() + 1, 0);
    for (size_t i = 1; i < n.size(); ++i) ++child_begin[n.parent[i] + 1];
    for (size_t i = 1; i < child_begin.size(); ++i) child_begin[i] += child_begin[i - 1];
    child.resize(n.size() > 0 ? n.size() - 1 : 0);
    std::vector<uint32_t> fill(child_begin.begin(), child_begin.end() - 1);
    for (size_t i = 1; i < n.size(); ++i) child[fill[n.parent[i]]++] = static_cast<uint32_t>(i);
    Keys(side, map);
    kernel_kind.assign(n.size(), 0);
    launched_kind.assign(n.size(), static_cast<uint8_t>(kDiffKernelKindCount));
    stem_hash.assign(n.size(), 0);
    std::vector<int64_t> launched_ns(n.size(), -1);
    std::string stem;
    for (size_t i = 1; i < n.size(); ++i) {
      if (n.kind[i] != AttributionKind::kDevice) continue;
      kernel_kind[i] = static_cast<uint8_t>(DiffKernelKindOf(n.op_class[i], t.Str(n.name[i])));
      if (kernel_kind[i] == 0) {
        stem.clear();
        for (char ch : t.Str(n.name[i])) {
          if (ch < '0' || ch > '9') stem += ch;
        }
        stem_hash[i] = std::hash<std::string_view>()(stem);
      }
      const uint32_t p = n.parent[i];
      if (n.device_total_ns[i] > launched_ns[p]) {
        launched_ns[p] = n.device_total_ns[i];
        launched_kind[p] = kernel_kind[i];
      }
    }
  }

  std::vector<uint8_t> kernel_kind;    // device activity: DiffKernelKindOf, once per node
  // Device activity of unknown kind: a hash of its name without digits
  // ("hcom_allReduce__868_0_1" and "hcom_allReduce__586_0_1" alike).
  std::vector<uint64_t> stem_hash;
  std::vector<uint8_t> launched_kind;  // per node: the kind of its largest device child

  // What device activity x does (DiffKernelKindOf).
  size_t Kernel(uint32_t x) const { return kernel_kind[x]; }

  // What a runtime call launched: the kind of the device activity under it
  // with the most device time (the first of equals; cuDNN's launches of a
  // convolution are a convolution, not the layout conversion before it),
  // or kDiffKernelKindCount when it launched none.
  size_t Launched(uint32_t x) const { return launched_kind[x]; }

  // kind × (name, or map entry); the root, thread and untraced nodes by kind alone.
  void Keys(int side, const DiffNameMap* map) {
    const AttributionNodes& n = r->nodes;
    key.assign(n.size(), 0);
    mapped.assign(n.size(), 0);
    twin.assign(n.size(), 0);
    std::vector<int32_t> entry_of(map && !map->empty() ? trace->strings.size() : 0, -2);  // -2: not looked up
    entry_names.assign(map ? map->entries().size() : 0, 0);
    for (size_t i = 0; i < n.size(); ++i) {
      const uint64_t kind = static_cast<uint64_t>(n.kind[i]) + 1;
      if (n.kind[i] == AttributionKind::kRoot || n.kind[i] == AttributionKind::kThread ||
          n.kind[i] == AttributionKind::kUntraced) {
        key[i] = kind;
        continue;
      }
      const StringId name = n.name[i];
      int32_t e = -1;
      if (!entry_of.empty()) {
        int32_t& slot = entry_of[name.raw];
        if (slot == -2) {
          slot = map->Find(side, trace->Str(name));
          if (slot >= 0) ++entry_names[static_cast<size_t>(slot)];
        }
        e = slot;
      }
      const std::string twin_name =
          e < 0 && n.kind[i] == AttributionKind::kOp ? VendorTwinOp(trace->Str(name)) : std::string();
      uint64_t h = e >= 0              ? 0x6d61700000000000ull + static_cast<uint64_t>(e)
                   : twin_name.empty() ? std::hash<std::string_view>{}(trace->Str(name))
                                       : std::hash<std::string_view>{}(twin_name);
      key[i] = (h ^ (kind * 0x9E3779B97F4A7C15ull)) | 0x100;  // never a bare kind
      mapped[i] = e >= 0;
      twin[i] = !twin_name.empty();
    }
  }
};

// A CUDA / HIP runtime or driver API's name without its vendor prefix
// ("cudaDeviceSynchronize", "hipDeviceSynchronize" → "DeviceSynchronize";
// "cuCtxSynchronize" → "CtxSynchronize"); other names as they are.
std::string_view VendorNeutral(std::string_view name) {
  for (std::string_view prefix : {"cuda", "hip", "cu"}) {
    if (name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix && name[prefix.size()] >= 'A' &&
        name[prefix.size()] <= 'Z') {
      return name.substr(prefix.size());
    }
  }
  return name;
}

bool IsDataLoading(const AttributionNodes& n, uint32_t i) {
  return n.kind[i] == AttributionKind::kModule && n.time_class[i] == TimeClass::kDataLoading;
}

class Aligner {
 public:
  Aligner(const Side& a, const Side& b, AttributionDiff* out) : a_(a), b_(b), out_(out) {}

  void Run() {
    Add(kNoNode, 0, 0, DiffMatch::kName);
    for (size_t q = 0; q < work_.size(); ++q) {
      const Pair p = work_[q];
      AlignChildren(p);
    }
  }

 private:
  struct Pair {
    uint32_t a, b, diff;
  };
  struct Kid {
    uint64_t key;
    uint32_t node;
    bool operator<(const Kid& o) const { return key != o.key ? key < o.key : node < o.node; }
  };

  uint32_t Add(uint32_t parent, uint32_t a, uint32_t b, DiffMatch m) {
    DiffNodes& d = out_->nodes;
    d.parent.push_back(parent);
    d.a.push_back(a);
    d.b.push_back(b);
    d.kind.push_back(a != kNoNode ? a_.r->nodes.kind[a] : b_.r->nodes.kind[b]);
    d.match.push_back(a != kNoNode && b != kNoNode ? m : DiffMatch::kNone);
    const uint32_t id = static_cast<uint32_t>(d.parent.size() - 1);
    if (a != kNoNode && b != kNoNode) {
      work_.push_back({a, b, id});
      ++out_->matched;
      if (m == DiffMatch::kMap) ++out_->by_map;
      if (m == DiffMatch::kLaunchOrder) ++out_->through_op;
      if (m == DiffMatch::kRole) ++out_->by_role;
      if (m == DiffMatch::kPosition) ++out_->by_position;
    }
    return id;
  }

  // A node of one run alone, with its whole subtree.
  void AddSubtree(uint32_t parent, uint32_t node, bool in_a) {
    const Side& s = in_a ? a_ : b_;
    stack_.clear();
    stack_.push_back({node, parent});
    while (!stack_.empty()) {
      auto [n, p] = stack_.back();
      stack_.pop_back();
      uint32_t id = in_a ? Add(p, n, kNoNode, DiffMatch::kNone) : Add(p, kNoNode, n, DiffMatch::kNone);
      (in_a ? out_->removed : out_->added) += 1;
      for (uint32_t c = s.child_begin[n + 1]; c-- > s.child_begin[n];) stack_.push_back({s.child[c], id});
    }
  }

  void Collect(const Side& s, uint32_t parent, std::vector<Kid>* kids) {
    kids->clear();
    for (uint32_t c = s.child_begin[parent]; c < s.child_begin[parent + 1]; ++c) {
      kids->push_back({s.key[s.child[c]], s.child[c]});
    }
    std::sort(kids->begin(), kids->end());
  }

  // Pairs the leftovers of each side that `pred` accepts, in order of first appearance.
  template <typename Pred>
  void PairInOrder(const Pair& p, Pred pred, DiffMatch m) {
    PairInOrder(p, pred, pred, m);
  }
  // The same, with one predicate per side.
  template <typename PredA, typename PredB>
  void PairInOrder(const Pair& p, PredA pred_a, PredB pred_b, DiffMatch m) {
    size_t j = 0;
    for (uint32_t& x : left_a_) {
      if (x == kNoNode || !pred_a(a_, x)) continue;
      while (j < left_b_.size() && (left_b_[j] == kNoNode || !pred_b(b_, left_b_[j]))) ++j;
      if (j == left_b_.size()) break;
      Add(p.diff, x, left_b_[j], m);
      x = kNoNode;
      left_b_[j++] = kNoNode;
    }
  }

  // Leftover runtime calls that launched nothing, paired when their names
  // are one API of two vendors (VendorNeutral), in order of first appearance.
  void PairSameApi(const Pair& p) {
    for (uint32_t& x : left_a_) {
      if (x == kNoNode || a_.r->nodes.kind[x] != AttributionKind::kRuntime || a_.Launched(x) < kDiffKernelKindCount)
        continue;
      const std::string_view na = VendorNeutral(a_.trace->Str(a_.r->nodes.name[x]));
      for (uint32_t& y : left_b_) {
        if (y == kNoNode || b_.r->nodes.kind[y] != AttributionKind::kRuntime || b_.Launched(y) < kDiffKernelKindCount)
          continue;
        if (VendorNeutral(b_.trace->Str(b_.r->nodes.name[y])) != na) continue;
        Add(p.diff, x, y, DiffMatch::kLaunchOrder);
        x = y = kNoNode;
        break;
      }
    }
  }

  // Leftover device activity of unknown kind, paired with the first
  // leftover of unknown kind in the other run whose name is the same but
  // for its digits (Side::stem_hash), in order of first appearance.
  void PairSameStem(const Pair& p) {
    auto unknown = [](const Side& s, uint32_t x) {
      return x != kNoNode && s.r->nodes.kind[x] == AttributionKind::kDevice && s.Kernel(x) == 0;
    };
    for (uint32_t& x : left_a_) {
      if (!unknown(a_, x)) continue;
      for (uint32_t& y : left_b_) {
        if (!unknown(b_, y) || b_.stem_hash[y] != a_.stem_hash[x]) continue;
        Add(p.diff, x, y, DiffMatch::kLaunchOrder);
        x = y = kNoNode;
        break;
      }
    }
  }

  void AlignChildren(const Pair& p) {
    Collect(a_, p.a, &kids_a_);
    Collect(b_, p.b, &kids_b_);
    left_a_.clear();
    left_b_.clear();
    size_t i = 0, j = 0;
    // 1. Same key (kind and name, or map entry): in order within one key.
    while (i < kids_a_.size() || j < kids_b_.size()) {
      if (j == kids_b_.size() || (i < kids_a_.size() && kids_a_[i].key < kids_b_[j].key)) {
        left_a_.push_back(kids_a_[i++].node);
      } else if (i == kids_a_.size() || kids_b_[j].key < kids_a_[i].key) {
        left_b_.push_back(kids_b_[j++].node);
      } else {
        const uint32_t x = kids_a_[i++].node, y = kids_b_[j++].node;
        const AttributionKind k = a_.r->nodes.kind[x];
        // A built-in twin under one name in both runs (cuDNN on both) is a
        // match by name.
        const bool twins =
            (a_.twin[x] || b_.twin[y]) && a_.trace->Str(a_.r->nodes.name[x]) != b_.trace->Str(b_.r->nodes.name[y]);
        DiffMatch m = k == AttributionKind::kThread             ? DiffMatch::kThread
                      : (a_.mapped[x] || b_.mapped[y] || twins) ? DiffMatch::kMap
                                                                : DiffMatch::kName;
        Add(p.diff, x, y, m);
      }
    }
    std::sort(left_a_.begin(), left_a_.end());
    std::sort(left_b_.begin(), left_b_.end());
    // 2. Through the launching op: runtime calls that launched device work
    // with each other (cuLaunchKernel ↔ hipExtModuleLaunchKernel), then
    // device activity. Runtime calls that launched nothing pair only as the
    // same API of the other vendor (cudaDeviceSynchronize ↔
    // hipDeviceSynchronize: VendorNeutral): by position they would pair calls
    // of unrelated purpose (cudaStreamIsCapturing ↔ hipStreamGetDevice); the
    // rest are removed / added.
    // Launches pair by the kind of what they launched most of (a GEMM
    // launch with a GEMM launch, a memset's with a memset's:
    // DiffKernelKindOf), then any launch with any.
    for (size_t c = 0; c < kDiffKernelKindCount; ++c) {
      PairInOrder(
          p,
          [c](const Side& s, uint32_t x) {
            return s.r->nodes.kind[x] == AttributionKind::kRuntime && s.Launched(x) == c;
          },
          DiffMatch::kLaunchOrder);
    }
    PairInOrder(
        p,
        [](const Side& s, uint32_t x) {
          return s.r->nodes.kind[x] == AttributionKind::kRuntime && s.Launched(x) < kDiffKernelKindCount;
        },
        DiffMatch::kLaunchOrder);
    PairSameApi(p);
    // Device activity by what it does (DiffKernelKindOf), in order within
    // one kind: a pair by position across kinds paired an H100 convolution
    // with an MI300 transpose (tracelens Falconsai, 98.2 → 4.7 µs "faster"),
    // where MIOpen's igemm_fwd (30.1 µs) was the convolution. A kernel of a
    // known kind left over has no counterpart of its kind: removed / added.
    for (size_t c = 1; c < kDiffKernelKindCount; ++c) {
      PairInOrder(
          p,
          [c](const Side& s, uint32_t x) {
            return s.r->nodes.kind[x] == AttributionKind::kDevice && s.Kernel(x) == c;
          },
          DiffMatch::kLaunchOrder);
    }
    // Kernels of unknown kind whose names differ only in their numbers (the
    // ids HCCL and Ascend put in kernel names: hcom_allReduce__868_0_1 and
    // hcom_allReduce__586_0_1, one collective of two runs) are the same
    // kernel: in order, verified by the name.
    PairSameStem(p);
    // Other kernels of unknown kind: by position with what is left,
    // unverified (kPosition: listed, never ranked).
    auto device = [](const Side& s, uint32_t x) { return s.r->nodes.kind[x] == AttributionKind::kDevice; };
    auto unknown = [](const Side& s, uint32_t x) {
      return s.r->nodes.kind[x] == AttributionKind::kDevice && s.Kernel(x) == 0;
    };
    PairInOrder(p, unknown, device, DiffMatch::kPosition);
    PairInOrder(p, device, unknown, DiffMatch::kPosition);
    // 3. By role: data loading.
    PairInOrder(
        p, [](const Side& s, uint32_t x) { return IsDataLoading(s.r->nodes, x); }, DiffMatch::kRole);
    for (uint32_t x : left_a_) {
      if (x != kNoNode) AddSubtree(p.diff, x, /*in_a=*/true);
    }
    for (uint32_t y : left_b_) {
      if (y != kNoNode) AddSubtree(p.diff, y, /*in_a=*/false);
    }
  }

  const Side& a_;
  const Side& b_;
  AttributionDiff* out_;
  std::vector<Pair> work_;
  std::vector<Kid> kids_a_, kids_b_;
  std::vector<uint32_t> left_a_, left_b_;
  std::vector<std::pair<uint32_t, uint32_t>> stack_;
};

// The steady steps each node's figures are per: a node under a thread of
// one rank (the tree keeps each rank's other threads apart) is per that
// rank's steady steps, not the steps of every rank (a rank's all-reduce
// once a step read "0.5 calls per step" in a two-rank run); every other node
// (the critical thread's tree, which the ranks share) per the run's steady
// steps, as the step time.
std::vector<double> NodeSteps(const Trace& t, const AttributionResult& r) {
  std::map<int32_t, size_t> by_rank;
  for (const AttributionStep& s : r.per_step) {
    if (s.steady) ++by_rank[s.rank];
  }
  const AttributionNodes& n = r.nodes;
  std::vector<double> out(n.size(), static_cast<double>(r.steps));
  for (size_t x = 1; x < n.size(); ++x) {
    out[x] = out[n.parent[x]];
    if (n.kind[x] != AttributionKind::kThread || n.track[x] == kNoTrack || by_rank.size() < 2) continue;
    auto it = by_rank.find(t.tracks.rank[n.track[x]]);
    if (it != by_rank.end() && it->first != kNoRank && it->second > 0) out[x] = static_cast<double>(it->second);
  }
  return out;
}

double PerSteps(double steps, int64_t ns) { return steps > 0 ? static_cast<double>(ns) / steps : 0; }

// Per-step figures of every diff node: the time base (host total, or device
// time for device activity), the device time under it, calls.
void Figures(const AttributionResult& ra, const std::vector<double>& steps_a, const AttributionResult& rb,
             const std::vector<double>& steps_b, DiffNodes* d) {
  const size_t n = d->size();
  d->a_ns.assign(n, 0);
  d->b_ns.assign(n, 0);
  d->a_device_ns.assign(n, 0);
  d->b_device_ns.assign(n, 0);
  d->a_calls.assign(n, 0);
  d->b_calls.assign(n, 0);
  d->stats.assign(n, -1);
  d->change.assign(n, DiffChange::kUnchanged);
  auto fill = [](const AttributionResult& r, const std::vector<double>& steps, uint32_t x, double* ns, double* dev,
                 double* calls) {
    if (x == kNoNode) return;
    const AttributionNodes& t = r.nodes;
    *dev = PerSteps(steps[x], t.device_total_ns[x]);
    *ns = t.kind[x] == AttributionKind::kDevice ? *dev : PerSteps(steps[x], t.total_ns[x]);
    *calls = PerSteps(steps[x], static_cast<int64_t>(t.count[x]));
  };
  for (size_t i = 0; i < n; ++i) {
    fill(ra, steps_a, d->a[i], &d->a_ns[i], &d->a_device_ns[i], &d->a_calls[i]);
    fill(rb, steps_b, d->b[i], &d->b_ns[i], &d->b_device_ns[i], &d->b_calls[i]);
  }
}

DiffChange ByThreshold(double a_ns, double b_ns, double min_effect) {
  const double delta = b_ns - a_ns;
  if (std::fabs(delta) < kDiffMinDeltaNs || std::fabs(delta) < min_effect * a_ns) return DiffChange::kUnchanged;
  return delta > 0 ? DiffChange::kSlower : DiffChange::kFaster;
}

// The rows of every aligned op pair that more than one row splits: call
// site + shape first, then shape, then in order; per node, the rows of each
// run are few, so pairing by sorted keys is n log n in them.
void PairShapes(const AttributionResult& ra, const std::vector<double>& steps_a, const AttributionResult& rb,
                const std::vector<double>& steps_b, double min_effect, AttributionDiff* out) {
  const AttributionResult::OpShapes& sa = ra.op_shapes;
  const AttributionResult::OpShapes& sb = rb.op_shapes;
  if (!sa.computed() || !sb.computed()) return;
  const DiffNodes& d = out->nodes;
  DiffShapes& s = out->shapes;
  struct Key {
    std::string_view shape, site;
    uint32_t row;
  };
  std::vector<Key> kb;
  std::vector<uint8_t> used_b;
  std::vector<uint32_t> left_a, left_a2;
  auto add = [&](uint32_t node, uint32_t x, uint32_t y, DiffShapeMatch m) {
    s.node.push_back(node);
    s.a.push_back(x);
    s.b.push_back(y);
    const bool paired = x != kNoNode && y != kNoNode;
    s.match.push_back(paired ? m : DiffShapeMatch::kNone);
    if (paired) {
      (m == DiffShapeMatch::kSite       ? out->shape_by_site
       : m == DiffShapeMatch::kFunction ? out->shape_by_function
       : m == DiffShapeMatch::kShape    ? out->shape_by_shape
                                        : out->shape_by_order) += 1;
    }
    auto fig = [](const AttributionResult& r, const std::vector<double>& steps, uint32_t row, std::vector<double>* ns,
                  std::vector<double>* dev, std::vector<double>* calls) {
      const AttributionResult::OpShapes& o = r.op_shapes;
      const double n = row == kNoNode ? 0 : steps[o.node[row]];  // its node's steps (NodeSteps)
      ns->push_back(row == kNoNode ? 0 : PerSteps(n, o.total_ns[row]));
      dev->push_back(row == kNoNode ? 0 : PerSteps(n, o.device_ns[row]));
      calls->push_back(row == kNoNode ? 0 : PerSteps(n, static_cast<int64_t>(o.count[row])));
    };
    fig(ra, steps_a, x, &s.a_ns, &s.a_device_ns, &s.a_calls);
    fig(rb, steps_b, y, &s.b_ns, &s.b_device_ns, &s.b_calls);
    s.change.push_back(x == kNoNode   ? DiffChange::kAdded
                       : y == kNoNode ? DiffChange::kRemoved
                                      : ByThreshold(s.a_ns.back(), s.b_ns.back(), min_effect));
    s.stats.push_back(-1);
    s.no_stats.push_back(paired ? DiffNoStats::kNone : DiffNoStats::kOneRun);
  };
  auto less = [](const Key& x, const Key& y) {
    return x.shape != y.shape ? x.shape < y.shape : x.site != y.site ? x.site < y.site : x.row < y.row;
  };
  auto site_a = [&](uint32_t x) -> std::string_view { return sa.site_labels[sa.site[x]]; };
  for (uint32_t i = 1; i < d.size(); ++i) {
    if (d.kind[i] != AttributionKind::kOp || d.a[i] == kNoNode || d.b[i] == kNoNode) continue;
    const uint32_t a0 = sa.begin[d.a[i]], a1 = sa.begin[d.a[i] + 1];
    const uint32_t b0 = sb.begin[d.b[i]], b1 = sb.begin[d.b[i] + 1];
    if (a1 - a0 <= 1 && b1 - b0 <= 1) continue;  // one row (or none) each: the node says it all
    kb.clear();
    for (uint32_t y = b0; y < b1; ++y) kb.push_back({sb.labels[sb.shape[y]], sb.site_labels[sb.site[y]], y});
    std::sort(kb.begin(), kb.end(), less);
    used_b.assign(b1 - b0, 0);
    // 1. Call site + shape (rows with a call site only).
    left_a.clear();
    for (uint32_t x = a0; x < a1; ++x) {
      const std::string_view la = sa.labels[sa.shape[x]], ls = site_a(x);
      bool paired = false;
      if (!ls.empty()) {
        auto it = std::lower_bound(kb.begin(), kb.end(), Key{la, ls, 0}, less);
        for (; it != kb.end() && it->shape == la && it->site == ls; ++it) {
          if (used_b[it->row - b0]) continue;
          used_b[it->row - b0] = 1;
          add(i, x, it->row, DiffShapeMatch::kSite);
          paired = true;
          break;
        }
      }
      if (!paired) left_a.push_back(x);
    }
    // 1b. The call site's function (line left out) + shape, in order of first appearance.
    if (!left_a.empty()) {
      std::string sx, sy;
      size_t keep = 0;
      for (uint32_t x : left_a) {
        const std::string_view ls = site_a(x);
        bool paired = false;
        if (!ls.empty()) {
          const std::string_view la = sa.labels[sa.shape[x]];
          const std::string_view fa = SiteFunction(ls, &sx);
          for (uint32_t y = b0; y < b1 && !paired; ++y) {
            if (used_b[y - b0] || sb.labels[sb.shape[y]] != la) continue;
            const std::string_view lb = sb.site_labels[sb.site[y]];
            if (lb.empty() || SiteFunction(lb, &sy) != fa) continue;
            used_b[y - b0] = 1;
            add(i, x, y, DiffShapeMatch::kFunction);
            paired = true;
          }
        }
        if (!paired) left_a[keep++] = x;
      }
      left_a.resize(keep);
    }
    // 2. Shape alone: the first unused B row of that shape (B's rows of one
    // shape sort by site, then row; in order of first appearance below).
    left_a2.clear();
    for (uint32_t x : left_a) {
      const std::string_view la = sa.labels[sa.shape[x]];
      uint32_t best = kNoNode;
      for (auto it = std::lower_bound(kb.begin(), kb.end(), Key{la, std::string_view(), 0}, less);
           it != kb.end() && it->shape == la; ++it) {
        if (!used_b[it->row - b0] && it->row < best) best = it->row;
      }
      if (best == kNoNode) {
        left_a2.push_back(x);
        continue;
      }
      used_b[best - b0] = 1;
      add(i, x, best, DiffShapeMatch::kShape);
    }
    // 3. The same call site's function (known in both runs) with another
    // shape, in order of first appearance. Rows whose call site and shape
    // both differ (or whose site is unknown) are not the same call: they
    // are removed and added, not compared.
    std::string sx, sy;
    for (uint32_t x : left_a2) {
      const std::string_view ls = site_a(x);
      uint32_t y = kNoNode;
      if (!ls.empty()) {
        const std::string_view fa = SiteFunction(ls, &sx);
        for (uint32_t z = b0; z < b1 && y == kNoNode; ++z) {
          if (used_b[z - b0]) continue;
          const std::string_view lb = sb.site_labels[sb.site[z]];
          if (!lb.empty() && SiteFunction(lb, &sy) == fa) y = z;
        }
      }
      if (y == kNoNode) {
        add(i, x, kNoNode, DiffShapeMatch::kNone);
        continue;
      }
      used_b[y - b0] = 1;
      add(i, x, y, DiffShapeMatch::kSiteShapeChanged);
    }
    for (uint32_t z = b0; z < b1; ++z) {
      if (!used_b[z - b0]) add(i, kNoNode, z, DiffShapeMatch::kNone);
    }
  }
}

// validate's verdict as a change (nullopt: it decided nothing).
std::optional<DiffChange> ChangeOf(Verdict v) {
  switch (v) {
    case Verdict::kRegressed: return DiffChange::kSlower;
    case Verdict::kImproved: return DiffChange::kFaster;
    case Verdict::kNoChange: return DiffChange::kUnchanged;
    case Verdict::kInsufficientData: break;
  }
  return std::nullopt;
}

// Both runs have the steady steps a per-entry test needs.
bool EnoughStepsForStats(const AttributionDiff& d) {
  return d.steps_a >= kDiffMinStepsForStats && d.steps_b >= kDiffMinStepsForStats;
}

// validate's options for the per-entry tests: fewer bootstrap resamples.
ValidationOptions EntryTestOptions(const DiffOptions& options) {
  ValidationOptions o = options.stats;
  o.bootstrap_resamples = std::min(o.bootstrap_resamples, kDiffNodeResamples);
  return o;
}

// A shape row's per-step totals over the steady steps (0 where absent).
void RowSamples(const AttributionResult& r, uint32_t row, std::vector<double>* out) {
  const AttributionResult::OpShapes& o = r.op_shapes;
  out->assign(r.steps, 0);
  if (o.step_begin.size() <= row + 1) return;
  for (uint32_t e = o.step_begin[row]; e < o.step_begin[row + 1]; ++e) {
    if (o.step[e] < out->size()) (*out)[o.step[e]] = static_cast<double>(o.step_ns[e]);
  }
}

// validate's comparison of one paired row's per-step totals; the verdict
// reclassifies the row.
void TestRow(const AttributionResult& ra, const AttributionResult& rb, const ValidationOptions& o, uint32_t r,
             AttributionDiff* out) {
  DiffShapes& s = out->shapes;
  std::vector<double> xa, xb;
  RowSamples(ra, s.a[r], &xa);
  RowSamples(rb, s.b[r], &xb);
  s.stats[r] = static_cast<int32_t>(out->shape_stats.size());
  s.no_stats[r] = DiffNoStats::kNone;
  const MetricComparison cmp = CompareSamples("time per step", "ns", xa, xb, o, 0x5000 + r);
  out->shape_stats.push_back({r, cmp});
  if (const std::optional<DiffChange> c = ChangeOf(cmp.verdict)) s.change[r] = *c;
}

// Ranks the changed shape rows, tests every paired one with validate's
// comparison of its per-step totals (whatever --top shows: the changed set
// does not depend on it), reclassifies them and drops those the test finds
// unchanged.
void ShapeStatistics(const AttributionResult& ra, const AttributionResult& rb, const DiffOptions& options,
                     AttributionDiff* out) {
  DiffShapes& s = out->shapes;
  for (uint32_t r = 0; r < s.size(); ++r) {
    if (s.change[r] != DiffChange::kUnchanged) out->shape_ranked.push_back(r);
  }
  std::stable_sort(out->shape_ranked.begin(), out->shape_ranked.end(),
                   [&](uint32_t x, uint32_t y) { return std::fabs(s.Delta(x)) > std::fabs(s.Delta(y)); });
  const bool enough = EnoughStepsForStats(*out);
  const ValidationOptions o = EntryTestOptions(options);
  for (uint32_t r = 0; r < s.size(); ++r) {
    if (s.no_stats[r] == DiffNoStats::kNone && s.change[r] == DiffChange::kUnchanged) {
      s.no_stats[r] = DiffNoStats::kUnchanged;
    }
  }
  for (uint32_t r : out->shape_ranked) {
    if (s.no_stats[r] != DiffNoStats::kNone) continue;  // one run only
    if (!enough) {
      s.no_stats[r] = DiffNoStats::kFewSteps;
      continue;
    }
    TestRow(ra, rb, o, r, out);
  }
  out->shape_ranked.erase(std::remove_if(out->shape_ranked.begin(), out->shape_ranked.end(),
                                         [&](uint32_t x) { return s.change[x] == DiffChange::kUnchanged; }),
                          out->shape_ranked.end());
}

// Per-call samples of one entry in one run, from its per-step totals: each
// steady step with time in the entry gives its total divided by the run's
// calls per such step (count / steps with time). The samples' mean is the
// time per call exactly (Σ totals / count); where every such step has the
// same calls, each sample is that step's own time per call, and where the
// calls per step vary, that variation widens the samples' spread (the test
// then calls fewer per-call changes: more calls_removed / calls_added).
void PerCallSamples(const std::vector<double>& totals, uint64_t count, std::vector<double>* out) {
  out->clear();
  const size_t with = static_cast<size_t>(std::count_if(totals.begin(), totals.end(), [](double t) { return t > 0; }));
  if (count == 0 || with == 0) return;
  const double calls = static_cast<double>(count) / static_cast<double>(with);
  for (double t : totals) {
    if (t > 0) out->push_back(t / calls);
  }
}

// A changed entry (node or shape row) whose calls per step changed: the time
// per call's verdict — validate's, from `cmp` where it decided, else the
// thresholds on the per-call part (B's calls at A's time per call against
// B's time) — and the kind: calls_removed / calls_added when the time per
// call is unchanged or the calls account for at least as much of the change
// as the time per call; else slower / faster, as each call is.
template <typename Rows>
void SplitCalls(Rows* t, size_t i, const MetricComparison* cmp, double min_effect) {
  std::optional<DiffChange> c = cmp ? ChangeOf(cmp->verdict) : std::nullopt;
  if (!c) c = ByThreshold(t->b_calls[i] * DiffPerCallNs(t->a_ns[i], t->a_calls[i]), t->b_ns[i], min_effect);
  const DiffPerCall v = *c == DiffChange::kSlower   ? DiffPerCall::kSlower
                        : *c == DiffChange::kFaster ? DiffPerCall::kFaster
                                                    : DiffPerCall::kUnchanged;
  t->per_call[i] = v;
  const double calls_ns = t->CallsDelta(i), per_call_ns = t->Delta(i) - calls_ns;
  if (v == DiffPerCall::kUnchanged || std::fabs(calls_ns) >= std::fabs(per_call_ns)) {
    t->change[i] = t->b_calls[i] > t->a_calls[i] ? DiffChange::kCallsAdded : DiffChange::kCallsRemoved;
  } else {
    t->change[i] = per_call_ns > 0 ? DiffChange::kSlower : DiffChange::kFaster;
  }
}

bool SlowerOrFaster(DiffChange c) { return c == DiffChange::kSlower || c == DiffChange::kFaster; }

// Every changed paired node whose calls per step changed: its time per call
// compared (validate's test on PerCallSamples for host nodes when both runs
// have kDiffMinStepsForStats steady steps; device activity has no per-step
// figures) and its kind decided (SplitCalls).
void NodeCalls(const AttributionResult& ra, const AttributionResult& rb, const DiffOptions& options,
               AttributionDiff* out) {
  DiffNodes& d = out->nodes;
  const double min_effect = options.stats.min_effect;
  d.per_call.assign(d.size(), DiffPerCall::kNone);
  d.per_call_stats.assign(d.size(), -1);
  const bool enough = EnoughStepsForStats(*out);
  std::vector<uint32_t> chosen, na, nb;
  for (uint32_t i = 1; i < d.size(); ++i) {
    if (!SlowerOrFaster(d.change[i]) || !DiffCallsChanged(d.a_ns[i], d.a_calls[i], d.b_calls[i], min_effect)) continue;
    if (enough && d.kind[i] != AttributionKind::kDevice) {
      chosen.push_back(i);
      na.push_back(d.a[i]);
      nb.push_back(d.b[i]);
    } else {
      SplitCalls(&d, i, nullptr, min_effect);
    }
  }
  if (chosen.empty()) return;
  const std::vector<double> ta = PerStepTotals(ra, na), tb = PerStepTotals(rb, nb);
  const size_t sa = ta.size() / chosen.size(), sb = tb.size() / chosen.size();
  const ValidationOptions o = EntryTestOptions(options);
  std::vector<double> col_a(sa), col_b(sb), xa, xb;
  for (size_t j = 0; j < chosen.size(); ++j) {
    for (size_t k = 0; k < sa; ++k) col_a[k] = ta[k * chosen.size() + j];
    for (size_t k = 0; k < sb; ++k) col_b[k] = tb[k * chosen.size() + j];
    PerCallSamples(col_a, ra.nodes.count[na[j]], &xa);
    PerCallSamples(col_b, rb.nodes.count[nb[j]], &xb);
    d.per_call_stats[chosen[j]] = static_cast<int32_t>(out->per_call_stats.size());
    out->per_call_stats.push_back({chosen[j], CompareSamples("time per call", "ns", xa, xb, o, 0x7000 + chosen[j])});
    SplitCalls(&d, chosen[j], &out->per_call_stats.back().cmp, min_effect);
  }
}

// As NodeCalls, for the changed shape rows (their per-step totals: RowSamples).
void ShapeCalls(const AttributionResult& ra, const AttributionResult& rb, const DiffOptions& options,
                AttributionDiff* out) {
  DiffShapes& s = out->shapes;
  const double min_effect = options.stats.min_effect;
  s.per_call.assign(s.size(), DiffPerCall::kNone);
  s.per_call_stats.assign(s.size(), -1);
  const bool enough = EnoughStepsForStats(*out);
  const ValidationOptions o = EntryTestOptions(options);
  std::vector<double> col, xa, xb;
  for (uint32_t r = 0; r < s.size(); ++r) {
    if (!SlowerOrFaster(s.change[r]) || !DiffCallsChanged(s.a_ns[r], s.a_calls[r], s.b_calls[r], min_effect)) continue;
    if (!enough) {
      SplitCalls(&s, r, nullptr, min_effect);
      continue;
    }
    RowSamples(ra, s.a[r], &col);
    PerCallSamples(col, ra.op_shapes.count[s.a[r]], &xa);
    RowSamples(rb, s.b[r], &col);
    PerCallSamples(col, rb.op_shapes.count[s.b[r]], &xb);
    s.per_call_stats[r] = static_cast<int32_t>(out->shape_per_call_stats.size());
    out->shape_per_call_stats.push_back({r, CompareSamples("time per call", "ns", xa, xb, o, 0x9000 + r)});
    SplitCalls(&s, r, &out->shape_per_call_stats.back().cmp, min_effect);
  }
}

DiffChange Classify(const AttributionDiff& out, size_t i, double min_effect) {
  const DiffNodes& d = out.nodes;
  if (d.a[i] == kNoNode) return DiffChange::kAdded;
  if (d.b[i] == kNoNode) return DiffChange::kRemoved;
  if (d.stats[i] >= 0) {
    if (const std::optional<DiffChange> c = ChangeOf(out.stats[d.stats[i]].cmp.verdict)) return *c;
  }
  return ByThreshold(d.a_ns[i], d.b_ns[i], min_effect);
}

bool InOneRun(DiffChange c) { return c == DiffChange::kAdded || c == DiffChange::kRemoved; }
bool SameTimeBase(const DiffNodes& d, uint32_t x, uint32_t y) {
  return (d.kind[x] == AttributionKind::kDevice) == (d.kind[y] == AttributionKind::kDevice);
}
// A node added or removed with its parent (same time base): the parent is
// what was added or removed, this node a part of it.
bool InsideAddedOrRemoved(const DiffNodes& d, uint32_t i) {
  const uint32_t p = d.parent[i];
  return i != 0 && InOneRun(d.change[i]) && InOneRun(d.change[p]) && SameTimeBase(d, i, p);
}

// Nodes whose change one host child explains (kDiffExplainedShare, same
// sign). An added or removed node never does: it is the change.
std::vector<uint8_t> GivesWay(const DiffNodes& d) {
  std::vector<uint8_t> gives_way(d.size(), 0);
  for (size_t c = 1; c < d.size(); ++c) {
    const uint32_t p = d.parent[c];
    if (d.kind[c] == AttributionKind::kDevice && d.kind[p] != AttributionKind::kDevice) continue;  // other time base
    if (InOneRun(d.change[p])) continue;
    const double dp = d.Delta(p), dc = d.Delta(c);
    if (dp != 0 && dc * dp > 0 && std::fabs(dc) >= kDiffExplainedShare * std::fabs(dp)) gives_way[p] = 1;
  }
  return gives_way;
}

// Changed nodes that localise their change, largest first.
std::vector<uint32_t> Rank(const AttributionDiff& out) {
  const DiffNodes& d = out.nodes;
  const std::vector<uint8_t> gives_way = GivesWay(d);
  std::vector<uint32_t> ranked;
  for (size_t i = 1; i < d.size(); ++i) {
    // A pair made by position alone is not known to be one kernel's work.
    if (d.match[i] == DiffMatch::kPosition) continue;
    if (d.change[i] != DiffChange::kUnchanged && !gives_way[i] && !InsideAddedOrRemoved(d, static_cast<uint32_t>(i))) {
      ranked.push_back(static_cast<uint32_t>(i));
    }
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](uint32_t x, uint32_t y) { return std::fabs(d.Delta(x)) > std::fabs(d.Delta(y)); });
  return ranked;
}

std::vector<double> StepWalls(const AttributionResult& r) {
  std::vector<double> out;
  for (const AttributionStep& s : r.per_step) {
    if (s.steady) out.push_back(static_cast<double>(s.wall_ns));
  }
  return out;
}

// validate's comparison of the per-step totals of each of `chosen` (node
// pairs na[j] in A, nb[j] in B), one pass per run; the results go to
// out->stats and each node's stats index.
void CompareChosen(const AttributionResult& ra, const AttributionResult& rb, const DiffOptions& options,
                   const std::vector<uint32_t>& chosen, const std::vector<uint32_t>& na,
                   const std::vector<uint32_t>& nb, AttributionDiff* out) {
  if (chosen.empty()) return;
  DiffNodes& d = out->nodes;
  const std::vector<double> ta = PerStepTotals(ra, na), tb = PerStepTotals(rb, nb);
  const size_t sa = ta.size() / chosen.size(), sb = tb.size() / chosen.size();
  const ValidationOptions o = EntryTestOptions(options);
  std::vector<double> xa(sa), xb(sb);
  for (size_t j = 0; j < chosen.size(); ++j) {
    for (size_t k = 0; k < sa; ++k) xa[k] = ta[k * chosen.size() + j];
    for (size_t k = 0; k < sb; ++k) xb[k] = tb[k * chosen.size() + j];
    d.stats[chosen[j]] = static_cast<int32_t>(out->stats.size());
    out->stats.push_back({chosen[j], CompareSamples("time per step", "ns", xa, xb, o, chosen[j] + 1)});
  }
}

// validate's comparison of the per-step totals of every ranked pair (not
// only the top_n shown: which nodes count as changed must not depend on how
// many the report lists).
void NodeStatistics(const AttributionResult& ra, const AttributionResult& rb, const DiffOptions& options,
                    AttributionDiff* out) {
  DiffNodes& d = out->nodes;
  std::vector<uint32_t> chosen, na, nb;
  for (uint32_t i : out->ranked) {
    if (d.a[i] == kNoNode || d.b[i] == kNoNode || d.kind[i] == AttributionKind::kDevice) continue;
    chosen.push_back(i);
    na.push_back(d.a[i]);
    nb.push_back(d.b[i]);
  }
  CompareChosen(ra, rb, options, chosen, na, nb, out);
}

// The finest aligned level that tells the story (see AttributionDiff::
// ranked): op nodes whose change is concentrated in their call-site / shape
// rows are ranked by their changed rows instead. Every paired row and node
// has had its test already (ShapeStatistics, NodeStatistics), so this only
// decides and sorts.
void RankRows(AttributionDiff* out) {
  const DiffNodes& d = out->nodes;
  const DiffShapes& s = out->shapes;
  out->ranked_row.assign(out->ranked.size(), -1);
  out->split_ops = 0;
  if (s.size() == 0) return;
  const std::vector<uint8_t> gives_way = GivesWay(d);
  std::vector<uint8_t> split(d.size(), 0);
  std::vector<std::pair<uint32_t, int32_t>> all, rows;  // (node, row or -1)
  auto delta = [&](const std::pair<uint32_t, int32_t>& e) {
    return std::fabs(e.second >= 0 ? s.Delta(static_cast<size_t>(e.second)) : d.Delta(e.first));
  };
  // Rows of one op node are contiguous in `shapes` (PairShapes adds them per node).
  for (uint32_t r0 = 0; r0 < s.size();) {
    const uint32_t node = s.node[r0];
    uint32_t r1 = r0;
    int32_t best = -1;
    bool one_run_row = false;
    for (; r1 < s.size() && s.node[r1] == node; ++r1) {
      one_run_row = one_run_row || InOneRun(s.change[r1]);
      // Rows paired only by their call site (shape changed) are not aligned
      // by input: they can follow a split, not cause one.
      if (s.change[r1] != DiffChange::kUnchanged && s.match[r1] != DiffShapeMatch::kSiteShapeChanged &&
          (best < 0 || std::fabs(s.Delta(r1)) > std::fabs(s.Delta(static_cast<size_t>(best))))) {
        best = static_cast<int32_t>(r1);
      }
    }
    // An op its test (or the thresholds) calls unchanged can still have
    // lost or gained a call site / shape: those rows are structural, not
    // noise, and would otherwise be in no ranking (unfused_layernorm: two of
    // aten::add's three shapes removed, 44 ms per step, the op's net change
    // lost in its steps' page-fault noise).
    const bool concentrated =
        best >= 0 && std::fabs(s.Delta(static_cast<size_t>(best))) >= kDiffExplainedShare * std::fabs(d.Delta(node));
    const bool hidden_rows = one_run_row && d.change[node] == DiffChange::kUnchanged;
    if (!gives_way[node] && (concentrated || hidden_rows)) {
      split[node] = 1;
      ++out->split_ops;
      for (uint32_t r = r0; r < r1; ++r) {
        if (s.change[r] != DiffChange::kUnchanged) rows.push_back({node, static_cast<int32_t>(r)});
      }
    }
    r0 = r1;
  }
  for (uint32_t x : out->ranked) {
    if (!split[x]) all.push_back({x, -1});
  }
  all.insert(all.end(), rows.begin(), rows.end());
  std::stable_sort(all.begin(), all.end(), [&](const auto& x, const auto& y) { return delta(x) > delta(y); });
  out->ranked.clear();
  out->ranked_row.clear();
  for (const auto& [node, row] : all) {
    out->ranked.push_back(node);
    out->ranked_row.push_back(row);
  }
}

}  // namespace

std::vector<double> PerStepTotals(const AttributionResult& r, const std::vector<uint32_t>& nodes) {
  const AttributionResult::StepSelf& ss = r.step_self;
  const size_t steps = ss.begin.empty() ? 0 : ss.begin.size() - 1;
  const AttributionNodes& n = r.nodes;
  std::vector<double> out(steps * nodes.size(), 0);
  std::vector<int64_t> acc(n.size(), 0);
  for (size_t k = 0; k < steps; ++k) {
    std::fill(acc.begin(), acc.end(), 0);
    for (uint32_t e = ss.begin[k]; e < ss.begin[k + 1]; ++e) acc[ss.node[e]] += ss.ns[e];
    for (size_t i = n.size(); i-- > 1;) acc[n.parent[i]] += acc[i];
    double* row = out.data() + k * nodes.size();
    for (size_t j = 0; j < nodes.size(); ++j) row[j] = static_cast<double>(acc[nodes[j]]);
  }
  return out;
}

AttributionDiff DiffAttribution(const Trace& a, const AttributionResult& ra, const Trace& b,
                                const AttributionResult& rb, const DiffOptions& options) {
  AttributionDiff out;
  if (!ra.available || !rb.available) {
    out.problem = !ra.available ? "run A: " + ra.problem : "run B: " + rb.problem;
    return out;
  }
  out.steps_a = ra.steps;
  out.steps_b = rb.steps;
  out.pseudo_a = ra.pseudo_step;
  out.pseudo_b = rb.pseudo_step;
  out.steps_text_a = DescribeSteps(a, ra.pseudo_step, &out.steps_kind_a);
  out.steps_text_b = DescribeSteps(b, rb.pseudo_step, &out.steps_kind_b);
  out.step_a_ns = ra.PerStep(ra.wall_ns);
  out.step_b_ns = rb.PerStep(rb.wall_ns);
  for (size_t c = 0; c < kTimeClassCount; ++c) {
    out.class_a_ns[c] = ra.PerStep(ra.by_class_ns[c]);
    out.class_b_ns[c] = rb.PerStep(rb.by_class_ns[c]);
  }
  out.step = CompareSamples("step wall time", "ns", StepWalls(ra), StepWalls(rb), options.stats, 0);
  Side sa, sb;
  sa.Prepare(a, ra, 0, options.map);
  sb.Prepare(b, rb, 1, options.map);
  if (options.map) {
    for (const DiffNameMap::Entry& e : options.map->entries()) out.map_line.push_back(e.line);
    out.map_names_a = sa.entry_names;
    out.map_names_b = sb.entry_names;
  }
  Aligner(sa, sb, &out).Run();
  --out.matched;  // the roots
  const std::vector<double> steps_a = NodeSteps(a, ra), steps_b = NodeSteps(b, rb);
  Figures(ra, steps_a, rb, steps_b, &out.nodes);
  DiffNodes& d = out.nodes;
  for (size_t i = 0; i < d.size(); ++i) d.change[i] = Classify(out, i, options.stats.min_effect);
  for (uint32_t i = 1; i < d.size(); ++i) {
    if (d.kind[i] == AttributionKind::kDevice || !InOneRun(d.change[i]) || InsideAddedOrRemoved(d, i)) continue;
    (d.change[i] == DiffChange::kRemoved ? out.removed_ns : out.added_ns) +=
        d.change[i] == DiffChange::kRemoved ? d.a_ns[i] : d.b_ns[i];
  }
  out.ranked = Rank(out);
  NodeStatistics(ra, rb, options, &out);
  for (const DiffNodeStats& s : out.stats) d.change[s.node] = Classify(out, s.node, options.stats.min_effect);
  // A node validate's test finds unchanged leaves the ranking.
  out.ranked.erase(std::remove_if(out.ranked.begin(), out.ranked.end(),
                                  [&](uint32_t x) { return d.change[x] == DiffChange::kUnchanged; }),
                   out.ranked.end());
  NodeCalls(ra, rb, options, &out);
  PairShapes(ra, steps_a, rb, steps_b, options.stats.min_effect, &out);
  ShapeStatistics(ra, rb, options, &out);
  ShapeCalls(ra, rb, options, &out);
  RankRows(&out);
  for (size_t i = 0; i < out.ranked.size(); ++i) {
    const DiffChange c =
        out.ranked_row[i] >= 0 ? out.shapes.change[static_cast<size_t>(out.ranked_row[i])] : d.change[out.ranked[i]];
    if (c == DiffChange::kCallsRemoved || c == DiffChange::kCallsAdded) ++out.calls_changed;
  }
  out.available = true;
  return out;
}

std::string DiffNodeLabel(const Trace& a, const AttributionResult& ra, const Trace& b, const AttributionResult& rb,
                          const AttributionDiff& d, uint32_t node) {
  const uint32_t x = d.nodes.a[node], y = d.nodes.b[node];
  if (y == kNoNode) return NodeLabel(a, ra, x);
  std::string lb = NodeLabel(b, rb, y);
  if (x == kNoNode) return lb;
  std::string la = NodeLabel(a, ra, x);
  return la == lb ? lb : la + " → " + lb;
}

std::string DiffNodePath(const Trace& a, const AttributionResult& ra, const Trace& b, const AttributionResult& rb,
                         const AttributionDiff& d, uint32_t node) {
  std::vector<uint32_t> chain;
  for (uint32_t n = node; n != 0 && n != kNoNode; n = d.nodes.parent[n]) chain.push_back(n);
  std::string out;
  for (size_t i = chain.size(); i-- > 0;) {
    if (!out.empty()) out += " / ";
    out += DiffNodeLabel(a, ra, b, rb, d, chain[i]);
  }
  return out;
}

}  // namespace aiprof
