#include "src/importers/graph_capture/graph_capture_merge.h"

#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "src/importers/common/byte_source.h"
#include "src/importers/common/importer_registry.h"
#include "src/model/graph_capture_tracks.h"

namespace aiprof {
namespace {

namespace fs = std::filesystem;
constexpr uint32_t kNoIndex = UINT32_MAX;

bool IsHostCall(EventKind k) { return k == EventKind::kRuntime || k == EventKind::kDriver; }

// For every slice, the innermost enclosing slice on its track (slices are in
// (track, start, longest first) order after Finalize).
std::vector<uint32_t> EnclosingSlices(const Trace& t) {
  const SliceTable& s = t.slices;
  std::vector<uint32_t> out(s.size(), kNoIndex);
  std::vector<uint32_t> stack;
  uint32_t track = kNoTrack;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (s.track[i] != track) {
      stack.clear();
      track = s.track[i];
    }
    const int64_t start = s.ts_ns[i], end = start + s.dur_ns[i];
    while (!stack.empty() && !(s.ts_ns[stack.back()] <= start && s.ts_ns[stack.back()] + s.dur_ns[stack.back()] >= end)) {
      stack.pop_back();
    }
    out[i] = stack.empty() ? kNoIndex : stack.back();
    stack.push_back(i);
  }
  return out;
}

enum class ItemKind : uint8_t { kKernel, kMemcpy, kMemset };

// One side of a pair: a replayed device activity or a captured launch call.
struct Item {
  uint32_t slice = kNoIndex;
  ItemKind kind = ItemKind::kKernel;
  std::string_view name;  // the kernel's name; empty when a captured launch names none
  int64_t node_id = -1;   // graph node id, -1 when absent
};

std::optional<StringId> Key(const Trace& t, std::string_view key) { return t.strings.Find(key); }

const Arg* FindArg(const Trace& t, uint32_t slice, std::optional<StringId> key) {
  return key ? t.FindSliceArg(slice, *key) : nullptr;
}

int64_t NodeIdOf(const Trace& t, uint32_t slice, std::optional<StringId> a, std::optional<StringId> b) {
  const Arg* arg = FindArg(t, slice, a);
  if (!arg) arg = FindArg(t, slice, b);
  if (!arg) return -1;
  switch (arg->type) {
    case ArgType::kInt: return arg->i > 0 ? arg->i : -1;
    case ArgType::kUint: return arg->u > 0 && arg->u < (1ull << 62) ? static_cast<int64_t>(arg->u) : -1;
    default: return -1;
  }
}

bool Same(const Item& captured, const Item& replayed) {
  if (captured.kind != replayed.kind) return false;
  return captured.kind != ItemKind::kKernel || captured.name.empty() || captured.name == replayed.name;
}

enum Method : uint8_t { kByNodeId = 0, kInOrder, kGreedy, kByName, kFailed };

struct Pairing {
  std::vector<uint32_t> captured;  // per replayed item: the index of its captured launch in the window
  uint64_t matched = 0, unverified = 0;
  Method method = kFailed;
};

// Pairs replayed items `g` with captured launches `c` (see the header's
// order of methods). All or nothing: a method that leaves a replayed item
// unpaired is not used.
Pairing Pair(const std::vector<Item>& g, const std::vector<Item>& c) {
  Pairing p;
  p.captured.assign(g.size(), kNoIndex);
  auto done = [&](Method m) {
    p.method = m;
    p.matched = g.size();
    for (size_t i = 0; i < g.size(); ++i) {
      p.unverified += g[i].kind == ItemKind::kKernel && c[p.captured[i]].name.empty();
    }
    return p;
  };
  if (g.empty() || c.empty()) return p;
  // 1. Graph node ids on both sides.
  bool ids = std::all_of(g.begin(), g.end(), [](const Item& x) { return x.node_id >= 0; });
  if (ids) {
    std::unordered_map<int64_t, uint32_t> by_id;
    for (uint32_t j = 0; j < c.size(); ++j) {
      if (c[j].node_id >= 0) by_id.emplace(c[j].node_id, j);
    }
    bool all = !by_id.empty();
    for (size_t i = 0; i < g.size() && all; ++i) {
      auto it = by_id.find(g[i].node_id);
      all = it != by_id.end() && Same(c[it->second], g[i]);
      if (all) p.captured[i] = it->second;
    }
    if (all) return done(kByNodeId);
    std::fill(p.captured.begin(), p.captured.end(), kNoIndex);
  }
  // 2. In order.
  if (g.size() == c.size()) {
    bool all = true;
    for (size_t i = 0; i < g.size() && all; ++i) all = Same(c[i], g[i]);
    if (all) {
      for (uint32_t i = 0; i < g.size(); ++i) p.captured[i] = i;
      return done(kInOrder);
    }
  }
  // Without kernel names, skipping or regrouping would be guessing.
  const bool named = std::all_of(c.begin(), c.end(), [](const Item& x) { return x.kind != ItemKind::kKernel || !x.name.empty(); });
  if (!named) return p;
  // 3. Greedily in order.
  if (c.size() > g.size()) {
    size_t j = 0;
    bool all = true;
    for (size_t i = 0; i < g.size() && all; ++i) {
      while (j < c.size() && !Same(c[j], g[i])) ++j;
      all = j < c.size();
      if (all) p.captured[i] = static_cast<uint32_t>(j++);
    }
    if (all) return done(kGreedy);
    std::fill(p.captured.begin(), p.captured.end(), kNoIndex);
  }
  // 4. By name, the same count of each name on both sides.
  if (g.size() == c.size()) {
    std::map<std::pair<ItemKind, std::string_view>, std::vector<uint32_t>> groups;
    for (uint32_t j = 0; j < c.size(); ++j) groups[{c[j].kind, c[j].name}].push_back(j);
    std::map<std::pair<ItemKind, std::string_view>, size_t> used;
    for (size_t i = 0; i < g.size(); ++i) {
      auto key = std::make_pair(g[i].kind, g[i].kind == ItemKind::kKernel ? g[i].name : std::string_view());
      auto it = groups.find(key);
      size_t& k = used[key];
      if (it == groups.end() || k >= it->second.size()) return Pairing{std::vector<uint32_t>(g.size(), kNoIndex)};
      p.captured[i] = it->second[k++];
    }
    return done(kByName);
  }
  return p;
}

// One StreamBeginCapture..StreamEndCapture window of a capture trace.
struct Window {
  uint32_t source = 0;
  uint32_t track = kNoTrack;
  int64_t start_ns = 0, end_ns = 0;  // begin call's end, end call's start
  std::vector<Item> launches;        // captured launch calls, in call order
};

struct CaptureIndex {
  const Trace* trace;
  std::string label;
  std::vector<uint32_t> parent;
};

ItemKind CapturedKind(std::string_view name) {
  if (name.find("Memcpy") != std::string_view::npos) return ItemKind::kMemcpy;
  if (name.find("Memset") != std::string_view::npos) return ItemKind::kMemset;
  return ItemKind::kKernel;
}

std::vector<Window> FindWindows(const Trace& t, uint32_t source) {
  const SliceTable& s = t.slices;
  std::vector<uint32_t> begins, ends;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (!IsHostCall(s.kind[i])) continue;
    std::string_view name = t.Str(s.name[i]);
    if (IsStreamBeginCaptureName(name)) begins.push_back(i);
    if (IsStreamEndCaptureName(name)) ends.push_back(i);
  }
  const auto kernel_key = Key(t, "kernel");
  const auto node_a = Key(t, "graph node id"), node_b = Key(t, "graph_node_id");
  std::vector<bool> used(ends.size(), false);
  std::vector<Window> out;
  for (uint32_t b : begins) {
    const int64_t start = s.ts_ns[b] + s.dur_ns[b];
    uint32_t best = kNoIndex;
    for (uint32_t k = 0; k < ends.size(); ++k) {
      uint32_t e = ends[k];
      if (used[k] || s.track[e] != s.track[b] || s.ts_ns[e] < start) continue;
      if (best == kNoIndex || s.ts_ns[e] < s.ts_ns[ends[best]]) best = k;
    }
    if (best == kNoIndex) continue;
    used[best] = true;
    Window w{source, s.track[b], start, s.ts_ns[ends[best]], {}};
    for (uint32_t i = b + 1; i < ends[best]; ++i) {  // same track: slices between the two calls
      if (s.ts_ns[i] < w.start_ns || s.ts_ns[i] + s.dur_ns[i] > w.end_ns || !IsHostCall(s.kind[i])) continue;
      std::string_view name = t.Str(s.name[i]);
      if (!IsWorkLaunchName(name)) continue;
      Item it;
      it.slice = i;
      it.kind = CapturedKind(name);
      if (const Arg* a = FindArg(t, i, kernel_key); a && a->type == ArgType::kString) it.name = t.Str(StringId{a->str});
      it.node_id = NodeIdOf(t, i, node_a, node_b);
      w.launches.push_back(it);
    }
    out.push_back(std::move(w));
  }
  return out;
}

// The replay's graph launches: call slice -> its device activities in start order.
std::map<uint32_t, std::vector<Item>> GraphLaunches(const Trace& t) {
  const SliceTable& s = t.slices;
  std::vector<uint8_t> seen(s.size(), 0);
  const auto node_a = Key(t, "graph node id"), node_b = Key(t, "graph_node_id");
  std::map<uint32_t, std::vector<Item>> out;
  for (size_t f = 0; f < t.flows.size(); ++f) {
    uint32_t from = t.flows.from_slice[f], to = t.flows.to_slice[f];
    if (from >= s.size() || to >= s.size() || !IsDeviceActivity(s.kind[to]) || seen[to]) continue;
    if (!IsHostCall(s.kind[from])) continue;
    seen[to] = 1;  // the first launching call wins, as LaunchingCalls() reads it
    if (!IsGraphLaunchName(t.Str(s.name[from]))) continue;
    Item it;
    it.slice = to;
    it.kind = s.kind[to] == EventKind::kMemcpy ? ItemKind::kMemcpy
              : s.kind[to] == EventKind::kMemset ? ItemKind::kMemset
                                                 : ItemKind::kKernel;
    it.name = t.Str(s.name[to]);
    it.node_id = NodeIdOf(t, to, node_a, node_b);
    out[from].push_back(it);
  }
  for (auto& [call, items] : out) {
    std::stable_sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
      return s.ts_ns[a.slice] < s.ts_ns[b.slice];
    });
  }
  return out;
}

// A monotone non-decreasing map from capture time to replay time through
// anchor points (x ascending, y made non-decreasing).
class TimeMap {
 public:
  void Add(int64_t x, int64_t y) { points_.emplace_back(x, y); }
  void Finish() {
    std::stable_sort(points_.begin(), points_.end(), [](auto& a, auto& b) { return a.first < b.first; });
    for (size_t i = 1; i < points_.size(); ++i) points_[i].second = std::max(points_[i].second, points_[i - 1].second);
  }
  int64_t operator()(int64_t x) const {
    if (x <= points_.front().first) return points_.front().second;
    if (x >= points_.back().first) return points_.back().second;
    auto it = std::upper_bound(points_.begin(), points_.end(), x, [](int64_t v, auto& p) { return v < p.first; });
    const auto& [x1, y1] = *it;
    const auto& [x0, y0] = *(it - 1);
    if (x1 == x0) return y1;
    return y0 + static_cast<int64_t>(static_cast<__int128>(x - x0) * (y1 - y0) / (x1 - x0));
  }

 private:
  std::vector<std::pair<int64_t, int64_t>> points_;
};

// A capture slice to copy, and where.
struct Copy {
  uint32_t source;
  uint32_t slice;      // in the capture trace; kNone for the replay's root slice
  int64_t ts_ns, dur_ns;
  uint16_t depth;
  uint32_t replayed;   // for a copied launch: the replayed activity it pairs with, else kNone
  std::string root_name;
};

struct ReplayCopy {
  int64_t start_ns, end_ns;
  std::vector<Copy> slices;
};

class Merger {
 public:
  Merger(Trace* replay, const std::vector<GraphCaptureSource>& captures) : r_(*replay) {
    for (const auto& c : captures) captures_.push_back({c.trace, c.label, EnclosingSlices(*c.trace)});
  }

  StatusOr<GraphCaptureMergeStats> Run() {
    for (uint32_t k = 0; k < captures_.size(); ++k) {
      std::vector<Window> w = FindWindows(*captures_[k].trace, k);
      if (w.empty()) {
        return ErrStatus(captures_[k].label +
                         ": not a graph capture trace: no StreamBeginCapture ... StreamEndCapture call pair in it");
      }
      for (auto& x : w) windows_.push_back(std::move(x));
    }
    stats_.capture_windows = windows_.size();
    std::map<uint32_t, std::vector<Item>> launches = GraphLaunches(r_);
    if (launches.empty()) {
      return ErrStatus("the replay trace has no graph launch (cudaGraphLaunch/hipGraphLaunch linked to device work) "
                       "for the capture trace to explain");
    }
    stats_.graph_launches = launches.size();
    std::string first_unpaired;
    for (const auto& [call, items] : launches) {
      stats_.replayed_activities += items.size();
      if (!MergeOne(call, items) && first_unpaired.empty()) first_unpaired = Describe(call, items);
    }
    if (stats_.merged_launches == 0) {
      return ErrStatus("the capture trace does not match the replay: no capture window pairs with any graph "
                       "launch's device work (" + first_unpaired + "; capture windows hold " + WindowSizes() + ")");
    }
    Append();
    if (stats_.merged_launches < stats_.graph_launches) {
      r_.diagnostics.Add("graph_capture_unpaired", first_unpaired,
                         "graph launches whose replayed kernels no capture window pairs with; their kernels stay "
                         "attributed to the graph launch only");
    }
    return stats_;
  }

 private:
  std::string Describe(uint32_t call, const std::vector<Item>& items) const {
    return "graph launch at " + std::to_string(r_.slices.ts_ns[call]) + " ns ran " + std::to_string(items.size()) +
           " device activities, the first " + std::string(items.front().name.substr(0, 80));
  }
  std::string WindowSizes() const {
    std::string out;
    for (size_t i = 0; i < windows_.size() && i < 8; ++i) {
      out += (i ? ", " : "") + std::to_string(windows_[i].launches.size());
    }
    if (windows_.size() > 8) out += ", ...";
    return out + " launch calls";
  }

  // Pairs one graph launch with its best window and plans the copy.
  bool MergeOne(uint32_t call, const std::vector<Item>& items) {
    uint64_t h = items.size();
    for (const Item& x : items) h = h * 1000003u ^ (std::hash<std::string_view>()(x.name) + static_cast<uint8_t>(x.kind));
    auto memo = memo_.find(h);
    uint32_t best = kNoIndex;
    Pairing pairing;
    if (memo != memo_.end()) {
      best = memo->second.first;
      pairing = memo->second.second;
    } else {
      for (uint32_t w = 0; w < windows_.size(); ++w) {
        Pairing p = Pair(items, windows_[w].launches);
        if (p.matched > pairing.matched || (p.matched == pairing.matched && p.matched > 0 && p.method < pairing.method)) {
          pairing = std::move(p);
          best = w;
        }
      }
      memo_.emplace(h, std::make_pair(best, pairing));
    }
    if (best == kNoIndex || pairing.matched == 0) return false;
    ++stats_.merged_launches;
    stats_.matched_activities += pairing.matched;
    stats_.unverified_activities += pairing.unverified;
    uint64_t* by[] = {&stats_.by_node_id, &stats_.in_order, &stats_.greedy, &stats_.by_name};
    *by[pairing.method] += pairing.matched;
    Plan(call, items, windows_[best], pairing);
    return true;
  }

  void Plan(uint32_t call, const std::vector<Item>& items, const Window& w, const Pairing& p) {
    const Trace& c = *captures_[w.source].trace;
    const std::vector<uint32_t>& parent = captures_[w.source].parent;
    const SliceTable& cs = c.slices;
    const SliceTable& rs = r_.slices;
    // Which capture slices to copy: the paired launches and their enclosing
    // slices inside the window.
    std::unordered_map<uint32_t, uint32_t> replayed_of;  // capture launch -> replayed activity
    std::vector<uint32_t> keep;
    int64_t end_ns = rs.ts_ns[call] + rs.dur_ns[call];
    TimeMap map;
    for (size_t i = 0; i < items.size(); ++i) {
      uint32_t l = w.launches[p.captured[i]].slice;
      replayed_of[l] = items[i].slice;
      map.Add(cs.ts_ns[l], rs.ts_ns[items[i].slice]);
      end_ns = std::max(end_ns, rs.ts_ns[items[i].slice] + rs.dur_ns[items[i].slice]);
      keep.push_back(l);
    }
    map.Add(w.start_ns, rs.ts_ns[call]);
    map.Add(w.end_ns, end_ns);
    map.Finish();
    std::vector<uint32_t> chain;
    std::unordered_map<uint32_t, bool> kept;
    for (uint32_t l : keep) kept[l] = true;
    for (uint32_t l : std::vector<uint32_t>(keep)) {
      for (uint32_t a = parent[l]; a != kNoIndex && !kept.count(a); a = parent[a]) {
        if (cs.ts_ns[a] < w.start_ns || cs.ts_ns[a] + cs.dur_ns[a] > w.end_ns) break;
        kept[a] = true;
        keep.push_back(a);
      }
    }
    std::sort(keep.begin(), keep.end());  // capture order: (start, longest first) on the window's track
    ReplayCopy copy;
    copy.start_ns = rs.ts_ns[call];
    copy.end_ns = end_ns;
    Copy root{w.source,
              kNoIndex,
              copy.start_ns,
              end_ns - copy.start_ns,
              0,
              kNoIndex,
              "graph replay: " + std::string(r_.Str(rs.name[call])) + " (ops of " + captures_[w.source].label + ")"};
    copy.slices.push_back(root);
    std::unordered_map<uint32_t, uint16_t> depth;
    for (uint32_t k : keep) {
      uint32_t a = parent[k];
      uint16_t d = static_cast<uint16_t>(a != kNoIndex && depth.count(a) ? depth[a] + 1 : 1);
      depth[k] = d;
      int64_t ts = map(cs.ts_ns[k]), end = map(cs.ts_ns[k] + cs.dur_ns[k]);
      auto it = replayed_of.find(k);
      copy.slices.push_back({w.source, k, ts, end - ts, d, it == replayed_of.end() ? kNoIndex : it->second, {}});
    }
    stats_.copied_slices += keep.size() + 1;
    // A host track of the replay's process where this copy overlaps no other.
    const uint32_t host = rs.track[call];
    auto& lanes = lanes_[host];
    size_t lane = 0;
    while (lane < lanes.size() && lanes[lane].back().end_ns > copy.start_ns) ++lane;
    if (lane == lanes.size()) lanes.emplace_back();
    lanes[lane].push_back(std::move(copy));
  }

  StringId Reintern(const Trace& from, StringId id) { return r_.strings.Intern(from.Str(id)); }

  // Appends the planned copies: new tracks after every existing one, each
  // track's slices in start order, so the (track, start) order holds.
  void Append() {
    const StringId category = r_.strings.Intern(kGraphCaptureFlowCategory);
    std::vector<std::pair<uint32_t, uint32_t>> flows;  // new launch slice -> replayed activity
    uint32_t lane_no = 0;
    for (auto& [host, lanes] : lanes_) {
      for (auto& lane : lanes) {
        ++lane_no;
        TrackTable::Row tr;
        tr.kind = TrackKind::kThread;
        tr.layer = Layer::kFramework;
        tr.pid = r_.tracks.pid[host];
        tr.tid = -static_cast<int64_t>(lane_no);
        tr.pid_label = r_.tracks.pid_label[host];
        tr.tid_label = r_.strings.Intern(kGraphCaptureTrackLabel + std::to_string(lane_no));
        tr.name = r_.strings.Intern(kGraphCaptureTrackLabel + std::to_string(lane_no) +
                                    " (captured ops re-timed onto their replayed kernels; not host time)");
        tr.process_name = r_.tracks.process_name[host];
        tr.rank = r_.tracks.rank[host];
        tr.device = r_.tracks.device[host];
        const uint32_t track = static_cast<uint32_t>(r_.tracks.size());
        r_.tracks.Append(tr);
        for (ReplayCopy& copy : lane) {
          for (const Copy& x : copy.slices) {
            SliceTable::Row row;
            row.ts_ns = x.ts_ns;
            row.dur_ns = std::max<int64_t>(x.dur_ns, 0);
            row.track = TrackId{track};
            row.depth = x.depth;
            row.correlation = kNoCorrelation;
            row.arg_begin = r_.args.size();
            if (x.slice == kNoIndex) {
              row.name = r_.strings.Intern(x.root_name);
              row.category = category;
              row.kind = EventKind::kCpuOp;  // the replay's root: the ops below it are the graph's
            } else {
              const Trace& c = *captures_[x.source].trace;
              row.name = Reintern(c, c.slices.name[x.slice]);
              row.category = Reintern(c, c.slices.category[x.slice]);
              row.kind = c.slices.kind[x.slice];
              CopyArgs(c, x.slice, &row);
            }
            const uint32_t id = static_cast<uint32_t>(r_.slices.size());
            r_.slices.Append(row);
            if (x.replayed != kNoIndex) flows.emplace_back(id, x.replayed);
          }
        }
      }
    }
    for (auto [from, to] : flows) {
      FlowTable::Row f;
      f.from_slice = SliceId{from};
      f.to_slice = SliceId{to};
      f.flow_id = r_.slices.correlation[to] >= 0 ? static_cast<uint64_t>(r_.slices.correlation[to]) : 0;
      f.category = category;
      r_.flows.Append(f);
    }
  }

  void CopyArgs(const Trace& c, uint32_t slice, SliceTable::Row* row) {
    uint64_t b = c.slices.arg_begin[slice];
    uint16_t n = c.slices.arg_count[slice];
    for (uint64_t i = b; i < b + n; ++i) {
      Arg a = c.args[i];
      a.key = Reintern(c, a.key);
      if (a.type == ArgType::kString || a.type == ArgType::kJson) a.str = Reintern(c, StringId{a.str}).raw;
      r_.args.push_back(a);
    }
    row->arg_count = n;
  }

  Trace& r_;
  std::vector<CaptureIndex> captures_;
  std::vector<Window> windows_;
  GraphCaptureMergeStats stats_;
  std::unordered_map<uint64_t, std::pair<uint32_t, Pairing>> memo_;
  std::map<uint32_t, std::vector<std::vector<ReplayCopy>>> lanes_;  // host track -> lanes of copies
};

}  // namespace

StatusOr<GraphCaptureMergeStats> MergeGraphCaptures(Trace* replay, const std::vector<GraphCaptureSource>& captures) {
  if (captures.empty()) return ErrStatus("no capture trace to merge");
  return Merger(replay, captures).Run();
}

namespace {

// The capture files `details` (a capture_traces/execution_details.json) lists.
StatusOr<std::vector<std::string>> ListedCaptures(const fs::path& details) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::dom::array entries;
  if (parser.load(details.string()).get(doc) || doc.get_array().get(entries)) {
    return ErrStatus(details.string() + ": not a JSON list of {\"file\", \"batch_size\", \"mode\"} entries");
  }
  std::vector<std::string> captures;
  std::error_code ec;
  for (simdjson::dom::element e : entries) {
    std::string_view file;
    if (e["file"].get_string().get(file) || file.empty() || file.find('/') != std::string_view::npos) {
      return ErrStatus(details.string() + ": an entry without a \"file\" name in capture_traces/");
    }
    fs::path p = details.parent_path() / std::string(file);
    if (!fs::is_regular_file(p, ec)) return ErrStatus(details.string() + ": names " + p.string() + ", which is missing");
    captures.push_back(p.string());
  }
  if (captures.empty()) return ErrStatus(details.string() + ": lists no capture file");
  return captures;
}

}  // namespace

StatusOr<std::optional<GraphCaptureLayout>> FindGraphCaptureLayout(const std::string& dir) {
  const fs::path details = fs::path(dir) / "capture_traces" / "execution_details.json";
  std::error_code ec;
  if (!fs::is_regular_file(details, ec)) return std::optional<GraphCaptureLayout>();
  GraphCaptureLayout layout;
  ASSIGN_OR_RETURN(layout.captures, ListedCaptures(details));
  std::vector<std::string> replays;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    // With its error code: an entry whose status cannot be read (a symbolic
    // link loop) threw std::filesystem_error and ended the process.
    if (!entry.is_regular_file(ec) || name.starts_with(".") || name == "gpu_arch.json") continue;
    StatusOr<std::string> prefix = ReadPrefix(entry.path().string(), kDetectPrefixBytes);
    if (prefix.ok() && IsImportableFilePrefix(*prefix)) replays.push_back(entry.path().string());
  }
  std::sort(replays.begin(), replays.end());
  if (replays.size() != 1) {
    return ErrStatus(dir + ": a graph capture folder (capture_traces/execution_details.json) needs exactly one replay "
                     "trace beside capture_traces/, found " + std::to_string(replays.size()));
  }
  layout.replay = replays.front();
  return std::optional<GraphCaptureLayout>(std::move(layout));
}

StatusOr<std::unique_ptr<Trace>> ImportWithGraphCaptures(const std::string& replay_path,
                                                         const std::vector<std::string>& capture_paths) {
  ASSIGN_OR_RETURN(std::unique_ptr<Trace> replay, ImportTraceFile(replay_path));
  std::vector<std::unique_ptr<Trace>> owned;
  std::vector<GraphCaptureSource> sources;
  for (const std::string& path : capture_paths) {
    ASSIGN_OR_RETURN(std::unique_ptr<Trace> c, ImportTraceFile(path));
    owned.push_back(std::move(c));
    sources.push_back({fs::path(path).filename().string(), owned.back().get()});
  }
  StatusOr<GraphCaptureMergeStats> merged = MergeGraphCaptures(replay.get(), sources);
  if (!merged.ok()) return ErrStatus(replay_path + " with its capture trace: " + merged.status().message());
  const GraphCaptureMergeStats& st = *merged;
  auto& m = replay->metadata;
  std::string files;
  for (const auto& s : sources) files += (files.empty() ? "" : ", ") + s.label;
  m["graph_capture.files"] = files;
  m["graph_capture.windows"] = std::to_string(st.capture_windows);
  m["graph_capture.graph_launches"] = std::to_string(st.graph_launches);
  m["graph_capture.merged_launches"] = std::to_string(st.merged_launches);
  m["graph_capture.replayed_activities"] = std::to_string(st.replayed_activities);
  m["graph_capture.matched_activities"] = std::to_string(st.matched_activities);
  m["graph_capture.unverified_activities"] = std::to_string(st.unverified_activities);
  m["graph_capture.pairs_by_method"] = "node id " + std::to_string(st.by_node_id) + ", in order " +
                                       std::to_string(st.in_order) + ", greedy " + std::to_string(st.greedy) +
                                       ", by name " + std::to_string(st.by_name);
  if (st.unverified_activities > 0) {
    replay->diagnostics.Add("graph_capture_unverified", files,
                            "replayed kernels paired in order with captured launches that name no kernel (unverified)");
  }
  return replay;
}

void NoteGraphCaptureBeside(const std::string& file, Trace* trace) {
  if (trace->metadata.count("graph_capture.files") > 0) return;  // an .aiprof of a merged run
  fs::path folder = fs::path(file).parent_path();
  if (folder.empty()) folder = ".";
  const fs::path details = folder / "capture_traces" / "execution_details.json";
  std::error_code ec;
  if (!fs::is_regular_file(details, ec)) return;
  const size_t launches = GraphLaunches(*trace).size();
  if (launches == 0) return;  // no graph replayed: nothing a capture would add
  StatusOr<std::vector<std::string>> captures = ListedCaptures(details);
  std::string how;
  if (captures.ok()) {
    std::string flags;
    for (const std::string& c : *captures) flags += " --capture-trace " + c;
    // The folder is one run only when this file is its one replay.
    StatusOr<std::optional<GraphCaptureLayout>> layout = FindGraphCaptureLayout(folder.string());
    const bool folder_is_this_run = layout.ok() && layout->has_value() && fs::equivalent((*layout)->replay, file, ec);
    how = folder_is_this_run ? "give the folder instead (aiprof analyze " + folder.string() +
                                   ") or name the capture (" + file + flags + ")"
                             : "name the capture (" + file + flags + ")";
  } else {
    how = "its list is unusable (" + captures.status().message() + ")";
  }
  trace->diagnostics.Add(
      "graph_capture_not_merged", details.string(),
      "this trace replays " + std::to_string(launches) + " CUDA/HIP graph launch" + (launches == 1 ? "" : "es") +
          " and its folder holds a graph capture, which was not merged (a file given alone is read alone; the "
          "replayed kernels stay on the graph launch, without their ops): to attribute them to the ops that "
          "captured them, " +
          how);
}

}  // namespace aiprof
