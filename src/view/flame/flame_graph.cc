#include "src/view/flame/flame_graph.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include "src/analysis/attribution/attribution.h"
#include "src/model/slice_nesting.h"
#include "src/model/trace.h"
#include "src/render/escape.h"

namespace aiprof {

const char* FrameClassName(FrameClass c) {
  switch (c) {
    case FrameClass::kRoot: return "root";
    case FrameClass::kThread: return "thread";
    case FrameClass::kPython: return "python";
    case FrameClass::kOperator: return "operator";
    case FrameClass::kAnnotation: return "annotation";
    case FrameClass::kRuntime: return "runtime";
    case FrameClass::kNative: return "native";
    case FrameClass::kKernelMode: return "kernel";
    case FrameClass::kOther: return "other";
  }
  return "other";
}

std::string FrameTree::PathOf(uint32_t frame, std::string_view sep) const {
  std::vector<uint32_t> chain;
  for (uint32_t f = frame; f != kNoFrame && parent[f] != kNoFrame; f = parent[f]) chain.push_back(f);
  std::string out;
  for (size_t i = chain.size(); i-- > 0;) {
    if (i + 1 != chain.size()) out.append(sep);
    out.append(names[name[chain[i]]]);
  }
  return out;
}

// Slices that are frames of a thread's stack: not the profiler's own span,
// not labels of device tracks, and long enough to hold time.
bool IsStackSlice(const Trace& trace, uint32_t s) {
  EventKind k = trace.slices.kind[s];
  return k != EventKind::kTraceSpan && k != EventKind::kGpuUserAnnotation && trace.slices.dur_ns[s] > 0;
}

std::string ThreadLabel(const Trace& trace, uint32_t track, bool multi_rank) {
  const TrackTable& t = trace.tracks;
  std::string label(trace.Str(t.name[track]));
  if (label.empty()) {
    label = "thread " + (t.tid_label[track].empty() ? std::to_string(t.tid[track]) : std::string(trace.Str(t.tid_label[track])));
  }
  if (multi_rank && t.rank[track] >= 0) label = "rank " + std::to_string(t.rank[track]) + " / " + label;
  return label;
}

bool IsMultiRank(const Trace& trace) {
  int32_t first = kNoRank;
  for (uint32_t i = 0; i < trace.tracks.size(); ++i) {
    int32_t r = trace.tracks.rank[i];
    if (r < 0) continue;
    if (first == kNoRank) first = r;
    else if (r != first) return true;
  }
  return false;
}

// Host thread tracks that pass the filters.
std::vector<bool> SelectedThreads(const Trace& trace, const ViewOptions& options) {
  std::vector<bool> selected(trace.tracks.size(), false);
  for (uint32_t i = 0; i < trace.tracks.size(); ++i) {
    selected[i] = trace.tracks.kind[i] == TrackKind::kThread && TrackSelected(trace, i, options);
  }
  return selected;
}

bool HasSamples(const Trace& trace, const std::vector<bool>& selected) {
  for (uint32_t i = 0; i < trace.samples.size(); ++i) {
    uint32_t t = trace.samples.track[i];
    if (t < selected.size() && selected[t]) return true;
  }
  return false;
}

namespace {

FrameClass ClassOfSlice(EventKind kind) {
  switch (kind) {
    case EventKind::kPythonFunction: return FrameClass::kPython;
    case EventKind::kCpuOp: return FrameClass::kOperator;
    case EventKind::kUserAnnotation: return FrameClass::kAnnotation;
    case EventKind::kRuntime:
    case EventKind::kDriver:
    case EventKind::kSync: return FrameClass::kRuntime;
    default: return FrameClass::kOther;
  }
}

FrameClass ClassOfFrame(FrameKind kind) {
  switch (kind) {
    case FrameKind::kPython: return FrameClass::kPython;
    case FrameKind::kNative: return FrameClass::kNative;
    case FrameKind::kKernel: return FrameClass::kKernelMode;
    default: return FrameClass::kOther;
  }
}

// Builds rows and interns names; one instance per BuildFrameTree call.
class TreeBuilder {
 public:
  TreeBuilder(const Trace& trace, FrameTree* tree) : trace_(trace), tree_(tree) {
    name_of_string_.assign(trace.strings.size(), kNoName);
    slice_name_of_string_.assign(trace.strings.size(), kNoName);
    tree_->names.push_back("");
    AddRow(kNoFrame, OwnedName("all"), 0, FrameClass::kRoot);
    children_.reserve(1024);
  }

  uint32_t NameOf(StringId id) {
    uint32_t& slot = name_of_string_[id.raw];
    if (slot == kNoName) {
      slot = static_cast<uint32_t>(tree_->names.size());
      tree_->names.push_back(trace_.Str(id));
    }
    return slot;
  }
  // A slice's frame name: its name, except that step markers
  // ("ProfilerStep#12") merge into one frame "ProfilerStep#*", so the steps'
  // stacks add up instead of standing side by side once per step.
  uint32_t SliceNameOf(StringId id) {
    uint32_t& slot = slice_name_of_string_[id.raw];
    if (slot == kNoName) slot = IsStepMarker(trace_.Str(id)) ? OwnedName("ProfilerStep#*") : NameOf(id);
    return slot;
  }
  uint32_t OwnedName(std::string s) {
    auto it = owned_index_.find(s);
    if (it != owned_index_.end()) return it->second;
    tree_->owned_.push_back(std::move(s));
    uint32_t id = static_cast<uint32_t>(tree_->names.size());
    tree_->names.push_back(tree_->owned_.back());
    owned_index_.emplace(tree_->owned_.back(), id);
    return id;
  }

  // The child of `parent` named `name`, created if new.
  uint32_t Child(uint32_t parent, uint32_t name, uint32_t module, FrameClass kind) {
    uint64_t key = (static_cast<uint64_t>(parent) << 32) | name;
    auto [it, inserted] = children_.try_emplace(key, 0);
    if (inserted) it->second = AddRow(parent, name, module, kind);
    return it->second;
  }

 private:
  static constexpr uint32_t kNoName = UINT32_MAX;
  static bool IsStepMarker(std::string_view name) {
    constexpr std::string_view kPrefix = "ProfilerStep#";
    if (name.size() <= kPrefix.size() || name.substr(0, kPrefix.size()) != kPrefix) return false;
    return std::all_of(name.begin() + kPrefix.size(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
  }
  uint32_t AddRow(uint32_t parent, uint32_t name, uint32_t module, FrameClass kind) {
    FrameTree& t = *tree_;
    t.parent.push_back(parent);
    t.name.push_back(name);
    t.module.push_back(module);
    t.kind.push_back(kind);
    t.depth.push_back(parent == kNoFrame ? 0 : t.depth[parent] + 1);
    t.total_ns.push_back(0);
    t.self_ns.push_back(0);
    return static_cast<uint32_t>(t.parent.size() - 1);
  }

  const Trace& trace_;
  FrameTree* tree_;
  std::vector<uint32_t> name_of_string_, slice_name_of_string_;
  std::unordered_map<std::string, uint32_t> owned_index_;
  std::unordered_map<uint64_t, uint32_t> children_;
};

// A slice's parent is the innermost open slice that encloses it, as
// `slices.parent` in `aiprof query`; each instant of a thread goes to the
// latest started open slice, as `slices.self_ns` (docs/query.md), so a
// frame's self time is the sum of its slices' self_ns and its total the sum
// over its subtree. A slice that starts inside another and outlives it
// (torch opens `ProfilerStep#N` and `## backward ##` inside the short
// `_record_function_enter_new` call that creates them) is kept whole under
// the slice that encloses it, and the slice it outlived has no time after
// its start (the latest started slice has it until it ends). The walk is
// query's (src/model/slice_nesting.h); the attribution's parent rule is the
// same (docs/analyses.md).
void AddSpanStacks(const Trace& trace, const std::vector<bool>& selected, bool multi_rank, TreeBuilder* b,
                   FrameTree* tree, const SliceModuleMap* modules) {
  std::set<uint32_t> threads;
  const SliceTable& s = trace.slices;
  for (size_t begin = 0; begin < s.size();) {
    const uint32_t track = s.track[begin];
    size_t end = begin;
    while (end < s.size() && s.track[end] == track) ++end;
    if (!selected[track]) {
      begin = end;
      continue;
    }
    uint32_t thread_frame = kNoFrame;
    tree->outliving_events += SweepTrackNesting<uint32_t>(
        s, begin, end, [&](size_t i) { return IsStackSlice(trace, static_cast<uint32_t>(i)); },
        [&](size_t i, const uint32_t* parent) {
          if (thread_frame == kNoFrame) {  // the thread's frame, once it has a stack slice
            thread_frame = b->Child(0, b->OwnedName(ThreadLabel(trace, track, multi_rank)), 0, FrameClass::kThread);
            threads.insert(thread_frame);
          }
          const uint32_t frame = b->Child(parent ? *parent : thread_frame, b->SliceNameOf(s.name[i]), 0,
                                          ClassOfSlice(s.kind[i]));
          if (modules != nullptr && modules->of[i] == i) {
            if (tree->nn_module.size() <= frame) tree->nn_module.resize(frame + 1, 0);
            tree->nn_module[frame] = 1;
          }
          ++tree->events;
          return frame;
        },
        [&](uint32_t frame, int64_t ns) { tree->self_ns[frame] += ns; });
    begin = end;
  }
  tree->threads = static_cast<uint32_t>(threads.size());
  // Totals fold bottom-up (a parent's row precedes its children's); threads
  // have no self time of their own, and fold into the root.
  for (size_t f = 0; f < tree->size(); ++f) tree->total_ns[f] = tree->self_ns[f];
  for (size_t f = tree->size(); f-- > 1;) tree->total_ns[tree->parent[f]] += tree->total_ns[f];
}

void AddSampleStacks(const Trace& trace, const std::vector<bool>& selected, bool multi_rank, TreeBuilder* b,
                     FrameTree* tree) {
  const StackSampleTable& s = trace.samples;
  const CallsiteTable& cs = trace.callsites;
  std::unordered_map<uint64_t, uint32_t> frame_of;  // (thread frame, callsite) -> frame
  std::vector<uint32_t> chain;
  uint32_t current_track = kNoTrack, thread_frame = kNoFrame;
  std::set<uint32_t> threads;
  for (uint32_t i = 0; i < s.size(); ++i) {
    uint32_t track = s.track[i];
    if (track >= selected.size() || !selected[track]) continue;
    if (track != current_track) {
      current_track = track;
      thread_frame = b->Child(0, b->OwnedName(ThreadLabel(trace, track, multi_rank)), 0, FrameClass::kThread);
      threads.insert(thread_frame);
    }
    ++tree->events;
    uint32_t leaf = thread_frame;
    uint32_t c = s.callsite[i];
    if (c != kNoCallsite && c < cs.size()) {
      // Walk up to a callsite already placed under this thread, then place the rest top-down.
      chain.clear();
      uint32_t above = thread_frame;
      for (uint32_t x = c; x != kNoCallsite && x < cs.size(); x = cs.parent[x]) {
        auto it = frame_of.find((static_cast<uint64_t>(thread_frame) << 32) | x);
        if (it != frame_of.end()) {
          above = it->second;
          break;
        }
        chain.push_back(x);
      }
      for (size_t k = chain.size(); k-- > 0;) {
        uint32_t x = chain[k];
        above = b->Child(above, b->NameOf(cs.frame[x]), cs.module[x].empty() ? 0 : b->NameOf(cs.module[x]),
                         ClassOfFrame(cs.kind[x]));
        frame_of.emplace((static_cast<uint64_t>(thread_frame) << 32) | x, above);
      }
      leaf = above;
    }
    tree->self_ns[leaf] += std::max<int64_t>(s.weight_ns[i], 0);
  }
  tree->threads = static_cast<uint32_t>(threads.size());
  for (size_t f = 0; f < tree->size(); ++f) tree->total_ns[f] = tree->self_ns[f];
  for (size_t f = tree->size(); f-- > 1;) tree->total_ns[tree->parent[f]] += tree->total_ns[f];
}

}  // namespace

StatusOr<FrameTree> BuildFrameTree(const Trace& trace, const ViewOptions& options) {
  RETURN_IF_ERROR(CheckFiltersMatch(trace, options));
  FrameTree tree;
  TreeBuilder builder(trace, &tree);
  std::vector<bool> selected = SelectedThreads(trace, options);
  bool multi_rank = IsMultiRank(trace);
  tree.from_samples = HasSamples(trace, selected);
  if (tree.from_samples) {
    AddSampleStacks(trace, selected, multi_rank, &builder, &tree);
  } else {
    SliceModuleMap modules;
    if (options.color_by == "module") modules = SliceModules(trace);
    AddSpanStacks(trace, selected, multi_rank, &builder, &tree, options.color_by == "module" ? &modules : nullptr);
    if (options.color_by == "module") tree.nn_module.resize(tree.size(), 0);
  }
  return tree;
}

std::vector<uint32_t> MatchFrames(const FrameTree& tree, const FrameTree& baseline) {
  std::unordered_map<std::string, uint32_t> index;  // parent + '\x1f' + name -> baseline frame
  index.reserve(baseline.size());
  auto key = [](uint32_t parent, std::string_view name) {
    std::string k = std::to_string(parent);
    k.push_back('\x1f');
    k.append(name);
    return k;
  };
  for (uint32_t f = 1; f < baseline.size(); ++f) index.emplace(key(baseline.parent[f], baseline.names[baseline.name[f]]), f);
  std::vector<uint32_t> match(tree.size(), kNoFrame);
  if (tree.size() == 0 || baseline.size() == 0) return match;
  match[0] = 0;
  // Threads: by label, then the rest in order of total time.
  std::vector<uint32_t> new_threads, base_threads;
  std::vector<bool> base_used(baseline.size(), false);
  for (uint32_t f = 1; f < tree.size(); ++f) {
    if (tree.kind[f] != FrameClass::kThread) continue;
    auto it = index.find(key(0, tree.names[tree.name[f]]));
    if (it != index.end()) {
      match[f] = it->second;
      base_used[it->second] = true;
    } else {
      new_threads.push_back(f);
    }
  }
  for (uint32_t f = 1; f < baseline.size(); ++f) {
    if (baseline.kind[f] == FrameClass::kThread && !base_used[f]) base_threads.push_back(f);
  }
  auto by_total = [](const FrameTree& t) {
    return [&t](uint32_t a, uint32_t b) { return t.total_ns[a] > t.total_ns[b]; };
  };
  std::stable_sort(new_threads.begin(), new_threads.end(), by_total(tree));
  std::stable_sort(base_threads.begin(), base_threads.end(), by_total(baseline));
  for (size_t i = 0; i < std::min(new_threads.size(), base_threads.size()); ++i) match[new_threads[i]] = base_threads[i];
  for (uint32_t f = 1; f < tree.size(); ++f) {
    if (tree.kind[f] == FrameClass::kThread) continue;
    uint32_t bp = match[tree.parent[f]];
    if (bp == kNoFrame) continue;
    auto it = index.find(key(bp, tree.names[tree.name[f]]));
    if (it != index.end()) match[f] = it->second;
  }
  return match;
}

std::string FoldedName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c == ';') out.append("\xEF\xBC\x9B");        // U+FF1B FULLWIDTH SEMICOLON
    else if (c == '\n') out.append("\xE2\x90\xA4");  // U+2424 SYMBOL FOR NEWLINE
    else if (c == '\r') out.append("\xE2\x90\x8D");  // U+240D SYMBOL FOR CARRIAGE RETURN
    else out.push_back(c);
  }
  // Folded stacks go to stdout by default: other controls are shown, not sent.
  return EscapeControls(out, /*keep_line_breaks=*/true);
}

namespace {

std::string FoldedPath(const FrameTree& tree, uint32_t frame) {
  std::vector<uint32_t> chain;
  for (uint32_t f = frame; f != kNoFrame && tree.parent[f] != kNoFrame; f = tree.parent[f]) chain.push_back(f);
  std::string out;
  for (size_t i = chain.size(); i-- > 0;) {
    if (i + 1 != chain.size()) out.push_back(';');
    out.append(FoldedName(tree.names[tree.name[chain[i]]]));
  }
  return out;
}

// For each frame deeper than kMaxFoldedDepth, its ancestor at that depth
// (parents come before their children in a FrameTree); kNoFrame otherwise.
std::vector<uint32_t> FoldedCaps(const FrameTree& tree) {
  std::vector<uint32_t> cap(tree.size(), kNoFrame);
  for (uint32_t f = 1; f < tree.size(); ++f) {
    if (tree.depth[f] <= kMaxFoldedDepth) continue;
    uint32_t p = tree.parent[f];
    cap[f] = tree.depth[p] == kMaxFoldedDepth ? p : cap[p];
  }
  return cap;
}

std::string DeepLine(const FrameTree& tree, uint32_t cap) {
  return FoldedPath(tree, cap) + ";[frames deeper than " + std::to_string(kMaxFoldedDepth) + " folded here]";
}

}  // namespace

std::string FoldedStacks(const FrameTree& tree, const FrameTree* baseline, const std::vector<uint32_t>* match) {
  std::vector<std::string> lines;
  std::vector<bool> base_seen(baseline ? baseline->size() : 0, false);
  const std::vector<uint32_t> cap = FoldedCaps(tree);
  std::map<uint32_t, std::pair<int64_t, int64_t>> deep;  // cap frame -> (base self, self) below it
  for (uint32_t f = 1; f < tree.size(); ++f) {
    int64_t base_self = 0;
    if (baseline && match && (*match)[f] != kNoFrame) {
      base_self = baseline->self_ns[(*match)[f]];
      base_seen[(*match)[f]] = true;
    }
    if (tree.self_ns[f] <= 0 && base_self <= 0) continue;
    if (cap[f] != kNoFrame) {
      deep[cap[f]].first += base_self;
      deep[cap[f]].second += tree.self_ns[f];
      continue;
    }
    std::string line = FoldedPath(tree, f);
    if (baseline) line += " " + std::to_string(base_self);
    line += " " + std::to_string(tree.self_ns[f]);
    lines.push_back(std::move(line));
  }
  for (const auto& [c, selfs] : deep) {
    lines.push_back(DeepLine(tree, c) + (baseline ? " " + std::to_string(selfs.first) : "") + " " +
                    std::to_string(selfs.second));
  }
  if (baseline) {
    const std::vector<uint32_t> base_cap = FoldedCaps(*baseline);
    std::map<uint32_t, int64_t> base_deep;
    for (uint32_t f = 1; f < baseline->size(); ++f) {
      if (base_seen[f] || baseline->self_ns[f] <= 0) continue;
      if (base_cap[f] != kNoFrame) {
        base_deep[base_cap[f]] += baseline->self_ns[f];
        continue;
      }
      lines.push_back(FoldedPath(*baseline, f) + " " + std::to_string(baseline->self_ns[f]) + " 0");
    }
    for (const auto& [c, self] : base_deep) lines.push_back(DeepLine(*baseline, c) + " " + std::to_string(self) + " 0");
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const std::string& line : lines) {
    out += line;
    out.push_back('\n');
  }
  return out;
}

}  // namespace aiprof
