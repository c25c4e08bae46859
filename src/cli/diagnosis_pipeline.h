// Shared by `diagnose` and `suggest`: import, analyse, load rules, diagnose,
// and pick the report format.
#ifndef AIPROF_SRC_CLI_DIAGNOSIS_PIPELINE_H_
#define AIPROF_SRC_CLI_DIAGNOSIS_PIPELINE_H_

#include <memory>
#include <string>
#include <vector>

#include "src/analysis/diagnosis/diagnose.h"
#include "src/analysis/diagnosis/suggest.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/rules/rule.h"
#include "src/base/status.h"
#include "src/model/trace.h"

namespace CLI {
class App;
}

namespace aiprof {

struct DiagnosisInputs {
  std::string input;
  std::vector<std::string> rule_paths;  // --rules, files or folders
  bool no_builtin_rules = false;
  std::string device;                   // roofline peaks
  std::string format;                   // text | md | json | html ("" = from -o, else text)
  std::string output;
};

// Adds the flags above to `sub`.
void AddDiagnosisFlags(CLI::App* sub, DiagnosisInputs* in);

struct DiagnosisRun {
  std::unique_ptr<Trace> trace;
  std::vector<Rule> rules;
  MetricSet metrics;
  Diagnosis diagnosis;
};

StatusOr<std::unique_ptr<DiagnosisRun>> RunDiagnosis(const DiagnosisInputs& in);
// "text", "md", "json" or "html" from --format or the -o extension.
StatusOr<std::string> ReportFormat(const DiagnosisInputs& in);
// Attaches what stored knowledge cards measured for each finding's
// bottleneck. Reads the database only if it exists (suggest never creates it).
Status AttachHistory(const std::string& db_path, SuggestResult* result);

// Suggest() for `run`, with the history of the knowledge cards in `db_path`
// (empty: the default baseline database, when there is one).
StatusOr<SuggestResult> SuggestWithHistory(const DiagnosisRun& run, const SuggestOptions& options,
                                           const std::string& db_path);

// Colour only when writing to a terminal and NO_COLOR is unset.
bool UseColor(const DiagnosisInputs& in);

}  // namespace aiprof

#endif  // AIPROF_SRC_CLI_DIAGNOSIS_PIPELINE_H_
