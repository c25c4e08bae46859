// Loads diagnosis rules from YAML files and folders. Every error names the
// file and line: a syntax error, an unknown metric, a unit that does not fit,
// a missing field, a duplicate rule id.
#ifndef AIPROF_SRC_ANALYSIS_RULES_RULE_LOADER_H_
#define AIPROF_SRC_ANALYSIS_RULES_RULE_LOADER_H_

#include <string>
#include <vector>

#include "src/analysis/rules/rule.h"
#include "src/base/status.h"

namespace aiprof {

// Parses one YAML document (`origin` names it in errors).
StatusOr<std::vector<Rule>> ParseRules(const std::string& yaml_text, const std::string& origin);
// Loads a file, or every *.yaml / *.yml file of a folder in name order.
StatusOr<std::vector<Rule>> LoadRules(const std::string& path);
// The rules shipped with aiprof: AIPROF_RULES_DIR if set, else the rules/
// folder installed beside the binary or in the source tree.
StatusOr<std::vector<Rule>> LoadBuiltinRules();
// Appends `more` to `rules`; a repeated id replaces the earlier rule (so a
// user file can override a shipped rule).
void MergeRules(std::vector<Rule>* rules, std::vector<Rule> more);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_RULES_RULE_LOADER_H_
