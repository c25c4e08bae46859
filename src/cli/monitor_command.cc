// aiprof monitor (--pid N | -- CMD ARGS...) --alert EXPR ... -o INCIDENTS_DIR:
// watches a live service and writes an incident folder with a deep trace
// when an alert holds (src/monitor/monitor.h; docs/monitor.md).
#include <CLI/CLI.hpp>

#include <cstdio>

#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/cli/duration_flag.h"
#include "src/monitor/monitor.h"
#include "src/monitor/monitor_metrics.h"
#include "src/report/page/report_data.h"
#include "src/session/session.h"

namespace aiprof {
namespace {

class MonitorCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand(
        "monitor", "Watch a live service through its SDK (--pid N or -- CMD ARGS...): rolling latency, throughput, "
                   "step, CPU and RSS statistics; when an --alert holds, write its flight recorder, a deep trace and "
                   "the diagnosis into an incident folder");
    AddPidFlag(sub, &pid_, "Watch this running process (it must use the aiprof SDK)");
    sub->add_option("--alert", alerts_, "Alert expression, e.g. \"p99_latency > 2.0s\", \"throughput < 50/s\", "
                                        "\"step_time_p99 > 1.2 * baseline\" (repeatable; docs/monitor.md)");
    sub->add_option("--window", window_, "Rolling window of the statistics (default 60s)");
    sub->add_option("--interval", interval_, "How often the window is read and the alerts evaluated (default 1s)");
    sub->add_option("--on-alert", on_alert_, "trace (flight recorder + deep trace + diagnosis), dump (flight "
                                             "recorder + its diagnosis) or none (alert.json only); default trace")
        ->check(CLI::IsMember({"trace", "dump", "none"}));
    sub->add_option("--trace-duration", trace_duration_, "Length of the deep trace after an alert (default 30s)");
    sub->add_option("--cooldown", cooldown_, "No new incident for this long after one ends (default 10m)");
    sub->add_option("--max-incidents", max_incidents_,
                    "Stop writing incidents after this many (default 10; 0: no limit)")
        ->check(CLI::Range(0, 1000000));
    sub->add_option("--keep-incidents", keep_incidents_,
                    "INCIDENTS_DIR keeps the newest this many incident folders, older ones are removed (default 100; "
                    "0: no limit)")
        ->check(CLI::Range(0, 1000000));
    sub->add_option("--keep-incident-mb", keep_incident_mb_,
                    "... holding at most this many MiB together; the newest is kept whatever its size (default 2048; "
                    "0: no limit)")
        ->check(CLI::Range(0, 1 << 30));
    sub->add_option("--metrics-listen", metrics_listen_, "Serve /metrics (Prometheus) and POST /alert (Alertmanager "
                                                         "webhook) on [HOST:]PORT (host default 127.0.0.1)");
    sub->add_option("--webhook-token-file", webhook_token_file_, "POST /alert needs \"Authorization: Bearer <this "
                    "file's token>\" (required to listen beyond loopback)");
    sub->add_option("--latency-buckets", latency_buckets_, "Upper bounds in seconds of the /metrics latency histogram "
                    "(default 0.0005,0.001,0.0025,...,10,30)");
    sub->add_flag("--once", once_, "Exit after the first incident (status 3) or after --timeout without one (0)");
    AddTimeoutFlag(sub, &timeout_, "Stop after this long (with --once: status 0 when no incident)");
    AddServiceFlag(sub, &service_, "Service name: /metrics label, and the stored baseline that \"* baseline\" reads");
    sub->add_option("--db", db_, "Baseline database (default: the one aiprof set-baseline uses)");
    AddCpuHzFlag(sub, &cpu_hz_, "Host sampling frequency of the deep trace (default 999)")->check(CLI::Range(1, 20000));
    sub->add_option("--attach-timeout", attach_timeout_, "How long the process's SDK gets to attach (default 10s)");
    AddOutputPathFlag(sub, &out_dir_, "INCIDENTS_DIR: one folder per incident is written here")->required();
    sub->add_option("command", command_, "The command to run and watch, after --");
    return sub;
  }

  bool CalibratesOnFirstNeed() const override { return false; }  // a server: never measures the machine

  Status Run() override {
    MonitorOptions o;
    o.pid = pid_;
    o.command = command_;
    o.alerts = alerts_;
    RETURN_IF_ERROR(Duration("--window", window_, &o.window_ns));
    RETURN_IF_ERROR(Duration("--interval", interval_, &o.interval_ns));
    RETURN_IF_ERROR(Duration("--trace-duration", trace_duration_, &o.trace_duration_ns));
    RETURN_IF_ERROR(Duration("--cooldown", cooldown_, &o.cooldown_ns));
    RETURN_IF_ERROR(Duration("--attach-timeout", attach_timeout_, &o.attach_timeout_ns));
    if (!timeout_.empty()) RETURN_IF_ERROR(Duration("--timeout", timeout_, &o.timeout_ns));
    if (o.window_ns == 0 || o.interval_ns == 0 || o.trace_duration_ns == 0) {
      return UsageStatus("aiprof monitor: --window, --interval and --trace-duration must be longer than 0");
    }
    o.on_alert = on_alert_ == "dump" ? OnAlert::kDump : on_alert_ == "none" ? OnAlert::kNone : OnAlert::kTrace;
    o.max_incidents = max_incidents_;
    o.keep_incidents = keep_incidents_;
    o.keep_incident_bytes = static_cast<uint64_t>(keep_incident_mb_) << 20;
    o.metrics_listen = metrics_listen_;
    o.webhook_token_file = webhook_token_file_;
    if (!latency_buckets_.empty()) {
      ASSIGN_OR_RETURN(o.latency_buckets_s, ParseLatencyBuckets(latency_buckets_));
    }
    o.once = once_;
    o.out_dir = out_dir_;
    o.service = service_;
    o.db = db_;
    o.cpu_hz = cpu_hz_;
    DiagnoseFn diagnose = [](AnalysisSession& session, const std::string& shown_as, const IncidentContext& context,
                             const std::string& md, const std::string& html) -> Status {
      ReportInputs inputs;
      inputs.session = &session;
      ASSIGN_OR_RETURN(ReportData data, BuildReport(inputs));
      data.source = shown_as;  // not the working folder's path (renamed once complete)
      data.context_title = "Incident";
      data.context = context;
      RETURN_IF_ERROR(WriteOutput(md, ReportToMarkdown(data)));
      return WriteOutput(html, ReportToHtml(data));
    };
    ASSIGN_OR_RETURN(exit_code_, RunMonitor(o, diagnose));
    return OkStatus();
  }

  int SuccessExitCode() const override { return exit_code_; }

 private:
  static Status Duration(const char* flag, const std::string& text, int64_t* out) {
    const int64_t ns = ParseDuration(text);
    if (ns < 0) {
      return UsageStatus(std::string("aiprof monitor: ") + flag + " " + text + " is not a duration (60s, 500ms, 2m)");
    }
    *out = ns;
    return OkStatus();
  }

  int pid_ = 0;
  std::vector<std::string> alerts_, command_;
  std::string window_ = "60s", interval_ = "1s", on_alert_ = "trace", trace_duration_ = "30s", cooldown_ = "10m";
  std::string metrics_listen_, webhook_token_file_, latency_buckets_, timeout_, service_, db_, out_dir_, attach_timeout_ = "10s";
  int max_incidents_ = 10;
  int keep_incidents_ = 100;
  int64_t keep_incident_mb_ = 2048;
  int cpu_hz_ = 999;
  bool once_ = false;
  int exit_code_ = kExitOk;
};

}  // namespace

std::unique_ptr<Command> NewMonitorCommand() { return std::make_unique<MonitorCommand>(); }

}  // namespace aiprof
