// `aiprof diagnose IN --draft-rule FILE`: a YAML rule template with the
// metrics measured on this trace filled in, for the user to refine and add to
// their rule library (loads with the rule loader as written; fires on the
// trace it was drafted from).
#ifndef AIPROF_SRC_REPORT_DIAGNOSIS_DRAFT_RULE_H_
#define AIPROF_SRC_REPORT_DIAGNOSIS_DRAFT_RULE_H_

#include <string>

#include "src/analysis/diagnosis/diagnose.h"
#include "src/analysis/metrics/metric_set.h"

namespace aiprof {

std::string DraftRuleYaml(const std::string& source, const Diagnosis& diagnosis, const MetricSet& metrics);

}  // namespace aiprof

#endif  // AIPROF_SRC_REPORT_DIAGNOSIS_DRAFT_RULE_H_
