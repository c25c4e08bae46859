// Pipeline stages ("nodes"): spans the application marks as stages, and which
// one bounds latency and throughput.
//
// A stage span is any slice (record_function / user_annotation, NVTX range,
// mstx range, SDK span) whose name starts with one of kStagePrefixes; the
// stage's name is the rest ("stage:image_generator" → "image_generator").
// Instances of one name are aggregated. Definitions:
//   - top-level instance: a stage span with no enclosing stage span;
//   - pipeline time = Σ top-level instance durations; a stage's latency share
//     = its instances' total duration / pipeline time (top-level shares sum
//     to 1; nested stages are shares of the same total);
//   - working time of an instance = |∪ its direct children on the same track|
//     (ops, nested stages); waiting = duration − working;
//   - the stage that limits throughput: the largest mean working time per
//     instance (a pipeline cannot run faster than its slowest stage does its
//     work; waiting is time it could overlap);
//   - stage graph edges: "contains" (a stage span nested in another),
//     "then" (consecutive top-level stage spans on one track), "flow" (a
//     Trace::flows link from a slice inside one stage to a slice inside
//     another). Linear in slices (× nesting depth).
#ifndef AIPROF_SRC_ANALYSIS_PIPELINE_PIPELINE_STAGES_H_
#define AIPROF_SRC_ANALYSIS_PIPELINE_PIPELINE_STAGES_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

class MetricSet;

inline constexpr std::array<std::string_view, 3> kStagePrefixes = {"stage:", "node:", "pipeline/"};

// The stage name of a span name, or nullopt if it is not a stage span.
std::optional<std::string_view> StageName(std::string_view span_name);

struct PipelineStage {
  std::string name;
  uint64_t instances = 0;
  uint64_t top_level_instances = 0;
  int64_t total_ns = 0;
  int64_t working_ns = 0;
  int64_t waiting_ns = 0;
  int64_t max_ns = 0;
  double latency_share = 0;  // total_ns / pipeline_ns
  double MeanWorkingNs() const { return instances > 0 ? static_cast<double>(working_ns) / instances : 0; }
};

enum class StageEdgeKind { kContains, kThen, kFlow };
const char* StageEdgeKindName(StageEdgeKind k);

struct StageEdge {
  size_t from = 0, to = 0;  // indices into PipelineResult::stages
  StageEdgeKind kind = StageEdgeKind::kThen;
  uint64_t count = 0;
};

struct PipelineResult {
  std::vector<PipelineStage> stages;  // by total time, largest first
  std::vector<StageEdge> edges;       // by kind, then count
  int64_t pipeline_ns = 0;            // Σ top-level instance durations
  std::optional<size_t> top_stage;    // largest latency share among top-level stages
  // Largest mean working time per span, among stages with any: none where no
  // stage span holds an op or a nested stage (working and waiting cannot be
  // told apart there: the report says so).
  std::optional<size_t> limiting_stage;
};

PipelineResult ComputePipelineStages(const Trace& trace);

// Publishes pipeline_top_stage_share and "pipeline" evidence; unavailable
// when the trace has no stage spans.
void PublishPipelineStages(const PipelineResult& result, MetricSet* metrics);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_PIPELINE_PIPELINE_STAGES_H_
