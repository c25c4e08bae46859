// Renders a diagnosis (and, for `suggest`, its filtered suggestions) as
// terminal text, Markdown, JSON (schema: docs/diagnosis-schema.md) or one
// self-contained HTML page. Everything that comes from the trace or the rule
// files is escaped for the format.
#ifndef AIPROF_SRC_REPORT_DIAGNOSIS_DIAGNOSIS_REPORT_H_
#define AIPROF_SRC_REPORT_DIAGNOSIS_DIAGNOSIS_REPORT_H_

#include <string>

#include "src/analysis/diagnosis/diagnose.h"
#include "src/analysis/diagnosis/suggest.h"

namespace aiprof {

struct DiagnosisReport {
  std::string source;  // input path
  const MetricSet* metrics = nullptr;
  const Diagnosis* diagnosis = nullptr;
  const SuggestResult* suggestions = nullptr;  // null for `diagnose`
  const SuggestOptions* options = nullptr;     // null for `diagnose`
};

std::string DiagnosisToText(const DiagnosisReport& r, bool color);
std::string DiagnosisToMarkdown(const DiagnosisReport& r);
std::string DiagnosisToJson(const DiagnosisReport& r);
std::string DiagnosisToHtml(const DiagnosisReport& r);

}  // namespace aiprof

#endif  // AIPROF_SRC_REPORT_DIAGNOSIS_DIAGNOSIS_REPORT_H_
