// Reads a trace (any importable format, or .aiprof) or a benchmark result
// file into validation samples: `validate`, `set-baseline`, `card`, `report
// --before` and the Python package all go through this one function
// (defined in validate_command.cc).
#ifndef AIPROF_SRC_CLI_RUN_SAMPLES_LOADER_H_
#define AIPROF_SRC_CLI_RUN_SAMPLES_LOADER_H_

#include <string>

#include "src/analysis/validation/run_samples.h"
#include "src/base/status.h"

namespace aiprof {

// unit: traces, "step" or a span name; batch_size: items per sample (0 =
// unknown); bench: which benchmark of a result file; sample_unit: unit of
// bare numbers in result files; summary_json (may be null): the trace's
// summary; warmup_steps: leading warm-up steps of traces left out, -1
// detects them (LeadingWarmup).
StatusOr<RunSamples> LoadRunSamples(const std::string& path, const std::string& unit, double batch_size,
                                    const std::string& bench, const std::string& sample_unit, std::string* summary_json,
                                    int warmup_steps = -1);

}  // namespace aiprof

#endif  // AIPROF_SRC_CLI_RUN_SAMPLES_LOADER_H_
