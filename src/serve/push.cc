#include "src/serve/push.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <simdjson.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "src/base/http_server.h"

namespace aiprof {
namespace {

inline constexpr size_t kMaxReplyBytes = 16 << 20;  // a larger answer is not serve's
inline constexpr size_t kSendChunkBytes = 1 << 20;

struct ServerUrl {
  std::string host;    // without brackets
  std::string port = "80";
  std::string prefix;  // "" or "/PREFIX" without a trailing '/'
  std::string origin;  // "http://HOST:PORT" as given
};

bool AllOf(std::string_view s, const char* allowed_punct) {
  for (char c : s) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && std::strchr(allowed_punct, c) == nullptr) return false;
  }
  return true;
}

StatusOr<ServerUrl> ParseServer(const std::string& text) {
  const std::string where = "--server " + text;
  if (text.rfind("https://", 0) == 0) {
    return UsageStatus(where +
                       ": https is not supported by push; give the http:// address of a server on a trusted "
                       "network (or reach it through an SSH tunnel)");
  }
  if (text.rfind("http://", 0) != 0) return UsageStatus(where + ": expected http://HOST[:PORT][/PREFIX]");
  const std::string rest = text.substr(7);
  const size_t slash = rest.find('/');
  const std::string hostport = rest.substr(0, slash);
  ServerUrl u;
  u.prefix = slash == std::string::npos ? "" : rest.substr(slash);
  while (!u.prefix.empty() && u.prefix.back() == '/') u.prefix.pop_back();
  std::string port_text;
  if (!hostport.empty() && hostport[0] == '[') {
    const size_t close = hostport.find(']');
    if (close == std::string::npos) return UsageStatus(where + ": unclosed '[' in the address");
    u.host = hostport.substr(1, close - 1);
    const std::string after = hostport.substr(close + 1);
    if (!after.empty() && after[0] != ':') return UsageStatus(where + ": expected :PORT after ']'");
    if (!after.empty()) port_text = after.substr(1);
  } else {
    const size_t colon = hostport.find(':');
    u.host = hostport.substr(0, colon);
    if (colon != std::string::npos) port_text = hostport.substr(colon + 1);
  }
  if (u.host.empty() || !AllOf(u.host, ".-:")) return UsageStatus(where + ": no valid host name");
  if (!port_text.empty() || hostport.back() == ':') {
    if (port_text.empty() || port_text.size() > 5 || port_text.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(port_text) < 1 || std::stoi(port_text) > 65535) {
      return UsageStatus(where + ": the port is a number from 1 to 65535");
    }
    u.port = port_text;
  }
  if (!AllOf(u.prefix, "/-._~")) return UsageStatus(where + ": the path may hold letters, digits and / - . _ ~ only");
  u.origin = "http://" + hostport;
  return u;
}

std::string Errno() { return std::strerror(errno); }

// One HTTP/1.1 exchange on its own connection (serve answers one request per
// connection and closes it), every wait bounded by kPushIoTimeoutMs.
class Connection {
 public:
  ~Connection() {
    if (fd_ >= 0) ::close(fd_);
  }

  Status Open(const ServerUrl& u) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int rc = ::getaddrinfo(u.host.c_str(), u.port.c_str(), &hints, &found);
    if (rc != 0) return ErrStatus(u.origin + ": cannot resolve " + u.host + ": " + ::gai_strerror(rc));
    std::string why = "no address";
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
      fd_ = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
      if (fd_ < 0) continue;
      if (::connect(fd_, a->ai_addr, a->ai_addrlen) == 0 || (errno == EINPROGRESS && Wait(POLLOUT) && SocketOk(&why))) {
        ::freeaddrinfo(found);
        return OkStatus();
      }
      if (errno != EINPROGRESS) why = Errno();
      ::close(fd_);
      fd_ = -1;
    }
    ::freeaddrinfo(found);
    return ErrStatus(u.origin + ": cannot connect: " + why + " (is aiprof serve running there?)");
  }

  // Sends all of `data`; false when the server closed or stopped reading.
  bool Send(const char* data, size_t n, std::string* why) {
    while (n > 0) {
      const ssize_t w = ::send(fd_, data, n, MSG_NOSIGNAL);
      if (w > 0) {
        data += w;
        n -= static_cast<size_t>(w);
        continue;
      }
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (Wait(POLLOUT)) continue;
        *why = "timed out sending";
        return false;
      }
      *why = Errno();
      return false;
    }
    return true;
  }

  // Whether the server has answered (or closed) already: it refuses an
  // upload (401, 413) from the headers, before reading the body.
  bool Answered() {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }

  // The whole answer (until Content-Length is met or the server closes).
  Status Receive(std::string* out, const std::string& origin) {
    char buf[65536];
    size_t need = std::string::npos;
    while (out->size() < need) {
      const ssize_t r = ::recv(fd_, buf, sizeof buf, 0);
      if (r > 0) {
        out->append(buf, static_cast<size_t>(r));
        if (out->size() > kMaxReplyBytes) return ErrStatus(origin + ": answer over 16 MiB: is this aiprof serve?");
        if (need == std::string::npos) need = ExpectedSize(*out);
        continue;
      }
      if (r == 0) return OkStatus();
      if (errno == EINTR) continue;
      if ((errno == EAGAIN || errno == EWOULDBLOCK) && Wait(POLLIN)) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return ErrStatus(origin + ": no answer within 60 s");
      return out->empty() ? ErrStatus(origin + ": connection lost: " + Errno()) : OkStatus();
    }
    return OkStatus();
  }

 private:
  bool Wait(short events) {
    pollfd p{fd_, events, 0};
    int rc;
    do {
      rc = ::poll(&p, 1, static_cast<int>(kPushIoTimeoutMs));
    } while (rc < 0 && errno == EINTR);
    return rc > 0;
  }

  bool SocketOk(std::string* why) {
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) *why = std::strerror(err);
    return err == 0;
  }

  // Header bytes + Content-Length, once the header is in; npos before.
  static size_t ExpectedSize(const std::string& s) {
    const size_t end = s.find("\r\n\r\n");
    if (end == std::string::npos) return std::string::npos;
    const std::string head = s.substr(0, end);
    for (const char* key : {"\r\nContent-Length:", "\r\ncontent-length:"}) {
      const size_t k = head.find(key);
      if (k != std::string::npos) return end + 4 + std::strtoull(head.c_str() + k + std::strlen(key), nullptr, 10);
    }
    return std::string::npos;
  }

  int fd_ = -1;
};

struct Reply {
  int status = 0;
  std::string body;
};

// Sends `head` and then `body_fd`'s `body_bytes` (if any) and reads the
// answer. A server that answers before the body is all sent (401, 413)
// is heard: its answer counts, not the broken send.
StatusOr<Reply> Exchange(const ServerUrl& u, const std::string& head, int body_fd, uint64_t body_bytes,
                         const std::string& file) {
  Connection c;
  RETURN_IF_ERROR(c.Open(u));
  std::string why;
  bool sent = c.Send(head.data(), head.size(), &why);
  std::string chunk(body_fd >= 0 ? kSendChunkBytes : 0, '\0');
  for (uint64_t left = body_bytes; sent && left > 0 && !c.Answered();) {
    const ssize_t r = ::read(body_fd, chunk.data(), std::min<uint64_t>(left, chunk.size()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return ErrStatus(file + ": read failed while sending: " + (r < 0 ? Errno() : "the file shrank"));
    left -= static_cast<uint64_t>(r);
    sent = c.Send(chunk.data(), static_cast<size_t>(r), &why);
  }
  std::string raw;
  Status received = c.Receive(&raw, u.origin);
  if (raw.rfind("HTTP/1.", 0) != 0 || raw.size() < 12) {
    if (!sent) return ErrStatus(u.origin + ": connection lost while sending " + file + ": " + why);
    RETURN_IF_ERROR(received);
    return ErrStatus(u.origin + ": not an HTTP answer: is this aiprof serve?");
  }
  Reply reply;
  reply.status = std::atoi(raw.c_str() + 9);
  const size_t body = raw.find("\r\n\r\n");
  if (body != std::string::npos) reply.body = raw.substr(body + 4);
  while (!reply.body.empty() && (reply.body.back() == '\n' || reply.body.back() == '\r')) reply.body.pop_back();
  return reply;
}

// The "error" of a JSON answer, or the answer itself (plain-text errors).
std::string ErrorText(const std::string& body) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string_view message;
  if (parser.parse(body).get(doc) == simdjson::SUCCESS && doc["error"].get(message) == simdjson::SUCCESS) {
    return std::string(message);
  }
  return body.substr(0, 500);
}

std::string Explain(const Reply& r, const PushOptions& o, uint64_t size) {
  const std::string head = o.server + " refused the upload of " + o.file + " (" + std::to_string(r.status) + "): ";
  switch (r.status) {
    case 401: return head + "no token or a wrong one: give --token-file with an upload token of the server's --token-file";
    case 403: return head + "the token may only read: pushing needs an \"upload\" token";
    case 404:
    case 405: return head + "no upload API there: is --server the address of aiprof serve (without /api)?";
    case 413:
      return head + "the file (" + std::to_string(size >> 20) + " MiB) is over the server's upload limit (its "
                    "--max-upload-mb)";
    default: return head + ErrorText(r.body);
  }
}

StatusOr<PushResult> WaitReady(const ServerUrl& u, const std::string& auth, PushResult result) {
  const std::string head = "GET " + u.prefix + "/api/runs/" + std::to_string(result.id) + " HTTP/1.1\r\nHost: " +
                           u.origin.substr(7) + "\r\nConnection: close\r\n" + auth + "\r\n";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kPushWaitTimeoutMs);
  for (int delay_ms = 100;; delay_ms = std::min(delay_ms * 2, 2000)) {
    ASSIGN_OR_RETURN(Reply r, Exchange(u, head, -1, 0, ""));
    if (r.status == 200) {
      result.state = "ready";
      return result;
    }
    if (r.status == 409) {
      return ErrStatus("run " + std::to_string(result.id) + " (" + result.path + ") failed to import on the server: " +
                       ErrorText(r.body));
    }
    if (r.status != 503) return ErrStatus(u.origin + ": GET /api/runs/" + std::to_string(result.id) + " answered " +
                                          std::to_string(r.status) + ": " + ErrorText(r.body));
    if (std::chrono::steady_clock::now() > deadline) {
      return ErrStatus("run " + std::to_string(result.id) + " is still being converted after " +
                       std::to_string(kPushWaitTimeoutMs / 1000) + " s (" + result.url + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  }
}

}  // namespace

StatusOr<std::string> ReadPushToken(const std::string& path) {
  std::ifstream in(path);
  if (!in) return ErrStatus("--token-file " + path + ": cannot read it");
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    const std::string where = "--token-file " + path + ":" + std::to_string(n);
    std::string token = line.substr(start);
    const size_t sp = token.find_first_of(" \t");
    if (sp != std::string::npos) {
      const std::string role = token.substr(0, sp);
      if (role == "read") continue;  // serve's format: a read token cannot push
      if (role != "upload") return ErrStatus(where + ": expected a token, or \"upload TOKEN\"");
      token = token.substr(token.find_first_not_of(" \t", sp));
    }
    if (token.size() < 16 || !AllOf(token, "!#$%&'*+-.^_`|~/=")) {
      return ErrStatus(where + ": a token is one word of at least 16 printable characters");
    }
    return token;
  }
  return ErrStatus("--token-file " + path + ": no token (a line \"TOKEN\" or \"upload TOKEN\")");
}

Status CheckPushServer(const std::string& server) { return ParseServer(server).status(); }

StatusOr<PushResult> PushRun(const PushOptions& o) {
  ASSIGN_OR_RETURN(ServerUrl u, ParseServer(o.server));
  struct stat st{};
  if (::stat(o.file.c_str(), &st) != 0) return ErrStatus(o.file + ": " + Errno());
  if (S_ISDIR(st.st_mode)) {
    return ErrStatus(o.file + ": a folder; push uploads one trace file (for a folder of ranks, let the server index "
                              "it under its --logdir)");
  }
  if (!S_ISREG(st.st_mode)) return ErrStatus(o.file + ": not a regular file");
  if (st.st_size == 0) return ErrStatus(o.file + ": empty file");
  // O_NONBLOCK: a FIFO put at the path after the stat does not block the open.
  const int fd = ::open(o.file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return ErrStatus(o.file + ": " + Errno());
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  // The size sent is the opened file's: a file renamed over the path between
  // the stat and the open (an atomic writer's replace) would have sent the
  // old file's length of the new one's bytes (trial_races, reasoning item 3).
  if (::fstat(fd, &st) != 0) return ErrStatus(o.file + ": " + Errno());
  if (!S_ISREG(st.st_mode)) return ErrStatus(o.file + ": not a regular file");
  if (st.st_size == 0) return ErrStatus(o.file + ": empty file");
  const std::string name = o.name.empty() ? std::filesystem::path(o.file).filename().string() : o.name;
  std::string target = u.prefix + "/api/runs?name=" + PercentEncode(name);
  if (!o.service.empty()) target += "&service=" + PercentEncode(o.service);
  if (!o.tag.empty()) target += "&tag=" + PercentEncode(o.tag);
  const std::string auth = o.token.empty() ? "" : "Authorization: Bearer " + o.token + "\r\n";
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const std::string head = "POST " + target + " HTTP/1.1\r\nHost: " + u.origin.substr(7) +
                           "\r\nUser-Agent: aiprof-push\r\nContent-Type: application/octet-stream\r\nContent-Length: " +
                           std::to_string(size) + "\r\nConnection: close\r\n" + auth + "\r\n";
  ASSIGN_OR_RETURN(Reply r, Exchange(u, head, fd, size, o.file));
  if (r.status != 202) return ErrStatus(Explain(r, o, size));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  PushResult result;
  std::string_view path;
  if (parser.parse(r.body).get(doc) != simdjson::SUCCESS || doc["id"].get(result.id) != simdjson::SUCCESS ||
      doc["path"].get(path) != simdjson::SUCCESS) {
    return ErrStatus(o.server + ": the upload was accepted but the answer names no run: " + r.body.substr(0, 200));
  }
  result.path = std::string(path);
  result.url = u.origin + u.prefix + "/runs/" + std::to_string(result.id);
  result.state = "queued";
  if (!o.wait) return result;
  return WaitReady(u, auth, std::move(result));
}

}  // namespace aiprof
