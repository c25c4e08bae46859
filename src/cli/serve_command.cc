#include <CLI/CLI.hpp>
#include <pthread.h>

#include <csignal>
#include <cstdio>

#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/serve/serve.h"

namespace aiprof {
namespace {

class ServeCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand(
        "serve", "The team's profiling server: every run under a folder, a run's diagnosis, two runs compared, "
                 "SQL, and a JSON API (docs/serve.md)");
    sub->add_option("--logdir", o_.logdir, "Folder of runs (any trace aiprof imports; new files are picked up)")
        ->required();
    AddDbFlag(sub, &o_.db, "Index database (SQLite, WAL; default LOGDIR/.aiprof-serve/index.db; native files in "
                           "cache/ beside it)");
    sub->add_option("--listen", o_.listen, "HOST:PORT or PORT (default 127.0.0.1:8080; port 0 picks one)");
    AddTokenFileFlag(sub, &o_.token_file, "Bearer tokens, one \"read TOKEN\" or \"upload TOKEN\" per line "
                                       "(required to listen beyond loopback)");
    sub->add_option("--baselines", o_.baselines_db, "Baseline database whose validations /history shows (default "
                                                    "$XDG_DATA_HOME/aiprof/baselines.db; read, never created)");
    sub->add_option("--index-threads", o_.index_threads, "Runs converted at once (default 1)")
        ->check(CLI::Range(1, 64));
    sub->add_option("--request-threads", o_.request_threads, "Requests handled at once (default 2)")
        ->check(CLI::Range(1, 256));
    sub->add_option("--query-threads", o_.query_threads, "SQL queries run at once, on workers of their own (default 2)")
        ->check(CLI::Range(1, 64));
    sub->add_option("--query-timeout", o_.query_timeout_s,
                    "Seconds a query may run (default 10; at most 240: the HTTP layer answers within 300 s)")
        ->check(CLI::Range(0.1, 240.0));
    sub->add_option("--scan-interval", scan_s_, "Seconds between scans of the logdir (0 = at start and on "
                                                "POST /api/rescan only; default 10)")
        ->check(CLI::Range(0, 86400));
    sub->add_option("--max-upload-mb", upload_mib_, "Largest upload (POST /api/runs) in MiB (default 64)")
        ->check(CLI::Range(1, 65536));
    sub->add_option("--max-convert-mb", convert_mib_,
                    "Decompressed input one conversion may read, in MiB (default 2048; 0 = no limit)")
        ->check(CLI::Range(0, 1 << 22));
    sub->add_option("--max-convert-events", o_.max_convert_events,
                    "Events one conversion may build (default 10000000, about 2 GiB of memory; 0 = no limit)");
    sub->add_option("--max-convert-seconds", o_.max_convert_seconds,
                    "Seconds one conversion may take (default 300; 0 = no limit)")
        ->check(CLI::Range(0.0, 86400.0));
    sub->add_option("--max-storage-mb", storage_mib_,
                    "Uploads and cache together, in MiB; past it uploads are refused with 507 (default 10240; "
                    "0 = no limit)")
        ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
    return sub;
  }

  bool CalibratesOnFirstNeed() const override { return false; }  // a server: never measures the machine

  Status Run() override {
    o_.scan_interval_ms = static_cast<int64_t>(scan_s_) * 1000;
    o_.max_upload_bytes = static_cast<size_t>(upload_mib_) << 20;
    o_.max_convert_bytes = static_cast<uint64_t>(convert_mib_) << 20;
    o_.max_storage_bytes = static_cast<uint64_t>(storage_mib_) << 20;
    // SIGINT/SIGTERM are blocked in every thread the server starts and
    // taken here by sigwait, so a stop lets the threads finish cleanly.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    ASSIGN_OR_RETURN(std::unique_ptr<ServeServer> server, ServeServer::Start(o_));
    const std::string host = server->host().find(':') != std::string::npos ? "[" + server->host() + "]" : server->host();
    std::fprintf(stderr, "aiprof serve: http://%s:%d/ (index %s; %s)\n", host.c_str(), server->port(),
                 server->db_path().c_str(),
                 o_.token_file.empty() ? "no tokens: loopback only" : "bearer tokens required");
    std::fflush(stderr);
    int sig = 0;
    sigwait(&set, &sig);
    std::fprintf(stderr, "aiprof serve: stopping (again to stop at once)\n");
    // A second signal ends the process (the default action, on this thread:
    // the others keep them blocked) if the clean stop takes too long.
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    return OkStatus();
  }

 private:
  ServeOptions o_;
  int scan_s_ = 10;
  int upload_mib_ = 64;
  int convert_mib_ = static_cast<int>(kDefaultMaxConvertBytes >> 20);
  int64_t storage_mib_ = static_cast<int64_t>(kDefaultMaxStorageBytes >> 20);
};

}  // namespace

std::unique_ptr<Command> NewServeCommand() { return std::make_unique<ServeCommand>(); }

}  // namespace aiprof
