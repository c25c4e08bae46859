// Exports the model as a Perfetto protobuf trace (what ui.perfetto.dev and
// trace_processor read natively, without the JSON importer's limits).
//
// Layout of the file (perfetto_trace_subset.proto): one packet sequence.
//   1. A ClockSnapshot and the sequence's defaults: every timestamp is the
//      model's absolute ns on BUILTIN_CLOCK_BOOTTIME (Perfetto's default trace
//      clock; the values are the source's own clock, not converted).
//   2. TrackDescriptors: with several ranks a "rank N" root per rank; under
//      it one track per process or device ((rank, pid)); under that one track
//      per thread, stream, span or counter track of the model, ordered by
//      layer (application, framework, runtime, device, communication, host).
//      A single-rank trace uses ProcessDescriptor / ThreadDescriptor for host
//      processes with numeric pids, so Perfetto shows them as processes and
//      threads; devices and everything else are named custom tracks.
//   3. TrackEvents, streamed track by track: slices as TYPE_SLICE_BEGIN/END
//      pairs, properly nested per track; a slice that overlaps another on its
//      track without nesting goes to a sibling "<track> (overlap k)" track
//      (the first lane where it nests); instants as TYPE_INSTANT; counters as
//      TYPE_COUNTER on counter tracks; Trace::flows as flow_ids on the source
//      slice's BEGIN and terminating_flow_ids on the target's (id = flow row
//      + 1, unique in the file); args as debug annotations. Event names,
//      categories, arg names and string arg values are interned
//      (InternedData, incremental state on the sequence), each sent once,
//      the first time it is used.
//   4. CPU stack samples: one PerfSample packet each (pid, tid of its thread;
//      0 for label-named ones), callstacks interned as Callstack / Frame /
//      function_names, modules as Mapping / mapping_paths (iid = model id + 1).
// A process whose counters carry a device index (PyTorch's per-device memory)
// stays a process: counters do not make a group a device.
// With a critical path (src/analysis/critical_path/critical_path.h), each
// slice on some step's path gets the debug annotation critical_path = true,
// and each dependency the path follows is one more flow (ids after the
// trace's flows).
// Packets are written as they are built; memory is the model plus O(tracks +
// nesting depth). A timestamp before 0 shifts the whole trace so the first
// event is at 0 (PerfettoExportStats::shift_ns says by how much).
#ifndef AIPROF_SRC_VIEW_EXPORT_PERFETTO_EXPORT_H_
#define AIPROF_SRC_VIEW_EXPORT_PERFETTO_EXPORT_H_

#include <cstdint>

#include "src/analysis/critical_path/critical_path.h"
#include "src/base/status.h"
#include "src/model/trace.h"
#include "src/view/view_sink.h"

namespace aiprof {

struct PerfettoExportStats {
  uint64_t packets = 0;
  uint64_t track_descriptors = 0;
  uint64_t overlap_tracks = 0;  // sibling tracks made for non-nesting slices
  uint64_t slices = 0;
  uint64_t instants = 0;
  uint64_t counter_values = 0;
  uint64_t flows = 0;
  uint64_t samples = 0;      // CPU stack samples (PerfSample)
  uint64_t skipped_counters = 0;  // counter rows not on a counter track
  int64_t shift_ns = 0;           // added to every timestamp (0 unless the trace had negative ones)
  uint64_t critical_slices = 0, critical_flows = 0;  // with a critical path
};

// The Perfetto clock id every packet's timestamp is on (BUILTIN_CLOCK_BOOTTIME).
inline constexpr uint32_t kPerfettoTraceClockId = 6;

Status ExportPerfetto(const Trace& trace, ViewSink* out, PerfettoExportStats* stats = nullptr,
                      const CriticalPathResult* critical_path = nullptr);

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_EXPORT_PERFETTO_EXPORT_H_
