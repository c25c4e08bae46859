// One incident of `aiprof monitor`: the folder INCIDENTS_DIR/<time>-<n>/
// with alert.json, flight_recorder.aiprof, trace.aiprof, diagnosis.md and
// diagnosis.html (docs/monitor.md, "The incident folder").
#ifndef AIPROF_SRC_MONITOR_INCIDENT_H_
#define AIPROF_SRC_MONITOR_INCIDENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "src/analysis/rules/expression.h"
#include "src/base/status.h"
#include "src/monitor/window.h"
#include "src/render/tree.h"

namespace aiprof {

// What set an incident off, or joined it while it was being written.
struct IncidentTrigger {
  std::string kind;        // "alert", "webhook", "target_exited"
  std::string expression;  // the alert's text, the webhook's alert names, or the exit status
  int64_t monotonic_ns = 0;
  int64_t unix_ms = 0;
  EvalResult result;       // alerts only
  WindowStats window;
  std::string requested_by;  // webhooks: the peer's address
};

// The window statistics as JSON (alert.json, tests).
Tree WindowStatsTree(const WindowStats& s);
Tree TriggerTree(const IncidentTrigger& t);
// "2026-12-01T10:42:33.123Z" from Unix ms.
std::string UtcText(int64_t unix_ms);
// "20261201T104233Z" from Unix ms (folder names).
std::string UtcStamp(int64_t unix_ms);
// One line about a trigger's values: "p99_latency = 2.31 s (> 2 s)".
std::string DescribeTrigger(const IncidentTrigger& t);

// An incident folder is written under a hidden working name and renamed to
// its final name once complete, and neither name is ever shared with
// another writer (two monitors writing to one INCIDENTS_DIR, a monitor
// restarted within the same second): mkdir without accepting EEXIST, and a
// rename that never replaces what is there.
//
// Creates `out_dir`/.incident-<tag>.tmp (or -2, -3 ... when taken) and
// returns its path.
StatusOr<std::string> CreateIncidentWorkDir(const std::string& out_dir, const std::string& tag);
// Renames the complete `work_dir` to `out_dir`/`name`, else `name`-2,
// `name`-3 ... (the first free name), and returns the path it took.
StatusOr<std::string> PublishIncidentDir(const std::string& work_dir, const std::string& out_dir,
                                         const std::string& name);
// Removes a working folder that could not be completed, with what it holds.
void RemoveIncidentWorkDir(const std::string& work_dir);
// Removes the working folders in `out_dir` whose monitor is gone (killed
// while writing an incident): .incident-<pid>-... with no process <pid>.
void RemoveStaleIncidentWorkDirs(const std::string& out_dir);

}  // namespace aiprof

#endif  // AIPROF_SRC_MONITOR_INCIDENT_H_
