// Machine-readable suggestions (`aiprof suggest --format yaml`, schema
// aiprof.suggestions/1 in docs/suggestions-schema.md): per suggestion its
// id, platform, the concrete changes, the expected gain range and what time
// it is a share of, the risk, and the finding it answers with its
// confidence; then the suggestions the target and constraints excluded. A
// model converter or a config generator reads this file instead of prose.
#ifndef AIPROF_SRC_REPORT_SUGGESTIONS_SUGGESTIONS_DOC_H_
#define AIPROF_SRC_REPORT_SUGGESTIONS_SUGGESTIONS_DOC_H_

#include <string>

#include "src/render/tree.h"
#include "src/report/diagnosis/diagnosis_report.h"

namespace aiprof {

inline constexpr const char* kSuggestionsSchema = "aiprof.suggestions/1";

// `r.suggestions` and `r.options` must be set (a `suggest` run).
Tree SuggestionsTree(const DiagnosisReport& r);
std::string SuggestionsToYaml(const DiagnosisReport& r);
std::string SuggestionsToJson(const DiagnosisReport& r);

}  // namespace aiprof

#endif  // AIPROF_SRC_REPORT_SUGGESTIONS_SUGGESTIONS_DOC_H_
