#include <CLI/CLI.hpp>

#include <cstdio>

#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/render/escape.h"
#include "src/serve/push.h"

namespace aiprof {
namespace {

// aiprof push RUN --server URL [--token-file F] [--service S] [--tag T]
// [--wait]: uploads one trace to an `aiprof serve` instance (src/serve/push.h)
// and prints the run's id and page.
class PushCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("push", "Upload a trace to an aiprof serve instance (its POST /api/runs; "
                                                "docs/serve.md)");
    sub->add_option("run", o_.file, "Trace file to upload (any format the server imports)")->required();
    sub->add_option("--server", o_.server, "The server: http://HOST:PORT[/PREFIX]")->required();
    AddTokenFileFlag(sub, &token_file_, "File holding the bearer token: \"TOKEN\" or \"upload TOKEN\" (the server's "
                                        "--token-file format); needed when the server has tokens");
    AddServiceFlag(sub, &o_.service, "Service the run belongs to (the runs list groups by it)");
    sub->add_option("--tag", o_.tag, "Tag of the run, e.g. nightly or a commit (searchable)");
    sub->add_flag("--wait", o_.wait, "Wait until the server has converted the run; exit 1 if its import failed");
    return sub;
  }

  Status Run() override {
    RETURN_IF_ERROR(CheckPushServer(o_.server));  // a bad command line (2) before the token file is read
    if (!token_file_.empty()) {
      ASSIGN_OR_RETURN(o_.token, ReadPushToken(token_file_));
    }
    ASSIGN_OR_RETURN(PushResult r, PushRun(o_));
    // The server's answer is not trusted with the terminal.
    std::printf("run %lld (%s): %s %s\n", static_cast<long long>(r.id), r.state.c_str(), TerminalSafe(r.url).c_str(),
                TerminalSafe(r.path).c_str());
    return OkStatus();
  }

 private:
  PushOptions o_;
  std::string token_file_;
};

}  // namespace

std::unique_ptr<Command> NewPushCommand() { return std::make_unique<PushCommand>(); }

}  // namespace aiprof
