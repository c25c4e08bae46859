#include "src/monitor/monitor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "src/analysis/summary/summary_analysis.h"
#include "src/analysis/validation/baseline_store.h"
#include "src/base/atomic_file.h"
#include "src/base/child_process.h"
#include "src/base/clock.h"
#include "src/base/http_server.h"
#include "src/capture/capture.h"
#include "src/importers/common/importer_registry.h"
#include "src/model/native_file.h"
#include "src/model/trace_merge.h"
#include "src/monitor/alert.h"
#include "src/monitor/incident.h"
#include "src/monitor/live_client.h"
#include "src/monitor/metrics_server.h"
#include "src/monitor/monitor_metrics.h"
#include "src/monitor/proc_stats.h"
#include "src/monitor/slowest_request.h"
#include "src/render/escape.h"
#include "src/render/tree.h"
#include "src/report/page/report_data.h"
#include "src/session/session.h"

namespace aiprof {
namespace {

static_assert(kMaxCounterNameBytes + 1 == sizeof(live::CounterName::name), "alert.h's limit is the channel's");

// How long a flush of the flight recorder may take before it is given up.
constexpr int64_t kFlushTimeoutNs = 20'000'000'000;
// How long starting the framework layer may take (after a flush answered).
constexpr int64_t kFrameworkOnTimeoutNs = 10'000'000'000;
// After the watched process exits, how long its SDK's exit file is waited for.
constexpr int64_t kExitFileWaitNs = 3'000'000'000;

std::string Seconds(int64_t ns) { return DurationText(ns); }

// `text` (a status, a message) with each path into an incident's working
// folder made the file's name within the folder, which the rename to its
// published name keeps true.
std::string WithinIncident(const std::string& work_dir, std::string text) {
  const std::string prefix = work_dir + "/";
  if (work_dir.empty()) return text;
  for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at))
    text.erase(at, prefix.size());
  return text;
}

// A trace written into the working folder names the files it was read from
// in its metadata and diagnostics: made names within the folder.
void NameFilesWithinIncident(const std::string& work_dir, Trace* trace) {
  for (auto& [key, value] : trace->metadata) value = WithinIncident(work_dir, std::move(value));
  for (auto& [kind, entry] : trace->diagnostics.mutable_entries())
    entry.first_where = WithinIncident(work_dir, std::move(entry.first_where));
}

bool MakeDirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      const std::string part = path.substr(0, i);
      if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
  }
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// How the watched process ended, as far as the monitor can know.
struct TargetEnd {
  bool known = false;    // from waitpid, a zombie's exit code, or the SDK's signal note
  int exit_status = -1;  // when it exited
  int signal = 0;        // when a signal killed it
  bool core_dumped = false;
  std::string source;  // where the monitor learnt it
  std::string text;    // "exit status 1", "killed by signal 9 (SIGKILL)"
};

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// From a wait status (waitpid, or /proc's exit_code of a zombie).
TargetEnd EndFromWaitStatus(int status, const std::string& source) {
  TargetEnd e;
  e.source = source;
  if (WIFEXITED(status)) {
    e.known = true;
    e.exit_status = WEXITSTATUS(status);
    e.text = "exit status " + std::to_string(e.exit_status);
  } else if (WIFSIGNALED(status)) {
    e.known = true;
    e.signal = WTERMSIG(status);
    e.core_dumped = WCOREDUMP(status);
    e.text = "killed by signal " + std::to_string(e.signal) + " (" + SignalName(e.signal) + ")" +
             (e.core_dumped ? ", core dumped" : "");
  } else {
    e.text = "ended";
  }
  return e;
}

// A zombie's wait status: /proc/<pid>/stat field 52 (exit_code, Linux 3.5+).
bool ZombieWaitStatus(int pid, int* status) {
  std::string line;
  std::getline(std::ifstream("/proc/" + std::to_string(pid) + "/stat"), line);
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream in(line.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; in >> f;) fields.push_back(f);
  // After ')': state is field 3, so field 52 is index 49.
  if (fields.size() < 50 || (fields[0] != "Z" && fields[0] != "X")) return false;
  char* end = nullptr;
  const long v = std::strtol(fields[49].c_str(), &end, 10);
  if (*end != '\0') return false;
  *status = static_cast<int>(v);
  return true;
}

bool CopyFile(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  if (!in) return false;
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return WriteFileAtomically(to, data).ok();
}

int64_t FileMtimeNs(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return -1;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// SIGINT/SIGTERM/SIGHUP: blocked in every thread (so the capture's own
// SIGINT handler never sees them) and taken by one sigwait thread. SIGHUP
// (the ssh session or tmux that started the monitor went away, or
// `ExecReload=kill -HUP`) is a stop like SIGTERM: there are no logs to
// reopen, and dying on it left the service it started, the live segment
// and a partial incident behind.
std::atomic<int> g_stop_signals{0};
// Stdout's reader went away (EPIPE): the monitor stops as on SIGTERM.
std::atomic<bool> g_stdout_gone{false};
// The service the monitor started (0: none), stopped by a second signal's
// leaving at once too.
std::atomic<pid_t> g_child{0};

void StartSignalThread(sigset_t* set) {
  sigemptyset(set);
  sigaddset(set, SIGINT);
  sigaddset(set, SIGTERM);
  sigaddset(set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, set, nullptr);
  // SIGPIPE (stdout a pipe whose reader left: `| tee`, a log shipper that
  // restarts) would kill the monitor outright at its next incident line: a
  // handler that does nothing turns it into EPIPE from the write. A handler,
  // not SIG_IGN, so that the processes the monitor starts (the service, the
  // capture's tools) get the default back at exec.
  struct sigaction pipe_action = {};
  pipe_action.sa_handler = [](int) {};
  sigemptyset(&pipe_action.sa_mask);
  sigaction(SIGPIPE, &pipe_action, nullptr);
  std::thread([s = *set] {
    for (;;) {
      int sig = 0;
      if (sigwait(&s, &sig) == 0) {
        if (g_stop_signals.fetch_add(1) >= 1) {
          std::fprintf(stderr, "aiprof monitor: second %s: leaving now\n", strsignal(sig));
          if (const pid_t child = g_child.load(); child > 0) kill(child, SIGTERM);
          _exit(130);
        }
        std::fprintf(stderr, "aiprof monitor: %s: finishing what is being written, then stopping\n", strsignal(sig));
      }
    }
  }).detach();
}

// The monitor process itself for /metrics (process_*).
SelfStats ReadSelfStats() {
  SelfStats s;
  std::string line;
  std::getline(std::ifstream("/proc/self/stat"), line);
  uint64_t ticks = 0;
  if (ParseStatCpuTicks(line, &ticks)) s.cpu_seconds = static_cast<double>(ticks) / sysconf(_SC_CLK_TCK);
  std::ifstream status("/proc/self/status");
  s.rss_bytes = ParseStatusRssBytes(std::string(std::istreambuf_iterator<char>(status), {}));
  std::error_code ec;
  double fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++fds;
  if (!ec) s.open_fds = fds;
  return s;
}

struct Incident {
  int number = 0;
  std::string dir;                        // where it is written: a hidden working folder, renamed when complete
  std::string name;                       // its final name in INCIDENTS_DIR: <UTC time>-<n>
  std::string error;                      // why the folder could not be written ("": it could)
  std::vector<IncidentTrigger> triggers;  // [0] set it off; at most kMaxIncidentTriggers (+ the service's end)
  uint64_t triggers_dropped = 0;          // past kMaxIncidentTriggers: counted, not recorded
  WindowStats window_at_end;
  std::string flight_recorder_status = "not requested", trace_status = "not requested",
              diagnosis_status = "not requested";
  std::string sdk_mode;
  std::string framework_status = "not available (the process registered no framework layer)";
  size_t framework_slices = 0;
  std::string capture_summary;
  int64_t trace_start_ns = 0, trace_end_ns = 0;
  std::vector<ReportHostFunction> host_functions;
  uint64_t host_samples = 0;
  std::vector<std::string> files;
  std::string window_requests_status;  // set when the service ended
  SlowestRequest slowest;              // in the deep trace
  // Published by the worker (alert.json, retention, the rename), off the
  // loop: alert.json's fsync took 1.9 and 16 s under another program's disk
  // writes, and the loop stood still that long (the live ring overflowed,
  // no alert was evaluated). `closed`: the worker took its triggers for
  // alert.json, so a later one is not recorded in it (as in the cooldown);
  // `publish_on_main`: the service ended while it was written, and the loop
  // adds that end and publishes it (both under `mu`).
  bool closed = false, publish_on_main = false;
  bool published = false;  // by the worker: `where` holds its folder or NOT WRITTEN
  std::string where;
  std::atomic<bool> done{false};
  std::mutex mu;  // triggers, closed, publish_on_main (the loop appends while the worker runs)
};

class Monitor {
 public:
  Monitor(const MonitorOptions& o, const DiagnoseFn& diagnose) : o_(o), diagnose_(diagnose) {}

  // The service is stopped on every way out of here (StopChild is a no-op
  // once it is reaped), errors included.
  StatusOr<int> Run() {
    RETURN_IF_ERROR(Prepare());
    sigset_t signals;
    StartSignalThread(&signals);
    // Bound before the command starts: a taken port costs nothing and
    // leaves nothing running.
    if (!o_.metrics_listen.empty()) RETURN_IF_ERROR(StartServer());
    RETURN_IF_ERROR(StartTarget(signals));
    StatusOr<int> result = Watch();
    server_.reset();
    client_.reset();
    StopChild();
    // A start that failed (the SDK never attached) leaves no empty
    // INCIDENTS_DIR it created behind (rmdir removes only empty folders).
    if (!result.ok() && created_out_dir_) {
      rmdir((o_.out_dir + "/.service").c_str());
      rmdir(o_.out_dir.c_str());
    }
    return result;
  }

 private:
  // Attaches to the started (or given) process and runs until the end.
  StatusOr<int> Watch() {
    ASSIGN_OR_RETURN(client_, LiveClient::Create(pid_));
    RETURN_IF_ERROR(client_->WaitAttached(o_.attach_timeout_ns, [this] { return TargetAlive(); }));
    start_ns_ = MonotonicNs();
    window_ = std::make_unique<RollingWindow>(o_.window_ns, start_ns_);
    proc_ = std::make_unique<ProcStats>(pid_);
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      service_label_ = o_.service.empty() ? ProcessName() : o_.service;
      attached_ = true;
    }
    // What earlier monitors left: within the limits before the first incident
    // (after every start-up check: a monitor that could not start removes nothing).
    PruneResult kept = Prune(0, 0);
    incident_folders_ = kept.kept;
    incident_folder_bytes_ = kept.kept_bytes;
    if (const std::vector<std::string> gone = PruneServiceFiles(o_.out_dir + "/.service", kKeepServiceFiles);
        !gone.empty()) {
      service_files_pruned_ += gone.size();
      std::fprintf(stderr,
                   "aiprof monitor: removed %zu exit file(s) of earlier service runs from %s/.service (the newest %d "
                   "are kept): %s\n",
                   gone.size(), TerminalSafe(o_.out_dir).c_str(), kKeepServiceFiles, TerminalSafe(Names(gone)).c_str());
    }
    std::fprintf(
        stderr,
        "aiprof monitor: watching pid %d (SDK in %s mode); %zu alert(s), window %s, every %s; incidents in %s\n", pid_,
        TerminalSafe(client_->sdk_mode()).c_str(), rules_.size(), Seconds(o_.window_ns).c_str(),
        Seconds(o_.interval_ns).c_str(), TerminalSafe(o_.out_dir).c_str());
    Loop();
    server_.reset();
    FinishIncident(/*wait=*/true);
    // 4: the service died (a signal or a non-zero status; with --pid any
    // end) and its incident was written; 0: stopped on request (SIGTERM
    // from systemd or Kubernetes, SIGINT, SIGHUP: a normal stop of an
    // agent, whose incidents were said on stdout as they came); else 3:
    // incidents; 0: none.
    if (died_during_incident_ && incidents_ > 0) return 4;
    // 1: incidents that could not be written (disk full, read-only), and
    // none that could: the monitor did not do its job.
    if (incident_failures_ > 0 && (incidents_ == 0 || g_stop_signals.load() > 0)) return 1;
    if (g_stop_signals.load() > 0) return 0;
    return incidents_ > 0 ? 3 : 0;
  }

  Status Prepare() {
    if (o_.pid > 0 && !o_.command.empty())
      return UsageStatus("aiprof monitor: give either --pid N or -- CMD ARGS..., not both");
    if (o_.pid <= 0 && o_.command.empty())
      return UsageStatus("aiprof monitor: give the process to watch: --pid N, or -- CMD ARGS... to start it");
    if (o_.out_dir.empty()) return UsageStatus("aiprof monitor: -o INCIDENTS_DIR is required");
    if (o_.window_ns <= 0 || o_.interval_ns <= 0)
      return UsageStatus("aiprof monitor: --window and --interval must be positive");
    if (o_.interval_ns > o_.window_ns) return UsageStatus("aiprof monitor: --interval is longer than --window");
    if (o_.trace_duration_ns <= 0) return UsageStatus("aiprof monitor: --trace-duration must be positive");
    // The rest of what the command line alone decides (exit 2), before
    // anything is read, created or started.
    RETURN_IF_ERROR(CheckAlertTexts(o_.alerts, !o_.service.empty()));
    if (!o_.metrics_listen.empty())
      RETURN_IF_ERROR(ParseListenAddress(o_.metrics_listen, &listen_host_, &listen_port_));
    if (!listen_host_.empty() && !IsLoopbackHost(listen_host_) && o_.webhook_token_file.empty()) {
      return UsageStatus("aiprof monitor: --metrics-listen " + o_.metrics_listen +
                         " is not a loopback address: give "
                         "--webhook-token-file too (POST /alert starts deep traces), or listen on 127.0.0.1");
    }
    bool wants_baseline = false;
    for (const std::string& a : o_.alerts) {
      StatusOr<Expression> e = Expression::Parse(a, &FindMonitorMetric);
      wants_baseline = wants_baseline || (e.ok() && e->UsesBaseline());
    }
    if (wants_baseline && !o_.service.empty()) {
      std::string db = o_.db;
      if (db.empty()) {
        ASSIGN_OR_RETURN(db, DefaultBaselineDbPath());
      }
      StatusOr<MonitorBaseline> b = LoadMonitorBaseline(db, o_.service);
      if (!b.ok()) return ErrStatus("aiprof monitor: --service " + o_.service + ": " + b.status().message());
      baseline_ = std::move(b).value();
    }
    ASSIGN_OR_RETURN(rules_, ParseAlertRules(o_.alerts, baseline_ ? &*baseline_ : nullptr));
    rule_holding_.assign(rules_.size(), false);
    for (const AlertRule& r : rules_) alert_series_.push_back(AlertSeries{r.text});
    alert_series_.push_back(AlertSeries{"webhook"});
    if (!o_.webhook_token_file.empty()) {
      std::ifstream in(o_.webhook_token_file);
      std::string token((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
      if (!in.good() && !in.eof())
        return ErrStatus("aiprof monitor: --webhook-token-file " + o_.webhook_token_file + ": cannot read it");
      if (token.empty())
        return ErrStatus("aiprof monitor: --webhook-token-file " + o_.webhook_token_file + ": empty (or unreadable)");
      if (token.find_first_of(" \t\r\n") != std::string::npos) {
        return ErrStatus("aiprof monitor: --webhook-token-file " + o_.webhook_token_file +
                         ": the token holds white space");
      }
      // As aiprof serve's tokens: a short one is guessed by anyone who can
      // reach a non-loopback listener, however it is compared.
      if (token.size() < kMinTokenBytes) {
        return ErrStatus("aiprof monitor: --webhook-token-file " + o_.webhook_token_file + ": the token has " +
                         std::to_string(token.size()) + " characters: give at least " + std::to_string(kMinTokenBytes) +
                         " (e.g. openssl rand -hex 16)");
      }
      webhook_token_ = token;
    }
    struct stat st;
    created_out_dir_ = stat(o_.out_dir.c_str(), &st) != 0;
    if (!MakeDirs(o_.out_dir))
      return ErrStatus("aiprof monitor: cannot create " + o_.out_dir + ": " + std::strerror(errno));
    if (access(o_.out_dir.c_str(), W_OK) != 0) return ErrStatus("aiprof monitor: cannot write to " + o_.out_dir);
    RemoveStaleIncidentWorkDirs(o_.out_dir);
    return OkStatus();
  }

  Status StartTarget(const sigset_t& signals) {
    if (o_.pid > 0) {
      if (kill(o_.pid, 0) != 0 && errno == ESRCH)
        return ErrStatus("aiprof monitor --pid " + std::to_string(o_.pid) + ": no such process");
      pid_ = o_.pid;
      return OkStatus();
    }
    // The service's flight recorder: ring mode, written at exit into the
    // incidents folder, unless its environment says otherwise.
    // Built before the fork: the monitor may have threads by now (the
    // metrics server), so the child only execs (PreparedCommand).
    PreparedCommand command(o_.command, "aiprof monitor");
    command.SetEnv("AIPROF_MODE", "ring", /*overwrite=*/false);
    command.SetEnv("AIPROF_OUTPUT", o_.out_dir + "/.service/", /*overwrite=*/false);
    command.UnsetEnv("AIPROF_LIVE");
    // A monitor killed outright (SIGKILL, the OOM killer) stops the service
    // it started, as its own stop does (SIGTERM).
    command.StopWithParent(SIGTERM);
    std::fflush(nullptr);
    child_ = fork();
    if (child_ < 0) return ErrStatus(std::string("fork: ") + std::strerror(errno));
    if (child_ == 0) {
      pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
      command.ExecPrepared();
    }
    pid_ = child_;
    g_child.store(child_);
    return OkStatus();
  }

  bool TargetAlive() {
    if (target_exited_) return false;
    if (child_ > 0) {
      int status = 0;
      if (waitpid(child_, &status, WNOHANG) == child_) {
        target_exited_ = true;
        end_ = EndFromWaitStatus(status, "waitpid (the monitor started the process)");
        exit_abnormal_ = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        child_ = 0;
        g_child.store(0);
        return false;
      }
      return true;
    }
    if ((kill(pid_, 0) != 0 && errno == ESRCH) || IsZombieProcess(pid_)) {
      target_exited_ = true;
      int status = 0;
      const int sig = client_ ? client_->fatal_signal() : 0;
      if (ZombieWaitStatus(pid_, &status)) {
        end_ = EndFromWaitStatus(status, "/proc/" + std::to_string(pid_) + "/stat (exit code of the zombie)");
      } else if (sig > 0) {
        end_ = EndFromWaitStatus(sig, "the SDK's signal handler (the live channel's fatal_signal)");
      } else {
        end_.text =
            "exited (how is unknown: not the monitor's child, reaped before the monitor looked, and no "
            "fatal signal the SDK could see: SIGKILL, or an exit)";
        end_.source = "none";
      }
      exit_abnormal_ = true;  // a watched service is not expected to stop
      return false;
    }
    return true;
  }

  void StopChild() {
    if (child_ <= 0) return;
    kill(child_, SIGTERM);
    const int64_t deadline = MonotonicNs() + 5'000'000'000;
    int status = 0;
    while (MonotonicNs() < deadline) {
      if (waitpid(child_, &status, WNOHANG) == child_) {
        child_ = 0;
        g_child.store(0);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill(child_, SIGKILL);
    waitpid(child_, &status, 0);
    child_ = 0;
    g_child.store(0);
  }

  Status StartServer() {
    // Until the process attached there is nothing to expose (and no
    // process name for the label): 503.
    auto metrics = [this]() -> std::optional<std::string> {
      std::lock_guard<std::mutex> lock(stats_mu_);
      if (!attached_) return std::nullopt;
      MonitorCounts counts;
      counts.incidents = incidents_.load();
      counts.incident_write_failures = incident_failures_.load();
      counts.alerts = alerts_total_.load();
      counts.counter_names_cut = counter_names_cut_.load();
      counts.alert_series = alert_series_;
      counts.self = ReadSelfStats();
      counts.counter_samples_dropped = dropped_before_ + (client_ ? client_->counter_samples_dropped() : 0);
      counts.incidents_pruned = incidents_pruned_.load();
      counts.incident_folders = incident_folders_.load();
      counts.incident_folder_bytes = incident_folder_bytes_.load();
      counts.service_files_pruned = service_files_pruned_.load();
      counts.triggers_dropped = triggers_dropped_.load();
      counts.live_channel_restored = channel_restored_.load();
      counts.records_clamped = records_clamped_.load();
      return PrometheusExposition(last_stats_, totals_, ExpositionLabels{service_label_}, counts);
    };
    auto trigger = [this](const std::vector<std::string>& names, const std::string& peer) {
      std::lock_guard<std::mutex> lock(stats_mu_);
      uint64_t dropped = 0;
      for (const std::string& n : names)
        AppendBounded(&external_, kMaxPendingWebhookAlerts, std::make_pair(n, peer), &dropped);
      triggers_dropped_ += dropped;
      if (dropped > 0 && !webhook_drop_said_) {
        webhook_drop_said_ = true;
        std::fprintf(stderr,
                     "aiprof monitor: more than %zu webhook alerts between two evaluations: the rest are counted "
                     "(aiprof_monitor_incident_triggers_dropped_total), not queued\n",
                     kMaxPendingWebhookAlerts);
      }
    };
    MetricsServer::Options options;
    options.host = listen_host_;
    options.port = listen_port_;
    options.webhook_token = webhook_token_;
    ASSIGN_OR_RETURN(server_, MetricsServer::Start(options, metrics, trigger));
    // An IPv6 address goes in brackets in a URL (http://[::1]:9464/metrics).
    const std::string host = listen_host_.find(':') != std::string::npos ? "[" + listen_host_ + "]" : listen_host_;
    std::fprintf(stderr, "aiprof monitor: metrics on http://%s:%d/metrics, Alertmanager webhook on POST /alert\n",
                 host.c_str(), server_->port());
    return OkStatus();
  }

  std::string ProcessName() const {
    std::string comm;
    std::getline(std::ifstream("/proc/" + std::to_string(pid_) + "/comm"), comm);
    return comm;
  }

  WindowStats Tick(int64_t now) {
    std::unique_lock<std::mutex> totals_lock(stats_mu_);  // totals_, read by /metrics
    // A record cannot end after it is read (window.h, SetLatest).
    window_->SetLatest(MonotonicNs() + o_.interval_ns);
    const uint64_t clamped_before = window_->clamped();
    client_->Drain([&](const live::Record& r) {
      if (r.type == live::kRecRequest) {
        const bool error = (r.aux & live::kFlagError) != 0;
        window_->AddRequest(r.end_ns, r.value, error);
        ++totals_.requests;
        totals_.errors += error;
        totals_.latency.Add(static_cast<double>(r.value) / 1e9);
      }
      if (r.type == live::kRecStep) {
        window_->AddStep(r.end_ns, r.value);
        ++totals_.steps;
        totals_.step_time.Add(static_cast<double>(r.value) / 1e9);
      }
      if (r.type == live::kRecCounter) {
        double v;
        std::memcpy(&v, &r.value, sizeof(v));
        const std::string name = client_->CounterName(r.aux);
        if (!name.empty()) window_->AddCounter(name, r.end_ns, v);
        if (r.aux < cut_said_.size() && !cut_said_[r.aux] && client_->CounterNameCut(r.aux)) {
          cut_said_[r.aux] = true;
          ++counter_names_cut_;
          std::fprintf(stderr,
                       "aiprof monitor: SDK counter name longer than %zu bytes, shown cut as \"%s\" (names that differ "
                       "past the cut stay apart; an alert cannot name it): shorten it\n",
                       kMaxCounterNameBytes, TerminalSafe(name).c_str());
        }
      }
    });
    totals_lock.unlock();
    if (const uint64_t clamped = window_->clamped() - clamped_before;
        clamped > 0 && records_clamped_.fetch_add(clamped) == 0) {
      std::fprintf(stderr,
                   "aiprof monitor: live records dated after the monitor read them (not CLOCK_MONOTONIC?): taken as "
                   "ending then (aiprof_monitor_records_clamped_total)\n");
    }
    if (const uint64_t dropped = client_->counter_samples_dropped(); dropped > 0 && !dropped_said_) {
      dropped_said_ = true;
      std::fprintf(stderr,
                   "aiprof monitor: the service set more than %u distinct SDK counters: the live channel keeps %u "
                   "names, the samples of the others are dropped (aiprof_monitor_sdk_value_samples_dropped_total)\n",
                   live::kCounterNames, live::kCounterNames);
    }
    client_->Heartbeat();
    window_->Advance(now);
    WindowStats s = window_->Stats(now);
    proc_->Sample(now, &s.cpu_util, &s.rss_bytes);
    s.cpu_seconds_total = proc_->cpu_seconds();
    s.lost_records = lost_before_ + client_->lost();
    std::lock_guard<std::mutex> lock(stats_mu_);
    last_stats_ = s;
    return s;
  }

  // The alerts that hold now (`rising_only`: those that started to hold this
  // tick), and the webhook alerts received since the last tick. A rule that
  // keeps holding counts as one alert; once an incident and its cooldown are
  // over it may start the next incident.
  std::vector<IncidentTrigger> Triggers(const WindowStats& s, int64_t now, bool rising_only) {
    std::vector<IncidentTrigger> out;
    std::vector<bool> rose(rules_.size(), false);
    for (size_t i = 0; i < rules_.size(); ++i) {
      AlertOutcome a = EvaluateAlert(rules_[i], s, baseline_ ? &*baseline_ : nullptr);
      const bool rising = a.holds && !rule_holding_[i];
      rose[i] = rising;
      if (rising) ++alerts_total_;
      if (a.holds && (rising || !rising_only)) {
        out.push_back(IncidentTrigger{"alert", rules_[i].text, now, NowUnixMs(), std::move(a.result), s, ""});
      }
      rule_holding_[i] = a.holds;
    }
    std::vector<std::pair<std::string, std::string>> external;
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      external.swap(external_);
      for (size_t i = 0; i < rules_.size(); ++i) {
        alert_series_[i].fired += rose[i];
        alert_series_[i].active = rule_holding_[i];
      }
      alert_series_.back().fired += external.size();
    }
    for (auto& [name, peer] : external) {
      out.push_back(IncidentTrigger{"webhook", name, now, NowUnixMs(), EvalResult{}, s, peer});
      ++alerts_total_;
    }
    return out;
  }

  void Loop() {
    int64_t next = MonotonicNs();
    bool suppressed_said = false;
    for (;;) {
      next += o_.interval_ns;
      const int64_t now = MonotonicNs();
      const bool alive = TargetAlive();
      // The worker uses the channel while an incident runs: restored after.
      if (alive && !current_ && client_->SegmentGone()) RestoreChannel();
      const WindowStats s = Tick(now);
      std::vector<IncidentTrigger> triggers =
          alive ? Triggers(s, now, /*rising_only=*/current_ != nullptr) : std::vector<IncidentTrigger>{};
      if (current_) {
        {
          std::lock_guard<std::mutex> lock(current_->mu);
          for (IncidentTrigger& t : triggers) {
            if (current_->closed) break;  // its alert.json is being written: as in the cooldown
            const std::string kind = t.kind, expression = t.expression;
            if (AppendBounded(&current_->triggers, kMaxIncidentTriggers, std::move(t), &current_->triggers_dropped)) {
              std::fprintf(stderr, "aiprof monitor: %s \"%s\" during incident %d: recorded in it\n", kind.c_str(),
                           TerminalSafe(expression).c_str(), current_->number);
            } else {
              ++triggers_dropped_;
              if (current_->triggers_dropped == 1) {
                std::fprintf(stderr,
                             "aiprof monitor: incident %d holds %zu triggers: the later ones are counted "
                             "(during_incident_dropped, aiprof_monitor_incident_triggers_dropped_total), not "
                             "recorded\n",
                             current_->number, kMaxIncidentTriggers);
              }
            }
          }
        }
        if (current_->done.load()) {
          FinishIncident(/*wait=*/false);
          if (o_.once) return;
        }
      } else if (!triggers.empty()) {
        const bool cooling = last_incident_end_ns_ > 0 && now - last_incident_end_ns_ < o_.cooldown_ns;
        const bool at_max = o_.max_incidents > 0 && incidents_.load() >= static_cast<uint64_t>(o_.max_incidents);
        if (!cooling && !at_max) {
          StartIncident(std::move(triggers));
          suppressed_said = false;
        } else if (!suppressed_said) {
          std::fprintf(
              stderr, "aiprof monitor: %s \"%s\" holds, but %s: no incident\n", triggers[0].kind.c_str(),
              TerminalSafe(triggers[0].expression).c_str(),
              at_max
                  ? ("--max-incidents " + std::to_string(o_.max_incidents) + " reached").c_str()
                  : ("in --cooldown for another " + Seconds(o_.cooldown_ns - (now - last_incident_end_ns_))).c_str());
          suppressed_said = true;
        }
      }
      if (!alive) {
        OnTargetExit(s);
        return;
      }
      if (g_stop_signals.load() > 0 || g_stdout_gone.load()) return;
      if (o_.timeout_ns > 0 && now - start_ns_ >= o_.timeout_ns && !current_) {
        if (incidents_ == 0)
          std::fprintf(stderr, "aiprof monitor: --timeout %s reached without an incident\n",
                       Seconds(o_.timeout_ns).c_str());
        return;
      }
      if (next > MonotonicNs())
        WaitBeating(next);
      else
        next = MonotonicNs();
    }
  }

  // Sleeps until `until` (CLOCK_MONOTONIC), writing the heartbeat at least
  // every live::kHeartbeatEveryNs meanwhile: the SDK takes a heartbeat older
  // than live::kHeartbeatStaleNs (10 s) for a dead monitor, and an --interval
  // of 10 s or more beat only once per interval made it detach and re-attach
  // dozens of times a minute (trial_races B).
  void WaitBeating(int64_t until) {
    for (int64_t now = MonotonicNs(); now < until; now = MonotonicNs()) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(std::min(until - now, live::kHeartbeatEveryNs)));
      client_->Heartbeat();
    }
  }

  // Keeps INCIDENTS_DIR within --keep-incidents / --keep-incident-bytes
  // with `room` for a folder of `room_bytes` about to be published; says
  // and counts what it removed.
  PruneResult Prune(int room, uint64_t room_bytes) {
    const IncidentRetention retention{o_.keep_incidents, o_.keep_incident_bytes};
    PruneResult r = PruneIncidentDirs(o_.out_dir, retention, &own_incidents_, room, room_bytes);
    if (!r.removed.empty()) {
      incidents_pruned_ += r.removed.size();
      std::fprintf(stderr,
                   "aiprof monitor: removed the %zu oldest incident folder(s) to keep at most %d folders and %.3g GB "
                   "in %s: %s\n",
                   r.removed.size(), o_.keep_incidents, static_cast<double>(o_.keep_incident_bytes) / 1e9,
                   TerminalSafe(o_.out_dir).c_str(), TerminalSafe(Names(r.removed)).c_str());
    }
    if (!r.failed.empty()) {
      std::fprintf(stderr, "aiprof monitor: %zu old incident folder(s) could not be removed: %s\n", r.failed.size(),
                   TerminalSafe(Names(r.failed)).c_str());
    }
    return r;
  }

  // "a, b, c and 7 more".
  static std::string Names(const std::vector<std::string>& names) {
    std::string out;
    for (size_t i = 0; i < names.size() && i < 3; ++i) out += (i ? ", " : "") + names[i];
    if (names.size() > 3) out += " and " + std::to_string(names.size() - 3) + " more";
    return out;
  }

  // The live segment was removed under both (a /dev/shm cleaner, systemd's
  // RemoveIPC=): its SDK detached and the channel went quiet. A new segment
  // is created; the old one's detach flag makes an SDK still on it move
  // over, within a second.
  void RestoreChannel() {
    StatusOr<std::unique_ptr<LiveClient>> fresh = LiveClient::Create(pid_);
    if (!fresh.ok()) {
      if (!restore_failed_said_) {
        restore_failed_said_ = true;
        std::fprintf(stderr, "aiprof monitor: the live segment %s is gone and cannot be created again: %s\n",
                     TerminalSafe(client_->segment_path()).c_str(), TerminalSafe(fresh.status().message()).c_str());
      }
      return;
    }
    std::lock_guard<std::mutex> lock(stats_mu_);
    lost_before_ += client_->lost();
    dropped_before_ += client_->counter_samples_dropped();
    client_ = std::move(fresh).value();
    cut_said_.assign(live::kCounterNames, false);
    restore_failed_said_ = false;
    ++channel_restored_;
    std::fprintf(stderr,
                 "aiprof monitor: the live segment %s was removed (a /dev/shm cleaner, systemd's RemoveIPC=?): "
                 "created again; the service's SDK attaches to it within a second\n",
                 TerminalSafe(client_->segment_path()).c_str());
  }

  // The incident's working folder (renamed to `name` by FinishIncident):
  // the monitor's pid in its name, and never one that exists.
  void NewIncidentDir(Incident* inc, int64_t unix_ms) {
    inc->name = UtcStamp(unix_ms) + "-" + std::to_string(inc->number);
    StatusOr<std::string> dir =
        CreateIncidentWorkDir(o_.out_dir, std::to_string(getpid()) + "-" + std::to_string(inc->number));
    if (dir.ok()) {
      inc->dir = *dir;
    } else {
      inc->error = dir.status().message();  // said by PublishIncident
    }
  }

  void StartIncident(std::vector<IncidentTrigger> triggers) {
    auto inc = std::make_unique<Incident>();
    inc->number = ++incident_seq_;
    NewIncidentDir(inc.get(), triggers[0].unix_ms);
    inc->triggers = std::move(triggers);
    inc->sdk_mode = client_->sdk_mode();
    std::fprintf(stderr, "aiprof monitor: %s \"%s\": %s; incident %d (%s when complete)\n",
                 inc->triggers[0].kind.c_str(), TerminalSafe(inc->triggers[0].expression).c_str(),
                 TerminalSafe(DescribeTrigger(inc->triggers[0])).c_str(), inc->number,
                 TerminalSafe(o_.out_dir + "/" + inc->name).c_str());
    current_ = std::move(inc);
    worker_ = std::thread([this, inc = current_.get()] {
      if (inc->error.empty()) WriteIncident(inc);
      bool publish = false;
      {
        std::lock_guard<std::mutex> lock(inc->mu);
        publish = !inc->publish_on_main;
        inc->closed = publish;
      }
      if (publish) {
        {
          std::lock_guard<std::mutex> lock(stats_mu_);
          inc->window_at_end = last_stats_;
        }
        inc->where = PublishIncident(inc, /*target_ended=*/false);
        inc->published = true;
      }
      inc->done.store(true);
    });
  }

  // A stop asked for: waits on the service are cut short.
  static bool Stopping() { return g_stop_signals.load() > 0; }

  // The flight recorder's flush, which needs the service's live thread (a
  // stalled or stopped service answers late or never). Returns whether the
  // service answered.
  bool FlushFlightRecorder(Incident* inc) {
    Status st = client_->RunCommand(live::kCmdFlush, inc->dir + "/flight_recorder.aiprof", kFlushTimeoutNs, &Stopping);
    inc->flight_recorder_status = st.ok() ? "written" : "failed: " + st.message();
    if (st.ok()) inc->files.insert(inc->files.begin(), "flight_recorder.aiprof");
    return st.ok();
  }

  // The worker: flight recorder, deep trace, merged trace, diagnosis. The
  // deep trace is diagnosed through the session its host functions were
  // read from (analysed once); the flight recorder's file, where there is
  // no deep trace, through a session over that file.
  void WriteIncident(Incident* inc) {
    if (o_.on_alert == OnAlert::kDump) FlushFlightRecorder(inc);
    std::unique_ptr<AnalysisSession> deep;
    if (o_.on_alert == OnAlert::kTrace) {
      Status st = DeepTrace(inc, &deep);
      inc->trace_status = st.ok() ? "written" : "failed: " + st.message();
      if (st.ok()) inc->files.push_back("trace.aiprof");
    }
    if (deep) {
      Diagnose(inc, *deep, "trace.aiprof");
    } else if (inc->flight_recorder_status == "written") {
      DiagnoseFile(inc, "flight_recorder.aiprof");
    }
  }

  // An incident's analysis: the latency target, the baseline database.
  SessionOptions IncidentSessionOptions(const std::string& path) const {
    SessionOptions s;
    s.input = path;
    s.suggest.target = "latency";
    s.db = o_.db;
    return s;
  }

  // Writes diagnosis.md and .html of the incident's `file`, read through
  // `session`; says how in diagnosis_status.
  void Diagnose(Incident* inc, AnalysisSession& session, const std::string& file) {
    if (!diagnose_) return;
    Status st = diagnose_(session, IncidentFileLabel(file), Context(*inc), inc->dir + "/diagnosis.md",
                          inc->dir + "/diagnosis.html");
    inc->diagnosis_status = st.ok() ? "written from " + file : "failed: " + st.message();
    if (st.ok()) {
      inc->files.push_back("diagnosis.md");
      inc->files.push_back("diagnosis.html");
    }
  }

  // The same for a file of the incident the monitor did not build (the
  // flight recorder the SDK wrote), imported here.
  void DiagnoseFile(Incident* inc, const std::string& file) {
    if (!diagnose_) return;
    StatusOr<std::unique_ptr<AnalysisSession>> session =
        AnalysisSession::Open(IncidentSessionOptions(inc->dir + "/" + file));
    if (!session.ok()) {
      inc->diagnosis_status = "failed: " + session.status().message();
      return;
    }
    Diagnose(inc, **session, file);
  }

  // Sets *session, over the merged trace, once trace.aiprof is written.
  Status DeepTrace(Incident* inc, std::unique_ptr<AnalysisSession>* session) {
    CaptureOptions c;
    c.pid = pid_;
    c.duration_ns = o_.trace_duration_ns;
    c.cpu_hz = o_.cpu_hz;
    c.scope = CaptureScope::kFullStack;
    c.target = o_.service;
    // The framework layer (torch.profiler in a Python process), when the
    // process registered one: started before the samples, stopped after.
    // In a Python process the same request starts the SDK's sampler of
    // Python frames (python/aiprof/_framework.py), whose py-<pid>.txt the
    // capture splices into the host samples in place of the interpreter's
    // frames, as it does for its own start-up hook's.
    //
    // Host sampling needs nothing from the service, so it starts at the
    // alert, while the flight recorder's flush and the framework layer's
    // start (which need the service's live thread, and in Python its GIL)
    // run beside it: the deep trace of a stalled service covers the stall.
    // After a flush the service did not answer, nothing more is asked of it.
    const std::string torch_dir = inc->dir + "/.framework";
    bool framework = false, stopped = false, recorded = false, answered = false;
    std::mutex commands_mu;
    std::condition_variable commands_cv;
    bool commands_done = false, recording_over = false;
    inc->trace_start_ns = MonotonicNs();
    std::thread commands([&] {
      answered = FlushFlightRecorder(inc);
      if (client_->framework_available()) {
        std::unique_lock<std::mutex> lock(commands_mu);
        const bool over = recording_over;
        lock.unlock();
        Status st = !answered ? ErrStatus("the service did not answer the flush of the flight recorder")
                    : over    ? ErrStatus("the deep trace ended before the service answered the flush")
                              : client_->RunCommand(live::kCmdFrameworkOn, torch_dir, kFrameworkOnTimeoutNs, &Stopping);
        framework = st.ok();
        inc->framework_status = st.ok() ? "started" : "not started: " + st.message();
      }
      std::lock_guard<std::mutex> lock(commands_mu);
      commands_done = true;
      commands_cv.notify_all();
    });
    // Stopped when recording ends, before the capture reads the samples
    // (once a command in flight is answered or given up; none is sent after).
    auto stop_framework = [&] {
      {
        std::unique_lock<std::mutex> lock(commands_mu);
        if (!recording_over) inc->trace_end_ns = MonotonicNs();
        recording_over = true;
        if (client_->framework_available()) commands_cv.wait(lock, [&] { return commands_done; });
      }
      if (stopped || !framework) return;
      stopped = true;
      Status st = client_->RunCommand(live::kCmdFrameworkOff, torch_dir, 3 * kFlushTimeoutNs);
      recorded = st.ok();
      inc->framework_status = st.ok() ? "recorded" : "failed to stop: " + st.message();
    };
    c.on_stopped = stop_framework;
    c.python_samples_dir = torch_dir + "/python";
    StatusOr<CaptureResult> captured = RunCapture(c);
    stop_framework();  // the capture failed before recording
    commands.join();
    std::vector<std::unique_ptr<Trace>> parts;
    const std::string py_file = c.python_samples_dir + "/py-" + std::to_string(pid_) + ".txt";
    const bool python_frames = access(py_file.c_str(), F_OK) == 0;
    unlink(py_file.c_str());
    rmdir(c.python_samples_dir.c_str());
    if (recorded) {
      if (access((torch_dir + "/torch-" + std::to_string(pid_) + ".json").c_str(), F_OK) == 0) {
        AddFrameworkTraces(torch_dir, inc, &parts);
        if (python_frames) inc->framework_status += "; Python frames sampled";
      } else {
        inc->framework_status = python_frames ? "Python frames sampled (no torch.profiler: the process has not "
                                                "imported torch)"
                                              : "recorded nothing";
      }
    }
    rmdir(torch_dir.c_str());
    if (!captured.ok()) return captured.status();
    CaptureResult r = std::move(captured).value();
    inc->capture_summary = r.summary;
    parts.insert(parts.begin(), std::move(r.trace));
    // The SDK's buffers now hold the lead-up and the deep trace's requests.
    const std::string after = inc->dir + "/.sdk-after-trace.aiprof";
    Status flushed = answered ? client_->RunCommand(live::kCmdFlush, after, kFlushTimeoutNs, &Stopping)
                              : ErrStatus("not asked: the service did not answer the first flush");
    std::string sdk_source = "after the deep trace";
    StatusOr<std::unique_ptr<Trace>> sdk =
        flushed.ok() ? ImportTraceFile(after) : StatusOr<std::unique_ptr<Trace>>(flushed);
    if (!sdk.ok()) {
      sdk = ImportTraceFile(inc->dir + "/flight_recorder.aiprof");  // the process is gone: what it wrote at the alert
      sdk_source = "at the alert (the flush after the deep trace failed: " + flushed.message() + ")";
    }
    unlink(after.c_str());
    if (sdk.ok()) (*sdk)->metadata.erase("source_path");  // a file of the incident's own folder
    if (sdk.ok()) parts.push_back(std::move(sdk).value());
    std::unique_ptr<Trace> trace = parts.size() == 1 ? std::move(parts[0]) : MergeTraces(std::move(parts));
    NameFilesWithinIncident(inc->dir, trace.get());
    trace->metadata["source_format"] = "aiprof_monitor";
    trace->metadata["monitor.alert"] = inc->triggers[0].expression;
    trace->metadata["monitor.alert_monotonic_ns"] = std::to_string(inc->triggers[0].monotonic_ns);
    trace->metadata["monitor.trace_start_ns"] = std::to_string(inc->trace_start_ns);
    trace->metadata["monitor.trace_end_ns"] = std::to_string(inc->trace_end_ns);
    trace->metadata["monitor.sdk_spans"] = sdk.ok() ? "flushed " + sdk_source : "none: " + sdk.status().message();
    // The host functions are the summary's (its host samples), read
    // through the session the diagnosis reads, as the report reads them.
    std::shared_ptr<const Trace> merged = std::move(trace);
    auto analysed = std::make_unique<AnalysisSession>(merged, IncidentSessionOptions(inc->dir + "/trace.aiprof"));
    inc->host_functions = HostFunctionsOf(*merged, analysed->results().Get(kSummary).host_samples, 10);
    inc->slowest = FindSlowestRequest(*merged, inc->trace_start_ns, inc->trace_end_ns);
    for (size_t i = 0; i < merged->samples.size(); ++i) inc->host_samples += merged->samples.callsite[i] != kNoCallsite;
    RETURN_IF_ERROR(WriteNativeFile(*merged, inc->dir + "/trace.aiprof"));
    *session = std::move(analysed);
    return OkStatus();
  }

  // Imports the framework layer's files (torch-<pid>.json + .sync, as the
  // capture's torch hook writes them) with their clock offset removed.
  void AddFrameworkTraces(const std::string& dir, Incident* inc, std::vector<std::unique_ptr<Trace>>* parts) {
    const std::string json = dir + "/torch-" + std::to_string(pid_) + ".json";
    StatusOr<std::unique_ptr<Trace>> t = ImportTraceFile(json);
    if (!t.ok()) {
      inc->framework_status = "unreadable: " + t.status().message();
      return;
    }
    int64_t offset = 0, error = 0;
    Status st = MeasureTorchOffset(**t, dir + "/torch-" + std::to_string(pid_) + ".sync", &offset, &error);
    if (st.ok()) {
      ShiftTrace(t->get(), -offset);
      inc->framework_status =
          "recorded (clock offset " + std::to_string(offset) + " ± " + std::to_string(error) + " ns)";
    } else {
      inc->framework_status = "recorded, clock not aligned: " + st.message();
    }
    inc->framework_slices = (*t)->slices.size();
    parts->push_back(std::move(t).value());
    unlink(json.c_str());
    unlink((dir + "/torch-" + std::to_string(pid_) + ".sync").c_str());
    rmdir(dir.c_str());
  }

  IncidentContext Context(Incident& inc) {
    std::lock_guard<std::mutex> lock(inc.mu);
    IncidentContext c;
    const IncidentTrigger& t = inc.triggers[0];
    if (inc.slowest.found) c.emplace_back("slowest request in the deep trace", DescribeSlowest(inc.slowest));
    c.emplace_back("trigger", t.kind + ": " + t.expression);
    c.emplace_back("values", DescribeTrigger(t));
    c.emplace_back("time", UtcText(t.unix_ms));
    c.emplace_back("process", "pid " + std::to_string(pid_) + (o_.service.empty() ? "" : " (" + o_.service + ")"));
    const WindowStats& w = t.window;
    char buf[256];
    std::snprintf(buf, sizeof(buf), "%llu requests in %s: p50 %.4g ms, p99 %.4g ms, max %.4g ms, %.4g/s, %llu errors",
                  static_cast<unsigned long long>(w.requests), DurationText(w.covered_ns).c_str(), w.p50_ns / 1e6,
                  w.p99_ns / 1e6, w.max_ns / 1e6, w.throughput_per_s, static_cast<unsigned long long>(w.errors));
    c.emplace_back("window at the alert", buf);
    if (inc.trace_end_ns > 0) {
      c.emplace_back("deep trace",
                     Seconds(inc.trace_end_ns - inc.trace_start_ns) + " after the alert; " + inc.capture_summary);
      c.emplace_back("framework layer", inc.framework_status);
    }
    if (const HostFunction* hottest = HottestServiceFunction(inc.host_functions)) {
      const ReportHostFunction& f = *hottest;
      std::snprintf(buf, sizeof(buf), "%s: %.1f%% of %llu samples (self), %.1f%% on the stack", f.name.c_str(),
                    f.self_share * 100, static_cast<unsigned long long>(inc.host_samples), f.total_share * 100);
      c.emplace_back("hottest host function in the deep trace", buf);
    }
    for (size_t i = 1; i < inc.triggers.size(); ++i) {
      c.emplace_back("also during the incident", inc.triggers[i].kind + ": " + inc.triggers[i].expression + " at " +
                                                     UtcText(inc.triggers[i].unix_ms));
    }
    return c;
  }

  // The watched process: running, or how it ended (alert.json "target").
  // `ended`: the loop saw the service end (read on the loop's thread only).
  Tree TargetTree(bool ended) const {
    Tree t = Tree::Map();
    t.Set("pid", Tree::Number(pid_));
    t.Set("state", Tree::String(ended ? "ended" : "running"));
    if (!ended) return t;
    t.Set("how", Tree::String(end_.text));
    t.Set("known", Tree::Bool(end_.known));
    t.Set("exit_status", end_.known && end_.signal == 0 ? Tree::Number(end_.exit_status) : Tree::Null());
    if (end_.signal > 0) {
      Tree sig = Tree::Map();
      sig.Set("number", Tree::Number(end_.signal));
      sig.Set("name", Tree::String(SignalName(end_.signal)));
      sig.Set("core_dumped", Tree::Bool(end_.core_dumped));
      t.Set("signal", std::move(sig));
    } else {
      t.Set("signal", Tree::Null());
    }
    t.Set("source", Tree::String(end_.source));
    return t;
  }

  Tree AlertJson(Incident& inc, bool target_ended) {
    Tree t = Tree::Map();
    t.Set("schema", Tree::String("aiprof.incident/1"));
    t.Set("incident", Tree::Number(inc.number));
    t.Set("pid", Tree::Number(pid_));
    t.Set("service", Tree::String(o_.service));
    {
      std::lock_guard<std::mutex> lock(inc.mu);
      t.Set("trigger", TriggerTree(inc.triggers[0]));
      Tree more = Tree::List();
      for (size_t i = 1; i < inc.triggers.size(); ++i) more.Push(TriggerTree(inc.triggers[i]));
      t.Set("during_incident", std::move(more));
      t.Set("during_incident_dropped", Tree::Integer(static_cast<int64_t>(inc.triggers_dropped)));
    }
    t.Set("window_at_end", WindowStatsTree(inc.window_at_end));
    t.Set("target", TargetTree(target_ended));
    if (!inc.window_requests_status.empty())
      t.Set("window_requests", Tree::String(WithinIncident(inc.dir, inc.window_requests_status)));
    Tree fr = Tree::Map();
    fr.Set("status", Tree::String(WithinIncident(inc.dir, inc.flight_recorder_status)));
    fr.Set("sdk_mode", Tree::String(inc.sdk_mode));
    t.Set("flight_recorder", std::move(fr));
    Tree dt = Tree::Map();
    dt.Set("on_alert", Tree::String(o_.on_alert == OnAlert::kTrace  ? "trace"
                                    : o_.on_alert == OnAlert::kDump ? "dump"
                                                                    : "none"));
    dt.Set("status", Tree::String(WithinIncident(inc.dir, inc.trace_status)));
    dt.Set("framework_layer", Tree::String(WithinIncident(inc.dir, inc.framework_status)));
    dt.Set("framework_slices", Tree::Integer(static_cast<int64_t>(inc.framework_slices)));
    if (inc.trace_end_ns > 0) {
      dt.Set("start_monotonic_ns", Tree::Integer(static_cast<int64_t>(inc.trace_start_ns)));
      dt.Set("end_monotonic_ns", Tree::Integer(static_cast<int64_t>(inc.trace_end_ns)));
      dt.Set("summary", Tree::String(inc.capture_summary));
      dt.Set("host_samples", Tree::Integer(static_cast<int64_t>(inc.host_samples)));
      Tree fns = Tree::List();
      for (const ReportHostFunction& f : inc.host_functions) {
        Tree x = Tree::Map();
        x.Set("function", Tree::String(f.name));
        x.Set("module", Tree::String(f.module));
        x.Set("self_share", Tree::Number(f.self_share));
        x.Set("total_share", Tree::Number(f.total_share));
        fns.Push(std::move(x));
      }
      dt.Set("top_host_functions", std::move(fns));
      if (inc.slowest.found) {
        Tree slow = Tree::Map();
        slow.Set("name", Tree::String(inc.slowest.name));
        slow.Set("duration_s", Tree::Number(static_cast<double>(inc.slowest.dur_ns) / 1e9));
        slow.Set("start_monotonic_ns", Tree::Integer(static_cast<int64_t>(inc.slowest.ts_ns)));
        slow.Set("thread", Tree::String(inc.slowest.thread));
        slow.Set("host_samples", Tree::Integer(static_cast<int64_t>(inc.slowest.samples)));
        Tree path = Tree::List();
        for (const auto& [fn, share] : inc.slowest.path) {
          Tree x = Tree::Map();
          x.Set("function", Tree::String(fn));
          x.Set("share", Tree::Number(share));
          path.Push(std::move(x));
        }
        slow.Set("path", std::move(path));
        // The function that took the time (the headline's), and the native
        // frames below it on at least half the samples.
        slow.Set("function", Tree::String(SlowestFunction(inc.slowest)));
        Tree tail = Tree::List();
        for (size_t i = inc.slowest.named + 1; i < inc.slowest.path.size(); ++i) {
          tail.Push(Tree::String(inc.slowest.path[i].first));
        }
        slow.Set("native_tail", std::move(tail));
        dt.Set("slowest_request", std::move(slow));
      }
    }
    t.Set("deep_trace", std::move(dt));
    t.Set("diagnosis", Tree::String(WithinIncident(inc.dir, inc.diagnosis_status)));
    Tree files = Tree::List();
    for (const std::string& f : inc.files) files.Push(Tree::String(f));
    files.Push(Tree::String("alert.json"));
    t.Set("files", std::move(files));
    t.Set("finished_utc", Tree::String(UtcText(NowUnixMs())));
    return t;
  }

  // Joins the worker, writes alert.json (unless the worker did), prints the
  // incident's line.
  void FinishIncident(bool wait) {
    if (!current_) return;
    if (!wait && !current_->done.load()) return;
    if (worker_.joinable()) worker_.join();
    Incident& inc = *current_;
    if (!inc.published) {
      {
        std::lock_guard<std::mutex> lock(stats_mu_);
        inc.window_at_end = last_stats_;
      }
      WindowRequestsFile(&inc);
      inc.where = PublishIncident(&inc, target_exited_);
    }
    last_incident_end_ns_ = MonotonicNs();
    std::string extra;
    {
      std::lock_guard<std::mutex> lock(inc.mu);
      const uint64_t during = inc.triggers.size() - 1 + inc.triggers_dropped;
      if (during > 0) extra = " (+" + std::to_string(during) + " during it)";
    }
    // The function the diagnosis's headline names (the slowest request's),
    // else the hottest host function: the two lines never disagree.
    std::string top = SlowestFunction(inc.slowest);
    if (const HostFunction* f = HottestServiceFunction(inc.host_functions); top.empty() && f) top = f->name;
    if (!top.empty()) top = "; hottest: " + top;
    // One line per incident, whatever the names hold: every name from the
    // service, a webhook or an alert is shown with its control characters
    // (newlines, ANSI escapes) as \xNN.
    // A folder that could not be written says so where the folder would be.
    std::printf("%s incident %d: %s \"%s\": %s%s%s -> %s\n", UtcText(inc.triggers[0].unix_ms).c_str(), inc.number,
                inc.triggers[0].kind.c_str(), TerminalSafe(inc.triggers[0].expression).c_str(),
                TerminalSafe(DescribeTrigger(inc.triggers[0])).c_str(), extra.c_str(), TerminalSafe(top).c_str(),
                TerminalSafe(inc.where).c_str());
    if ((std::fflush(stdout) != 0 || std::ferror(stdout)) && !g_stdout_gone.exchange(true)) {
      std::fprintf(stderr, "aiprof monitor: cannot write incident %d's line on stdout (%s): stopping\n", inc.number,
                   errno == EPIPE ? "its reader went away" : std::strerror(errno));
    }
    current_.reset();
  }

  // What the monitor holds of a service that is gone: its window's requests.
  void WindowRequestsFile(Incident* inc) {
    if (!target_exited_ || !inc->error.empty()) return;
    bool complete = true;
    Status csv = WriteFileAtomically(inc->dir + "/window_requests.csv", window_->RequestsCsv(MonotonicNs(), &complete));
    if (csv.ok()) inc->files.push_back("window_requests.csv");
    inc->window_requests_status = !csv.ok()  ? "failed: " + csv.message()
                                  : complete ? "every request of the window"
                                             : "the newest " + std::to_string(kExactWindowLimit) +
                                                   " requests (the window held more; its statistics cover all)";
  }

  // alert.json last, then the rename to the final name; counts the incident
  // as written or failed. Returns its folder, or "NOT WRITTEN (why)". Runs on
  // the worker's thread, or on the loop's once the service ended.
  std::string PublishIncident(Incident* inc, bool target_ended) {
    if (inc->error.empty()) {
      Status st = WriteFileAtomically(inc->dir + "/alert.json", TreeToJson(AlertJson(*inc, target_ended)));
      // Room for it first, so that the folders never exceed the limits.
      const uint64_t bytes = st.ok() ? TreeBytes(inc->dir) : 0;
      const PruneResult kept = st.ok() ? Prune(1, bytes) : PruneResult{};
      StatusOr<std::string> dir =
          st.ok() ? PublishIncidentDir(inc->dir, o_.out_dir, inc->name) : StatusOr<std::string>(st);
      if (dir.ok()) {
        ++incidents_;
        own_incidents_.push_back(std::filesystem::path(*dir).filename().string());
        incident_folders_ = kept.kept + 1;
        incident_folder_bytes_ = kept.kept_bytes + bytes;
        return *dir;
      }
      inc->error = dir.status().message();
      RemoveIncidentWorkDir(inc->dir);
    }
    ++incident_failures_;
    std::fprintf(stderr, "aiprof monitor: incident %d could not be written: %s\n", inc->number,
                 TerminalSafe(inc->error).c_str());
    return "NOT WRITTEN (" + inc->error + ")";
  }

  // The process ended by itself. An incident being written is finished with
  // what there is; otherwise an abnormal end is an incident of its own,
  // with the flight recorder the SDK wrote at exit (if it could).
  void OnTargetExit(const WindowStats& s) {
    std::fprintf(stderr, "aiprof monitor: pid %d %s after %s (%llu requests in the last window)\n", pid_,
                 end_.text.c_str(), Seconds(MonotonicNs() - start_ns_).c_str(),
                 static_cast<unsigned long long>(s.requests));
    if (current_) {
      bool recorded = false;
      {
        std::lock_guard<std::mutex> lock(current_->mu);
        if (!current_->closed) {
          current_->publish_on_main = true;
          current_->triggers.push_back(
              IncidentTrigger{"target_exited", end_.text, MonotonicNs(), NowUnixMs(), EvalResult{}, s, ""});
          recorded = true;
        }
      }
      if (recorded) {
        died_during_incident_ = exit_abnormal_;
        FinishIncident(/*wait=*/true);
        return;
      }
      // Its alert.json was being written: the end is an incident of its own.
      FinishIncident(/*wait=*/true);
    }
    if (!exit_abnormal_) return;
    died_during_incident_ = true;
    if (o_.max_incidents > 0 && incidents_.load() >= static_cast<uint64_t>(o_.max_incidents)) return;
    auto inc = std::make_unique<Incident>();
    inc->number = ++incident_seq_;
    const int64_t unix_ms = NowUnixMs();
    NewIncidentDir(inc.get(), unix_ms);
    inc->sdk_mode = client_->sdk_mode();
    inc->triggers.push_back(IncidentTrigger{"target_exited", end_.text, MonotonicNs(), unix_ms, EvalResult{}, s, ""});
    current_ = std::move(inc);
    Incident* c = current_.get();
    // The SDK writes its file at exit (not when killed by a signal).
    const std::string exit_file = client_->sdk_output_path();
    const int64_t deadline = MonotonicNs() + kExitFileWaitNs;
    int64_t mtime = -1;
    while (MonotonicNs() < deadline && (mtime = FileMtimeNs(exit_file)) < 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    const int64_t since_start_ns = MonotonicNs() - start_ns_;
    const int64_t real_now = static_cast<int64_t>(rt.tv_sec) * 1000000000 + rt.tv_nsec;
    if (!c->error.empty()) {
      c->flight_recorder_status = "not copied: " + c->error;
    } else if (mtime >= real_now - since_start_ns && CopyFile(exit_file, c->dir + "/flight_recorder.aiprof")) {
      c->flight_recorder_status = "written by the process at exit (" + exit_file + ")";
      c->files.push_back("flight_recorder.aiprof");
      DiagnoseFile(c, "flight_recorder.aiprof");
    } else {
      c->flight_recorder_status = "not available: the process wrote no file at exit (" + exit_file +
                                  "); a process killed by a signal cannot write one";
    }
    std::fprintf(stderr, "aiprof monitor: flight recorder %s\n", TerminalSafe(c->flight_recorder_status).c_str());
    c->done.store(true);
    FinishIncident(/*wait=*/true);
  }

  const MonitorOptions& o_;
  const DiagnoseFn& diagnose_;
  std::vector<AlertRule> rules_;
  std::vector<bool> rule_holding_;
  std::optional<MonitorBaseline> baseline_;
  std::string listen_host_;
  int listen_port_ = 0;
  int pid_ = 0;
  pid_t child_ = 0;
  bool target_exited_ = false, exit_abnormal_ = false, died_during_incident_ = false;
  bool created_out_dir_ = false;  // INCIDENTS_DIR did not exist before this monitor
  TargetEnd end_;
  int64_t start_ns_ = 0, last_incident_end_ns_ = 0;
  std::unique_ptr<LiveClient> client_;
  std::unique_ptr<RollingWindow> window_;
  std::unique_ptr<ProcStats> proc_;
  std::unique_ptr<MetricsServer> server_;
  std::mutex stats_mu_;                    // last_stats_, totals_, external_, service_label_, attached_, alert_series_
  std::vector<AlertSeries> alert_series_;  // per rule, then "webhook" (/metrics)
  std::string service_label_;  // /metrics' service label: --service, else the process's name
  bool attached_ = false;      // /metrics answers 503 before
  WindowStats last_stats_;
  MonitorTotals totals_{o_.latency_buckets_s.empty() ? DefaultLatencyBuckets() : o_.latency_buckets_s};
  std::vector<std::pair<std::string, std::string>> external_;  // webhook alert names, peer
  std::string webhook_token_;
  std::atomic<uint64_t> incidents_{0}, incident_failures_{0}, alerts_total_{0}, counter_names_cut_{0};
  // The bounds of what grows with time (docs/monitor.md, "Limits").
  std::deque<std::string> own_incidents_;  // folders this monitor published, oldest first (retention)
  std::atomic<uint64_t> incidents_pruned_{0}, incident_folders_{0}, incident_folder_bytes_{0}, service_files_pruned_{0},
      triggers_dropped_{0}, channel_restored_{0}, records_clamped_{0};
  bool webhook_drop_said_ = false;  // under stats_mu_
  bool restore_failed_said_ = false;
  uint64_t lost_before_ = 0, dropped_before_ = 0;  // of live segments replaced (RestoreChannel)
  std::vector<bool> cut_said_ = std::vector<bool>(live::kCounterNames, false);
  bool dropped_said_ = false;
  int incident_seq_ = 0;
  std::unique_ptr<Incident> current_;
  std::thread worker_;
};

}  // namespace

std::string DurationText(int64_t ns) {
  const double s = static_cast<double>(ns) / 1e9;
  char buf[96];
  if (std::fabs(s) < 99.5) {
    std::snprintf(buf, sizeof(buf), "%.3g s", s);
    return buf;
  }
  const long long whole = std::llround(s);
  std::snprintf(buf, sizeof(buf), "%lld s", whole);
  const long long a = whole < 0 ? -whole : whole;
  if (a < 120) return buf;
  const long long h = a / 3600, min = a % 3600 / 60, sec = a % 60;
  char gloss[64];
  if (h > 0) {
    std::snprintf(gloss, sizeof(gloss), min > 0 ? " (%lld h %lld min)" : " (%lld h)", h, min);
  } else {
    std::snprintf(gloss, sizeof(gloss), sec > 0 ? " (%lld min %lld s)" : " (%lld min)", min, sec);
  }
  return buf + std::string(gloss);
}

std::string IncidentFileLabel(const std::string& file) { return file + " (in this incident's folder)"; }

StatusOr<int> RunMonitor(const MonitorOptions& options, const DiagnoseFn& diagnose) {
  return Monitor(options, diagnose).Run();
}

}  // namespace aiprof
