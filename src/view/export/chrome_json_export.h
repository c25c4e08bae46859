// Exports the model as Chrome trace JSON (chrome://tracing, Perfetto's JSON
// importer, speedscope, and aiprof itself read it back).
//
// {"displayTimeUnit":"ns","distributedInfo":{...},"deviceProperties":[...],
//  "traceEvents":[...],"stackFrames":{...},"samples":[...]}: process_name / thread_name metadata per track, one
// "X" per slice (ts and dur in µs with three decimals, so the model's
// integer ns survive exactly), "i" per instant, "C" per counter sample
// (series "value"), args as written (typed), and every flow, launch↔device
// correlations included, as an "s"/"f" pair ("bp":"e") at the two slices'
// starts (so chrome://tracing and Perfetto draw the arrows; a re-import
// links each pair once). Device streams named by a label (Nsight's "GPU 0")
// are written with pid = device index, so the device survives. Counters that
// aiprof derives from PyTorch's "[memory]" instants ("Total Allocated (…)",
// "Total Reserved (…)") are not written again: the instants are, and the
// import derives them once more. A multi-rank model has no single-file
// Chrome form: each (rank, pid) becomes a process labelled "rank R pid P"
// and the rank itself is not kept. Strings go through AppendJsonEscaped.
// CPU stack samples go into the top-level "stackFrames" (one per callsite:
// function as "name", module as "category", "parent") and "samples" (pid,
// tid, ts, "sf" = the leaf, weight 1), the format's own place for them
// (aiprof's importer does not read them back yet).
// With a critical path (src/analysis/critical_path/critical_path.h), each
// slice on some step's path gets the arg "critical_path":1 and each
// dependency the path follows becomes one more "s"/"f" flow pair of category
// "critical_path", named by its kind ("launch", "stream_wait", "sync", ...).
// Streamed: memory is the model plus a 1 MiB buffer.
#ifndef AIPROF_SRC_VIEW_EXPORT_CHROME_JSON_EXPORT_H_
#define AIPROF_SRC_VIEW_EXPORT_CHROME_JSON_EXPORT_H_

#include <cstdint>

#include "src/analysis/critical_path/critical_path.h"
#include "src/base/status.h"
#include "src/model/trace.h"
#include "src/view/view_sink.h"

namespace aiprof {

struct ChromeJsonExportStats {
  uint64_t events = 0;
  uint64_t slices = 0, instants = 0, counter_values = 0, flows = 0, samples = 0;
  uint64_t skipped_memory_counters = 0;  // rebuilt from "[memory]" instants on import
  uint64_t critical_slices = 0, critical_flows = 0;  // with a critical path
};

Status ExportChromeJson(const Trace& trace, ViewSink* out, ChromeJsonExportStats* stats = nullptr,
                        const CriticalPathResult* critical_path = nullptr);

// "1234.567" for 1234567 ns (µs with three decimals; exact).
void AppendMicros(std::string* out, int64_t ns);

}  // namespace aiprof

#endif  // AIPROF_SRC_VIEW_EXPORT_CHROME_JSON_EXPORT_H_
