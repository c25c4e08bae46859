#include "src/session/prediction_pool.h"

#include "src/analysis/validation/compare.h"
#include "src/session/prediction_check.h"
#include "src/session/session.h"

namespace aiprof {

Status PredictionPool::AddFirst(const std::string& before_name, AnalysisSession* before, const std::string& after_name,
                                AnalysisSession* after) {
  first_before_name_ = before_name;
  first_after_name_ = after_name;
  before_count_ = after_count_ = 1;
  if (!before || !after) return OkStatus();
  first_after_ = after;
  if (options_.scenario.empty()) {
    ASSIGN_OR_RETURN(check_, CheckPrediction(*before, *after, options_.fix_id, &why_not_));
  } else {
    ASSIGN_OR_RETURN(check_, CheckScenarioPrediction(*before, *after, options_.scenario, options_.mean,
                                                     options_.devices_file, options_.cards));
  }
  if (check_) {
    before_.push_back(*check_);
    after_.push_back(SteadyStepTime(*after, *check_));
  }
  return OkStatus();
}

Status PredictionPool::AddBefore(const std::string& name, AnalysisSession* before) {
  ++before_count_;
  if (!check_) return OkStatus();
  if (!before) {
    complete_ = false;
    return OkStatus();
  }
  const PredictionCheck& first = *check_;
  bool suggested = true;
  std::optional<PredictionCheck> c;
  if (options_.scenario.empty()) {
    ASSIGN_OR_RETURN(c, PredictFixForRun(*before, *first_after_, first.fix_id, first.mean, &suggested));
  } else {
    // Every before run replays the scenario (no run "does not suggest" it).
    StatusOr<std::optional<PredictionCheck>> got = CheckScenarioPrediction(
        *before, *first_after_, options_.scenario, options_.mean, options_.devices_file, options_.cards);
    if (!got.ok()) return ErrStatus(name + ": " + got.status().message());
    c = std::move(*got);
  }
  if (!c) return ErrStatus(name + ": no steady step to predict " + Name(first) + " from");
  if (c->step_period != first.step_period) {
    return ErrStatus(name + ": its prediction of " + Name(first) + " is on the step " +
                     (c->step_period ? "period" : "wall time") + ", the first before run's on the step " +
                     (first.step_period ? "period" : "wall time") + ": runs on two bases are not pooled");
  }
  if (!suggested) not_suggested_.push_back(name);
  before_.push_back(std::move(*c));
  return OkStatus();
}

Status PredictionPool::AddAfter(const std::string& name, AnalysisSession* after) {
  ++after_count_;
  if (!check_) return OkStatus();
  if (!after) {
    complete_ = false;
    return OkStatus();
  }
  const MeanInterval m = SteadyStepTime(*after, *check_);
  if (m.n == 0) return ErrStatus(name + ": no steady step to measure the prediction of " + Name(*check_) + " by");
  after_.push_back(m);
  return OkStatus();
}

void PredictionPool::Finish(ValidationResult* result) const {
  if (!options_.scenario.empty() && !check_) {
    result->sample_notes.push_back("no prediction check for --scenario: " + first_before_name_ + " or " +
                                   first_after_name_ + " has no steady step");
  }
  // Why no fix was inferred (how one was: the check's matched_by).
  if (!check_ && !why_not_.empty()) {
    result->sample_notes.push_back(why_not_ + "; name it with " + options_.fix_id_argument);
  }
  result->prediction = check_;
  if (!check_ || (before_count_ < 2 && after_count_ < 2)) return;
  if (!complete_) {
    result->sample_notes.push_back("the prediction check uses the first run of each side (" + first_before_name_ +
                                   ", " + first_after_name_ + "): some runs are result files, not traces");
    return;
  }
  result->prediction = PoolPredictionRuns(before_, after_);
  if (not_suggested_.empty()) return;
  std::string runs;
  for (const std::string& r : not_suggested_) runs += (runs.empty() ? "" : ", ") + r;
  result->sample_notes.push_back("the prediction of " + Name(*result->prediction) + " pools every before run; " +
                                 std::to_string(not_suggested_.size()) + " of " + std::to_string(before_count_) +
                                 " do not suggest it (its finding did not fire there) and predict no change: " + runs);
}

}  // namespace aiprof
