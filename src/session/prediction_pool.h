// The prediction check of a validation over one or several runs a side: the
// first pair (first before run, first after run) names the fix (the check of
// prediction_check.h); with several runs a side each later before run adds
// its own prediction of that fix, each later after run its measurement, and
// the runs are pooled (PoolPredictionRuns), as validate's verdict is by runs.
// `aiprof validate` and the Python package's aiprof.validate both check
// through it, so they give one prediction for the same inputs.
//
// Each run is added while it is loaded, so a caller can drop a run's trace
// before loading the next (the first after run's session excepted: every
// later before run predicts against it).
#ifndef AIPROF_SRC_SESSION_PREDICTION_POOL_H_
#define AIPROF_SRC_SESSION_PREDICTION_POOL_H_

#include <optional>
#include <string>
#include <vector>

#include "src/analysis/validation/knowledge_card.h"
#include "src/analysis/validation/prediction.h"
#include "src/analysis/validation/statistics.h"
#include "src/base/status.h"

namespace aiprof {

class AnalysisSession;
struct ValidationResult;

struct PredictionPoolOptions {
  // The suggestion id the after run applied; empty: inferred from what
  // changed (CheckPrediction).
  std::string fix_id;
  // How the caller's user names the fix: the note says so when none could be
  // inferred (the CLI's flag, the package's argument).
  std::string fix_id_argument = "--fix-id";
  // Or the fix stated as a what-if scenario (CheckScenarioPrediction), on
  // the steady steps' mean when `mean`, corrected by the past cases among
  // `cards`.
  std::string scenario;
  bool mean = false;
  std::string devices_file;
  std::vector<KnowledgeCard> cards;
};

class PredictionPool {
 public:
  explicit PredictionPool(PredictionPoolOptions options) : options_(std::move(options)) {}

  // The first run of each side, named as given (path or label). A null
  // session is a run without a trace (a result file, a stored baseline):
  // then no check is made. `after` must outlive every AddBefore call. An
  // unknown fix id or bad scenario is an error.
  Status AddFirst(const std::string& before_name, AnalysisSession* before, const std::string& after_name,
                  AnalysisSession* after);
  // Each later run of a side, in order, after AddFirst; a null session: a
  // result file (the check then stays with the first pair). An error names
  // the run: no steady step, or its prediction on another time base.
  Status AddBefore(const std::string& name, AnalysisSession* before);
  Status AddAfter(const std::string& name, AnalysisSession* after);

  // The check into result->prediction (pooled when a side has several
  // runs), and into result->sample_notes why there is none or which before
  // runs predict no change.
  void Finish(ValidationResult* result) const;

 private:
  static std::string Name(const PredictionCheck& c) { return c.fix_id.empty() ? c.fix_title : c.fix_id; }

  PredictionPoolOptions options_;
  std::string first_before_name_, first_after_name_;
  AnalysisSession* first_after_ = nullptr;
  std::optional<PredictionCheck> check_;  // the first pair's
  std::string why_not_;                   // why the first pair has none (inferred fix only)
  size_t before_count_ = 0, after_count_ = 0;
  // The pooled runs: each before run's prediction (no change where it does
  // not suggest the fix), each after run's figure on the check's base.
  std::vector<PredictionCheck> before_;
  std::vector<MeanInterval> after_;
  std::vector<std::string> not_suggested_;
  bool complete_ = true;  // false when a later run has no trace
};

}  // namespace aiprof

#endif  // AIPROF_SRC_SESSION_PREDICTION_POOL_H_
