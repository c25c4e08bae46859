// aiprof set-baseline and aiprof history: baselines and kept validations in
// the SQLite store (docs/validation.md, "Database").
#include <CLI/CLI.hpp>
#include <cstdio>

#include "src/analysis/summary/summary_analysis.h"
#include "src/analysis/validation/baseline_store.h"
#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/report/summary/summary_report.h"
#include "src/report/validation/validation_report.h"

namespace aiprof {


namespace {

StatusOr<std::unique_ptr<BaselineStore>> OpenStoreAt(const std::string& db) {
  std::string path = db;
  if (path.empty()) {
    ASSIGN_OR_RETURN(path, DefaultBaselineDbPath());
  }
  return BaselineStore::Open(path);
}

class SetBaselineCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("set-baseline", "Store a run's samples and trace summary as a service's baseline");
    AddServiceFlag(sub, &service_, "Service name")->required();
    sub->add_option("--trace", input_, "Trace or benchmark result file")->required();
    AddDbFlag(sub, &db_);
    AddRunInputFlags(sub, &run_inputs_, /*warmup_steps=*/false);
    return sub;
  }

  Status Run() override {
    if (service_.empty()) return ErrStatus("--service must not be empty");
    ASSIGN_OR_RETURN(LoadedRun run, LoadRun(input_, run_inputs_));
    const RunSamples& samples = run.samples;
    // The trace's summary as `aiprof summary --format json` writes it (its
    // result figures too, AddResultFigures: op_coverage was missing), read
    // through a session over the loaded trace (no second import).
    std::string summary = "{}";
    if (run.trace) {
      std::unique_ptr<AnalysisSession> session = AnalysisSession::ForTrace(*run.trace);
      SummaryReportOptions report;
      AddResultFigures(session->results(), &report);
      summary = SummaryToJson(*run.trace, session->results().Get(kSummary), report);
    }
    ASSIGN_OR_RETURN(std::unique_ptr<BaselineStore> store, OpenStoreAt(db_));
    ASSIGN_OR_RETURN(int64_t id, store->SaveBaseline(service_, samples, summary));
    std::string line = "stored baseline #" + std::to_string(id) + " for service " + service_ + ": " +
                       std::to_string(samples.latency_ns.size()) + " samples (" + samples.unit + ") from " + input_ +
                       " in " + store->path() + "\n";
    return WriteOutput("", line);
  }

 private:
  std::string service_, input_, db_;
  RunInputs run_inputs_;
};

class HistoryCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("history", "List the validations kept for a service, newest first");
    AddServiceFlag(sub, &service_, "Service name")->required();
    AddDbFlag(sub, &db_);
    sub->add_option("--limit", limit_, "Most recent N (0 = all)");
    out_.Add(sub, {render::TextFormat(), render::JsonFormat()}, "Write here (atomically) instead of standard output");
    return sub;
  }

  Status Run() override {
    ASSIGN_OR_RETURN(std::unique_ptr<BaselineStore> store, OpenStoreAt(db_));
    ASSIGN_OR_RETURN(std::vector<ValidationRecord> records, store->History(service_, limit_));
    ASSIGN_OR_RETURN(std::string format, out_.Resolve());
    return WriteOutput(out_.output, format == "json" ? HistoryToJson(records) : HistoryToText(records));
  }

 private:
  std::string service_, db_;
  OutputFlags out_;
  size_t limit_ = 0;
};

}  // namespace

std::unique_ptr<Command> NewSetBaselineCommand() { return std::make_unique<SetBaselineCommand>(); }
std::unique_ptr<Command> NewHistoryCommand() { return std::make_unique<HistoryCommand>(); }

}  // namespace aiprof
