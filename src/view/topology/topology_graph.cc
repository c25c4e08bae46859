#include "src/view/topology/topology_graph.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <climits>
#include <functional>
#include <string_view>

#include "src/analysis/communication/collectives.h"
#include "src/analysis/communication/communication.h"
#include "src/analysis/pipeline/pipeline_stages.h"

namespace aiprof {

const char* TopoNodeKindName(TopoNodeKind kind) {
  switch (kind) {
    case TopoNodeKind::kRank: return "rank";
    case TopoNodeKind::kProcess: return "process";
    case TopoNodeKind::kDevice: return "device";
    case TopoNodeKind::kThread: return "thread";
    case TopoNodeKind::kStream: return "stream";
    case TopoNodeKind::kStage: return "stage";
    case TopoNodeKind::kCommGroup: return "comm_group";
  }
  return "node";
}

const char* TopoEdgeKindName(TopoEdgeKind kind) {
  switch (kind) {
    case TopoEdgeKind::kLaunch: return "launch";
    case TopoEdgeKind::kFlow: return "flow";
    case TopoEdgeKind::kRequest: return "request";
    case TopoEdgeKind::kStage: return "stage";
    case TopoEdgeKind::kCollective: return "collective";
    case TopoEdgeKind::kLink: return "link";
  }
  return "edge";
}

namespace {

std::string Duration(double ns) {
  char buf[64];
  if (ns >= 1e9) std::snprintf(buf, sizeof(buf), "%.3f s", ns / 1e9);
  else if (ns >= 1e6) std::snprintf(buf, sizeof(buf), "%.3f ms", ns / 1e6);
  else if (ns >= 1e3) std::snprintf(buf, sizeof(buf), "%.3f us", ns / 1e3);
  else std::snprintf(buf, sizeof(buf), "%.0f ns", ns);
  return buf;
}

std::string Bytes(double b) {
  char buf[64];
  if (b >= 1e9) std::snprintf(buf, sizeof(buf), "%.3f GB", b / 1e9);
  else if (b >= 1e6) std::snprintf(buf, sizeof(buf), "%.3f MB", b / 1e6);
  else if (b >= 1e3) std::snprintf(buf, sizeof(buf), "%.3f kB", b / 1e3);
  else std::snprintf(buf, sizeof(buf), "%.0f B", b);
  return buf;
}

std::string Bandwidth(double bytes_per_second) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3f GB/s", bytes_per_second / 1e9);
  return buf;
}

std::string Share(double share) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%%", share * 100);
  return buf;
}

bool IsDeviceTrack(const Trace& t, uint32_t track) {
  return t.tracks.kind[track] == TrackKind::kDeviceStream || t.tracks.device[track] != kHostDevice;
}

class Builder {
 public:
  Builder(const Trace& trace, const CommunicationResult& comm, const PipelineResult& pipeline)
      : t_(trace), comm_(comm), pipeline_(pipeline), track_node_(trace.tracks.size(), kNoTopoNode) {}

  Topology Build() {
    MeasureTracks();
    AddRanks();
    AddTrackNodes();
    AddFlowEdges();
    AddStages();
    AddCollectives();
    AddLinks();
    Highlight();
    return std::move(g_);
  }

 private:
  // ---- per track: busy time (Σ top-level slices), slice count
  // Host tracks: Σ top-level slices. Device tracks: |∪ device activity| on
  // the track (kernels, copies, collectives at any depth: a cuda_sync slice
  // may enclose a kernel; torch_npu's "Overlap Analysis" rows such as "Free"
  // are not work), linear since a track's slices are ordered by start.
  void MeasureTracks() {
    busy_ns_.assign(t_.tracks.size(), 0);
    slices_.assign(t_.tracks.size(), 0);
    const SliceTable& s = t_.slices;
    int64_t open_start = 0, open_end = INT64_MIN;
    uint32_t current = kNoTrack;
    auto close = [&]() {
      if (current == kNoTrack || open_end == INT64_MIN) return;
      busy_ns_[current] += open_end - open_start;
      device_intervals_[t_.tracks.rank[current]].emplace_back(open_start, open_end);
    };
    for (size_t i = 0; i < s.size(); ++i) {
      const uint32_t track = s.track[i];
      ++slices_[track];
      if (!IsDeviceTrack(t_, track)) {
        if (s.depth[i] == 0) busy_ns_[track] += s.dur_ns[i];
        continue;
      }
      if (!IsDeviceActivity(s.kind[i])) continue;
      const int64_t a = s.ts_ns[i], b = a + s.dur_ns[i];
      if (track != current || a > open_end) {
        close();
        current = track;
        open_start = a;
        open_end = b;
      } else {
        open_end = std::max(open_end, b);
      }
    }
    close();
  }

  // |∪ intervals|: how long at least one device of the rank was busy.
  static int64_t UnionLength(std::vector<std::pair<int64_t, int64_t>>* intervals) {
    std::sort(intervals->begin(), intervals->end());
    int64_t total = 0, open_start = 0, open_end = INT64_MIN;
    for (const auto& [a, b] : *intervals) {
      if (a > open_end) {
        if (open_end != INT64_MIN) total += open_end - open_start;
        open_start = a;
        open_end = b;
      } else {
        open_end = std::max(open_end, b);
      }
    }
    if (open_end != INT64_MIN) total += open_end - open_start;
    return total;
  }

  uint32_t AddNode(TopoNode node) {
    g_.nodes.push_back(std::move(node));
    return static_cast<uint32_t>(g_.nodes.size() - 1);
  }

  // The rank node of `rank` (created on first use) inside its "rank N"
  // cluster; a rank that only a link names (external) gets no cluster.
  uint32_t RankNode(int32_t rank, bool external) {
    auto it = rank_node_.find(rank);
    if (it != rank_node_.end()) return it->second;
    uint32_t c = kNoTopoNode;
    if (!external) {
      TopoNode cluster;
      cluster.kind = TopoNodeKind::kRank;
      cluster.cluster = true;
      cluster.rank = rank;
      cluster.label = "rank " + std::to_string(rank);
      c = AddNode(std::move(cluster));
      rank_cluster_[rank] = c;
    }
    TopoNode node;
    node.kind = TopoNodeKind::kRank;
    node.parent = c;
    node.rank = rank;
    node.label = external ? "rank " + std::to_string(rank) + " (not in this trace)" : "rank " + std::to_string(rank);
    node.external = external;
    uint32_t n = AddNode(std::move(node));
    rank_node_[rank] = n;
    return n;
  }

  void AddRanks() {
    std::set<int32_t> ranks;
    for (size_t i = 0; i < t_.tracks.size(); ++i) {
      if (t_.tracks.rank[i] != kNoRank) ranks.insert(t_.tracks.rank[i]);
    }
    for (int32_t r : ranks) RankNode(r, false);
  }

  uint32_t GroupCluster(uint32_t track) {
    const TrackTable& tr = t_.tracks;
    const bool device = IsDeviceTrack(t_, track);
    const int64_t id = device && tr.device[track] != kHostDevice ? tr.device[track] : tr.pid[track];
    auto key = std::make_tuple(tr.rank[track], device, id, tr.pid_label[track].raw);
    auto it = group_cluster_.find(key);
    if (it != group_cluster_.end()) return it->second;
    TopoNode c;
    c.kind = device ? TopoNodeKind::kDevice : TopoNodeKind::kProcess;
    c.cluster = true;
    c.rank = tr.rank[track];
    c.parent = tr.rank[track] == kNoRank ? kNoTopoNode : rank_cluster_.at(tr.rank[track]);
    std::string id_text = tr.pid_label[track].empty() ? std::to_string(id) : std::string(t_.Str(tr.pid_label[track]));
    if (device) {
      c.label = "device " + id_text;
      if (!tr.process_name[track].empty()) c.label += " (" + std::string(t_.Str(tr.process_name[track])) + ")";
    } else {
      c.label = tr.process_name[track].empty() ? "process " + id_text
                                                : std::string(t_.Str(tr.process_name[track])) + " (pid " + id_text + ")";
    }
    uint32_t n = AddNode(std::move(c));
    group_cluster_.emplace(key, n);
    return n;
  }

  std::string TrackLabel(uint32_t track) const {
    const TrackTable& tr = t_.tracks;
    if (!tr.name[track].empty()) return std::string(t_.Str(tr.name[track]));
    std::string tid = tr.tid_label[track].empty() ? std::to_string(tr.tid[track]) : std::string(t_.Str(tr.tid_label[track]));
    return (IsDeviceTrack(t_, track) ? "stream " : "thread ") + tid;
  }

  // One node per track with slices, the kMaxTopoTracks busiest of them when
  // there are more; the rest become one aggregate node per rank, which their
  // edges then join, and Topology::limit_note says so.
  void AddTrackNodes() {
    const TrackTable& tr = t_.tracks;
    std::vector<uint32_t> tracks;
    for (uint32_t i = 0; i < tr.size(); ++i) {
      if (tr.kind[i] != TrackKind::kCounter && slices_[i] > 0) tracks.push_back(i);
    }
    std::vector<bool> drawn(tr.size(), true);
    if (tracks.size() > kMaxTopoTracks) {
      std::vector<uint32_t> by_busy = tracks;
      std::nth_element(by_busy.begin(), by_busy.begin() + kMaxTopoTracks, by_busy.end(), [&](uint32_t a, uint32_t b) {
        return busy_ns_[a] != busy_ns_[b] ? busy_ns_[a] > busy_ns_[b] : a < b;
      });
      for (size_t k = kMaxTopoTracks; k < by_busy.size(); ++k) drawn[by_busy[k]] = false;
      g_.limit_note = std::to_string(kMaxTopoTracks) + " of " + std::to_string(tracks.size()) +
                      " threads and streams drawn (the busiest); the other " +
                      std::to_string(tracks.size() - kMaxTopoTracks) + " are aggregated per rank";
    }
    std::map<int32_t, uint32_t> aggregate;  // rank -> its aggregate node
    for (uint32_t i : tracks) {
      if (!drawn[i]) {
        track_node_[i] = AggregateNode(&aggregate, tr.rank[i]);
        TopoNode& a = g_.nodes[track_node_[i]];
        a.time_ns += busy_ns_[i];
        a.pid += 1;  // counts the tracks it holds until the details are written
        a.tid += static_cast<int64_t>(slices_[i]);
        continue;
      }
      TopoNode n;
      n.kind = IsDeviceTrack(t_, i) ? TopoNodeKind::kStream : TopoNodeKind::kThread;
      n.parent = GroupCluster(i);
      n.rank = tr.rank[i];
      n.label = TrackLabel(i);
      n.pid = tr.pid[i];
      n.tid = tr.tid[i];
      n.time_ns = busy_ns_[i];
      n.details = {{"layer", LayerName(tr.layer[i])},
                   {"slices", std::to_string(slices_[i])},
                   {n.kind == TopoNodeKind::kStream ? "busy (union of device activity)"
                                                    : "busy (sum of top-level slices)",
                    Duration(static_cast<double>(busy_ns_[i]))}};
      track_node_[i] = AddNode(std::move(n));
      g_.nodes[g_.nodes[track_node_[i]].parent].time_ns += busy_ns_[i];
    }
    for (const auto& [rank, node] : aggregate) {
      TopoNode& a = g_.nodes[node];
      a.label = std::to_string(a.pid) + " more threads and streams (aggregated)";
      a.details = {{"tracks", std::to_string(a.pid)},
                   {"slices", std::to_string(a.tid)},
                   {"busy (sum over the tracks)", Duration(static_cast<double>(a.time_ns))}};
      a.pid = a.tid = 0;
    }
  }

  uint32_t AggregateNode(std::map<int32_t, uint32_t>* aggregate, int32_t rank) {
    auto it = aggregate->find(rank);
    if (it != aggregate->end()) return it->second;
    TopoNode n;
    n.kind = TopoNodeKind::kThread;
    n.rank = rank;
    n.parent = rank == kNoRank ? kNoTopoNode : rank_cluster_.at(rank);
    uint32_t node = AddNode(std::move(n));
    aggregate->emplace(rank, node);
    return node;
  }

  // The edge (from, to, kind, label_key), created on first use; label_key
  // identifies the label (a string id, an enum value) so lookups allocate nothing.
  uint32_t EdgeFor(uint32_t from, uint32_t to, TopoEdgeKind kind, uint64_t label_key, std::string_view label) {
    auto key = std::make_tuple(from, to, static_cast<int>(kind), label_key);
    auto it = edge_index_.find(key);
    if (it != edge_index_.end()) return it->second;
    TopoEdge e;
    e.from = from;
    e.to = to;
    e.kind = kind;
    e.label = std::string(label);
    g_.edges.push_back(std::move(e));
    uint32_t index = static_cast<uint32_t>(g_.edges.size() - 1);
    edge_index_.emplace(key, index);
    return index;
  }

  void AddFlowEdges() {
    const FlowTable& f = t_.flows;
    const SliceTable& s = t_.slices;
    for (size_t i = 0; i < f.size(); ++i) {
      uint32_t a = f.from_slice[i], b = f.to_slice[i];
      uint32_t ta = s.track[a], tb = s.track[b];
      uint32_t na = track_node_[ta], nb = track_node_[tb];
      if (na == kNoTopoNode || nb == kNoTopoNode || ta == tb || na == nb) continue;
      const bool launch = !IsDeviceTrack(t_, ta) && IsDeviceTrack(t_, tb) && IsDeviceActivity(s.kind[b]);
      if (launch) {
        TopoEdge& e = g_.edges[EdgeFor(na, nb, TopoEdgeKind::kLaunch, 0, "launch")];
        ++e.count;
        e.time_ns += s.dur_ns[b];
        e.host_time_ns += s.dur_ns[a];
        continue;
      }
      const bool request = t_.Str(t_.tracks.name[ta]) == "requests" || t_.Str(t_.tracks.name[tb]) == "requests";
      TopoEdge& e = g_.edges[EdgeFor(na, nb, request ? TopoEdgeKind::kRequest : TopoEdgeKind::kFlow,
                                     f.category[i].raw, t_.Str(f.category[i]))];
      ++e.count;
      e.time_ns += s.ts_ns[b] - s.ts_ns[a];
    }
    for (TopoEdge& e : g_.edges) {
      if (e.kind == TopoEdgeKind::kLaunch) {
        e.details = {{"launches", std::to_string(e.count)},
                     {"device time of the launched work", Duration(static_cast<double>(e.time_ns))},
                     {"host time in the launch calls", Duration(static_cast<double>(e.host_time_ns))}};
      } else {
        e.details = {{"category", e.label},
                     {"flows", std::to_string(e.count)},
                     {"mean start-to-start latency", Duration(static_cast<double>(e.time_ns) / e.count)}};
      }
    }
  }

  void AddStages() {
    std::vector<uint32_t> node_of(pipeline_.stages.size());
    for (size_t i = 0; i < pipeline_.stages.size(); ++i) {
      const PipelineStage& st = pipeline_.stages[i];
      TopoNode n;
      n.kind = TopoNodeKind::kStage;
      n.label = "stage " + st.name;
      n.time_ns = st.total_ns;
      n.details = {{"instances", std::to_string(st.instances)},
                   {"total", Duration(static_cast<double>(st.total_ns))},
                   {"working", Duration(static_cast<double>(st.working_ns))},
                   {"waiting", Duration(static_cast<double>(st.waiting_ns))},
                   {"mean working per instance", Duration(st.MeanWorkingNs())},
                   {"share of pipeline time", Share(st.latency_share)}};
      node_of[i] = AddNode(std::move(n));
    }
    for (const StageEdge& se : pipeline_.edges) {
      if (se.from >= node_of.size() || se.to >= node_of.size()) continue;
      TopoEdge& e = g_.edges[EdgeFor(node_of[se.from], node_of[se.to], TopoEdgeKind::kStage,
                                     static_cast<uint64_t>(se.kind), StageEdgeKindName(se.kind))];
      e.count += se.count;
      e.details = {{"kind", e.label}, {"count", std::to_string(e.count)}};
    }
    if (pipeline_.limiting_stage && *pipeline_.limiting_stage < node_of.size()) {
      TopoNode& n = g_.nodes[node_of[*pipeline_.limiting_stage]];
      n.highlight = true;
      n.highlight_reason = "limiting stage: largest mean working time per instance";
      summary_.push_back(n.label + " limits throughput (largest mean working time per instance)");
    }
  }

  void AddCollectives() {
    // The session's list (ComputeCommunication read it once; helper cl's seam).
    const std::vector<CollectiveSlice>& collectives = comm_.collectives;
    std::map<uint32_t, uint32_t> group_node;  // group string id → node
    std::map<uint32_t, std::set<int32_t>> group_ranks;
    std::map<uint32_t, std::set<std::string>> group_types;
    std::map<uint32_t, int64_t> edge_sized_time;
    for (const CollectiveSlice& c : collectives) {
      uint32_t track = t_.slices.track[c.slice];
      uint32_t from = track_node_[track];
      if (from == kNoTopoNode) continue;
      auto [it, inserted] = group_node.emplace(c.group.raw, 0);
      if (inserted) {
        TopoNode n;
        n.kind = TopoNodeKind::kCommGroup;
        n.label = c.group.empty() ? std::string("collectives (no group name)")
                                  : "group " + std::string(t_.Str(c.group));
        it->second = AddNode(std::move(n));
      }
      group_ranks[c.group.raw].insert(c.rank);
      group_types[c.group.raw].insert(CollectiveTypeName(c.type));
      const int64_t dur = t_.slices.dur_ns[c.slice];
      g_.nodes[it->second].time_ns += dur;
      uint32_t ei = EdgeFor(from, it->second, TopoEdgeKind::kCollective, 0, "collective");
      TopoEdge& e = g_.edges[ei];
      ++e.count;
      e.time_ns += dur;
      if (c.bytes >= 0) {
        e.bytes = (e.bytes < 0 ? 0 : e.bytes) + c.bytes;
        edge_sized_time[ei] += dur;
      }
    }
    for (auto& [ei, time] : edge_sized_time) {
      TopoEdge& e = g_.edges[ei];
      if (time > 0) e.bandwidth_bytes_per_second = e.bytes / (static_cast<double>(time) / 1e9);
    }
    for (TopoEdge& e : g_.edges) {
      if (e.kind != TopoEdgeKind::kCollective) continue;
      e.details = {{"collectives", std::to_string(e.count)}, {"time", Duration(static_cast<double>(e.time_ns))}};
      if (e.bytes >= 0) e.details.emplace_back("bytes (instances of known size)", Bytes(e.bytes));
      if (e.bandwidth_bytes_per_second >= 0) {
        e.details.emplace_back("algorithm bandwidth", Bandwidth(e.bandwidth_bytes_per_second));
      }
    }
    for (auto& [group, node] : group_node) {
      std::string ranks, types;
      for (int32_t r : group_ranks[group]) ranks += (ranks.empty() ? "" : ", ") + (r == kNoRank ? "?" : std::to_string(r));
      for (const std::string& ty : group_types[group]) types += (types.empty() ? "" : ", ") + ty;
      g_.nodes[node].details = {{"ranks", ranks}, {"types", types},
                                {"time in collectives", Duration(static_cast<double>(g_.nodes[node].time_ns))}};
    }
  }

  // "src-dst" → the two ranks, or false when the link is not written so.
  static bool ParseLink(const std::string& link, int32_t* src, int32_t* dst) {
    size_t dash = link.find('-');
    if (dash == std::string::npos) return false;
    auto a = std::from_chars(link.data(), link.data() + dash, *src);
    auto b = std::from_chars(link.data() + dash + 1, link.data() + link.size(), *dst);
    return a.ec == std::errc() && a.ptr == link.data() + dash && b.ec == std::errc() &&
           b.ptr == link.data() + link.size();
  }

  void AddLinks() {
    for (const LinkBandwidth& l : comm_.cross.links) {
      int32_t src = 0, dst = 0;
      if (!ParseLink(l.link, &src, &dst) || src == dst || l.transport == "LOCAL") continue;
      uint32_t a = RankNode(src, !rank_node_.count(src));
      uint32_t b = RankNode(dst, !rank_node_.count(dst));
      TopoEdge& e = g_.edges[EdgeFor(a, b, TopoEdgeKind::kLink, std::hash<std::string>{}(l.transport), l.transport)];
      ++e.count;
      e.bytes = l.bytes;
      e.time_ns = static_cast<int64_t>(l.time_ns);
      e.bandwidth_bytes_per_second = l.bandwidth_bytes_per_second;
      e.highlight = l.slow;
      e.details = {{"link", l.link + " (reported by rank " + std::to_string(l.rank) + ")"},
                   {"transport", l.transport},
                   {"bytes", Bytes(l.bytes)},
                   {"transit time", Duration(l.time_ns)},
                   {"bandwidth", Bandwidth(l.bandwidth_bytes_per_second)}};
      if (l.judged) {
        e.details.emplace_back("median of its transport", Bandwidth(l.transport_median_bytes_per_second));
        e.details.emplace_back("slow", l.slow ? "yes (below 80% of the median)" : "no");
      }
      if (l.slow) summary_.push_back("slow link " + l.link + " (" + l.transport + ")");
    }
  }

  void Highlight() {
    // Per rank: device busy time (size of the rank node) and the analysis' figures.
    std::map<int32_t, int64_t> device_busy;
    for (auto& [rank, intervals] : device_intervals_) device_busy[rank] = UnionLength(&intervals);
    for (auto& [rank, node] : rank_node_) {
      TopoNode& n = g_.nodes[node];
      if (n.external) continue;
      n.time_ns = device_busy[rank];
      n.details = {{"device busy (union of device activity)", Duration(static_cast<double>(n.time_ns))}};
      for (const RankCommunication& rc : comm_.cross.ranks) {
        if (rc.rank != rank) continue;
        n.details.emplace_back("matched collectives", std::to_string(rc.matched));
        n.details.emplace_back("waiting for other ranks", Duration(static_cast<double>(rc.wait_ns)));
        n.details.emplace_back("arriving late (others wait)", Duration(static_cast<double>(rc.lateness_ns)));
      }
    }
    int32_t slow = kNoRank;
    std::string why;
    const auto& sr = comm_.cross.slow_rank;
    if (sr && comm_.cross.clocks_agree && rank_cluster_.count(sr->rank)) {
      slow = sr->rank;
      why = "slowest rank: arrives last at collectives, the others wait for it";
      if (!sr->test.outlier) why += " (not a statistical outlier)";
    } else if (rank_cluster_.size() > 1) {
      int64_t best = 0;
      for (auto& [rank, busy] : device_busy) {
        if (rank != kNoRank && busy > best) best = busy, slow = rank;
      }
      why = std::string("slowest rank: longest device busy time (") +
            (sr ? "arrival times not comparable: the ranks' clocks do not agree" : "no collectives matched across ranks") +
            ")";
    }
    if (slow != kNoRank) {
      for (uint32_t node : {rank_node_.at(slow), rank_cluster_.at(slow)}) {
        g_.nodes[node].highlight = true;
        g_.nodes[node].highlight_reason = why;
      }
      summary_.insert(summary_.begin(), "rank " + std::to_string(slow) + ": " + why);
    }
    for (size_t i = 0; i < summary_.size(); ++i) g_.highlight_summary += (i ? "; " : "") + summary_[i];
  }

  const Trace& t_;
  const CommunicationResult& comm_;
  const PipelineResult& pipeline_;
  Topology g_;
  std::vector<int64_t> busy_ns_;
  std::map<int32_t, std::vector<std::pair<int64_t, int64_t>>> device_intervals_;
  std::vector<uint64_t> slices_;
  std::vector<uint32_t> track_node_;
  std::map<int32_t, uint32_t> rank_node_, rank_cluster_;
  std::map<std::tuple<int32_t, bool, int64_t, uint32_t>, uint32_t> group_cluster_;
  std::map<std::tuple<uint32_t, uint32_t, int, uint64_t>, uint32_t> edge_index_;
  std::vector<std::string> summary_;
};

}  // namespace

Topology BuildTopology(const Trace& trace, const CommunicationResult& communication, const PipelineResult& pipeline) {
  return Builder(trace, communication, pipeline).Build();
}

}  // namespace aiprof
