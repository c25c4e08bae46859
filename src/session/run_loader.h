// Reads a run measured before or after a change into validation samples: a
// trace in any importable format (or .aiprof), or a benchmark result file
// (hyperfine, Google Benchmark, latency lists). `validate`, `set-baseline`,
// `card`, `report --before` and the Python package all go through here.
#ifndef AIPROF_SRC_SESSION_RUN_LOADER_H_
#define AIPROF_SRC_SESSION_RUN_LOADER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/analysis/validation/run_samples.h"
#include "src/base/status.h"
#include "src/model/trace.h"

namespace aiprof {

struct RunInputs {
  // Traces: "step" (Trace::steps) or the name of the spans that are samples.
  std::string unit = "step";
  double batch_size = 0;          // items per sample (0 = unknown)
  std::string bench;              // result files: which hyperfine command or Google Benchmark name
  std::string sample_unit = "ms"; // result files: unit of bare numbers
  int warmup_steps = -1;          // traces: leading warm-up steps left out; -1 detects them
};

struct LoadedRun {
  RunSamples samples;
  std::unique_ptr<Trace> trace;  // the imported trace (null for a result file)
};

// `path` as samples, with the trace it came from when it is one.
StatusOr<LoadedRun> LoadRun(const std::string& path, const RunInputs& inputs);
// LoadRun without keeping the trace.
StatusOr<RunSamples> LoadRunSamples(const std::string& path, const RunInputs& inputs);

// Each run given once: fails when two of `paths` (one side's runs, named
// `side` in the message: "--before" for the CLI, "before" for the package)
// are one file, the same path once resolved or the same content
// (InputIdentity), which would count one measurement as several independent
// runs. Appends each readable run's identity to *identities (may be null).
// An input that cannot be read is left for the loader to report.
Status CheckDistinctRuns(std::string_view side, const std::vector<std::string>& paths,
                         std::vector<std::string>* identities);

}  // namespace aiprof

#endif  // AIPROF_SRC_SESSION_RUN_LOADER_H_
