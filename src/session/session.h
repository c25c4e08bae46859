// The analysis session: every front end (the CLI's commands, the report and
// its embedded views, the Python package, the monitor's incidents) reads a
// trace's results through one AnalysisSession. It imports once, computes
// each analysis at most once on demand and keeps the result
// (AnalysisResults), loads the rules and runs the diagnosis once, and
// attaches the knowledge cards' history to the suggestions once.
//
//   ASSIGN_OR_RETURN(auto session, AnalysisSession::Open(options));
//   ASSIGN_OR_RETURN(const Diagnosis* d, session->diagnosis());
//   const StepStats& steps = session->results().Get(kAllSteps);  // no recomputation
//
// Results are plain structs of the analyses (src/analysis/); turning them
// into documents and writing them is the renderers' job (src/render/,
// src/report/).
#ifndef AIPROF_SRC_SESSION_SESSION_H_
#define AIPROF_SRC_SESSION_SESSION_H_

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "src/analysis/analyze.h"
#include "src/analysis/diagnosis/diagnose.h"
#include "src/analysis/diagnosis/suggest.h"
#include "src/analysis/rules/rule.h"
#include "src/analysis/validation/run_samples.h"
#include "src/analysis/validation/trace_samples.h"
#include "src/analysis/whatif/simulate.h"
#include "src/analysis/whatif/whatif.h"
#include "src/base/status.h"
#include "src/model/trace.h"

namespace aiprof {

struct SessionOptions {
  std::string input;  // the trace as given (file, folder or .aiprof); its label in outputs
  AnalyzeOptions analyze;
  // Rules: the shipped library unless no_builtin_rules, plus these files or
  // folders (same id overrides a shipped rule).
  std::vector<std::string> rule_paths;
  bool no_builtin_rules = false;
  // Suggestions: target and constraints; knowledge cards from `db` ("" = the
  // default baseline database, read only if it exists).
  SuggestOptions suggest;
  std::string db;
  bool attach_history = true;  // false: suggestions without the cards' history
  // The InputIdentity of inputs a prediction check compares (validate,
  // report --before): past cases of those very inputs do not correct the
  // prediction (HistoryScope::checked_inputs).
  std::vector<std::string> history_checked_inputs;
};

class AnalysisSession {
 public:
  // Imports options.input (ImportTrace: any format, folder or .aiprof).
  static StatusOr<std::unique_ptr<AnalysisSession>> Open(SessionOptions options);
  // Over a trace already in memory (a capture, the Python package's Trace).
  AnalysisSession(std::shared_ptr<const Trace> trace, SessionOptions options);
  // Over a trace the caller owns and keeps alive longer than the session.
  static std::unique_ptr<AnalysisSession> ForTrace(const Trace& trace, SessionOptions options = {});
  ~AnalysisSession();
  AnalysisSession(const AnalysisSession&) = delete;
  AnalysisSession& operator=(const AnalysisSession&) = delete;

  const Trace& trace() const { return *trace_; }
  const std::shared_ptr<const Trace>& shared_trace() const { return trace_; }
  const SessionOptions& options() const { return options_; }

  // Each analysis's structured result, computed on first use.
  AnalysisResults& results() { return results_; }
  // Every selected analysis (AnalyzeOptions::only): metrics, evidence and
  // the details of `aiprof analyze`. Computed once.
  const AnalysisReport& analyses();
  const MetricSet& metrics() { return analyses().metrics; }

  // The rules, loaded once; an error names the file and line.
  StatusOr<const std::vector<Rule>*> rules();
  // Diagnose() over metrics() with rules(), once.
  StatusOr<const Diagnosis*> diagnosis();
  // Suggest() for the diagnosis with options().suggest, with the history of
  // the knowledge cards in options().db attached, once.
  StatusOr<const SuggestResult*> suggestions();

  // `scenario` replayed over the critical path (PredictWhatIf), with the
  // page-fault note on a trace that holds fault records (docs/whatif.md):
  // what `aiprof whatif` and the MCP whatif tool print.
  WhatIfResult WhatIf(const Scenario& scenario);

  // Which past cases of a fix may correct a prediction from this trace
  // (docs/whatif.md): those of its workload (WorkloadSignature), none of
  // the inputs being checked (options().history_checked_inputs), none
  // measured from this very input. The input is hashed (InputIdentity) only
  // where the knowledge database `db` exists; "" leaves predicted_input
  // empty.
  HistoryScope history_scope(const std::string& db) const;

  // Validation samples from this trace (no second import).
  StatusOr<RunSamples> samples(const TraceSampleOptions& options);

 private:
  std::shared_ptr<const Trace> trace_;
  SessionOptions options_;
  AnalysisResults results_;
  std::once_flag analyses_once_;
  std::optional<AnalysisReport> analyses_;
  std::mutex mu_;  // guards the lazily built members below
  std::optional<StatusOr<std::vector<Rule>>> rules_;
  std::optional<Diagnosis> diagnosis_;
  std::optional<SuggestResult> suggestions_;
};

// Attaches what stored knowledge cards measured for each finding's
// bottleneck. Reads the database only if it exists (it is never created).
Status AttachHistory(const std::string& db_path, SuggestResult* result, const HistoryScope& scope = {});

}  // namespace aiprof

#endif  // AIPROF_SRC_SESSION_SESSION_H_
