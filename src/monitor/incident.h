// One incident of `aiprof monitor`: the folder INCIDENTS_DIR/<time>-<n>/
// with alert.json, flight_recorder.aiprof, trace.aiprof, diagnosis.md and
// diagnosis.html (docs/monitor.md, "The incident folder").
#ifndef AIPROF_SRC_MONITOR_INCIDENT_H_
#define AIPROF_SRC_MONITOR_INCIDENT_H_

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
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

// An incident records at most this many triggers (the first and those
// during it; the service's end is recorded past it); the rest are counted.
inline constexpr size_t kMaxIncidentTriggers = 100;
// Webhook alerts waiting for the next evaluation, at most (a payload holds
// at most 1,000); the rest are counted, not queued.
inline constexpr size_t kMaxPendingWebhookAlerts = 1000;
// Appends `item` to `list` unless it holds `limit` items already, which
// bumps *dropped instead. Returns whether it was appended.
template <typename T>
bool AppendBounded(std::vector<T>* list, size_t limit, T item, uint64_t* dropped) {
  if (list->size() >= limit) {
    ++*dropped;
    return false;
  }
  list->push_back(std::move(item));
  return true;
}

// An incident folder is written under a hidden working name and renamed to
// its final name once complete, and neither name is ever shared with
// another writer (two monitors writing to one INCIDENTS_DIR, a monitor
// restarted within the same second): mkdir without accepting EEXIST, and a
// rename that never replaces what is there.
//
// Creates `out_dir`/.incident-<tag>.tmp.<boot>-<pid>.XXXXXX (a name never
// taken: mkdtemp) and returns its path; the folder stays locked
// (src/base/libc/writer_temp.h) until PublishIncidentDir or
// RemoveIncidentWorkDir, so that no other monitor's sweep takes it.
StatusOr<std::string> CreateIncidentWorkDir(const std::string& out_dir, const std::string& tag);
// Renames the complete `work_dir` to `out_dir`/`name`, else `name`-2,
// `name`-3 ... (the first free name), and returns the path it took.
StatusOr<std::string> PublishIncidentDir(const std::string& work_dir, const std::string& out_dir,
                                         const std::string& name);
// Removes a working folder that could not be completed, with what it holds.
void RemoveIncidentWorkDir(const std::string& work_dir);
// Removes the working folders in `out_dir` of monitors killed while writing
// an incident, by the rule of src/base/libc/writer_temp.h: not locked, and its
// monitor (boot id and pid in the name) provably gone, or untouched for 24
// hours (an earlier monitor's `.incident-<pid>-<n>.tmp`, which has no boot
// id, only so). Says each on stderr; returns how many it removed.
int RemoveStaleIncidentWorkDirs(const std::string& out_dir);

// Says each removal of base's sweeps (a killed write's temporary file
// beside an -o output, AtomicFileWriter) on stderr, the name escaped for the
// terminal. The CLI calls it at start.
void SayWriterTempRemovals();

// What INCIDENTS_DIR keeps (docs/monitor.md, "Limits"): at most `count`
// complete incident folders holding at most `bytes` together (0: no limit).
// The newest incident is kept whatever its size.
struct IncidentRetention {
  int count = 100;
  uint64_t bytes = 2ull << 30;
};
// Whether `name` is a complete incident folder's: <UTC time>-<n>[-k].
bool IsIncidentDirName(const std::string& name);
// Bytes of the files under `path` (0 when unreadable).
uint64_t TreeBytes(const std::string& path);
struct PruneResult {
  std::vector<std::string> removed;  // folder names, oldest first
  std::vector<std::string> failed;   // "name: why" of those that could not be removed (still kept)
  size_t kept = 0;                   // incident folders left
  uint64_t kept_bytes = 0;           // what they hold
};
// Removes the oldest incident folders of `out_dir` until it keeps at most
// retention.count - `room` of them holding at most retention.bytes -
// `room_bytes` (room: a folder about to be published, so the limits hold
// at every moment), never going below none. Oldest first: folders this
// monitor did not write, by name (their UTC time, then n, k), then `own`
// (this monitor's, in the order it published them: a wall clock that
// jumped back cannot make the newest folder look oldest). Removed names
// leave `own`.
PruneResult PruneIncidentDirs(const std::string& out_dir, const IncidentRetention& retention,
                              std::deque<std::string>* own, int room, uint64_t room_bytes);
// The SDK's exit files of the services the monitor started
// (INCIDENTS_DIR/.service/aiprof-<pid>.aiprof, one per service run): keeps
// the newest `keep` (by modification time) and returns the names removed.
inline constexpr int kKeepServiceFiles = 5;
std::vector<std::string> PruneServiceFiles(const std::string& dir, int keep);

}  // namespace aiprof

#endif  // AIPROF_SRC_MONITOR_INCIDENT_H_
