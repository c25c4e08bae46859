// Flag groups shared by the subcommands: each command adds the groups it
// needs, so no two commands declare the same flag twice and a new command is
// a few lines (docs/ARCHITECTURE.md "How to add a command").
#ifndef AIPROF_SRC_CLI_FLAGS_H_
#define AIPROF_SRC_CLI_FLAGS_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/analysis/validation/compare.h"
#include "src/base/status.h"
#include "src/render/document.h"
#include "src/render/format.h"
#include "src/session/run_loader.h"
#include "src/session/session.h"

namespace CLI {
class App;
class Option;
}

namespace aiprof {

// The trace positional argument and --timing. A command that reads one
// trace takes it as one path, or as several SDK files of one run (what
// `traces/aiprof-*` expands to after a program forked), merged by process
// as their folder is (ImportTraces); `several` false for a command with a
// positional after it (diff's run B, query's SQL).
struct InputFlags {
  std::string input;               // the path; for several, the paths joined by spaces (the trace's label)
  std::vector<std::string> paths;  // as given
  bool timing = false;
  void Add(CLI::App* sub, const char* help = "Trace file or folder (anything aiprof imports), or .aiprof",
           bool several = true);
  // The trace: ImportTraces(paths). Several paths that are not all SDK
  // files are a bad command line (exit 2) naming the first that is not.
  StatusOr<std::unique_ptr<Trace>> Import() const;
  // A session over Import() (AnalysisSession::Open for one path), with
  // options.input set to `input`.
  StatusOr<std::unique_ptr<AnalysisSession>> Open(SessionOptions options) const;
};

// What a command's render::Document holds, for the formats it is offered in
// (render::DocumentFormats of such a document).
struct DocumentKind {
  bool yaml = true;     // false: its machine form is a schema writer's JSON text (Document::machine_json)
  bool tables = false;  // it holds a table (CSV)
};

// -o/--output and --format, resolved by render::ResolveFormat in one place.
struct OutputFlags {
  std::string output;
  std::string format;
  std::vector<render::OutputFormat> offered;
  std::string stdout_format;  // the format on standard output ("" = the first offered)
  // `required`: -o must be given (a file format such as a PDF or a report).
  void Add(CLI::App* sub, std::vector<render::OutputFormat> formats, const char* output_help,
           bool required = false);
  // A command whose output is one render::Document: the formats the document
  // renderers write such a document in (render::DocumentFormats), then
  // `extra` (pdf, a command's own form), each written by WriteDocument
  // unless the command writes it itself.
  void AddDocument(CLI::App* sub, DocumentKind kind, const char* output_help,
                   std::vector<render::OutputFormat> extra = {}, bool required = false);
  StatusOr<std::string> Resolve() const;
  // `doc` as `format` (Resolve()'s) to -o, else standard output: pdf printed
  // from its HTML page (-o needed), the others by render::RenderDocument.
  Status WriteDocument(const render::Document& doc, const std::string& format) const;
  bool ToStdout() const { return output.empty() || output == "-"; }
  // Colour only when writing to a terminal and NO_COLOR is unset.
  bool UseColor() const;
};

// `status`, when it failed, as a bad command line (exit 2, README "Exit
// statuses"): for a library's check of text that came from a flag (a
// scenario, constraints, metric names), which does not know where its text
// came from. Text read from a file stays an unusable input (exit 1).
Status AsUsage(Status status);

// Every repeatable flag of `app` and its subcommands (a vector option:
// --rules, --scenario, --alert, --capture-trace, ...) takes one value per
// occurrence, as README writes them (`[--rules FILE]...`): CLI11 lets a
// vector option keep taking the words that follow, so `--rules r.yaml a b`
// read `a` as a second rules file and left `b` as the only input.
void OneValuePerFlag(CLI::App* app);

// Single flags more than one command takes, each declared here only: the
// caller adds what is its own (->required(), a check) to the returned option.
// -o/--output for an output that is a path, not a formatted report (a
// folder, a .aiprof file); reports use OutputFlags.
CLI::Option* AddOutputPathFlag(CLI::App* sub, std::string* path, const std::string& help);
// --format for a command whose formats are not chosen by OutputFlags (a
// view's depend on the view).
CLI::Option* AddFormatFlag(CLI::App* sub, std::string* format, const std::string& help);
// --before / --after: the runs of a before/after comparison.
CLI::Option* AddBeforeFlag(CLI::App* sub, std::string* path, const std::string& help);
CLI::Option* AddAfterFlag(CLI::App* sub, std::string* path, const std::string& help);
// --scenario: what-if scenarios (docs/whatif.md), several for whatif.
CLI::Option* AddScenarioFlag(CLI::App* sub, std::vector<std::string>* scenarios, const std::string& help);
// --scenario S [--statistic median|mean]: the fix the after run applied,
// stated as a what-if scenario instead of a suggestion id (card, validate,
// report --before). Add after --fix-id, which it excludes.
struct ScenarioFixFlags {
  std::string scenario, statistic;
  void Add(CLI::App* sub, const std::string& help);
  // --statistic without --scenario is a bad command line, as a scenario
  // that does not parse (exit 2).
  // `mean`: judge on the steady steps' mean (asked, or an `every N`
  // scenario), else their median.
  Status Resolve(bool* mean) const;
  bool given() const { return !scenario.empty(); }
};
// --service: the service a baseline, a history or a monitor is for.
CLI::Option* AddServiceFlag(CLI::App* sub, std::string* service, const std::string& help);
// --token-file: bearer tokens (serve: the tokens it accepts; push: the one it sends).
CLI::Option* AddTokenFileFlag(CLI::App* sub, std::string* path, const std::string& help);
// --fix-id ID: the suggestion id the after run applied (validate, card).
CLI::Option* AddFixIdFlag(CLI::App* sub, std::string* fix_id, const std::string& help);
// --critical-path: each step's critical path (export flags it, the timeline draws it).
CLI::Option* AddCriticalPathFlag(CLI::App* sub, bool* critical_path, const std::string& help);
// --pid: a running process (positive).
CLI::Option* AddPidFlag(CLI::App* sub, int* pid, const std::string& help);
// --cpu-hz: host CPU sampling frequency.
CLI::Option* AddCpuHzFlag(CLI::App* sub, int* hz, const std::string& help);
// --timeout: a duration ("30s", "500ms", "2m"; a bare number is seconds),
// read with ParseDuration (src/cli/duration_flag.h).
CLI::Option* AddTimeoutFlag(CLI::App* sub, std::string* duration, const std::string& help);

// --top N: rows of a ranked list (summary's ops, diff's changes).
CLI::Option* AddTopFlag(CLI::App* sub, std::optional<size_t>* top, const std::string& help);

// --rules, --no-builtin-rules.
void AddRuleFlags(CLI::App* sub, SessionOptions* options);
// --device (roofline peaks).
void AddDeviceFlag(CLI::App* sub, AnalyzeOptions* options);
// --warmup-steps N: the leading steps left out of the steady state (impacts,
// step figures, samples); default -1 detects leading outlier steps
// (LeadingWarmup). One text for every command that takes it.
void AddWarmupFlag(CLI::App* sub, int* warmup_steps);
// --devices (devices file).
void AddDevicesFileFlag(CLI::App* sub, AnalyzeOptions* options);
// --db: the baseline and knowledge-card database.
void AddDbFlag(CLI::App* sub, std::string* db, const char* help = "Baseline and knowledge-card database (default $XDG_DATA_HOME/aiprof/baselines.db)");

// --target, --constraints (parsed by Apply; bad constraints exit 2).
struct TargetFlags {
  std::string constraints;
  void Add(CLI::App* sub, SuggestOptions* options);
  Status Apply(SuggestOptions* options) const;
};

// How a trace or a benchmark result file becomes samples: --unit,
// --batch-size, --bench, --sample-unit, and --warmup-steps when asked.
void AddRunInputFlags(CLI::App* sub, RunInputs* inputs, bool warmup_steps);

// The statistics of a before/after comparison: --test, --alpha,
// --min-effect, --seed (and --resamples when asked).
struct StatsFlags {
  std::string test = "auto";
  std::string min_effect_text;
  double alpha = 0.05, min_effect = 0.02;
  int resamples = 10000;
  uint64_t seed = 0x5eed;
  void Add(CLI::App* sub, bool resamples_flag);
  // Fills the comparison options (metrics are the command's).
  Status Apply(ValidationOptions* options) const;
};

// One warning line on stderr when the import counted malformed or
// unsupported records (Trace::diagnostics), which the figures leave out or
// adjust (each kind's description says which). For
// commands whose output has no import section of its own (diagnose,
// suggest, analyze, whatif, diff, view, node-bottleneck); summary and report
// list the diagnostics in their documents.
void WarnImportDiagnostics(const Trace& trace);

// Everything the analysis session needs from a command that reads one trace
// and diagnoses it: input, rules, device.
struct DiagnosisFlags {
  InputFlags in;
  SessionOptions session;
  void Add(CLI::App* sub);
  // The session options with the input filled in.
  SessionOptions Options() const;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_CLI_FLAGS_H_
