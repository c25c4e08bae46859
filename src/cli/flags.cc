#include "src/cli/flags.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "src/analysis/whatif/whatif.h"
#include "src/base/phase_log.h"
#include "src/cli/command.h"
#include "src/importers/common/importer_registry.h"
#include "src/importers/sdk/sdk_processes.h"
#include "src/render/escape.h"
#include "src/render/renderers.h"
#include "src/report/pdf/html_to_pdf.h"

namespace aiprof {

void InputFlags::Add(CLI::App* sub, const char* help, bool several) {
  if (several) {
    sub->add_option_function<std::vector<std::string>>(
           "input",
           [this](const std::vector<std::string>& given) {
             paths = given;
             input.clear();
             for (const std::string& p : given) input += (input.empty() ? "" : " ") + p;
           },
           std::string(help) + "; or several SDK files of one run (traces/aiprof-*), merged by process")
        ->required();
  } else {
    sub->add_option_function<std::string>(
           "input",
           [this](const std::string& given) {
             input = given;
             paths = {given};
           },
           help)
        ->required();
  }
  sub->add_flag("--timing", timing, "Print the time of each phase (import, each analysis, ...) to standard error");
}

StatusOr<std::unique_ptr<Trace>> InputFlags::Import() const {
  if (paths.size() > 1) {
    for (const std::string& p : paths) RETURN_IF_ERROR(AsUsage(CheckSdkFile(p)));
  }
  return ImportTraces(paths);
}

StatusOr<std::unique_ptr<AnalysisSession>> InputFlags::Open(SessionOptions options) const {
  options.input = input;
  if (paths.size() <= 1) return AnalysisSession::Open(std::move(options));
  std::unique_ptr<Trace> trace;
  {
    ScopedPhase timed("import");
    ASSIGN_OR_RETURN(trace, Import());
  }
  return std::make_unique<AnalysisSession>(std::shared_ptr<const Trace>(std::move(trace)), std::move(options));
}

Status AsUsage(Status status) { return status.ok() ? status : UsageStatus(status.message()); }

void OneValuePerFlag(CLI::App* app) {
  for (CLI::Option* o : app->get_options()) {
    if (o->nonpositional() && o->get_allow_extra_args()) o->allow_extra_args(false);
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) OneValuePerFlag(sub);
}

CLI::Option* AddOutputPathFlag(CLI::App* sub, std::string* path, const std::string& help) {
  return sub->add_option("-o,--output", *path, help + " (written atomically)");
}

CLI::Option* AddFormatFlag(CLI::App* sub, std::string* format, const std::string& help) {
  return sub->add_option("--format", *format, help);
}

CLI::Option* AddBeforeFlag(CLI::App* sub, std::string* path, const std::string& help) {
  return sub->add_option("--before", *path, help);
}

CLI::Option* AddAfterFlag(CLI::App* sub, std::string* path, const std::string& help) {
  return sub->add_option("--after", *path, help);
}

CLI::Option* AddTopFlag(CLI::App* sub, std::optional<size_t>* top, const std::string& help) {
  return sub->add_option("--top", *top, help);
}

CLI::Option* AddServiceFlag(CLI::App* sub, std::string* service, const std::string& help) {
  return sub->add_option("--service", *service, help);
}

CLI::Option* AddTokenFileFlag(CLI::App* sub, std::string* path, const std::string& help) {
  return sub->add_option("--token-file", *path, help);
}

CLI::Option* AddFixIdFlag(CLI::App* sub, std::string* fix_id, const std::string& help) {
  return sub->add_option("--fix-id", *fix_id, help);
}

CLI::Option* AddScenarioFlag(CLI::App* sub, std::vector<std::string>* scenarios, const std::string& help) {
  return sub->add_option("--scenario", *scenarios, help);
}

void ScenarioFixFlags::Add(CLI::App* sub, const std::string& help) {
  sub->add_option("--scenario", scenario, help)->excludes("--fix-id")->check([](const std::string& s) {
    return s.empty() ? std::string("a scenario cannot be empty") : std::string();
  });
  sub->add_option("--statistic", statistic,
                  "With --scenario: the steady steps' figure the prediction is checked on (default: mean for a "
                  "scenario with an `every N` clause, else median)")
      ->check(CLI::IsMember({"median", "mean"}));
}

Status ScenarioFixFlags::Resolve(bool* mean) const {
  if (!statistic.empty() && scenario.empty()) return UsageStatus("--statistic needs --scenario");
  *mean = false;
  if (scenario.empty()) return OkStatus();
  StatusOr<bool> judged = JudgeOnMean(scenario, statistic);
  if (!judged.ok()) return AsUsage(judged.status());
  *mean = *judged;
  return OkStatus();
}

CLI::Option* AddCriticalPathFlag(CLI::App* sub, bool* critical_path, const std::string& help) {
  return sub->add_flag("--critical-path", *critical_path, help);
}

CLI::Option* AddPidFlag(CLI::App* sub, int* pid, const std::string& help) {
  // 4194304: the kernel's PID_MAX_LIMIT. (CLI::PositiveNumber's message
  // printed "not in range 0.000000 to" a 309-digit number.)
  return sub->add_option("--pid", *pid, help)->check(CLI::Range(1, 4194304));
}

CLI::Option* AddCpuHzFlag(CLI::App* sub, int* hz, const std::string& help) {
  return sub->add_option("--cpu-hz", *hz, help);
}

CLI::Option* AddTimeoutFlag(CLI::App* sub, std::string* duration, const std::string& help) {
  return sub->add_option("--timeout", *duration, help + " (30s, 500ms, 2m; a bare number is seconds)");
}

void OutputFlags::Add(CLI::App* sub, std::vector<render::OutputFormat> formats, const char* output_help,
                      bool required) {
  offered = std::move(formats);
  std::vector<std::string> names;
  std::string list;
  for (const render::OutputFormat& f : offered) {
    names.emplace_back(f.name);
    list += (list.empty() ? "" : ", ") + std::string(f.name);
  }
  CLI::Option* o = sub->add_option("-o,--output", output, output_help);
  if (required) o->required();
  if (offered.size() > 1) {
    AddFormatFlag(sub, &format, list + " (default: from the -o extension, else " +
                                    std::string(stdout_format.empty() ? offered.front().name : stdout_format) + ")")
        ->check(CLI::IsMember(names));
  }
}

void OutputFlags::AddDocument(CLI::App* sub, DocumentKind kind, const char* output_help,
                              std::vector<render::OutputFormat> extra, bool required) {
  render::Document shape;
  if (!kind.yaml) shape.machine_json = "{}";
  if (kind.tables) shape.csv = render::Table{};
  std::vector<render::OutputFormat> formats = render::DocumentFormats(shape);
  for (render::OutputFormat& f : extra) formats.push_back(std::move(f));
  Add(sub, std::move(formats), output_help, required);
}

Status OutputFlags::WriteDocument(const render::Document& doc, const std::string& format) const {
  if (format == "pdf") return HtmlToPdf(render::RenderHtmlPage(doc), output);
  ASSIGN_OR_RETURN(std::string text, render::RenderDocument(doc, format, {.color = UseColor()}));
  return WriteOutput(output, text);
}

StatusOr<std::string> OutputFlags::Resolve() const {
  return render::ResolveFormat(offered, render::FormatRequest{format, output}, stdout_format);
}

bool OutputFlags::UseColor() const {
  const char* no_color = std::getenv("NO_COLOR");
  return ToStdout() && isatty(STDOUT_FILENO) && !(no_color && *no_color);
}

void AddRuleFlags(CLI::App* sub, SessionOptions* options) {
  sub->add_option("--rules", options->rule_paths,
                  "Extra rule file or folder (repeatable); same id overrides a shipped rule");
  sub->add_flag("--no-builtin-rules", options->no_builtin_rules, "Use only the --rules given");
}

void AddDeviceFlag(CLI::App* sub, AnalyzeOptions* options) {
  sub->add_option("--device", options->device,
                  "Device whose peaks the roofline uses (a name in data/devices.yaml; default: from the trace, or "
                  "cpu-local from `aiprof calibrate` for CPU traces)");
}

void AddWarmupFlag(CLI::App* sub, int* warmup_steps) {
  sub->add_option("--warmup-steps", *warmup_steps,
                  "Traces with steps: leading warm-up steps to leave out of the steady state (default: detect leading "
                  "outlier steps; 0 keeps every step)")
      ->check(CLI::NonNegativeNumber);
}

void AddDevicesFileFlag(CLI::App* sub, AnalyzeOptions* options) {
  sub->add_option("--devices", options->devices_file,
                  "Devices file (default: $AIPROF_DEVICES, then data/devices.yaml, plus ~/.config/aiprof/devices.yaml)");
}

void AddDbFlag(CLI::App* sub, std::string* db, const char* help) { sub->add_option("--db", *db, help); }

void TargetFlags::Add(CLI::App* sub, SuggestOptions* options) {
  sub->add_option("--target", options->target, "latency, throughput or memory")
      ->check(CLI::IsMember({"latency", "throughput", "memory"}));
  sub->add_option("--constraints", constraints, "e.g. \"memory<3GB,precision_loss<1%,effort<=medium\"");
}

Status TargetFlags::Apply(SuggestOptions* options) const {
  StatusOr<std::vector<Constraint>> parsed = ParseConstraints(constraints);
  if (!parsed.ok()) return AsUsage(parsed.status());
  options->constraints = std::move(*parsed);
  return OkStatus();
}

void AddRunInputFlags(CLI::App* sub, RunInputs* in, bool warmup_steps) {
  sub->add_option("--unit", in->unit, "Traces: 'step' (ProfilerStep#N) or the name of the spans that are samples (e.g. request)");
  if (warmup_steps) AddWarmupFlag(sub, &in->warmup_steps);
  sub->add_option("--batch-size", in->batch_size, "Items per sample, for throughput in items/s")->check(CLI::PositiveNumber);
  sub->add_option("--bench", in->bench, "Benchmark files: which hyperfine command or Google Benchmark name");
  sub->add_option("--sample-unit", in->sample_unit, "Benchmark files: unit of bare numbers (ns, us, ms, s)")
      ->check(CLI::IsMember({"ns", "us", "ms", "s"}));
}

namespace {

// "2%" -> 0.02, "0.02" -> 0.02; returns an error text for CLI11 validators ("" when valid).
std::string ParseFraction(const std::string& s, double* out) {
  std::string body = s;
  bool percent = !body.empty() && body.back() == '%';
  if (percent) body.pop_back();
  char* end = nullptr;
  double v = std::strtod(body.c_str(), &end);
  if (body.empty() || end != body.c_str() + body.size() || !std::isfinite(v) || v < 0) {
    return "'" + s + "' is not a non-negative number or percentage";
  }
  *out = percent ? v / 100 : v;
  return "";
}

}  // namespace

void StatsFlags::Add(CLI::App* sub, bool resamples_flag) {
  sub->add_option("--test", test, "welch, mannwhitney, bootstrap or auto")
      ->check(CLI::IsMember({"auto", "welch", "mannwhitney", "bootstrap"}));
  sub->add_option("--alpha", alpha, "Significance level; intervals are at 1 - alpha")->check(CLI::Range(1e-9, 0.5));
  sub->add_option("--min-effect", min_effect_text, "Smallest relative change that counts, e.g. 2% or 0.02")
      ->check([this](const std::string& s) { return ParseFraction(s, &min_effect); });
  if (resamples_flag) sub->add_option("--resamples", resamples, "Bootstrap resamples")->check(CLI::Range(100, 1000000));
  sub->add_option("--seed", seed, "Bootstrap seed (results are reproducible for a given seed)");
}

Status StatsFlags::Apply(ValidationOptions* options) const {
  ASSIGN_OR_RETURN(options->test, ParseTestKind(test));
  options->alpha = alpha;
  options->min_effect = min_effect;
  options->bootstrap_resamples = resamples;
  options->seed = seed;
  return OkStatus();
}

void DiagnosisFlags::Add(CLI::App* sub) {
  in.Add(sub, "Trace file or folder, or .aiprof");
  AddRuleFlags(sub, &session);
  AddDeviceFlag(sub, &session.analyze);
  AddWarmupFlag(sub, &session.analyze.warmup_steps);
}

SessionOptions DiagnosisFlags::Options() const {
  SessionOptions o = session;
  o.input = in.input;
  return o;
}

void WarnImportDiagnostics(const Trace& trace) {
  std::vector<std::pair<std::string, const DiagnosticEntry*>> kinds;
  uint64_t total = 0;
  for (const auto& [kind, e] : trace.diagnostics.entries()) {
    if (IsAdviceDiagnostic(kind)) {
      std::fprintf(stderr, "aiprof: note: %s: %s\n", TerminalSafe(e.first_where).c_str(),
                   TerminalSafe(e.description).c_str());
    }
    if (IsNoteOnlyDiagnostic(kind)) continue;
    kinds.emplace_back(kind, &e);
    total += e.count;
  }
  if (kinds.empty()) return;
  std::stable_sort(kinds.begin(), kinds.end(),
                   [](const auto& a, const auto& b) { return a.second->count > b.second->count; });
  std::string text;
  constexpr size_t kShown = 3;
  for (size_t i = 0; i < kinds.size() && i < kShown; ++i) {
    if (!text.empty()) text += "; ";
    text += kinds[i].first + " " + std::to_string(kinds[i].second->count) + " (first at " +
            kinds[i].second->first_where + ")";
  }
  if (kinds.size() > kShown) text += "; " + std::to_string(kinds.size() - kShown) + " more kinds";
  std::fprintf(stderr,
               "aiprof: warning: the import counted %llu malformed or unsupported records: %s. The figures "
               "leave out or adjust them; `aiprof summary` lists each kind and what was done.\n",
               static_cast<unsigned long long>(total), TerminalSafe(text).c_str());
}

}  // namespace aiprof
