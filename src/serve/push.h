// `aiprof push`: uploads one trace file to an `aiprof serve` instance through
// its upload API (POST /api/runs, docs/serve.md), with the run's name,
// service and tag in the same request, so the run appears whole and labelled
// or not at all (the server writes the body under a hidden name and renames
// it once complete). The file is streamed from disk, never held in memory.
// Plain http:// only; the bearer token comes from a file, never a flag.
#ifndef AIPROF_SRC_SERVE_PUSH_H_
#define AIPROF_SRC_SERVE_PUSH_H_

#include <cstdint>
#include <string>

#include "src/base/status.h"

namespace aiprof {

// How long push waits for the server: to connect, between two writes or
// reads; and (with `wait`) for the run to be converted.
inline constexpr int64_t kPushIoTimeoutMs = 60'000;
inline constexpr int64_t kPushWaitTimeoutMs = 600'000;

struct PushOptions {
  std::string file;    // the trace (one file; any format the server imports)
  std::string server;  // "http://HOST[:PORT][/PREFIX]"
  std::string token;   // bearer token ("" sends none)
  std::string name;    // shown name ("" = the file's name)
  std::string service, tag;
  bool wait = false;   // poll until the run is ready or failed
};

struct PushResult {
  int64_t id = 0;
  std::string path;   // the upload's path in the server's logdir
  std::string url;    // the run's page
  std::string state;  // "queued", or with `wait` "ready"
};

// Checks a --server address (http://HOST[:PORT][/PREFIX]) before anything
// is read or sent: a usage error (exit 2) naming what is wrong.
Status CheckPushServer(const std::string& server);

// Uploads `options.file` (its --server checked first, as CheckPushServer);
// errors name the file or the server and say what
// to do (a read-only token, the server's size limit, a run that failed to
// import with the importer's message).
StatusOr<PushResult> PushRun(const PushOptions& options);

// The token in a --token-file for push: the first line that is one word
// (the token) or "upload TOKEN" (serve's own token-file format); '#'
// comments and blank lines skipped. Errors name the file and line.
StatusOr<std::string> ReadPushToken(const std::string& path);

}  // namespace aiprof

#endif  // AIPROF_SRC_SERVE_PUSH_H_
