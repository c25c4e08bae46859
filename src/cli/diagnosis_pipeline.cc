#include "src/cli/diagnosis_pipeline.h"

#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <optional>

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "src/analysis/analyze.h"
#include "src/analysis/rules/rule_loader.h"
#include "src/analysis/validation/baseline_store.h"
#include "src/analysis/validation/knowledge_card.h"
#include "src/importers/common/importer_registry.h"

namespace aiprof {

void AddDiagnosisFlags(CLI::App* sub, DiagnosisInputs* in) {
  sub->add_option("input", in->input, "Trace file or folder, or .aiprof")->required();
  sub->add_option("--rules", in->rule_paths, "Extra rule file or folder (repeatable); same id overrides a shipped rule");
  sub->add_flag("--no-builtin-rules", in->no_builtin_rules, "Use only the --rules given");
  sub->add_option("--device", in->device, "Device whose peaks the roofline uses (see data/devices.yaml)");
  sub->add_option("--format", in->format,
                  "text, md, json, html or pdf; for suggest also yaml / suggestions-json (machine-readable "
                  "suggestions, docs/suggestions-schema.md) (default: from -o, else text)")
      ->check(CLI::IsMember({"text", "md", "json", "html", "pdf", "yaml", "suggestions-json"}));
  sub->add_option("-o,--output", in->output, "Write the report here (atomically)");
}

StatusOr<std::unique_ptr<DiagnosisRun>> RunDiagnosis(const DiagnosisInputs& in) {
  auto run = std::make_unique<DiagnosisRun>();
  if (!in.no_builtin_rules) {
    ASSIGN_OR_RETURN(run->rules, LoadBuiltinRules());
  }
  for (const std::string& path : in.rule_paths) {
    ASSIGN_OR_RETURN(std::vector<Rule> more, LoadRules(path));
    MergeRules(&run->rules, std::move(more));
  }
  if (run->rules.empty()) return ErrStatus("no rules to apply (--no-builtin-rules without --rules)");
  ASSIGN_OR_RETURN(run->trace, ImportTrace(in.input));
  AnalyzeOptions options;
  options.device = in.device;
  run->metrics = ComputeAllMetrics(*run->trace, options);
  run->diagnosis = Diagnose(*run->trace, run->metrics, run->rules);
  return run;
}

StatusOr<std::string> ReportFormat(const DiagnosisInputs& in) {
  if (!in.format.empty()) return in.format;
  auto ends = [&](const char* ext) {
    std::string e(ext);
    return in.output.size() > e.size() && in.output.compare(in.output.size() - e.size(), e.size(), e) == 0;
  };
  if (in.output.empty() || in.output == "-" || ends(".txt")) return std::string("text");
  if (ends(".md")) return std::string("md");
  if (ends(".json")) return std::string("json");
  if (ends(".html") || ends(".htm")) return std::string("html");
  if (ends(".yaml") || ends(".yml")) return std::string("yaml");
  if (ends(".pdf")) return std::string("pdf");
  return ErrStatus(in.output + ": cannot tell the report format from the extension; use --format");
}

bool UseColor(const DiagnosisInputs& in) {
  const char* no_color = std::getenv("NO_COLOR");
  return (in.output.empty() || in.output == "-") && isatty(STDOUT_FILENO) && !(no_color && *no_color);
}

// Attaches what stored knowledge cards measured for each finding's
// bottleneck. Reads the database only if it exists (suggest never creates it).
Status AttachHistory(const std::string& db_path, SuggestResult* result) {
  struct stat st;
  if (db_path.empty() || ::stat(db_path.c_str(), &st) != 0) return OkStatus();
  std::map<std::string, std::optional<HistoricalGain>> by_bottleneck;
  for (SuggestionOutcome& o : result->kept) {
    const std::string& bottleneck = o.finding->rule->bottleneck;
    auto it = by_bottleneck.find(bottleneck);
    if (it == by_bottleneck.end()) {
      ASSIGN_OR_RETURN(std::vector<KnowledgeCard> cards, FindCards(db_path, bottleneck));
      std::optional<HistoricalGain> h;
      if (!cards.empty()) {
        ExpectedGain g = EstimateGain(cards);
        // Cards store after/before - 1 (negative = faster); gains are reductions.
        h = HistoricalGain{-g.median_change_rel, -g.highest_ci_rel, -g.lowest_ci_rel, DescribeExpectedGain(g)};
      }
      it = by_bottleneck.emplace(bottleneck, h).first;
    }
    if (it->second) ApplyHistory(*it->second, &o);
  }
  return OkStatus();
}

StatusOr<SuggestResult> SuggestWithHistory(const DiagnosisRun& run, const SuggestOptions& options,
                                           const std::string& db_path) {
  SuggestResult suggestions = Suggest(run.diagnosis, run.metrics, options);
  std::string db = db_path;
  if (db.empty()) {
    StatusOr<std::string> default_db = DefaultBaselineDbPath();
    if (default_db.ok()) db = default_db.value();
  }
  RETURN_IF_ERROR(AttachHistory(db, &suggestions));
  return suggestions;
}

}  // namespace aiprof
