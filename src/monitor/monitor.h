// `aiprof monitor`: watches a running service through the SDK's live channel
// (src/sdk/live_channel.h), keeps a rolling window of its requests, steps,
// counters, CPU and RSS (window.h), evaluates alert expressions (alert.h)
// every interval and, when one holds, writes an incident folder: the SDK's
// flight recorder (the minutes before), a deep trace taken with aiprof
// trace's capture (host CPU samples + the SDK's spans), its diagnosis and
// alert.json. docs/monitor.md.
#ifndef AIPROF_SRC_MONITOR_MONITOR_H_
#define AIPROF_SRC_MONITOR_MONITOR_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "src/base/status.h"

namespace aiprof {

class AnalysisSession;

enum class OnAlert : uint8_t { kTrace, kDump, kNone };

struct MonitorOptions {
  int pid = 0;                        // watch this process ...
  std::vector<std::string> command;   // ... or run this one
  std::vector<std::string> alerts;    // --alert expressions
  int64_t window_ns = 60'000'000'000;
  int64_t interval_ns = 1'000'000'000;
  OnAlert on_alert = OnAlert::kTrace;
  int64_t trace_duration_ns = 30'000'000'000;
  int64_t cooldown_ns = 600'000'000'000;
  int max_incidents = 10;             // 0: no limit
  // What INCIDENTS_DIR keeps: the newest incident folders, at most this
  // many holding at most this many bytes (0: no limit); older ones are
  // removed (docs/monitor.md, "Limits").
  int keep_incidents = 100;
  uint64_t keep_incident_bytes = 2ull << 30;
  std::string metrics_listen;         // "" = no HTTP endpoint
  std::string webhook_token_file;     // POST /alert needs "Authorization: Bearer <its content>"
  std::vector<double> latency_buckets_s;  // /metrics histograms' bounds; empty = kDefaultLatencyBucketsS
  bool once = false;
  int64_t timeout_ns = 0;             // 0 = none
  std::string out_dir;                // INCIDENTS_DIR
  std::string service;                // --service (labels; the baseline's name)
  std::string db;                     // --db (baseline database)
  int cpu_hz = 999;                   // deep trace's host sampling rate
  int64_t attach_timeout_ns = 10'000'000'000;
};

// Rows describing an incident, shown at the top of its diagnosis.
using IncidentContext = std::vector<std::pair<std::string, std::string>>;
// Writes the diagnosis of an incident's trace, read through `session` (the
// monitor's own over the deep trace it merged, or one over the flight
// recorder's file), as Markdown and HTML (the CLI passes the report
// pipeline: src/cli/monitor_command.cc), naming its input `shown_as` in the
// title and the Input row: the file's place in the published incident
// folder, never the working folder it is written in (renamed once complete,
// to a name known only then).
using DiagnoseFn = std::function<Status(AnalysisSession& session, const std::string& shown_as,
                                        const IncidentContext& context, const std::string& md_path,
                                        const std::string& html_path)>;
// A duration as the monitor's log lines say it: "0.5 s", "3.01 s", "60 s";
// from 100 s on whole seconds, and from 2 minutes on with minutes and hours
// beside them: "3597 s (59 min 57 s)", never "3.6e+03 s".
std::string DurationText(int64_t ns);
// How a diagnosis names a file of its own incident folder (`file`, e.g.
// "trace.aiprof"), with no path that outlives the rename.
std::string IncidentFileLabel(const std::string& file);

// Runs until --once's first incident, --timeout, SIGINT/SIGTERM/SIGHUP, a
// stdout whose reader left, or the watched process's exit; returns the exit
// status (4 the service died, 3 when an incident was written, 0 none or
// stopped by a signal), or an error (bad options, the process never
// attached).
StatusOr<int> RunMonitor(const MonitorOptions& options, const DiagnoseFn& diagnose);

}  // namespace aiprof

#endif  // AIPROF_SRC_MONITOR_MONITOR_H_
