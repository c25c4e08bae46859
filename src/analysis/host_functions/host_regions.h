// Host regions: the time a program's own named regions (record_function
// labels, SDK spans) spend on the host with no op running inside them —
// Python, I/O, serialisation, waiting — per step, from the attribution tree.
//
// A region is a module node of the tree (AttributionNodes, kind kModule)
// that is not an nn.Module frame ("nn.Module: X": model code), not data
// loading (a DataLoader span and what lies under it: the data_loading
// finding owns that time) and not a collective's label (`nccl:all_reduce`,
// `gloo:all_reduce`: time class communication, a wait on the other ranks
// that the communication figures own, not the program's host work). Its host time is the node's self time: the time
// its slices cover minus the time of the ops and regions under it (no op of
// its own runs). Nodes of one name under different parents add up; one
// inside a region of its own name adds its self time and instances, not
// its total or ops (the outer one's total holds them).
// Figures are per steady step (AttributionResult::PerStep) and shares of
// the steady steps' wall time (AttributionResult::wall_ns).
#ifndef AIPROF_SRC_ANALYSIS_HOST_FUNCTIONS_HOST_REGIONS_H_
#define AIPROF_SRC_ANALYSIS_HOST_FUNCTIONS_HOST_REGIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

struct AnalysisWindow;

class MetricSet;
struct AttributionResult;

// Regions reported as evidence.
inline constexpr size_t kHostRegionsReported = 3;
// A region is host work when no op runs for at least this share of its own
// time (its host time ≥ half its total): most of its time is not ops. A
// region that mostly runs ops is the model's or its pipeline's (a
// "## forward ##" label around an eager forward runs no op for 5-6% of it:
// the interpreter between ops, on the torch-cpu convnet and resnet18
// fixtures), whose time the op rules (compute, fusion) describe.
inline constexpr double kHostRegionMinHostShare = 0.5;

struct HostRegion {
  StringId name;
  double instances_per_step = 0;
  double host_ns_per_step = 0;   // no op running inside it (self time)
  double total_ns_per_step = 0;  // all its time, ops and regions under it included
  double ops_per_step = 0;       // op instances under it (at any depth)
  bool host_work = false;        // host_ns_per_step >= kHostRegionMinHostShare × total_ns_per_step
  // The thread of an instance on another thread than the step's, as the
  // tree labels it ("[other thread N]"; empty: every instance is on the
  // step's thread). Such an instance holds
  // only the time the step's thread recorded nothing (the tree's holes): the
  // step waited for it, or ran untraced code beside it, which the trace
  // cannot tell apart; the evidence says so.
  std::string other_thread;
};

struct HostRegionsResult {
  // CPU-only traces: there the step's thread is the step, and its time
  // without ops is the step's. On a trace with device activity the host's
  // time without ops costs the step only where the device waits
  // (host_launch_bound, data_loading measure that): not computed.
  bool device = false;
  // The trace has no op (cpu_op) at all (spans only: an SDK trace of a
  // program whose ops are not recorded): "no op runs in it" then says
  // nothing of the region's work, and nothing is computed or published, as
  // on a device trace.
  bool no_ops = false;
  bool available = false;           // CPU-only, ops recorded, and the attribution tree exists
  double step_ns = 0;               // mean steady step (the shares' base)
  std::vector<HostRegion> regions;  // by host time, largest first
};

HostRegionsResult ComputeHostRegions(const Trace& trace, const AttributionResult& attribution);

// On a trace with device activity or without ops: nothing (the rule is not
// for it).
// Publishes host_region_ratio (the host time of the largest region that is
// host work, share of the impact base: the mean steady step, or per trace
// the window's steady-state time, as the impact's share; 0 when none is),
// host_region_ns (its host time per step: the impact) and "host_region"
// evidence (the kHostRegionsReported largest regions that are host work).
void PublishHostRegions(const Trace& trace, const HostRegionsResult& result, const AnalysisWindow& window,
                        MetricSet* metrics);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_HOST_FUNCTIONS_HOST_REGIONS_H_
