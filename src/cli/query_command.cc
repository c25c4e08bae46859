#include <CLI/CLI.hpp>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "src/cli/command.h"
#include "src/cli/duration_flag.h"
#include "src/cli/flags.h"
#include "src/importers/common/importer_registry.h"
#include "src/query/query_engine.h"
#include "src/query/query_format.h"

namespace aiprof {
namespace {

// The engine a Ctrl-C interrupts in the interactive shell.
QueryEngine* g_shell_engine = nullptr;

void InterruptQuery(int) {
  if (g_shell_engine) g_shell_engine->Interrupt();
}

class QueryCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand(
        "query", "SQL over a trace's tables (slices, tracks, flows, counters, ...) and standard views (docs/query.md)");
    in_.Add(sub, "Trace file, folder or .aiprof", /*several=*/false);
    sub->add_option("sql", sql_, "SQL to run (else --file, else standard input; an interactive shell on a terminal)");
    sub->add_option("--file", file_, "Read the SQL from this file");
    sub->add_flag("--schema", schema_, "Print the tables, their columns and the standard views");
    sub->add_option("--max-rows", max_rows_,
                    "Rows to print at most (0 = all; default 10000 for text, 1000000 for csv and json)")
        ->check(CLI::Range(size_t{0}, size_t{1} << 40));
    AddTimeoutFlag(sub, &timeout_, "Stop a query after this long (0 = never; default " +
                                        std::to_string(static_cast<int>(kDefaultQueryTimeoutS)) + "s)");
    sub->add_option("--max-memory", max_memory_mib_, "SQLite memory limit of a query in MiB (0 = none)")
        ->default_val(kDefaultQueryMaxMemoryBytes >> 20)
        ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
    sub->add_option("--max-result", max_result_mib_,
                    "Memory the result's rows may hold in MiB, outside SQLite's heap (0 = none)")
        ->default_val(kDefaultQueryMaxResultBytes >> 20)
        ->check(CLI::Range(size_t{0}, size_t{1} << 30));
    out_.Add(sub, {render::TextFormat(), render::CsvFormat(), render::JsonFormat()},
             "Write here (atomically) instead of standard output");
    return sub;
  }

  Status Run() override {
    ASSIGN_OR_RETURN(format_, out_.Resolve());
    if (!sql_.empty() && !file_.empty()) return UsageStatus("aiprof query: give the SQL or --file, not both");
    limits_.timeout_s = kDefaultQueryTimeoutS;
    if (!timeout_.empty()) {  // before the (possibly long) import
      const int64_t ns = ParseDuration(timeout_);
      if (ns < 0) return UsageStatus("aiprof query: --timeout " + timeout_ + " is not a duration (30s, 500ms, 2m)");
      limits_.timeout_s = static_cast<double>(ns) / 1e9;
    }
    std::string label = "(command line)";
    if (!file_.empty()) {  // read before the (possibly long) import
      std::ifstream in(file_, std::ios::binary);
      if (!in) return ErrStatus(file_ + ": cannot read the SQL file");
      std::stringstream text;
      text << in.rdbuf();
      sql_ = text.str();
      label = file_;
    }
    ASSIGN_OR_RETURN(std::unique_ptr<Trace> trace, ImportTrace(in_.input));
    ASSIGN_OR_RETURN(std::unique_ptr<QueryEngine> engine, QueryEngine::Open(*trace));
    if (schema_) return WriteOutput(out_.output, engine->Schema());
    limits_.max_rows = max_rows_ ? *max_rows_ : format_ == "text" ? kDefaultQueryMaxRows : 1000000;
    limits_.max_memory_bytes = static_cast<int64_t>(max_memory_mib_) << 20;
    limits_.max_result_bytes = max_result_mib_ << 20;
    if (file_.empty() && sql_.empty()) {
      if (isatty(STDIN_FILENO)) return Shell(engine.get());
      std::stringstream text;
      text << std::cin.rdbuf();
      sql_ = text.str();
      label = "(standard input)";
    }
    StatusOr<QueryResult> executed = engine->Execute(sql_, limits_, label);
    if (!executed.ok()) return ErrStatus(WithFlag(executed.status().message()));
    QueryResult result = std::move(*executed);
    StatusOr<std::string> rendered = Render(result);
    if (!rendered.ok()) return ErrStatus(WithFlag("query " + label + ": " + rendered.status().message()));
    RETURN_IF_ERROR(WriteOutput(out_.output, *rendered));
    if (result.truncated && format_ != "text") {  // text says it in its last line
      std::fprintf(stderr, "aiprof query: %zu rows written; more matched (--max-rows %zu)\n", result.rows.size(),
                   result.max_rows);
    }
    return OkStatus();
  }

 private:
  // The engine names no flag (serve and mcp set their own limits): the
  // error of a limit this command sets says which flag raises it.
  static std::string WithFlag(const std::string& message) {
    if (message.find("time limit") != std::string::npos) return message + "; --timeout raises it";
    if (message.find("its memory limit") != std::string::npos) return message + "; --max-memory raises it";
    if (message.find("size limit") != std::string::npos) return message + "; --max-result raises it";
    return message;
  }

  // The text table is held to --max-result too: its columns are padded to
  // their widest value, so its size can be many times the rows' (1,990
  // columns of NULL under one wide row, 10,000 rows: 0.8 GB held, 4.8 GB
  // of text, 9.1 GB peak RSS before this limit).
  StatusOr<std::string> Render(const QueryResult& result) const {
    if (format_ == "json") return QueryResultToJson(result);
    if (format_ == "csv") return QueryResultToCsv(result);
    return QueryResultToText(result, limits_.max_result_bytes);
  }

  // Reads statements ending in ';' from the terminal; .schema, .help, .quit.
  Status Shell(QueryEngine* engine) {
    g_shell_engine = engine;
    struct sigaction action = {};
    action.sa_handler = InterruptQuery;
    struct sigaction previous = {};
    sigaction(SIGINT, &action, &previous);
    std::fprintf(stderr, "aiprof query shell on %s: SQL ending in ';', .schema, .help, .quit\n", in_.input.c_str());
    std::string pending, line;
    while (true) {
      std::fputs(pending.empty() ? "aiprof> " : "   ...> ", stderr);
      std::fflush(stderr);
      if (!std::getline(std::cin, line)) break;
      if (pending.empty() && (line == ".quit" || line == ".exit")) break;
      if (pending.empty() && line == ".schema") {
        std::fputs(engine->Schema().c_str(), stdout);
        continue;
      }
      if (pending.empty() && line == ".help") {
        std::fputs("End SQL with ';'. .schema lists tables and views; .quit leaves. Ctrl-C stops a query.\n", stdout);
        continue;
      }
      pending += line + "\n";
      if (line.find(';') == std::string::npos) continue;
      auto result = engine->Execute(pending, limits_, "(shell)");
      pending.clear();
      if (!result.ok()) {
        std::fprintf(stderr, "%s\n", result.status().message().c_str());
      } else if (StatusOr<std::string> rendered = Render(*result); rendered.ok()) {
        std::fputs(rendered->c_str(), stdout);
      } else {
        std::fprintf(stderr, "query (shell): %s\n", WithFlag(rendered.status().message()).c_str());
      }
      std::fflush(stdout);
    }
    sigaction(SIGINT, &previous, nullptr);
    g_shell_engine = nullptr;
    return OkStatus();
  }

  InputFlags in_;
  OutputFlags out_;
  std::string sql_, file_;
  std::string format_ = "text";  // out_.Resolve()
  std::string timeout_;
  bool schema_ = false;
  std::optional<size_t> max_rows_;
  int64_t max_memory_mib_ = kDefaultQueryMaxMemoryBytes >> 20;
  size_t max_result_mib_ = kDefaultQueryMaxResultBytes >> 20;
  QueryLimits limits_;
};

}  // namespace

std::unique_ptr<Command> NewQueryCommand() { return std::make_unique<QueryCommand>(); }

}  // namespace aiprof
