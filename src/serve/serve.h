// `aiprof serve`: the team's profiling server, one more front end over the
// analysis session. It indexes every run under a logdir (indexer.h, index
// in run_index.h), and serves, over the shared poll() server
// (src/base/http_server.h):
//
//   /                      runs list (searchable: ?q=)
//   /runs/ID               a run: headline, breakdown, diagnosis and
//                          suggestions, top ops, steps (run_document.h)
//   /runs/ID/report        the full report page (src/report/page/)
//   /runs/ID/query?sql=    read-only SQL over the run (src/query/)
//   /compare?a=ID&b=ID     two runs through validation (verdicts, intervals)
//   /history?service=S     a service's validations (aiprof validate --service)
//                          and the team's knowledge cards (aiprof card)
//   /api/...               the same documents as JSON (docs/serve.md)
//
// Every page goes through the page shell (src/render/page.h, one CSP).
// Requests are handled on a small worker pool; sessions of recently shown
// runs are kept (LRU) so a run's analyses run once while it is looked at.
#ifndef AIPROF_SRC_SERVE_SERVE_H_
#define AIPROF_SRC_SERVE_SERVE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/base/status.h"

namespace aiprof {

inline constexpr size_t kDefaultMaxUploadBytes = size_t{64} << 20;
inline constexpr size_t kServeSessionCache = 4;       // open runs kept
inline constexpr size_t kServeQueueLimit = 256;       // requests waiting for a worker; more get 503
inline constexpr size_t kServeMaxSqlBytes = 16 << 10;  // a query's text
inline constexpr size_t kServeListLimit = 1000;       // runs per list
inline constexpr size_t kServeCardLimit = 200;        // knowledge cards on the history page
// Limits of one conversion (docs/serve.md, "Conversion limits"): memory is
// about 190 bytes per event during the analyses (a 212 MB trace of 1.34 M
// events peaked at 255 MB), so 10 M events is about 2 GiB and about 1.6 GB
// of JSON.
inline constexpr uint64_t kDefaultMaxConvertBytes = uint64_t{2} << 30;
inline constexpr uint64_t kDefaultMaxConvertEvents = 10'000'000;
inline constexpr double kDefaultMaxConvertSeconds = 300;
// Uploads and the cache together; new uploads are refused (507) past it.
inline constexpr uint64_t kDefaultMaxStorageBytes = uint64_t{10} << 30;

enum class TokenRole { kRead, kUpload };

struct ServeToken {
  TokenRole role = TokenRole::kRead;
  std::string token;
};

// A --token-file: one "ROLE TOKEN" per line (role "read" or "upload"; upload
// may read too), '#' comments and blank lines ignored. An error names the
// file and line.
StatusOr<std::vector<ServeToken>> ReadTokenFile(const std::string& path);

struct ServeOptions {
  std::string logdir;
  std::string db;                      // "" = LOGDIR/.aiprof-serve/index.db
  std::string listen = "127.0.0.1:8080";
  std::string token_file;              // required beyond loopback
  std::string baselines_db;            // history: "" = the default baseline database (read if it exists)
  int index_threads = 1;
  int request_threads = 2;
  int query_threads = 2;               // SQL queries run at once, on workers of their own
  double query_timeout_s = 10;         // each query's time limit
  int64_t scan_interval_ms = 10'000;
  size_t max_upload_bytes = kDefaultMaxUploadBytes;
  uint64_t max_convert_bytes = kDefaultMaxConvertBytes;    // decompressed input; 0: no limit
  uint64_t max_convert_events = kDefaultMaxConvertEvents;  // 0: no limit
  double max_convert_seconds = kDefaultMaxConvertSeconds;  // 0: no limit
  uint64_t max_storage_bytes = kDefaultMaxStorageBytes;    // uploads + cache; 0: no limit
};

class ServeServer {
 public:
  // Opens the index, starts the indexer and listens. Refuses a non-loopback
  // address without tokens.
  static StatusOr<std::unique_ptr<ServeServer>> Start(const ServeOptions& options);
  ~ServeServer();
  int port() const;
  const std::string& host() const;
  const std::string& db_path() const;
  struct Impl;

 private:
  explicit ServeServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_SERVE_SERVE_H_
