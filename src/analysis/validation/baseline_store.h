// SQLite store of baselines, validations and knowledge cards
// (schema: docs/validation.md, "Database").
//
// Several processes may write at once (CI jobs, cron): the database runs in
// WAL mode with a busy timeout, and every write is one BEGIN IMMEDIATE
// transaction, so writers queue instead of failing or interleaving.
#ifndef AIPROF_SRC_ANALYSIS_VALIDATION_BASELINE_STORE_H_
#define AIPROF_SRC_ANALYSIS_VALIDATION_BASELINE_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/analysis/validation/knowledge_card.h"
#include "src/analysis/validation/run_samples.h"
#include "src/base/status.h"

struct sqlite3;

namespace aiprof {

inline constexpr int kBaselineSchemaVersion = 1;
inline constexpr int kBusyTimeoutMs = 30000;

// $XDG_DATA_HOME/aiprof/baselines.db, else $HOME/.local/share/aiprof/baselines.db.
StatusOr<std::string> DefaultBaselineDbPath();

struct StoredBaseline {
  int64_t id = 0;
  std::string service;
  int64_t created_unix_ms = 0;
  std::string source;        // the trace or file it came from
  std::string summary_json;  // the trace summary (aiprof summary --format json), or "{}"
  RunSamples samples;        // label "baseline NAME #ID (source)"
};

struct ValidationRecord {
  int64_t id = 0;
  std::string service;  // empty for before/after validations outside a service
  int64_t baseline_id = 0;  // 0 when not against a baseline
  int64_t created_unix_ms = 0;
  std::string before_label, after_label;
  std::string overall;  // VerdictId
  bool alert = false;   // a significant regression was found
  std::string headline;     // one line, as the alert prints it
  std::string report_json;  // the full JSON report
};

class BaselineStore {
 public:
  // Opens (creating folders, file and schema as needed) the database at `path`.
  static StatusOr<std::unique_ptr<BaselineStore>> Open(const std::string& path);
  ~BaselineStore();
  BaselineStore(const BaselineStore&) = delete;
  BaselineStore& operator=(const BaselineStore&) = delete;

  // Stores a new baseline for `service` (earlier ones are kept); returns its id.
  StatusOr<int64_t> SaveBaseline(const std::string& service, const RunSamples& samples, const std::string& summary_json);
  // The newest baseline of `service`; fails naming the service if there is none.
  StatusOr<StoredBaseline> LatestBaseline(const std::string& service);
  StatusOr<int64_t> SaveValidation(const ValidationRecord& record);
  // Validations of `service`, newest first (all when limit is 0).
  StatusOr<std::vector<ValidationRecord>> History(const std::string& service, size_t limit);
  StatusOr<int64_t> SaveCard(const KnowledgeCard& card);
  // Cards with this bottleneck (case-insensitive), newest first.
  StatusOr<std::vector<KnowledgeCard>> Cards(std::string_view bottleneck);
  // Every card, newest first (at most `limit`; all when 0).
  StatusOr<std::vector<KnowledgeCard>> RecentCards(size_t limit);

  const std::string& path() const { return path_; }

 private:
  BaselineStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status Exec(const char* sql);
  Status Error(const char* what);
  Status InitSchema();

  sqlite3* db_;
  std::string path_;
};

// Milliseconds since the Unix epoch (wall clock).
int64_t NowUnixMs();

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_VALIDATION_BASELINE_STORE_H_
