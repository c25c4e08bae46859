// The topology of a trace: which component talks to which, and how much.
//
// Nodes (clusters hold others):
//   rank cluster      "rank N" (traces with ranks), holding a rank node (the
//                     endpoint of rank-to-rank links; size = device busy time,
//                     the union of the rank's top-level device activity)
//   process cluster   (rank, pid) of host tracks, holding thread nodes
//   device cluster    (rank, device) of device tracks, holding stream nodes
//   thread / stream   one per model track with slices; size = busy time,
//                     Σ durations of its top-level (depth 0) slices; on
//                     device tracks |∪ device activity| (kernels, copies,
//                     collectives)
//   stage             a pipeline stage (src/analysis/pipeline); size = total time
//   comm group        a communication group (src/analysis/communication:
//                     the "Process Group Name" arg, the HCCL group track name)
// Edges:
//   launch      host track → device stream: Trace::flows whose source is on a
//               host track and whose target is device activity; count, Σ
//               device time of the targets, Σ host time of the launch calls
//   flow        any other flow between two tracks, per category; a flow with
//               an end on a track named "requests" (the SDK's request spans)
//               is a request path; count, mean start-to-start latency
//   stage       the pipeline's stage graph (then / flow / contains), count
//   collective  stream → comm group: count, Σ time, Σ bytes and bandwidth
//               over the instances of known size
//   link        rank → rank from torch_npu communication_matrix.json (the
//               communication analysis' link bandwidths): transport, bytes,
//               time, bandwidth, slow links marked
// Highlighted: the limiting pipeline stage (largest mean working time), the
// slow rank of the cross-rank analysis (largest lateness into collectives),
// else, without collectives, the rank with the longest device busy time;
// slow links. Linear in slices and flows, plus the analyses' own cost.
#ifndef AIPROF_SRC_VIEW_TOPOLOGY_TOPOLOGY_GRAPH_H_
#define AIPROF_SRC_VIEW_TOPOLOGY_TOPOLOGY_GRAPH_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

struct CommunicationResult;
struct PipelineResult;

enum class TopoNodeKind : uint8_t { kRank, kProcess, kDevice, kThread, kStream, kStage, kCommGroup };
const char* TopoNodeKindName(TopoNodeKind kind);

inline constexpr uint32_t kNoTopoNode = UINT32_MAX;

struct TopoNode {
  TopoNodeKind kind = TopoNodeKind::kThread;
  bool cluster = false;              // drawn as a box holding its children
  uint32_t parent = kNoTopoNode;     // the cluster it sits in
  std::string label;                 // trace text, not escaped
  int32_t rank = kNoRank;
  int64_t pid = 0, tid = 0;          // thread / stream: the model track's pid and tid
  int64_t time_ns = 0;               // what its size shows
  bool highlight = false;
  std::string highlight_reason;
  bool external = false;             // a rank named by a link but not in the trace
  std::vector<std::pair<std::string, std::string>> details;  // shown on hover
};

enum class TopoEdgeKind : uint8_t { kLaunch, kFlow, kRequest, kStage, kCollective, kLink };
const char* TopoEdgeKindName(TopoEdgeKind kind);

struct TopoEdge {
  uint32_t from = 0, to = 0;
  TopoEdgeKind kind = TopoEdgeKind::kFlow;
  std::string label;         // category, stage edge kind, transport
  uint64_t count = 0;
  int64_t time_ns = 0;       // launch: Σ device time; collective: Σ time; flow: Σ start-to-start
  int64_t host_time_ns = 0;  // launch: Σ launch call time
  double bytes = -1;         // collective, link; -1 unknown
  double bandwidth_bytes_per_second = -1;
  bool highlight = false;
  std::vector<std::pair<std::string, std::string>> details;
};

struct Topology {
  std::vector<TopoNode> nodes;  // a cluster precedes the nodes inside it
  std::vector<TopoEdge> edges;
  std::string highlight_summary;  // one line: what is highlighted and why
  std::string limit_note;         // set when kMaxTopoTracks was reached: what was aggregated
};

// At most this many thread and stream nodes are drawn (the busiest); the rest
// are aggregated into one node per rank, so the layout stays bounded (docs/views.md).
inline constexpr size_t kMaxTopoTracks = 256;

// Builds the graph from the model and the two analyses' results.
Topology BuildTopology(const Trace& trace, const CommunicationResult& communication,
                       const PipelineResult& pipeline);

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_TOPOLOGY_TOPOLOGY_GRAPH_H_
