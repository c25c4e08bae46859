#include "src/session/validate_runs.h"

#include <memory>
#include <utility>

#include "src/analysis/validation/trace_samples.h"

namespace aiprof {
namespace {

// A run opened: its samples, and the session the prediction check reads
// (null without a trace).
struct OpenedRun {
  RunSamples samples;
  std::unique_ptr<Trace> trace;          // loaded here
  std::unique_ptr<AnalysisSession> own;  // over `trace` or the caller's; destroyed first
  AnalysisSession* session = nullptr;
};

// `checked`: the inputs' identities, for a before run (its suggestions are
// the ones corrected by past cases); null for an after run.
StatusOr<OpenedRun> Open(const ValidateRun& run, const ValidateRunsOptions& options,
                         const std::vector<std::string>* checked) {
  OpenedRun r;
  if (run.samples) {
    r.samples = *run.samples;
    return r;
  }
  // With unit "step" the prediction check's steady steps are the samples'.
  const int window_warmup = options.inputs.unit == "step" ? options.inputs.warmup_steps : -1;
  if (run.session) {
    TraceSampleOptions to;
    to.unit = options.inputs.unit;
    to.items_per_sample = options.inputs.batch_size;
    to.warmup_steps = options.inputs.warmup_steps;
    to.results = &run.session->results();  // its request tokens, computed once
    ASSIGN_OR_RETURN(r.samples, SamplesFromTrace(run.session->trace(), run.name, to));
    // The caller's session unless the check needs other options: then one
    // of its own over the same trace (the caller's keeps its results).
    SessionOptions so = run.session->options();
    bool changed = false;
    if (window_warmup >= 0 && so.analyze.warmup_steps != window_warmup) {
      so.analyze.warmup_steps = window_warmup;
      changed = true;
    }
    if (checked && !checked->empty() && (so.attach_history || !options.prediction.cards.empty())) {
      so.history_checked_inputs.insert(so.history_checked_inputs.end(), checked->begin(), checked->end());
      changed = true;
    }
    r.session = run.session;
    if (changed) {
      r.own = std::make_unique<AnalysisSession>(run.session->shared_trace(), std::move(so));
      r.session = r.own.get();
    }
    return r;
  }
  ASSIGN_OR_RETURN(LoadedRun loaded, LoadRun(run.path, options.inputs));
  r.samples = std::move(loaded.samples);
  r.trace = std::move(loaded.trace);
  if (r.trace) {
    SessionOptions so = options.session;
    so.input = run.path;
    if (window_warmup >= 0) so.analyze.warmup_steps = window_warmup;
    if (checked) so.history_checked_inputs.insert(so.history_checked_inputs.end(), checked->begin(), checked->end());
    r.own = AnalysisSession::ForTrace(*r.trace, std::move(so));
    r.session = r.own.get();
  }
  return r;
}

// Each run of a side given once; the identities of the runs read from files.
Status CheckSide(const std::string& side, const std::vector<ValidateRun>& runs, std::vector<std::string>* identities) {
  std::vector<std::string> names;
  for (const ValidateRun& run : runs) {
    if (!run.samples) names.push_back(run.session ? run.name : run.path);
  }
  return CheckDistinctRuns(side, names, identities);
}

}  // namespace

ValidateRun ValidateRun::File(std::string path) {
  ValidateRun r;
  r.name = path;
  r.path = std::move(path);
  return r;
}

ValidateRun ValidateRun::Loaded(std::string name, AnalysisSession* session) {
  ValidateRun r;
  r.name = std::move(name);
  r.session = session;
  return r;
}

ValidateRun ValidateRun::Samples(std::string name, RunSamples samples) {
  ValidateRun r;
  r.name = std::move(name);
  r.samples = std::move(samples);
  return r;
}

StatusOr<ValidationResult> ValidateRuns(const std::vector<ValidateRun>& before, const std::vector<ValidateRun>& after,
                                        const ValidateRunsOptions& options) {
  if (before.empty() || after.empty()) return ErrStatus("validate: give at least one run before and one after");
  // Each run given once: the same file twice on one side (by path or by
  // content) would count one measurement as several independent runs.
  std::vector<std::string> identities;
  RETURN_IF_ERROR(CheckSide(options.before_side, before, &identities));
  RETURN_IF_ERROR(CheckSide(options.after_side, after, &identities));

  // Each run is opened once. The first pair names the fix; every later run
  // adds its prediction (before) or measurement (after) while it is open,
  // so only the first pair's traces are held to the end.
  ASSIGN_OR_RETURN(OpenedRun first_before, Open(before.front(), options, &identities));
  ASSIGN_OR_RETURN(OpenedRun first_after, Open(after.front(), options, nullptr));
  const bool traces = first_before.session && first_after.session;
  if (!options.prediction.fix_id.empty() && !traces) {
    return ErrStatus(options.fix_id_argument +
                     " needs traces before and after (a prediction is made from the before trace)");
  }
  if (!options.prediction.scenario.empty() && !traces) {
    return ErrStatus(options.scenario_argument +
                     " needs traces before and after (the prediction is replayed on the before trace)");
  }
  PredictionPool pool(options.prediction);
  RETURN_IF_ERROR(pool.AddFirst(before.front().name, first_before.session, after.front().name, first_after.session));
  std::vector<RunSamples> before_runs, after_runs;
  before_runs.push_back(std::move(first_before.samples));
  after_runs.push_back(std::move(first_after.samples));
  for (size_t i = 1; i < before.size(); ++i) {
    ASSIGN_OR_RETURN(OpenedRun run, Open(before[i], options, &identities));
    RETURN_IF_ERROR(pool.AddBefore(before[i].name, run.session));
    before_runs.push_back(std::move(run.samples));
  }
  for (size_t i = 1; i < after.size(); ++i) {
    ASSIGN_OR_RETURN(OpenedRun run, Open(after[i], options, nullptr));
    RETURN_IF_ERROR(pool.AddAfter(after[i].name, run.session));
    after_runs.push_back(std::move(run.samples));
  }
  ValidationResult result =
      Validate(MergeRuns(std::move(before_runs)), MergeRuns(std::move(after_runs)), options.validation);
  pool.Finish(&result);
  return result;
}

}  // namespace aiprof
