#include "src/analysis/attribution/attribution.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "src/analysis/common/op_args.h"
#include "src/analysis/common/steps.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/long_tail/op_tails.h"
#include "src/analysis/roofline/kernel_class.h"
#include "src/analysis/window/analysis_window.h"
#include "src/base/ascii.h"
#include "src/model/graph_capture_tracks.h"

namespace aiprof {

const char* AttributionKindName(AttributionKind kind) {
  switch (kind) {
    case AttributionKind::kRoot: return "step";
    case AttributionKind::kThread: return "thread";
    case AttributionKind::kModule: return "module";
    case AttributionKind::kOp: return "op";
    case AttributionKind::kRuntime: return "runtime";
    case AttributionKind::kDevice: return "device";
    case AttributionKind::kUntraced: return "untraced";
  }
  return "?";
}

const char* TimeClassName(TimeClass c) {
  switch (c) {
    case TimeClass::kOp: return "op";
    case TimeClass::kModuleCode: return "module code";
    case TimeClass::kLaunch: return "launch";
    case TimeClass::kSync: return "synchronisation";
    case TimeClass::kCommunication: return "communication";
    case TimeClass::kDataLoading: return "data loading";
    case TimeClass::kStartup: return "start-up";
    case TimeClass::kUntraced: return "untraced";
  }
  return "?";
}

double AttributionResult::Coverage() const {
  if (wall_ns <= 0 || nodes.size() == 0) return 0;
  int64_t children = 0;
  for (size_t n = 1; n < nodes.size(); ++n) {
    if (nodes.parent[n] == 0) children += nodes.total_ns[n];
  }
  return static_cast<double>(children + nodes.self_ns[0]) / static_cast<double>(wall_ns);
}

namespace {

constexpr int64_t kMinTs = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxTs = std::numeric_limits<int64_t>::max();

// What a slice's name makes it, classified once per distinct string.
enum NameFlags : uint8_t {
  kWrapper = 1,
  kModuleName = 2,  // "nn.Module: ..."
  kDataLoader = 4,
  kBlockingSync = 8,
  kCollectiveOp = 16,
  kLabel = 32,     // record_function label written as a cpu_op ("Optimizer.step#SGD.step")
  kSyncCopy = 64,  // a synchronous copy call (cudaMemcpy, hipMemcpyWithStream): it waits for the stream
  kClassified = 128,
};

bool IsCollectiveOpName(std::string_view name) {
  return name.substr(0, 6) == "c10d::" || name.substr(0, 5) == "nccl:" || name.substr(0, 5) == "hccl:" ||
         ContainsIgnoreCase(name, "allreduce") || ContainsIgnoreCase(name, "all_reduce") ||
         ContainsIgnoreCase(name, "allgather") || ContainsIgnoreCase(name, "all_gather") ||
         ContainsIgnoreCase(name, "reduce_scatter") || ContainsIgnoreCase(name, "alltoall") ||
         ContainsIgnoreCase(name, "all_to_all") || ContainsIgnoreCase(name, "broadcast_") ||
         name.substr(0, 5) == "HcclA" || name.substr(0, 4) == "hcom";
}

uint8_t ClassifyName(std::string_view name) {
  uint8_t f = kClassified;
  if (IsProfilerWrapperName(name)) f |= kWrapper;
  if (name.substr(0, 11) == "nn.Module: ") f |= kModuleName;
  if (IsDataLoaderName(name)) f |= kDataLoader;
  if (IsBlockingSyncName(name)) f |= kBlockingSync;
  if (IsSyncCopyName(name)) f |= kSyncCopy;
  if (IsCollectiveOpName(name)) f |= kCollectiveOp;
  if (name.find('#') != std::string_view::npos) f |= kLabel;
  return f;
}

// The kind of node a slice makes (module, op, runtime); kRoot: structure (no
// node, its time goes to the enclosing node).
AttributionKind NodeKindOf(EventKind kind, uint8_t f) {
  if ((f & kWrapper) || kind == EventKind::kTraceSpan || kind == EventKind::kGpuUserAnnotation ||
      IsDeviceActivity(kind) || (kind == EventKind::kPythonFunction && !(f & kModuleName))) {
    return AttributionKind::kRoot;
  }
  if (kind == EventKind::kCpuOp) return (f & (kLabel | kDataLoader)) ? AttributionKind::kModule : AttributionKind::kOp;
  if (kind == EventKind::kRuntime || kind == EventKind::kDriver || kind == EventKind::kSync) {
    return AttributionKind::kRuntime;
  }
  return AttributionKind::kModule;  // nn.Module, record_function, SDK spans, pipeline nodes
}

struct NodeKey {
  uint32_t parent;
  uint32_t name;
  uint32_t track;
  AttributionKind kind;
  bool operator==(const NodeKey& o) const {
    return parent == o.parent && name == o.name && track == o.track && kind == o.kind;
  }
};
struct NodeKeyHash {
  size_t operator()(const NodeKey& k) const {
    uint64_t a = (static_cast<uint64_t>(k.parent) << 32) | k.name;
    uint64_t b = (static_cast<uint64_t>(k.track) << 8) | static_cast<uint8_t>(k.kind);
    uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0xC2B2AE3D27D4EB4Full + (a << 6) + (a >> 2));
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

// A step being attributed: its interval and where its time goes.
struct StepWork {
  int64_t start, end;
  size_t out;  // index into per_step
};

// A piece of a step's time on the critical thread that no node covers.
struct Hole {
  int64_t start, end;
  size_t step;  // index into the track's StepWork list
};

// One open slice of the sweep.
struct Open {
  int64_t end;
  uint32_t node;  // kNoNode: root level (a hole when on top); kDead: outside every step
  TimeClass cls;
  uint32_t slice = kNoSlice;  // the slice that made `node` (op shapes only)
  uint32_t site = 0;          // innermost enclosing call-site frame: its name's StringId raw + 1 (op shapes only)
};
constexpr uint32_t kDead = kNoNode - 1;

class Builder {
 public:
  Builder(const Trace& trace, const AnalysisWindow* window, const AttributionOptions& options,
          AttributionResult* out)
      : trace_(trace), s_(trace.slices), out_(out), flags_(trace.strings.size(), 0),
        node_of_slice_(trace.slices.size(), kNoNode), shapes_(options.op_shapes) {
    if (shapes_) {
      slice_self_.assign(s_.size(), 0);
      slice_dev_.assign(s_.size(), 0);
      up_.assign(s_.size(), kNoSlice);
      seen_.assign(s_.size(), 0);
      site_frame_.assign(trace.strings.size(), 0);
    }
    AddNode(kNoNode, AttributionKind::kRoot, StringId{}, kNoTrack, TimeClass::kUntraced, OpClass::kOther);
    untraced_ = AddNode(0, AttributionKind::kUntraced, StringId{}, kNoTrack, TimeClass::kUntraced, OpClass::kOther);
    if (window) {
      for (const StartupCall& c : window->startup_calls) startup_.push_back(c.slice);
    }
  }

  // Attributes the steps of one critical track (sorted by start, disjoint).
  // `captures`: graph-capture tracks (IsGraphCaptureTrack) of the same
  // process, whose replays join the tree where their graph launches ran
  // (AttachReplays), with nodes only, never host time.
  void AttributeTrack(uint32_t track, std::vector<StepWork> steps, const std::vector<uint32_t>& helpers,
                      const std::vector<uint32_t>& captures) {
    steps_ = std::move(steps);
    holes_.clear();
    helper_track_ = kNoTrack;
    Sweep(track, /*primary=*/true);
    for (uint32_t helper : helpers) {
      if (holes_.empty()) break;
      thread_node_ = kNoNode;
      helper_track_ = helper;
      Sweep(helper, /*primary=*/false);
    }
    helper_track_ = kNoTrack;
    for (uint32_t capture : captures) AttachReplays(capture);
    for (const Hole& h : holes_) Account(h.step, h.end - h.start, untraced_, TimeClass::kUntraced, kNoSlice);
    holes_.clear();
  }

  void JoinDevice();
  void Finish();
  void BuildOpShapes();

 private:
  uint32_t AddNode(uint32_t parent, AttributionKind kind, StringId name, uint32_t track, TimeClass cls, OpClass op) {
    AttributionNodes& n = out_->nodes;
    n.parent.push_back(parent);
    n.kind.push_back(kind);
    n.name.push_back(name);
    n.track.push_back(track);
    n.time_class.push_back(cls);
    n.op_class.push_back(op);
    n.count.push_back(0);
    n.self_ns.push_back(0);
    n.total_ns.push_back(0);
    n.device_self_ns.push_back(0);
    n.device_total_ns.push_back(0);
    n.data_width.push_back(kind == AttributionKind::kDevice ? WidthOf(name) : DataWidth::kUnknown);
    n.compiled.push_back((parent != kNoNode && n.compiled[parent]) || (name.raw != 0 && CompiledName(name)) ? 1 : 0);
    return static_cast<uint32_t>(n.parent.size() - 1);
  }

  DataWidth WidthOf(StringId name) {
    if (width_.empty()) width_.assign(trace_.strings.size(), 0xFF);
    uint8_t& w = width_[name.raw];
    if (w == 0xFF) w = static_cast<uint8_t>(KernelDataWidth(trace_.Str(name)));
    return static_cast<DataWidth>(w);
  }

  // Whether a node's own name makes it compiled code (see AttributionNodes::compiled).
  bool CompiledName(StringId name) {
    if (compiled_name_.empty()) compiled_name_.assign(trace_.strings.size(), 0);
    uint8_t& c = compiled_name_[name.raw];
    if (c == 0) {
      const std::string_view s = trace_.Str(name);
      c = IsCompiledRegionName(s) || IsInductorKernelName(s) ? 2 : 1;
    }
    return c == 2;
  }

  uint32_t Child(uint32_t parent, AttributionKind kind, StringId name, uint32_t track, TimeClass cls, OpClass op) {
    NodeKey key{parent, name.raw, track, kind};
    // A direct-mapped cache in front of the map: a step repeats the paths
    // of the step before, so nearly every lookup hits one array slot
    // instead of a hash-map bucket and its node (the profile's hot spot).
    CacheSlot& slot = cache_[NodeKeyHash()(key) & (kCacheSlots - 1)];
    if (slot.id != kNoNode && slot.key == key) return slot.id;
    auto it = index_.find(key);
    uint32_t id;
    if (it != index_.end()) {
      id = it->second;
    } else {
      id = AddNode(parent, kind, name, track, cls, op);
      index_.emplace(key, id);
    }
    slot = {key, id};
    return id;
  }

  uint8_t Flags(StringId name) {
    uint8_t& f = flags_[name.raw];
    if (f == 0) f = ClassifyName(trace_.Str(name));
    return f;
  }

  uint8_t OpClassOf(StringId name) {
    if (op_class_.empty()) op_class_.assign(trace_.strings.size(), 0xFF);
    uint8_t& c = op_class_[name.raw];
    if (c == 0xFF) c = static_cast<uint8_t>(ClassifyOpName(trace_.Str(name)));
    return c;
  }

  void Account(size_t step, int64_t len, uint32_t node, TimeClass cls, uint32_t slice) {
    if (len <= 0) return;
    AttributionStep& st = out_->per_step[steps_[step].out];
    st.by_class_ns[static_cast<size_t>(cls)] += len;
    st.attributed_ns += len;
    if (!st.steady) return;
    out_->nodes.self_ns[node] += len;
    if (shapes_ && slice != kNoSlice) slice_self_[slice] += len;
    const uint32_t out = static_cast<uint32_t>(steps_[step].out);
    if (!raw_self_.empty() && raw_self_.back().step == out && raw_self_.back().node == node) {
      raw_self_.back().ns += len;
    } else {
      raw_self_.push_back({out, node, len});
    }
  }
  // Builds out_->step_self from raw_self_ (counting sort by step, then one
  // entry per node and step).
  void BuildStepSelf();

  // [a, b) belongs to `top` (the innermost open slice; nullptr: none).
  void Emit(int64_t a, int64_t b, const Open* top, bool primary);
  void Sweep(uint32_t track, bool primary);
  // The graph replays copied onto a graph-capture track (one root per
  // replay, the merge's "graph replay: ..." slice, over the captured module
  // path, ops and launch calls, re-timed onto the replayed kernels): each
  // joins the tree where the graph launch that replayed it ran, its root
  // structure and the captured nodes under the node that encloses the
  // launch (beside it), in the launch's step, whatever the copies' times
  // (the device runs a replay after its launch returns, often past the
  // step: vLLM's decode replay, 6.9 ms after a 2.41 ms span). A replay
  // whose launch is in no step of this track, or has no node, is left for
  // its own track; one launched in a warm-up step is dead. Nodes and counts
  // only: the copies are no host time.
  void AttachReplays(uint32_t capture);
  // The graph launch that replayed each copied launch call (the graph-capture
  // flow's target's LaunchingCalls()), kNoSlice elsewhere; built on first use.
  const std::vector<uint32_t>& ReplayLaunches();
  // The [first, last + 1) slice rows of `track` (slices are sorted by track).
  std::pair<size_t, size_t> TrackRange(uint32_t track) const;
  // Index of the step at or after `ts` (steps ending at or before it skipped), from `*p` on.
  size_t StepAt(int64_t ts, size_t* p) const {
    while (*p < steps_.size() && steps_[*p].end <= ts) ++*p;
    return *p;
  }
  // The node of slice `i` under `top`, with its class; kNoNode when structure.
  uint32_t NodeFor(uint32_t i, const Open* top, TimeClass* cls);

  const Trace& trace_;
  const SliceTable& s_;
  AttributionResult* out_;
  std::vector<uint8_t> flags_;
  std::vector<uint8_t> op_class_;
  std::optional<KernelClassifier> kernel_classes_;  // device nodes' classes
  std::vector<uint8_t> width_;          // per string: KernelDataWidth, 0xFF not looked at
  std::vector<uint8_t> compiled_name_;  // per string: 0 not looked at, 1 no, 2 compiled code
  std::vector<uint32_t> node_of_slice_;
  std::vector<uint32_t> startup_;
  std::unordered_map<NodeKey, uint32_t, NodeKeyHash> index_;
  struct CacheSlot {
    NodeKey key{};
    uint32_t id = kNoNode;
  };
  static constexpr size_t kCacheSlots = size_t{1} << 13;
  std::vector<CacheSlot> cache_ = std::vector<CacheSlot>(kCacheSlots);
  uint32_t untraced_ = kNoNode;
  struct RawSelf {
    uint32_t step;  // index into per_step
    uint32_t node;
    int64_t ns;
  };
  std::vector<RawSelf> raw_self_;  // Account() of steady steps, in emission order
  std::vector<StepWork> steps_;
  std::vector<Hole> holes_, next_holes_;
  size_t emit_step_ = 0, hole_ = 0;
  uint32_t thread_node_ = kNoNode;  // helper sweeps: the thread's node under the root
  uint32_t helper_track_ = kNoTrack;
  std::vector<uint32_t> replay_launch_;  // ReplayLaunches(), empty until used
  // Op shapes (opt-in): per slice that made a node, its self time and device
  // time over the steady steps, the node slice enclosing it, and whether it
  // was seen / counted; node slices in the order they were opened.
  bool shapes_ = false;
  std::vector<int64_t> slice_self_, slice_dev_;
  std::vector<uint32_t> up_;
  std::vector<uint8_t> seen_;  // 1: opened as a node, 2: also counted
  std::vector<uint32_t> opened_, opened_node_;
  std::vector<uint32_t> opened_site_;  // per opened node slice: Open::site of it
  std::vector<uint32_t> opened_step_;  // per opened node slice: its per_step index
  std::vector<uint8_t> site_frame_;    // per string: 0 not looked at, 1 not a call-site frame, 2 one
};

uint32_t Builder::NodeFor(uint32_t i, const Open* top, TimeClass* cls) {
  const EventKind kind = s_.kind[i];
  const StringId name = s_.name[i];
  const uint8_t f = Flags(name);
  const TimeClass inherited = top ? top->cls : TimeClass::kUntraced;
  const bool wait_inherited = top && (inherited == TimeClass::kDataLoading || inherited == TimeClass::kSync ||
                                      inherited == TimeClass::kCommunication || inherited == TimeClass::kStartup);
  const AttributionKind k = NodeKindOf(kind, f);
  if (k == AttributionKind::kRoot) return kNoNode;
  TimeClass c;
  if (k == AttributionKind::kOp) {
    c = TimeClass::kOp;
  } else if (k == AttributionKind::kRuntime) {
    c = (kind == EventKind::kSync || (f & (kBlockingSync | kSyncCopy))) ? TimeClass::kSync : TimeClass::kLaunch;
  } else {
    c = TimeClass::kModuleCode;
  }
  if (f & kDataLoader) c = TimeClass::kDataLoading;
  else if (f & kCollectiveOp) c = TimeClass::kCommunication;
  else if ((f & kBlockingSync) && k != AttributionKind::kModule) c = TimeClass::kSync;
  if (!startup_.empty() && std::find(startup_.begin(), startup_.end(), i) != startup_.end()) c = TimeClass::kStartup;
  if (wait_inherited) c = inherited;
  uint32_t parent = top && top->node != kNoNode ? top->node : 0;
  if (parent == 0 && helper_track_ != kNoTrack) {
    if (thread_node_ == kNoNode) {
      thread_node_ = Child(0, AttributionKind::kThread, StringId{}, helper_track_, TimeClass::kOp, OpClass::kOther);
    }
    parent = thread_node_;
  }
  OpClass op = k == AttributionKind::kOp ? static_cast<OpClass>(OpClassOf(name)) : OpClass::kOther;
  *cls = c;
  return Child(parent, k, name, kNoTrack, c, op);
}

void Builder::Emit(int64_t a, int64_t b, const Open* top, bool primary) {
  if (b <= a) return;
  if (top && top->node == kDead) return;
  const bool hole = top == nullptr || top->node == kNoNode;
  if (primary) {
    // Clip to the steps, in time order (emissions come in time order).
    for (size_t k = StepAt(a, &emit_step_); k < steps_.size() && steps_[k].start < b; ++k) {
      int64_t lo = std::max(a, steps_[k].start), hi = std::min(b, steps_[k].end);
      if (hi <= lo) continue;
      if (hole) holes_.push_back({lo, hi, k});
      else Account(k, hi - lo, top->node, top->cls, top->slice);
      if (steps_[k].end > b) break;
    }
    return;
  }
  // A helper thread: it claims the parts of the holes it covers with a node.
  if (hole) return;
  while (hole_ < holes_.size() && holes_[hole_].end <= a) next_holes_.push_back(holes_[hole_++]);
  while (hole_ < holes_.size() && holes_[hole_].start < b) {
    Hole& h = holes_[hole_];
    if (h.start < a) next_holes_.push_back({h.start, a, h.step});
    int64_t lo = std::max(a, h.start), hi = std::min(b, h.end);
    Account(h.step, hi - lo, top->node, top->cls, top->slice);
    if (h.end > b) {
      h.start = b;  // the rest stays a hole
      break;
    }
    ++hole_;
  }
}

std::pair<size_t, size_t> Builder::TrackRange(uint32_t track) const {
  // The track's slices: one contiguous range (sorted by track, start).
  size_t a = 0, b = s_.size();
  while (a < b) {  // first slice of the track
    size_t m = (a + b) / 2;
    if (s_.track[m] < track)
      a = m + 1;
    else
      b = m;
  }
  const size_t lo = a;
  b = s_.size();
  while (a < b) {  // first slice after the track
    size_t m = (a + b) / 2;
    if (s_.track[m] <= track)
      a = m + 1;
    else
      b = m;
  }
  return {lo, a};
}

const std::vector<uint32_t>& Builder::ReplayLaunches() {
  if (!replay_launch_.empty()) return replay_launch_;
  replay_launch_.assign(s_.size(), kNoSlice);
  const std::optional<StringId> category = trace_.strings.Find(kGraphCaptureFlowCategory);
  if (!category) return replay_launch_;
  const std::vector<uint32_t> run_calls = LaunchingCalls(trace_);
  const FlowTable& f = trace_.flows;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f.category[i] != *category) continue;
    const uint32_t from = f.from_slice[i], to = f.to_slice[i];
    if (from < s_.size() && to < s_.size() && IsDeviceActivity(s_.kind[to])) replay_launch_[from] = run_calls[to];
  }
  return replay_launch_;
}

void Builder::AttachReplays(uint32_t capture) {
  const auto [lo, hi] = TrackRange(capture);
  if (lo >= hi) return;
  const std::vector<uint32_t>& launch_of = ReplayLaunches();
  // Pass 1: each replay's root (a slice no other on the track encloses) and
  // the graph launch that ran it (its first copied launch call's).
  std::vector<uint32_t> root_launch;  // per root, in track order
  {
    int64_t root_end = kMinTs;
    for (size_t i = lo; i < hi; ++i) {
      if (s_.ts_ns[i] >= root_end) {
        root_end = s_.ts_ns[i] + std::max<int64_t>(s_.dur_ns[i], 0);
        root_launch.push_back(kNoSlice);
      }
      if (root_launch.back() == kNoSlice) root_launch.back() = launch_of[i];
    }
  }
  // Pass 2: the nodes, each root's subtree under the launch's enclosing node.
  constexpr uint32_t kSkip = kDead - 1;  // not this track's replay: left alone
  std::vector<Open> stack;
  stack.reserve(64);
  size_t root = 0, k = 0;
  int64_t root_end = kMinTs;
  const AttributionNodes& nodes = out_->nodes;
  for (size_t i = lo; i < hi; ++i) {
    const int64_t ts = s_.ts_ns[i], end = ts + std::max<int64_t>(s_.dur_ns[i], 0);
    if (ts >= root_end) {  // a replay's root: structure, standing for the launch's enclosing node
      root_end = end;
      stack.clear();
      const uint32_t launch = root_launch[root++];
      Open o{end, kSkip, TimeClass::kUntraced};
      const uint32_t at = launch == kNoSlice ? kNoNode : node_of_slice_[launch];
      if (at != kNoNode && node_of_slice_[i] == kNoNode) {
        // The step the launch starts in (steps are sorted and disjoint).
        const int64_t at_ts = s_.ts_ns[launch];
        k = static_cast<size_t>(std::upper_bound(steps_.begin(), steps_.end(), at_ts,
                                                 [](int64_t t, const StepWork& w) { return t < w.end; }) -
                                steps_.begin());
        const bool mine = k < steps_.size() && steps_[k].start <= at_ts;
        if (mine && at == kDead) {
          o.node = kDead;
          node_of_slice_[i] = kDead;
        } else if (mine) {
          o.node = nodes.parent[at];
          o.cls = nodes.time_class[o.node];
          if (shapes_) o.slice = up_[launch];  // the node slice enclosing the launch
          node_of_slice_[i] = kDead;           // attached: a later track's pass leaves it
        }
      }
      stack.push_back(o);
      continue;
    }
    while (stack.size() > 1 && stack.back().end <= ts) stack.pop_back();
    const Open& top = stack.back();
    Open o{std::min(end, top.end), top.node, top.cls, top.slice, top.site};
    if (top.node == kSkip || top.node == kDead) {
      if (top.node == kDead) node_of_slice_[i] = kDead;
      stack.push_back(o);
      continue;
    }
    if (shapes_ && s_.kind[i] == EventKind::kPythonFunction) {
      uint8_t& f = site_frame_[s_.name[i].raw];
      if (f == 0) f = IsCallSiteFrame(trace_.Str(s_.name[i])) ? 2 : 1;
      if (f == 2) o.site = s_.name[i].raw + 1;
    }
    const uint32_t n = NodeFor(static_cast<uint32_t>(i), &top, &o.cls);
    if (n != kNoNode) {
      o.node = n;
      node_of_slice_[i] = n;
      ++out_->nodes.count[n];
      if (shapes_) {
        o.slice = static_cast<uint32_t>(i);
        up_[i] = top.slice;
        opened_.push_back(static_cast<uint32_t>(i));
        opened_node_.push_back(n);
        opened_site_.push_back(o.site);
        opened_step_.push_back(static_cast<uint32_t>(steps_[k].out));
        seen_[i] = 2;
      }
    }
    stack.push_back(o);
  }
}

void Builder::Sweep(uint32_t track, bool primary) {
  const int64_t first = steps_.front().start, last = steps_.back().end;
  const auto [lo, hi] = TrackRange(track);
  emit_step_ = 0;
  hole_ = 0;
  next_holes_.clear();
  std::vector<Open> stack;
  stack.reserve(64);
  int64_t cursor = kMinTs;
  size_t step_p = 0;
  // next_steady[k]: the first steady step at or after step k (steps_.size()
  // when none). An instance counts once when it has time in a steady step:
  // one opened in the warm-up or before the first step and running through
  // the steady steps (vLLM's capture_32_FULL, a model's forward) counted 0
  // and read "0 per step" beside 100% of the step's time.
  std::vector<uint32_t> next_steady(steps_.size() + 1, static_cast<uint32_t>(steps_.size()));
  for (size_t k = steps_.size(); k-- > 0;) {
    next_steady[k] = out_->per_step[steps_[k].out].steady ? static_cast<uint32_t>(k) : next_steady[k + 1];
  }
  auto top = [&]() -> const Open* { return stack.empty() ? nullptr : &stack.back(); };
  auto flush_to = [&](int64_t ts) {
    while (!stack.empty() && stack.back().end <= ts) {
      Emit(std::max(cursor, first), stack.back().end, &stack.back(), primary);
      cursor = std::max(cursor, stack.back().end);
      stack.pop_back();
    }
    Emit(std::max(cursor, first), std::min(ts, last), top(), primary);
    cursor = std::max(cursor, ts);
  };
  for (size_t i = lo; i < hi; ++i) {
    const int64_t ts = s_.ts_ns[i];
    if (ts >= last) break;
    const int64_t end = ts + std::max<int64_t>(s_.dur_ns[i], 0);
    flush_to(ts);
    // Its parent is the innermost open slice that encloses it (ParentSlices).
    // An open slice it outlives is not: torch opens a record_function label
    // (and ProfilerStep#N) inside the short `_record_function_enter_new` that
    // creates it, and clipping the label to that call dropped all but its
    // first microseconds from the tree (TraceLens's Flux.1 trace: 81 of its
    // 249 ms `execute_diffusion` label untraced). Such a slice is kept whole.
    // A node goes on top: the latest opened slice has the time, as
    // `self_ns` in `aiprof query` (an op running past the step's end keeps
    // its time in the step). Structure (no node) goes right above its parent:
    // the slices it outlives keep their time until they end (a Python frame
    // that outlives the frames it started in takes no module's time).
    size_t at = stack.size();  // where it goes: above its parent, or on top
    // (A slice below a node on top may have ended already: never a parent.)
    while (at > 0 && (stack[at - 1].end < end || stack[at - 1].end <= ts)) --at;
    const Open* parent = at > 0 ? &stack[at - 1] : nullptr;
    if (end <= first) continue;  // wholly before the steps (and so are its children)
    Open o{end, kNoNode, TimeClass::kUntraced};
    if (shapes_) {
      // The innermost enclosing python_function frame that is a call site.
      o.site = parent ? parent->site : 0;
      if (s_.kind[i] == EventKind::kPythonFunction) {
        uint8_t& f = site_frame_[s_.name[i].raw];
        if (f == 0) f = IsCallSiteFrame(trace_.Str(s_.name[i])) ? 2 : 1;
        if (f == 2) o.site = s_.name[i].raw + 1;
      }
    }
    size_t k = StepAt(ts, &step_p);
    bool in_step = k < steps_.size() && steps_[k].start < end;
    if (!in_step || (parent && parent->node == kDead)) {
      o.node = kDead;
    } else {
      const Open* t = parent;
      uint32_t n = kNoNode;
      // The step's own marker is structure.
      bool marker = primary && ts == steps_[k].start && s_.name[i] == out_->per_step[steps_[k].out].name;
      if (!marker) n = NodeFor(static_cast<uint32_t>(i), t, &o.cls);
      if (n == kNoNode) {
        o.node = t ? t->node : kNoNode;
        o.cls = t ? t->cls : TimeClass::kUntraced;
        o.slice = t ? t->slice : kNoSlice;
      } else {
        o.node = n;
        at = stack.size();
        node_of_slice_[i] = n;
        const AttributionStep& st = out_->per_step[steps_[k].out];
        // Step k has time of the slice (in_step); so may later ones.
        const uint32_t j = next_steady[k];
        const bool counted = j < steps_.size() && steps_[j].start < end;
        if (counted) ++out_->nodes.count[n];
        if (!st.steady) node_of_slice_[i] = kDead;
        if (shapes_) {
          o.slice = static_cast<uint32_t>(i);
          if (seen_[i] == 0) {  // a helper thread swept for two critical tracks opens its slices twice
            up_[i] = t ? t->slice : kNoSlice;
            opened_.push_back(static_cast<uint32_t>(i));
            opened_node_.push_back(n);
            opened_site_.push_back(o.site);
            // The step it is counted in: its own when steady, else the first
            // steady step it has time in (an op a helper thread opened in the
            // warm-up); its per-step total goes there.
            opened_step_.push_back(static_cast<uint32_t>(steps_[counted ? j : k].out));
          }
          if (counted) seen_[i] = 2;
          else if (seen_[i] == 0) seen_[i] = 1;
        }
      }
    }
    stack.insert(stack.begin() + static_cast<std::ptrdiff_t>(at), o);
  }
  flush_to(kMaxTs);
  if (!primary) {
    while (hole_ < holes_.size()) next_holes_.push_back(holes_[hole_++]);
    holes_.swap(next_holes_);
  }
}

void Builder::JoinDevice() {
  // The launching call's node, else the launching op's (LaunchingOps):
  // torch_npu links each task both to the CANN call that submitted it, on
  // its task-queue thread (HostToDevice), which no step's tree covers, and
  // to the framework op that queued it (async_npu). A graph's kernel joins
  // its captured launch call (OpLaunchingCalls), which AttachReplays put
  // where the graph launch ran; one whose copy joined no tree (its graph
  // launch has no node) joins the graph launch that replayed it
  // (LaunchingCalls), as without the merge.
  std::vector<uint32_t> calls = OpLaunchingCalls(trace_);
  std::vector<uint32_t> run_calls, ops;
  for (size_t i = 0; i < s_.size(); ++i) {
    if (!IsDeviceActivity(s_.kind[i])) continue;
    uint32_t from = calls[i];
    if (from != kNoSlice && node_of_slice_[from] == kNoNode) {
      if (run_calls.empty()) run_calls = LaunchingCalls(trace_);
      if (run_calls[i] != kNoSlice) from = run_calls[i];
    }
    if (from == kNoSlice || node_of_slice_[from] == kNoNode) {
      if (ops.empty()) ops = LaunchingOps(trace_);
      from = ops[i];
    }
    if (from == kNoSlice || node_of_slice_[from] == kNoNode) continue;
    uint32_t n = node_of_slice_[from];
    if (n == kDead) continue;
    // The kernel's class as analyze's kernels section gives it (one classifier).
    if (!kernel_classes_) kernel_classes_.emplace(trace_);
    const OpClass op = OpClassOfKernel(kernel_classes_->Of(static_cast<uint32_t>(i)), trace_.Str(s_.name[i]));
    uint32_t d = Child(n, AttributionKind::kDevice, s_.name[i], kNoTrack, out_->nodes.time_class[n], op);
    ++out_->nodes.count[d];
    out_->nodes.device_self_ns[d] += s_.dur_ns[i];
    out_->device_ns += s_.dur_ns[i];
    node_of_slice_[i] = d;
    if (shapes_) slice_dev_[from] += s_.dur_ns[i];
  }
  // Device activity that starts inside a steady step and joined no node.
  std::vector<std::pair<int64_t, int64_t>> steady;
  for (const AttributionStep& st : out_->per_step) {
    if (st.steady) steady.emplace_back(st.start_ns, st.start_ns + st.wall_ns);
  }
  std::sort(steady.begin(), steady.end());
  for (size_t i = 0; i < s_.size(); ++i) {
    if (!IsDeviceActivity(s_.kind[i]) || node_of_slice_[i] != kNoNode) continue;
    auto it = std::upper_bound(steady.begin(), steady.end(), std::make_pair(s_.ts_ns[i], kMaxTs));
    if (it != steady.begin() && s_.ts_ns[i] < std::prev(it)->second) {
      out_->unlinked_device_ns += s_.dur_ns[i];
      if (s_.kind[i] != EventKind::kCollective && !IsCollectiveKernelName(trace_.Str(s_.name[i]))) {
        out_->unlinked_compute_ns += s_.dur_ns[i];
      }
    }
  }
}

void Builder::Finish() {
  AttributionNodes& n = out_->nodes;
  n.total_ns = n.self_ns;
  n.device_total_ns = n.device_self_ns;
  for (size_t i = n.size(); i-- > 1;) {
    n.total_ns[n.parent[i]] += n.total_ns[i];
    n.device_total_ns[n.parent[i]] += n.device_total_ns[i];
  }
  for (const AttributionStep& st : out_->per_step) {
    if (!st.steady) continue;
    ++out_->steps;
    out_->wall_ns += st.wall_ns;
    for (size_t c = 0; c < kTimeClassCount; ++c) out_->by_class_ns[c] += st.by_class_ns[c];
  }
  n.count[0] = out_->steps;
  BuildStepSelf();
  if (shapes_) BuildOpShapes();
}

void Builder::BuildOpShapes() {
  // Totals per node slice: its self time plus the totals of the node slices
  // it encloses (children are opened after their parents).
  std::vector<int64_t> total = slice_self_;
  std::vector<int64_t>& dev = slice_dev_;
  for (size_t j = opened_.size(); j-- > 0;) {
    const uint32_t i = opened_[j];
    if (up_[i] == kNoSlice) continue;
    total[up_[i]] += total[i];
    dev[up_[i]] += dev[i];
  }
  AttributionResult::OpShapes& o = out_->op_shapes;
  o.labels.assign(1, "");
  // The "Input Dims" / "Input type" args as OpArgReader reads them
  // (src/analysis/common/op_args.h: JSON or string text), keys looked up once.
  const std::optional<StringId> dims_key = trace_.strings.Find("Input Dims");
  const std::optional<StringId> types_key = trace_.strings.Find("Input type");
  auto text_id = [&](uint32_t slice, std::optional<StringId> key) -> uint32_t {  // StringId raw + 1, 0: none
    if (!key) return 0;
    const Arg* a = trace_.FindSliceArg(slice, *key);
    if (a == nullptr || (a->type != ArgType::kJson && a->type != ArgType::kString)) return 0;
    return a->str + 1;
  };
  // On one line (OneLineArgText: diff printed "[\x0a          [],\x0a ..."
  // for traces that indent the arg); labels that differ only in white space
  // are one shape.
  auto one_line = [&](uint32_t id) { return id == 0 ? std::string() : OneLineArgText(trace_.Str(StringId{id - 1})); };
  // Call sites: the "Call stack" arg's cut (CallSiteOfStack), else the
  // enclosing call-site frame's label; one id per distinct label, each
  // source string looked at once.
  const std::optional<StringId> stack_key = trace_.strings.Find("Call stack");
  o.site_labels.assign(1, "");
  std::unordered_map<std::string, uint32_t> site_of_text;
  std::unordered_map<uint32_t, uint32_t> site_of_source;  // source (see below) → site id
  auto site_id = [&](uint32_t source) -> uint32_t {  // source: stack arg id + 1, or frame id + 1 | top bit
    if (source == 0) return 0;
    auto [it, fresh] = site_of_source.emplace(source, 0);
    if (fresh) {
      const bool frame = (source & 0x80000000u) != 0;
      const std::string_view text = trace_.Str(StringId{(source & 0x7FFFFFFFu) - 1});
      std::string label = frame ? CallSiteLabel(text) : CallSiteOfStack(text);
      if (!label.empty()) {
        auto [lit, fresh_label] = site_of_text.emplace(label, static_cast<uint32_t>(o.site_labels.size()));
        if (fresh_label) o.site_labels.push_back(std::move(label));
        it->second = lit->second;
      }
    }
    return it->second;
  };
  // Shape ids by text (hashed once per distinct (dims, types) string pair);
  // rows by (node, dims, types, site source) through a direct-mapped cache in
  // front of a map, as the tree's own node lookup: a step repeats the step before.
  struct RowKey {
    uint32_t node, shape, site;
    bool operator==(const RowKey& k) const { return node == k.node && shape == k.shape && site == k.site; }
  };
  struct RowKeyHash {
    size_t operator()(const RowKey& k) const {
      uint64_t h = uint64_t{k.node} * 0x9E3779B97F4A7C15ull ^ uint64_t{k.shape} * 0xC2B2AE3D27D4EB4Full ^
                   uint64_t{k.site} * 0x165667B19E3779F9ull;
      return static_cast<size_t>(h ^ (h >> 31));
    }
  };
  std::unordered_map<uint64_t, uint32_t> shape_of_ids;       // (dims id, types id) → shape
  std::unordered_map<std::string, uint32_t> shape_of_text;   // label → shape
  std::unordered_map<RowKey, uint32_t, RowKeyHash> row_of;   // (node, shape, site) → row
  struct RowSlot {
    uint32_t node = kNoNode, dims = 0, types = 0, source = 0, row = 0;
  };
  constexpr size_t kRowSlots = size_t{1} << 12;
  std::vector<RowSlot> cache(kRowSlots);
  std::vector<uint32_t> rn, rs, rsite;
  std::vector<uint64_t> rc;
  std::vector<int64_t> rself, rtotal, rdev;
  // Steady step ordinal of each per_step entry (UINT32_MAX: not steady).
  std::vector<uint32_t> ordinal(out_->per_step.size(), UINT32_MAX);
  {
    uint32_t steady = 0;
    for (size_t k = 0; k < out_->per_step.size(); ++k) {
      if (out_->per_step[k].steady) ordinal[k] = steady++;
    }
  }
  struct StepEntry {
    uint32_t row, step;
    int64_t ns;
  };
  std::vector<StepEntry> per_step;
  const AttributionNodes& n = out_->nodes;
  for (size_t j = 0; j < opened_.size(); ++j) {
    const uint32_t i = opened_[j], node = opened_node_[j];
    if (n.kind[node] != AttributionKind::kOp) continue;
    if (seen_[i] != 2 && slice_self_[i] == 0 && total[i] == 0 && dev[i] == 0) continue;
    const uint32_t d = text_id(i, dims_key), t = d ? text_id(i, types_key) : 0;
    const uint32_t stack = text_id(i, stack_key);
    const uint32_t source = stack != 0 ? stack : opened_site_[j] != 0 ? (opened_site_[j] | 0x80000000u) : 0;
    const uint64_t h = (uint64_t{node} * 0x9E3779B97F4A7C15ull) ^ (uint64_t{d} * 0xC2B2AE3D27D4EB4Full) ^
                       (uint64_t{t} << 17) ^ (uint64_t{source} * 0x165667B19E3779F9ull);
    RowSlot& slot = cache[(h ^ (h >> 29)) & (kRowSlots - 1)];
    uint32_t r;
    if (slot.node == node && slot.dims == d && slot.types == t && slot.source == source) {
      r = slot.row;
    } else {
      uint32_t shape = 0;
      if (d != 0) {
        auto [sit, fresh_ids] = shape_of_ids.emplace((uint64_t{d} << 32) | t, 0);
        if (fresh_ids) {
          std::string label = one_line(d);
          const std::string tt = one_line(t);
          if (!tt.empty()) label.append(" ").append(tt);
          if (label.empty()) {
            sit->second = 0;
          } else {
            auto [lit, fresh_label] = shape_of_text.emplace(label, static_cast<uint32_t>(o.labels.size()));
            if (fresh_label) o.labels.push_back(std::move(label));
            sit->second = lit->second;
          }
        }
        shape = sit->second;
      }
      const uint32_t site = site_id(source);
      auto [it, fresh] = row_of.emplace(RowKey{node, shape, site}, static_cast<uint32_t>(rn.size()));
      if (fresh) {
        rn.push_back(node);
        rs.push_back(shape);
        rsite.push_back(site);
        rc.push_back(0);
        rself.push_back(0);
        rtotal.push_back(0);
        rdev.push_back(0);
      }
      r = it->second;
      slot = {node, d, t, source, r};
    }
    rc[r] += seen_[i] == 2 ? 1 : 0;
    rself[r] += slice_self_[i];
    rtotal[r] += total[i];
    rdev[r] += dev[i];
    const uint32_t k = ordinal[opened_step_[j]];
    if (k != UINT32_MAX && total[i] != 0) per_step.push_back({r, k, total[i]});
  }
  // Rows grouped by node (counting sort, stable: first appearance within a node).
  o.begin.assign(n.size() + 1, 0);
  for (uint32_t x : rn) ++o.begin[x + 1];
  for (size_t k = 1; k < o.begin.size(); ++k) o.begin[k] += o.begin[k - 1];
  const size_t rows = rn.size();
  o.node.resize(rows);
  o.shape.resize(rows);
  o.site.resize(rows);
  o.count.resize(rows);
  o.self_ns.resize(rows);
  o.total_ns.resize(rows);
  o.device_ns.resize(rows);
  std::vector<uint32_t> fill(o.begin.begin(), o.begin.end() - 1);
  std::vector<uint32_t> final_row(rows);
  for (size_t r = 0; r < rows; ++r) {
    const uint32_t at = fill[rn[r]]++;
    final_row[r] = at;
    o.node[at] = rn[r];
    o.shape[at] = rs[r];
    o.site[at] = rsite[r];
    o.count[at] = rc[r];
    o.self_ns[at] = rself[r];
    o.total_ns[at] = rtotal[r];
    o.device_ns[at] = rdev[r];
  }
  // Per-step totals per row: a counting sort by row (stable: opened order,
  // which is time order on one track), a row's segment sorted by step only
  // when several tracks interleaved it, equal steps merged.
  std::vector<uint32_t> at(rows + 1, 0);
  for (const StepEntry& e : per_step) ++at[final_row[e.row] + 1];
  for (size_t r = 1; r < at.size(); ++r) at[r] += at[r - 1];
  std::vector<std::pair<uint32_t, int64_t>> sorted(per_step.size());
  {
    std::vector<uint32_t> fill_at(at.begin(), at.end() - 1);
    for (const StepEntry& e : per_step) sorted[fill_at[final_row[e.row]]++] = {e.step, e.ns};
  }
  per_step = {};
  o.step_begin.assign(rows + 1, 0);
  o.step.reserve(sorted.size());
  o.step_ns.reserve(sorted.size());
  for (size_t r = 0; r < rows; ++r) {
    auto b = sorted.begin() + at[r], e = sorted.begin() + at[r + 1];
    if (!std::is_sorted(b, e, [](const auto& x, const auto& y) { return x.first < y.first; })) {
      std::sort(b, e, [](const auto& x, const auto& y) { return x.first < y.first; });
    }
    for (auto it = b; it != e; ++it) {
      if (o.step.size() > o.step_begin[r] && o.step.back() == it->first) {
        o.step_ns.back() += it->second;
      } else {
        o.step.push_back(it->first);
        o.step_ns.push_back(it->second);
      }
    }
    o.step_begin[r + 1] = static_cast<uint32_t>(o.step.size());
  }
}

void Builder::BuildStepSelf() {
  AttributionResult::StepSelf& ss = out_->step_self;
  std::vector<uint32_t> ordinal(out_->per_step.size(), UINT32_MAX);
  uint32_t steady = 0;
  for (size_t k = 0; k < out_->per_step.size(); ++k) {
    if (out_->per_step[k].steady) ordinal[k] = steady++;
  }
  std::vector<uint32_t> start(steady + 1, 0);
  for (const RawSelf& r : raw_self_) ++start[ordinal[r.step] + 1];
  for (size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
  std::vector<uint32_t> order(raw_self_.size());
  {
    std::vector<uint32_t> fill(start.begin(), start.end() - 1);
    for (uint32_t i = 0; i < raw_self_.size(); ++i) order[fill[ordinal[raw_self_[i].step]]++] = i;
  }
  std::vector<int64_t> acc(out_->nodes.size(), 0);
  std::vector<uint32_t> touched;
  ss.begin.assign(1, 0);
  for (uint32_t k = 0; k < steady; ++k) {
    touched.clear();
    for (uint32_t j = start[k]; j < start[k + 1]; ++j) {
      const RawSelf& r = raw_self_[order[j]];
      if (acc[r.node] == 0) touched.push_back(r.node);
      acc[r.node] += r.ns;
    }
    // In order of first touch (deterministic; readers need no order).
    for (uint32_t node : touched) {
      ss.node.push_back(node);
      ss.ns.push_back(acc[node]);
      acc[node] = 0;
    }
    ss.begin.push_back(static_cast<uint32_t>(ss.node.size()));
  }
  raw_self_ = {};
}

// The node kind each slice makes (NodeKindOf), outside the Builder: names
// classified once each, step markers structure (kRoot). Shared by the passes
// that look at nodes before the tree exists (TopLevelTimes, SliceModules).
class SliceNodeKinds {
 public:
  explicit SliceNodeKinds(const Trace& trace) : trace_(trace), flags_(trace.strings.size(), 0), marker_(flags_.size()) {
    for (size_t k = 0; k < trace.steps.size(); ++k) {
      if (trace.steps.name[k].raw < marker_.size()) marker_[trace.steps.name[k].raw] = true;
    }
  }
  AttributionKind Of(uint32_t slice) {
    const SliceTable& s = trace_.slices;
    const uint32_t name = s.name[slice].raw;
    if (name >= flags_.size() || marker_[name]) return AttributionKind::kRoot;
    if (flags_[name] == 0) flags_[name] = ClassifyName(trace_.Str(s.name[slice]));
    return NodeKindOf(s.kind[slice], flags_[name]);
  }

 private:
  const Trace& trace_;
  std::vector<uint8_t> flags_;  // ClassifyName per string (0: not yet)
  std::vector<bool> marker_;    // step markers' names
};

// Each track's time in top-level ops (cpu_ops with no cpu_op among their
// enclosing slices) and in top-level nodes (slices that make a node, NodeKindOf,
// with no such slice enclosing them: ops, record_function labels, runtime
// calls; step markers left out). Not by depth: with Python stacks
// (with_stack=1) every op sits under python_function frames and user
// annotations.
struct TopLevelTime {
  std::vector<int64_t> op, node;
};
TopLevelTime TopLevelTimes(const Trace& trace) {
  const SliceTable& s = trace.slices;
  TopLevelTime out;
  out.op.assign(trace.tracks.size(), 0);
  out.node.assign(trace.tracks.size(), 0);
  std::vector<uint32_t> parent = ParentSlices(trace);
  SliceNodeKinds kinds(trace);
  // Parents come before their children in slice order, so one pass suffices.
  std::vector<bool> under_op(s.size(), false), under_node(s.size(), false);
  for (uint32_t i = 0; i < s.size(); ++i) {
    const uint32_t p = parent[i];
    under_op[i] = p != kNoSlice && (s.kind[p] == EventKind::kCpuOp || under_op[p]);
    if (s.kind[i] == EventKind::kCpuOp && !under_op[i]) out.op[s.track[i]] += s.dur_ns[i];
    const bool node = kinds.Of(i) != AttributionKind::kRoot;
    const bool enclosed = p != kNoSlice && under_node[p];
    under_node[i] = node || enclosed;
    if (node && !enclosed) out.node[s.track[i]] += std::max<int64_t>(s.dur_ns[i], 0);
  }
  return out;
}

// Host thread tracks of `pid`/`rank` other than `track` that run nodes: those
// with cpu_op time first, most first; then those whose nodes are only labels
// or runtime calls (a communication thread's `nccl:all_reduce`
// record_function), most node time first. A thread needs no cpu_op to fill
// the critical thread's holes where it runs a node (docs/analyses.md, Holes).
std::vector<uint32_t> HelperThreads(const Trace& trace, const TopLevelTime& work, uint32_t track) {
  std::vector<uint32_t> ops, labels;
  const TrackTable& t = trace.tracks;
  for (uint32_t x = 0; x < t.size(); ++x) {
    if (x == track || t.kind[x] != TrackKind::kThread || IsGraphCaptureTrack(trace, x)) continue;
    if (t.pid[x] != t.pid[track] || t.pid_label[x] != t.pid_label[track] || t.rank[x] != t.rank[track]) continue;
    if (work.op[x] > 0) ops.push_back(x);
    else if (work.node[x] > 0) labels.push_back(x);
  }
  std::sort(ops.begin(), ops.end(), [&](uint32_t a, uint32_t b) { return work.op[a] > work.op[b]; });
  std::sort(labels.begin(), labels.end(), [&](uint32_t a, uint32_t b) {
    return work.node[a] != work.node[b] ? work.node[a] > work.node[b] : a < b;
  });
  ops.insert(ops.end(), labels.begin(), labels.end());
  return ops;
}

}  // namespace

AttributionResult ComputeAttribution(const Trace& trace, const AnalysisWindow* window) {
  return ComputeAttribution(trace, window, AttributionOptions{});
}

AttributionResult ComputeAttribution(const Trace& trace, const AnalysisWindow* window,
                                     const AttributionOptions& options) {
  AttributionResult r;
  int32_t first_rank = kNoRank;
  for (size_t t = 0; t < trace.tracks.size() && !r.several_ranks; ++t) {
    const int32_t rank = trace.tracks.rank[t];
    if (rank == kNoRank) continue;
    if (first_rank == kNoRank) first_rank = rank;
    r.several_ranks = rank != first_rank;
  }
  const SliceTable& s = trace.slices;
  TopLevelTime work = TopLevelTimes(trace);
  std::vector<int64_t>& op_time = work.op;
  std::vector<uint32_t> captures;  // graph-capture tracks: never a critical or helper thread
  for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
    if (IsGraphCaptureTrack(trace, t)) {
      op_time[t] = 0;
      work.node[t] = 0;
      captures.push_back(t);
    }
  }
  // Steps by critical track.
  std::map<uint32_t, std::vector<StepWork>> by_track;
  StepList list = FindSteps(trace);
  std::vector<bool> warm(list.steps.size(), false);
  if (window) {
    for (size_t w : window->warmup) {
      if (w < warm.size()) warm[w] = true;
    }
  }
  for (size_t k = 0; k < list.steps.size(); ++k) {
    const StepSpan& sp = list.steps[k];
    if (!sp.has_start() || sp.row == kNoSlice || sp.dur_ns <= 0) continue;
    AttributionStep st;
    st.rank = sp.rank;
    st.number = sp.number;
    st.name = sp.name;
    st.track = trace.steps.track[sp.row];
    st.start_ns = sp.start_ns;
    st.wall_ns = sp.dur_ns;
    st.steady = !warm[k];
    if (st.track >= trace.tracks.size()) continue;
    by_track[st.track].push_back({sp.start_ns, sp.start_ns + sp.dur_ns, r.per_step.size()});
    r.per_step.push_back(st);
  }
  if (r.per_step.empty()) {
    if (!list.steps.empty()) {
      r.problem = "the steps (" + list.source + ") have no start times";
      return r;
    }
    // No steps: the main thread's span is one step.
    uint32_t main = kNoTrack;
    for (uint32_t t = 0; t < op_time.size(); ++t) {
      if (op_time[t] > 0 && (main == kNoTrack || op_time[t] > op_time[main])) main = t;
    }
    if (main == kNoTrack) {
      r.problem = "no steps and no host thread with ops";
      return r;
    }
    int64_t a = kMaxTs, b = kMinTs;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s.track[i] != main || s.kind[i] == EventKind::kTraceSpan || IsProfilerWrapperName(trace.Str(s.name[i]))) {
        continue;
      }
      a = std::min(a, s.ts_ns[i]);
      b = std::max(b, s.ts_ns[i] + s.dur_ns[i]);
    }
    AttributionStep st;
    st.track = main;
    st.rank = trace.tracks.rank[main];
    st.start_ns = a;
    st.wall_ns = b - a;
    st.steady = true;
    by_track[main].push_back({a, b, 0});
    r.per_step.push_back(st);
    r.pseudo_step = true;
  }
  Builder b(trace, window, options, &r);
  for (auto& [track, steps] : by_track) {
    std::sort(steps.begin(), steps.end(), [](const StepWork& x, const StepWork& y) { return x.start < y.start; });
    // Overlapping steps on one track (nested markers) are cut at the next start.
    for (size_t k = 0; k + 1 < steps.size(); ++k) {
      if (steps[k].end > steps[k + 1].start) {
        steps[k].end = steps[k + 1].start;
        r.per_step[steps[k].out].wall_ns = steps[k].end - steps[k].start;
      }
    }
    std::vector<uint32_t> mine;  // the capture tracks of this thread's process
    for (uint32_t c : captures) {
      const TrackTable& t = trace.tracks;
      if (t.pid[c] == t.pid[track] && t.pid_label[c] == t.pid_label[track] && t.rank[c] == t.rank[track]) mine.push_back(c);
    }
    b.AttributeTrack(track, std::move(steps), HelperThreads(trace, work, track), mine);
  }
  b.JoinDevice();
  b.Finish();
  r.available = r.steps > 0;
  if (!r.available) r.problem = "no steady-state step to attribute";
  return r;
}

namespace {
std::string_view TrimSpace(std::string_view t) {
  auto space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (!t.empty() && space(t.front())) t.remove_prefix(1);
  while (!t.empty() && space(t.back())) t.remove_suffix(1);
  return t;
}
}  // namespace

bool IsCallSiteFrame(std::string_view frame) {
  frame = TrimSpace(frame);
  if (frame.empty() || frame.front() == '<') return false;  // "<built-in method ...>": C code, an address in the name
  if (frame.starts_with("nn.Module: ")) return true;
  // "path/file.py(line): function": torch's internals lie under a "torch/" folder.
  const size_t paren = frame.find('(');
  const std::string_view path = frame.substr(0, paren);
  if (path.starts_with("torch/") || path.find("/torch/") != std::string_view::npos) return false;
  return paren != std::string_view::npos;  // a Python frame (else a record_function label or the like)
}

std::string CallSiteLabel(std::string_view frame) {
  frame = TrimSpace(frame);
  if (!IsCallSiteFrame(frame)) return {};
  if (frame.starts_with("nn.Module: ")) return std::string(frame);
  const size_t paren = frame.find('(');
  std::string_view path = frame.substr(0, paren);
  size_t cut = std::string_view::npos;
  for (std::string_view marker : {std::string_view("site-packages/"), std::string_view("dist-packages/")}) {
    const size_t at = path.rfind(marker);
    if (at != std::string_view::npos) {
      cut = at + marker.size();
      break;
    }
  }
  if (cut == std::string_view::npos) {
    const size_t slash = path.find_last_of("/\\");
    cut = slash == std::string_view::npos ? 0 : slash + 1;
  }
  return std::string(frame.substr(cut));
}

std::string CallSiteOfStack(std::string_view stack) {
  while (!stack.empty()) {
    const size_t semi = stack.find(';');
    const std::string_view frame = stack.substr(0, semi);
    if (IsCallSiteFrame(frame)) return CallSiteLabel(frame);
    if (semi == std::string_view::npos) break;
    stack.remove_prefix(semi + 1);
  }
  return {};
}

std::string_view ModuleLabel(std::string_view name) {
  if (name.substr(0, 11) == "nn.Module: ") name.remove_prefix(11);
  return name;
}

SliceModuleMap SliceModules(const Trace& trace) {
  const SliceTable& s = trace.slices;
  const size_t n = s.size();
  SliceModuleMap m;
  m.of.assign(n, kNoSlice);
  m.outer.assign(n, kNoSlice);
  SliceNodeKinds kinds(trace);  // step markers are structure
  struct Open {
    int64_t end;
    uint32_t module;
  };
  std::vector<Open> stack;
  stack.reserve(64);
  uint32_t track = kNoTrack;
  bool host = false;
  for (uint32_t i = 0; i < n; ++i) {
    if (s.track[i] != track) {
      track = s.track[i];
      stack.clear();
      host = trace.tracks.kind[track] != TrackKind::kDeviceStream && trace.tracks.kind[track] != TrackKind::kCounter;
    }
    if (!host) continue;
    const int64_t ts = s.ts_ns[i], end = ts + std::max<int64_t>(s.dur_ns[i], 0);
    while (!stack.empty() && stack.back().end <= ts) stack.pop_back();
    const uint32_t enclosing = stack.empty() ? kNoSlice : stack.back().module;
    const bool is_module = !IsDeviceActivity(s.kind[i]) && kinds.Of(i) == AttributionKind::kModule;
    const uint32_t mod = is_module ? i : enclosing;
    m.of[i] = mod;
    if (is_module) m.outer[i] = enclosing;
    stack.push_back({end, mod});
  }
  // Device activity: the launching call's module, else the launching op's
  // (torch_npu's CANN calls run on a task-queue thread outside every module,
  // as in JoinDevice).
  std::vector<uint32_t> calls = OpLaunchingCalls(trace);
  std::vector<uint32_t> ops;
  for (uint32_t i = 0; i < n; ++i) {
    if (!IsDeviceActivity(s.kind[i])) continue;
    if (calls[i] != kNoSlice && m.of[calls[i]] != kNoSlice) {
      m.of[i] = m.of[calls[i]];
      continue;
    }
    if (ops.empty()) ops = LaunchingOps(trace);
    if (ops[i] != kNoSlice) m.of[i] = m.of[ops[i]];
  }
  return m;
}

std::string NodeLabel(const Trace& trace, const AttributionResult& r, uint32_t node) {
  const AttributionNodes& n = r.nodes;
  switch (n.kind[node]) {
    case AttributionKind::kRoot: return r.pseudo_step ? "trace (main thread span)" : "step";
    case AttributionKind::kUntraced: return "(host time outside any recorded op)";
    case AttributionKind::kThread: {
      uint32_t t = n.track[node];
      std::string_view name = trace.Str(trace.tracks.name[t]);
      std::string tid = trace.tracks.tid_label[t].empty() ? std::to_string(trace.tracks.tid[t])
                                                          : std::string(trace.Str(trace.tracks.tid_label[t]));
      std::string rank;
      if (r.several_ranks && t < trace.tracks.size() && trace.tracks.rank[t] != kNoRank) {
        rank = " (rank " + std::to_string(trace.tracks.rank[t]) + ")";
      }
      return "[other thread " + (name.empty() ? tid : std::string(name)) + rank + "]";
    }
    default: break;
  }
  std::string_view name = trace.Str(n.name[node]);
  if (name.substr(0, 11) == "nn.Module: ") name.remove_prefix(11);
  return std::string(name);
}

std::string NodePath(const Trace& trace, const AttributionResult& r, uint32_t node) {
  std::vector<uint32_t> chain;
  for (uint32_t n = node; n != 0 && n != kNoNode; n = r.nodes.parent[n]) chain.push_back(n);
  std::string out;
  for (size_t i = chain.size(); i-- > 0;) {
    if (!out.empty()) out += " / ";
    out += NodeLabel(trace, r, chain[i]);
  }
  return out;
}

OpClassTime TimeByOpClass(const AttributionResult& r) {
  OpClassTime t;
  const AttributionNodes& n = r.nodes;
  for (size_t i = 1; i < n.size(); ++i) {
    if (n.kind[i] != AttributionKind::kOp || n.kind[n.parent[i]] == AttributionKind::kOp) continue;
    size_t c = static_cast<size_t>(n.op_class[i]);
    t.host_ns[c] += n.total_ns[i];
    t.device_ns[c] += n.device_total_ns[i];
  }
  return t;
}

std::vector<uint32_t> ModulesByExclusiveTime(const AttributionResult& r, size_t limit) {
  const AttributionNodes& n = r.nodes;
  std::vector<int64_t> excl(n.size(), 0);
  for (size_t i = 1; i < n.size(); ++i) {
    if (n.kind[i] != AttributionKind::kModule) continue;
    excl[i] += n.total_ns[i];
    // Subtract from the nearest module ancestor.
    for (uint32_t p = n.parent[i]; p != 0 && p != kNoNode; p = n.parent[p]) {
      if (n.kind[p] == AttributionKind::kModule) {
        excl[p] -= n.total_ns[i];
        break;
      }
    }
  }
  std::vector<uint32_t> out;
  for (size_t i = 1; i < n.size(); ++i) {
    if (n.kind[i] == AttributionKind::kModule && n.time_class[i] == TimeClass::kModuleCode) out.push_back(i);
  }
  std::sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) { return excl[a] != excl[b] ? excl[a] > excl[b] : a < b; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace aiprof
