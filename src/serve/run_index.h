// The index of `aiprof serve`: one SQLite database (WAL, busy timeout) that
// lists every run found under the logdir or uploaded, its state, where its
// native-file cache is, and the figures the runs list shows. Several
// servers and CLI readers may open the same database: a run is converted by
// whoever claims it first (ClaimNext's conditional UPDATE), so no run is
// imported twice.
#ifndef AIPROF_SRC_SERVE_RUN_INDEX_H_
#define AIPROF_SRC_SERVE_RUN_INDEX_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "src/base/status.h"

struct sqlite3;

namespace aiprof {

inline constexpr int kRunIndexSchemaVersion = 2;  // 2: runs.service (a version-1 index is upgraded)
// A conversion claimed longer ago than this (a server that died while
// converting) is queued again when an index opens. A claim records its
// converter (claimed_by: boot id, pid namespace, pid, start time): one whose
// process is gone from this machine is queued again at the next ClaimNext.
inline constexpr int64_t kStaleClaimMs = 3'600'000;

enum class RunState { kQueued, kConverting, kReady, kFailed };
const char* RunStateName(RunState s);  // "queued", "converting", "ready", "failed"

struct RunRow {
  int64_t id = 0;
  std::string path;  // relative to the logdir
  std::string name;  // shown; the file name unless renamed
  std::string tag;
  std::string service;  // given at upload (aiprof push --service); "" for scanned runs
  int64_t size_bytes = 0,
          mtime_ns =
              0;  // mtime: Unix time of the file (a folder run: its newest file, or the folder if later; StampOf)
  RunState state = RunState::kQueued;
  std::string error;  // the importer's message when failed
  std::string cache;  // native file name in the cache folder ("" until ready)
  // Figures of the runs list (NaN / empty when unknown).
  std::string source_format;
  int64_t steps = 0;
  double step_p50_ns = 0;
  double device_util = -1;        // busy share, -1 unknown ...
  std::string device_util_basis;  // ... of this base (ReportData's: the steady steps' wall time, else the span);
                                  // "" for a run converted before the index kept it
  std::string top_finding;      // title of the top finding
  double top_share = 0;         // its impact share ...
  std::string top_basis;        // ... of this time base
  int64_t indexed_unix_ms = 0;  // when it was converted
  double convert_ms = 0;        // import + native write + analyses
};

class RunIndex {
 public:
  // Opens (creating file and schema) the database at `path`.
  static StatusOr<std::unique_ptr<RunIndex>> Open(const std::string& path);
  ~RunIndex();
  RunIndex(const RunIndex&) = delete;
  RunIndex& operator=(const RunIndex&) = delete;

  // Records a file found under the logdir; a new file, or one whose size or
  // modification time changed, is (re)queued. Returns its id.
  StatusOr<int64_t> Upsert(const std::string& rel_path, int64_t size_bytes, int64_t mtime_ns);
  // Records an uploaded file, queued, with its name, service and tag in one
  // statement (if a scan recorded the file first, it gets the labels).
  // Returns its id.
  StatusOr<int64_t> AddUpload(const std::string& rel_path, int64_t size_bytes, int64_t mtime_ns,
                              const std::string& name, const std::string& service, const std::string& tag);
  // Size and modification time recorded for `rel_path`, if known.
  StatusOr<std::optional<std::pair<int64_t, int64_t>>> Stamp(const std::string& rel_path);
  // Claims the oldest queued run for conversion (nullopt: none queued).
  StatusOr<std::optional<RunRow>> ClaimNext();
  Status MarkReady(const RunRow& row);  // cache and figures from `row`
  Status MarkFailed(int64_t id, const std::string& error);
  Status SetName(int64_t id, const std::string& name, const std::string& tag);
  // Removes run `id`'s row unless it is being converted: true when a row
  // was removed.
  StatusOr<bool> Delete(int64_t id);
  // Removes run `id`'s row when it still has the stamp a scan saw (`size_bytes`,
  // `mtime_ns`: not recorded again since) and no converter has it (neither
  // 'converting' nor queued again under a claim younger than kStaleClaimMs):
  // a run whose file a scan found gone. True when a row was removed.
  StatusOr<bool> Retire(int64_t id, int64_t size_bytes, int64_t mtime_ns);
  // Runs whose path, name, service, tag, state or top finding contain `search`
  // (case-insensitive; all when empty), newest first.
  StatusOr<std::vector<RunRow>> List(const std::string& search, size_t limit);
  StatusOr<std::optional<RunRow>> Get(int64_t id);

 private:
  explicit RunIndex(sqlite3* db) : db_(db) {}
  Status Exec(const char* sql);
  Status Error(const char* what);
  Status EndClaimLocked(int64_t id);
  void RequeueGoneClaimsLocked();

  std::mutex mu_;  // one statement at a time on this connection
  sqlite3* db_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_SERVE_RUN_INDEX_H_
