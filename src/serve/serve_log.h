// The server's log (its standard error): one line per message, prefixed
// "aiprof serve: ". Messages carry names from traces, uploads and requests,
// so the whole message is shown terminal-safe (TerminalSafe: a line break
// in a name, or in a multi-line error, is shown as \x0a and cannot start a
// forged log line; escape sequences cannot reach the terminal).
#ifndef AIPROF_SRC_SERVE_SERVE_LOG_H_
#define AIPROF_SRC_SERVE_SERVE_LOG_H_

#include <cstdio>
#include <string>
#include <string_view>

#include "src/render/escape.h"

namespace aiprof {

inline void ServeLog(std::string_view message) {
  const std::string line = "aiprof serve: " + TerminalSafe(message) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace aiprof

#endif  // AIPROF_SRC_SERVE_SERVE_LOG_H_
