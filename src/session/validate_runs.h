// The validate sequence, one place for every front end (`aiprof validate`,
// `aiprof report --before`, the Python package's aiprof.validate, the MCP
// validate tool, serve's compare page): each run
// given once (CheckDistinctRuns), each loaded once, the first pair naming
// the fix the after run applied and every later run joining the prediction
// check while it is loaded (PredictionPool), the runs pooled into one
// verdict per metric (Validate). The front ends differ only in where a run
// comes from (a file, a trace they hold, a stored baseline) and in how they
// name their arguments; storing the result (the service's history) is the
// CLI's.
#ifndef AIPROF_SRC_SESSION_VALIDATE_RUNS_H_
#define AIPROF_SRC_SESSION_VALIDATE_RUNS_H_

#include <optional>
#include <string>
#include <vector>

#include "src/analysis/validation/compare.h"
#include "src/analysis/validation/run_samples.h"
#include "src/base/status.h"
#include "src/session/prediction_pool.h"
#include "src/session/run_loader.h"
#include "src/session/session.h"

namespace aiprof {

// One run of a side: exactly one of a file to load, a loaded trace's
// session, or samples without a trace.
struct ValidateRun {
  // As the caller names it (the path as given, a stored baseline's name):
  // the samples' label of a loaded session, and errors and notes name it.
  std::string name;
  // A trace or benchmark result file, loaded here (LoadRun).
  std::string path;
  // A trace the caller holds, read through its session (no second import);
  // must outlive the call. Its samples are labelled `name`.
  AnalysisSession* session = nullptr;
  // Samples with no trace (a stored baseline): no prediction check.
  std::optional<RunSamples> samples;

  static ValidateRun File(std::string path);
  static ValidateRun Loaded(std::string name, AnalysisSession* session);
  static ValidateRun Samples(std::string name, RunSamples samples);
};

struct ValidateRunsOptions {
  ValidationOptions validation;
  // Samples of traces (unit, batch size, warm-up steps) and result files.
  // With unit "step" and warmup_steps >= 0 the prediction check's steady
  // steps are the samples' too.
  RunInputs inputs;
  // The sessions over traces loaded here (knowledge database, whether
  // history is attached); input is set to each run's path.
  SessionOptions session;
  // The fix the after run applied (fix_id or scenario) and how the note
  // names the fix id argument; cards for a scenario's correction.
  PredictionPoolOptions prediction;
  // How the caller names its sides and arguments in errors.
  std::string before_side = "--before", after_side = "--after";
  std::string fix_id_argument = "--fix-id", scenario_argument = "--scenario";
};

// The validation of `before` against `after` (one or more runs each), with
// the prediction check. Past cases of these very inputs (their
// InputIdentity) do not correct the prediction checked against them. An
// error names the run or the argument.
StatusOr<ValidationResult> ValidateRuns(const std::vector<ValidateRun>& before, const std::vector<ValidateRun>& after,
                                        const ValidateRunsOptions& options);

}  // namespace aiprof

#endif  // AIPROF_SRC_SESSION_VALIDATE_RUNS_H_
