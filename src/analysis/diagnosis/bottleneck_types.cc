#include "src/analysis/diagnosis/bottleneck_types.h"

namespace aiprof {

namespace {

// {name, exclusive_impact, descriptive, caveat, spread, gap_cause}
constexpr BottleneckType kBottleneckTypes[] = {
    {"host_bound", true, false, false, false, "host_bound"},
    {"sync_bound", true, false, false, false, "sync"},
    {"data_loading", true, false, false, false, "data_loading"},
    {"memcpy", true, false, false, false, ""},
    {"communication_bound", true, false, false, false, ""},
    {"layout_conversion", true, false, false, false, ""},
    {"cast_roundtrip", false, false, false, false, ""},
    {"fusion_missing", false, false, false, false, ""},
    {"host_region", false, false, false, false, ""},
    {"long_tail", false, false, false, true, ""},
    {"slow_rank", false, false, false, false, ""},
    {"rank_failure", false, false, false, false, ""},
    {"startup", false, false, false, false, "startup"},
    {"graph_capture", false, false, false, false, "startup"},
    {"page_faults", false, false, false, false, ""},
    {"compute", false, true, false, false, ""},
    {"compute_bound", false, false, false, false, ""},
    {"memory_bound", false, false, false, false, ""},
    {"memory_pressure", false, false, false, false, ""},
    {"pipeline_stage", false, false, false, false, ""},
    {"attribution", false, false, true, false, ""},
    {"unexplained", false, false, false, false, ""},  // the built-in unexplained-time rule
};

}  // namespace

std::span<const BottleneckType> BottleneckTypes() { return kBottleneckTypes; }

const BottleneckType* FindBottleneckType(std::string_view name) {
  for (const BottleneckType& t : kBottleneckTypes) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace aiprof
