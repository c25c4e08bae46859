#include "src/monitor/metrics_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <simdjson.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace aiprof {

namespace {

// An Alertmanager group rarely holds more than a few dozen alerts.
inline constexpr size_t kMaxWebhookAlerts = 1000;
inline constexpr size_t kMaxAlertNameBytes = 1024;
// After a response, what the client still sends is read and dropped for at
// most this long before the socket closes (so the client reads the answer
// rather than a reset).
inline constexpr int64_t kLingerNs = 1'000'000'000;
inline constexpr size_t kMaxChunkLineBytes = 1024;

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string Lower(std::string s) {
  for (char& c : s) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return s;
}

std::string Trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t')) --b;
  return s.substr(a, b - a);
}

bool SameSecret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i % (b.empty() ? 1 : b.size())]);
  return diff == 0 && !a.empty();
}

const char* Reason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

}  // namespace

Status ParseListenAddress(const std::string& text, std::string* host, int* port) {
  std::string h = "127.0.0.1", p = text;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return ErrStatus("--metrics-listen " + text + ": expected [IPv6]:PORT");
    }
    h = text.substr(1, close - 1);
    p = text.substr(close + 2);
  } else if (const size_t colon = text.rfind(':'); colon != std::string::npos) {
    h = text.substr(0, colon);
    p = text.substr(colon + 1);
  }
  char* end = nullptr;
  const long v = std::strtol(p.c_str(), &end, 10);
  if (p.empty() || *end != '\0' || v < 0 || v > 65535 || h.empty()) {
    return ErrStatus("--metrics-listen " + text + ": expected PORT or HOST:PORT (e.g. 127.0.0.1:9464)");
  }
  *host = h;
  *port = static_cast<int>(v);
  return OkStatus();
}

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr a4{};
  return inet_pton(AF_INET, host.c_str(), &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

StatusOr<std::vector<std::string>> ParseAlertmanagerWebhook(const std::string& body) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(body).get(doc) != simdjson::SUCCESS) return ErrStatus("the body is not JSON");
  simdjson::dom::array alerts;
  if (doc["alerts"].get_array().get(alerts) != simdjson::SUCCESS) {
    return ErrStatus("not an Alertmanager webhook: no \"alerts\" array");
  }
  if (alerts.size() > kMaxWebhookAlerts) {
    return ErrStatus("more than " + std::to_string(kMaxWebhookAlerts) + " alerts in one webhook");
  }
  std::vector<std::string> firing;
  size_t i = 0;
  for (simdjson::dom::element a : alerts) {
    const std::string where = "alerts[" + std::to_string(i++) + "]";
    std::string_view status;
    if (a["status"].get_string().get(status) != simdjson::SUCCESS || (status != "firing" && status != "resolved")) {
      return ErrStatus(where + ": \"status\" must be \"firing\" or \"resolved\"");
    }
    std::string_view name;
    if (a["labels"]["alertname"].get_string().get(name) != simdjson::SUCCESS || name.empty()) {
      return ErrStatus(where + ": no labels.alertname (a non-empty string)");
    }
    if (name.size() > kMaxAlertNameBytes) {
      return ErrStatus(where + ": labels.alertname longer than " + std::to_string(kMaxAlertNameBytes) + " bytes");
    }
    if (status == "firing") firing.emplace_back(name);
  }
  return firing;
}

// One client connection: a state machine fed by poll().
struct MetricsServer::Connection {
  enum class State { kHead, kBody, kChunkSize, kChunkData, kChunkEnd, kTrailer, kWrite, kLinger };
  int fd = -1;
  std::string peer;
  State state = State::kHead;
  int64_t accepted_ns = 0, deadline_ns = 0;
  std::string in;  // received, not yet parsed
  std::string method, path, authorization;
  bool chunked = false;
  uint64_t content_length = 0, chunk_left = 0;
  std::string body;
  std::string out;
  size_t out_pos = 0;
  bool reading() const { return state != State::kWrite && state != State::kLinger; }
};

StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(const Options& options, MetricsFn metrics,
                                                              TriggerFn trigger) {
  if (!IsLoopbackHost(options.host) && options.webhook_token.empty()) {
    return ErrStatus("--metrics-listen " + options.host + ": not a loopback address; POST /alert would start deep "
                     "traces for anyone who can reach it: give --webhook-token-file (Alertmanager's "
                     "http_config.authorization.credentials_file), or listen on 127.0.0.1");
  }
  std::unique_ptr<MetricsServer> s(new MetricsServer());
  s->options_ = options;
  s->metrics_ = std::move(metrics);
  s->trigger_ = std::move(trigger);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const std::string where = options.host + ":" + std::to_string(options.port);
  if (int rc = getaddrinfo(options.host.c_str(), std::to_string(options.port).c_str(), &hints, &res); rc != 0) {
    return ErrStatus("--metrics-listen " + where + ": " + gai_strerror(rc));
  }
  std::string error = "no address";
  for (addrinfo* ai = res; ai && s->listen_fd_ < 0; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 256) == 0) {
      s->listen_fd_ = fd;
    } else {
      error = std::strerror(errno);
      close(fd);
    }
  }
  freeaddrinfo(res);
  if (s->listen_fd_ < 0) {
    return ErrStatus("--metrics-listen: cannot bind " + where + " (" + error + ": in use, or not an address of this host)");
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(s->listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  s->port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                               : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  if (pipe2(s->wake_, O_CLOEXEC | O_NONBLOCK) != 0) return ErrStatus(std::string("pipe: ") + std::strerror(errno));
  s->thread_ = std::thread([server = s.get()] { server->Serve(); });
  return s;
}

MetricsServer::~MetricsServer() {
  if (wake_[1] >= 0) (void)!write(wake_[1], "x", 1);
  if (thread_.joinable()) thread_.join();
  for (int fd : {listen_fd_, wake_[0], wake_[1]}) {
    if (fd >= 0) close(fd);
  }
}

void MetricsServer::Accept(std::vector<std::unique_ptr<Connection>>* conns) {
  for (;;) {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    if (static_cast<int>(conns->size()) >= options_.limits.max_connections) {
      // Full: the connection that has waited longest for its request goes.
      auto oldest = conns->end();
      for (auto it = conns->begin(); it != conns->end(); ++it) {
        if ((*it)->reading() && (oldest == conns->end() || (*it)->accepted_ns < (*oldest)->accepted_ns)) oldest = it;
      }
      if (oldest == conns->end()) {
        ++counts_.rejected;
        close(fd);
        continue;
      }
      ++counts_.evicted;
      close((*oldest)->fd);
      conns->erase(oldest);
    }
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (addr.ss_family == AF_INET) {
      auto* a = reinterpret_cast<sockaddr_in*>(&addr);
      inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
      port = ntohs(a->sin_port);
      c->peer = std::string(host) + ":" + std::to_string(port);
    } else if (addr.ss_family == AF_INET6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
      inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
      port = ntohs(a->sin6_port);
      c->peer = "[" + std::string(host) + "]:" + std::to_string(port);
    }
    c->accepted_ns = NowNs();
    c->deadline_ns = c->accepted_ns + options_.limits.header_timeout_ns;
    conns->push_back(std::move(c));
  }
}

void MetricsServer::Respond(Connection* c, int status, const std::string& body, const char* content_type) {
  c->out = "HTTP/1.1 " + std::to_string(status) + " " + Reason(status) + "\r\nContent-Type: " + content_type +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n";
  if (status == 401) c->out += "WWW-Authenticate: Bearer\r\n";
  c->out += "\r\n" + body;
  c->out_pos = 0;
  c->state = Connection::State::kWrite;
  c->deadline_ns = NowNs() + options_.limits.write_timeout_ns;
  c->in.clear();
  c->body.clear();
  c->body.shrink_to_fit();
}

void MetricsServer::Handle(Connection* c) {
  ++counts_.requests;
  if (c->path == "/metrics") {
    Respond(c, 200, metrics_(), "text/plain; version=0.0.4; charset=utf-8");
    return;
  }
  StatusOr<std::vector<std::string>> names = ParseAlertmanagerWebhook(c->body);
  if (!names.ok()) {
    Respond(c, 400, names.status().message() + "\n", "text/plain");
    return;
  }
  if (!names->empty()) trigger_(*names, c->peer);
  Respond(c, 200, std::to_string(names->size()) + " firing alert(s) accepted\n", "text/plain");
}

namespace {

// The request line and headers of `head` (without the final CRLF CRLF).
struct RequestHead {
  std::string method, path, authorization, transfer_encoding, expect;
  bool has_length = false;
  uint64_t content_length = 0;
};

bool ParseHead(const std::string& head, RequestHead* r) {
  size_t eol = head.find("\r\n");
  const std::string line = head.substr(0, eol);
  const size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
  if (sp1 == std::string::npos || sp2 == sp1 || line.compare(sp2 + 1, 7, "HTTP/1.") != 0) return false;
  r->method = line.substr(0, sp1);
  r->path = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (const size_t q = r->path.find('?'); q != std::string::npos) r->path.resize(q);
  while (eol != std::string::npos) {
    const size_t start = eol + 2;
    eol = head.find("\r\n", start);
    const std::string h = head.substr(start, eol == std::string::npos ? std::string::npos : eol - start);
    const size_t colon = h.find(':');
    if (colon == std::string::npos || colon == 0) return false;
    const std::string name = Lower(h.substr(0, colon)), value = Trim(h.substr(colon + 1));
    if (name == "content-length") {
      if (value.empty() || value.size() > 18 || value.find_first_not_of("0123456789") != std::string::npos) return false;
      if (r->has_length && std::stoull(value) != r->content_length) return false;
      r->has_length = true;
      r->content_length = std::stoull(value);
    } else if (name == "transfer-encoding") {
      r->transfer_encoding = Lower(value);
    } else if (name == "authorization") {
      r->authorization = value;
    } else if (name == "expect") {
      r->expect = Lower(value);
    }
  }
  return true;
}

}  // namespace

// The request line and headers, once they are all in: answers at once what
// needs no body (GET, errors, a missing token), else prepares the body's
// reading. True when there is more to parse.
bool MetricsServer::OnHead(Connection* c) {
  const HttpLimits& lim = options_.limits;
  using State = Connection::State;
  const size_t end = c->in.find("\r\n\r\n");
  const bool complete = end != std::string::npos;
  if ((complete ? end + 4 : c->in.size()) > lim.max_header_bytes) {
    Respond(c, 431, "request line and headers over " + std::to_string(lim.max_header_bytes) + " bytes\n", "text/plain");
    return false;
  }
  if (!complete) return false;
  RequestHead h;
  if (!ParseHead(c->in.substr(0, end), &h)) {
    Respond(c, 400, "malformed request\n", "text/plain");
    return false;
  }
  c->in.erase(0, end + 4);
  c->method = h.method;
  c->path = h.path;
  if (c->path != "/metrics" && c->path != "/alert") {
    Respond(c, 404, "not found: GET /metrics, POST /alert\n", "text/plain");
    return false;
  }
  if ((c->path == "/metrics") != (c->method == "GET")) {
    Respond(c, 405, c->path == "/metrics" ? "use GET\n" : "use POST\n", "text/plain");
    return false;
  }
  if (c->method == "GET") {
    Handle(c);
    return false;
  }
  // POST /alert: who may ask, and how much, before any body is read.
  if (!options_.webhook_token.empty()) {
    const std::string& a = h.authorization;
    const bool bearer = a.size() > 7 && Lower(a.substr(0, 7)) == "bearer ";
    if (!bearer || !SameSecret(Trim(a.substr(7)), options_.webhook_token)) {
      Respond(c, 401, "POST /alert needs Authorization: Bearer <the --webhook-token-file token>\n", "text/plain");
      return false;
    }
  }
  c->chunked = h.transfer_encoding == "chunked";
  if (!h.transfer_encoding.empty() && !c->chunked) {
    Respond(c, 501, "Transfer-Encoding " + h.transfer_encoding + " is not supported\n", "text/plain");
    return false;
  }
  if (c->chunked && h.has_length) {
    Respond(c, 400, "both Content-Length and Transfer-Encoding\n", "text/plain");
    return false;
  }
  if (!c->chunked && !h.has_length) {
    Respond(c, 411, "POST /alert needs Content-Length or chunked encoding\n", "text/plain");
    return false;
  }
  if (h.content_length > lim.max_body_bytes) {
    Respond(c, 413, "body over " + std::to_string(lim.max_body_bytes) + " bytes\n", "text/plain");
    return false;
  }
  if (h.expect == "100-continue") (void)!send(c->fd, "HTTP/1.1 100 Continue\r\n\r\n", 25, MSG_NOSIGNAL);
  c->content_length = h.content_length;
  c->state = c->chunked ? State::kChunkSize : State::kBody;
  c->deadline_ns = NowNs() + lim.body_timeout_ns;
  return true;
}

bool MetricsServer::OnReadable(Connection* c) {
  char buf[16384];
  for (;;) {
    const ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
    if (n == 0) return false;  // the client went away (or finished after our answer)
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK;
    }
    if (c->state == Connection::State::kLinger) continue;  // dropped
    if (!c->reading()) return true;
    c->in.append(buf, static_cast<size_t>(n));
    const HttpLimits& lim = options_.limits;
    using State = Connection::State;
    // Parse as far as the bytes go; `in` keeps only what is not parsed yet.
    for (bool progress = true; progress && c->reading();) {
      progress = false;
      switch (c->state) {
        case State::kHead:
          progress = OnHead(c);
          break;
        case State::kBody: {
          const size_t take = std::min<uint64_t>(c->in.size(), c->content_length - c->body.size());
          c->body.append(c->in, 0, take);
          c->in.erase(0, take);
          if (c->body.size() == c->content_length) Handle(c);
          break;
        }
        case State::kChunkSize:
        case State::kTrailer: {
          const size_t eol = c->in.find("\r\n");
          if (eol == std::string::npos) {
            if (c->in.size() > kMaxChunkLineBytes) Respond(c, 400, "malformed chunked body\n", "text/plain");
            break;
          }
          const std::string line = c->in.substr(0, eol);
          c->in.erase(0, eol + 2);
          progress = true;
          if (c->state == State::kTrailer) {
            if (line.empty()) Handle(c);
            break;
          }
          const std::string hex = Trim(line.substr(0, line.find(';')));
          if (hex.empty() || hex.size() > 15 || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
            Respond(c, 400, "malformed chunk size\n", "text/plain");
            break;
          }
          const uint64_t size = std::stoull(hex, nullptr, 16);
          if (size > lim.max_body_bytes - c->body.size()) {
            Respond(c, 413, "body over " + std::to_string(lim.max_body_bytes) + " bytes\n", "text/plain");
            break;
          }
          c->chunk_left = size;
          c->state = size == 0 ? State::kTrailer : State::kChunkData;
          break;
        }
        case State::kChunkData: {
          const size_t take = std::min<uint64_t>(c->in.size(), c->chunk_left);
          c->body.append(c->in, 0, take);
          c->in.erase(0, take);
          c->chunk_left -= take;
          if (c->chunk_left == 0) {
            c->state = State::kChunkEnd;
            progress = true;
          }
          break;
        }
        case State::kChunkEnd:
          if (c->in.size() < 2) break;
          if (c->in.compare(0, 2, "\r\n") != 0) {
            Respond(c, 400, "malformed chunked body\n", "text/plain");
            break;
          }
          c->in.erase(0, 2);
          c->state = State::kChunkSize;
          progress = true;
          break;
        default:
          break;
      }
    }
  }
}

void MetricsServer::Serve() {
  std::vector<std::unique_ptr<Connection>> conns;
  std::vector<pollfd> fds;
  for (;;) {
    const int64_t now = NowNs();
    // Past their deadline: closed (a slow client loses its slot, nothing more).
    for (auto it = conns.begin(); it != conns.end();) {
      if (now < (*it)->deadline_ns) {
        ++it;
        continue;
      }
      if ((*it)->state != Connection::State::kLinger) ++counts_.timed_out;
      close((*it)->fd);
      it = conns.erase(it);
    }
    fds.clear();
    fds.push_back(pollfd{wake_[0], POLLIN, 0});
    fds.push_back(pollfd{listen_fd_, POLLIN, 0});
    int64_t next_deadline = now + 1'000'000'000;
    for (const auto& c : conns) {
      fds.push_back(pollfd{c->fd, static_cast<short>(c->state == Connection::State::kWrite ? POLLOUT : POLLIN), 0});
      next_deadline = std::min(next_deadline, c->deadline_ns);
    }
    const int wait_ms = static_cast<int>(std::max<int64_t>(1, (next_deadline - now + 999'999) / 1'000'000));
    if (poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) return;
    if (fds[0].revents) return;  // stopping
    std::vector<bool> keep(conns.size(), true);
    for (size_t i = 0; i < conns.size(); ++i) {
      Connection* c = conns[i].get();
      const short ev = fds[i + 2].revents;
      if (!ev) continue;
      if (ev & (POLLIN | POLLHUP | POLLERR)) keep[i] = OnReadable(c) || c->state == Connection::State::kWrite;
      if (keep[i] && c->state == Connection::State::kWrite) {
        while (c->out_pos < c->out.size()) {
          const ssize_t n = send(c->fd, c->out.data() + c->out_pos, c->out.size() - c->out_pos, MSG_NOSIGNAL);
          if (n <= 0) {
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
            keep[i] = false;
            break;
          }
          c->out_pos += static_cast<size_t>(n);
        }
        if (keep[i] && c->out_pos == c->out.size()) {
          shutdown(c->fd, SHUT_WR);
          c->state = Connection::State::kLinger;
          c->deadline_ns = NowNs() + kLingerNs;
          c->out.clear();
          c->out.shrink_to_fit();
        }
      }
    }
    size_t kept = 0;
    for (size_t i = 0; i < conns.size(); ++i) {
      if (keep[i]) {
        conns[kept++] = std::move(conns[i]);
      } else {
        close(conns[i]->fd);
      }
    }
    conns.resize(kept);
    if (fds[1].revents & POLLIN) Accept(&conns);
  }
}

}  // namespace aiprof
