#include "src/base/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <utility>

#include "src/base/clock.h"

namespace aiprof {

namespace {

// After a response, what the client still sends is read and dropped for at
// most this long before the socket closes (so the client reads the answer
// rather than a reset).
inline constexpr int64_t kLingerNs = 1'000'000'000;
inline constexpr size_t kMaxChunkLineBytes = 1024;

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

const char* Reason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 303: return "See Other";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 421:
      return "Misdirected Request";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 507: return "Insufficient Storage";
    default: return "Error";
  }
}

bool HasBody(const std::string& method) { return method != "GET" && method != "HEAD"; }

}  // namespace

Status ParseListenAddress(const std::string& text, std::string* host, int* port, const std::string& flag) {
  std::string h = "127.0.0.1", p = text;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return UsageStatus(flag + " " + text + ": expected [IPv6]:PORT");
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
    return UsageStatus(flag + " " + text + ": expected PORT or HOST:PORT, the port 0 to 65535 (e.g. 127.0.0.1:9464)");
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

namespace {

// The host of "HOST", "HOST:PORT", "[V6]" or "[V6]:PORT" ("" when malformed).
std::string HostOfAuthority(std::string_view a) {
  if (a.starts_with("[")) {
    const size_t close = a.find(']');
    return close == std::string_view::npos ? "" : std::string(a.substr(1, close - 1));
  }
  const size_t colon = a.find(':');
  return std::string(a.substr(0, colon));
}

// "host:port" of an authority, the host in lower case and the port
// `default_port` when none is given; "" when malformed.
std::string NormalAuthority(std::string_view a, std::string_view default_port) {
  const std::string host = HostOfAuthority(a);
  if (host.empty()) return "";
  size_t after = a.starts_with("[") ? a.find(']') + 1 : host.size();
  std::string_view port = a.substr(after);
  if (!port.empty()) {
    if (port[0] != ':') return "";
    port.remove_prefix(1);
  }
  if (port.empty()) port = default_port;
  if (port.find_first_not_of("0123456789") != std::string_view::npos) return "";
  while (port.size() > 1 && port[0] == '0') port.remove_prefix(1);
  return Lower(host) + ":" + std::string(port);
}

}  // namespace

std::optional<HttpResponse> RefuseFromOtherSites(const HttpRequest& head, bool tokens) {
  // DNS rebinding: a page of another site whose name resolves to 127.0.0.1
  // reaches a loopback listener as that site, with its name in Host.
  if (!tokens && !head.host.empty()) {  // every browser sends Host; HTTP/1.0 clients may not
    const std::string host = HostOfAuthority(head.host);
    if (!IsLoopbackHost(Lower(host))) {
      return TextResponse(421,
                          "the Host header is not a name of this loopback listener (localhost, 127.0.0.1, "
                          "[::1]): refused, as a page of another site reaching it by DNS rebinding would send\n");
    }
  }
  // Cross-site requests: a page of another site may send a simple POST
  // (no preflight) to the user's loopback listener; a browser names the
  // page's origin in Origin and Sec-Fetch-Site. A token in Authorization
  // cannot come from another site without a preflight, which fails here.
  if (head.method != "GET" && head.method != "HEAD") {
    if (head.fetch_site == "cross-site" || head.fetch_site == "same-site") {
      return TextResponse(403, "cross-site request refused (Sec-Fetch-Site: " + head.fetch_site + ")\n");
    }
    if (!head.origin.empty()) {
      // The whole origin: scheme (this listener speaks http), host and port
      // (another web app on another port of the same host is another site).
      const std::string_view o = head.origin;
      const bool http = o.size() > 7 && Lower(std::string(o.substr(0, 7))) == "http://";
      const std::string origin = http ? NormalAuthority(o.substr(7), "80") : "";
      const std::string own = NormalAuthority(head.host, "80");
      if (origin.empty() || own.empty() || origin != own) {
        return TextResponse(403, "cross-site request refused: Origin " + std::string(o.substr(0, 200)) +
                                     " is not this listener's (http://" + head.host.substr(0, 200) + ")\n");
      }
    }
  }
  return std::nullopt;
}

bool SameSecret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i % (b.empty() ? 1 : b.size())]);
  return diff == 0 && !a.empty();
}

std::string BearerToken(const std::string& a) {
  if (a.size() <= 7 || Lower(a.substr(0, 7)) != "bearer ") return "";
  return Trim(a.substr(7));
}

HttpResponse TextResponse(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

bool MethodAllowed(std::string_view method, std::string_view allow) {
  while (!allow.empty()) {
    const size_t comma = allow.find(',');
    std::string_view item = allow.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty() && item == method) return true;
    if (comma == std::string_view::npos) break;
    allow.remove_prefix(comma + 1);
  }
  return false;
}

HttpResponse MethodNotAllowed(std::string_view allow, HttpResponse refusal) {
  refusal.status = 405;
  std::erase_if(refusal.headers, [](const auto& h) { return Lower(h.first) == "allow"; });
  refusal.headers.emplace_back("Allow", std::string(allow));
  return refusal;
}

std::string PercentEncode(std::string_view in) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : in) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
        c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

bool PercentDecode(const std::string& in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '+') {
      *out += ' ';
    } else if (c != '%') {
      *out += c;
    } else {
      auto hex = [](char h) -> int {
        if (h >= '0' && h <= '9') return h - '0';
        if (h >= 'a' && h <= 'f') return h - 'a' + 10;
        if (h >= 'A' && h <= 'F') return h - 'A' + 10;
        return -1;
      };
      if (i + 2 >= in.size()) return false;
      const int hi = hex(in[i + 1]), lo = hex(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      *out += static_cast<char>(hi * 16 + lo);
      i += 2;
    }
  }
  return true;
}

std::optional<std::string> QueryParam(const std::string& query, const std::string& key) {
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t amp = query.find('&', pos);
    if (amp == std::string::npos) amp = query.size();
    const std::string pair = query.substr(pos, amp - pos);
    const size_t eq = pair.find('=');
    std::string k, v;
    if (PercentDecode(pair.substr(0, eq), &k) && k == key) {
      if (eq == std::string::npos) return std::string();
      if (PercentDecode(pair.substr(eq + 1), &v)) return v;
      return std::nullopt;
    }
    pos = amp + 1;
  }
  return std::nullopt;
}

// Answers handed over by responders (any thread) to the server's thread,
// which a byte on the wake pipe calls to look. Shared with the responders,
// so one that runs after the server stopped finds `stopped` and drops its answer.
struct HttpServer::Mailbox {
  std::mutex mu;
  std::vector<std::pair<uint64_t, HttpResponse>> answers;
  bool stopped = false;
  int wake[2] = {-1, -1};
  ~Mailbox() {
    for (int fd : wake) {
      if (fd >= 0) close(fd);
    }
  }
  void Wake() { (void)!write(wake[1], "x", 1); }
};

// One client connection: a state machine fed by poll().
struct HttpServer::Connection {
  enum class State { kHead, kBody, kChunkSize, kChunkData, kChunkEnd, kTrailer, kHandling, kWrite, kLinger };
  uint64_t id = 0;
  int fd = -1;
  State state = State::kHead;
  int64_t accepted_ns = 0, deadline_ns = 0;
  std::string in;  // received, not yet parsed
  HttpRequest request;
  bool chunked = false;
  uint64_t content_length = 0, chunk_left = 0;
  size_t max_body_bytes = 0;
  std::string out;
  size_t out_pos = 0;
  bool peer_closed = false;  // FIN seen while handling: request.gone is set, the answer still goes out
  bool reading() const { return state < State::kHandling; }
  // Closed while its handler works (the client broke the connection, the
  // answer deadline passed, the server stopped): no one will get the answer.
  ~Connection() {
    if (state == State::kHandling && request.gone) request.gone->store(true);
  }
  // The client closed its sending side while the handler works.
  void PeerClosed(HttpCounts* counts) {
    if (peer_closed) return;
    peer_closed = true;
    ++counts->gone;
    request.gone->store(true);
  }
};

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const Options& options, AdmitFn admit, HandleFn handle) {
  std::unique_ptr<HttpServer> s(new HttpServer());
  s->options_ = options;
  s->admit_ = std::move(admit);
  s->handle_ = std::move(handle);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const std::string where = options.host + ":" + std::to_string(options.port);
  if (int rc = getaddrinfo(options.host.c_str(), std::to_string(options.port).c_str(), &hints, &res); rc != 0) {
    return ErrStatus(options.flag + " " + where + ": " + gai_strerror(rc));
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
    return ErrStatus(options.flag + ": cannot bind " + where + " (" + error +
                     ": in use, or not an address of this host)");
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(s->listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  s->port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                               : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  s->mailbox_ = std::make_shared<Mailbox>();
  if (pipe2(s->mailbox_->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    return ErrStatus(std::string("pipe: ") + std::strerror(errno));
  }
  s->thread_ = std::thread([server = s.get()] { server->Serve(); });
  return s;
}

HttpServer::~HttpServer() {
  if (mailbox_) {
    {
      std::lock_guard<std::mutex> lock(mailbox_->mu);
      mailbox_->stopped = true;
    }
    mailbox_->Wake();
  }
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) close(listen_fd_);
}

void HttpServer::Accept(std::vector<std::unique_ptr<Connection>>* conns) {
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
    c->id = next_id_++;
    c->fd = fd;
    char host[INET6_ADDRSTRLEN] = "?";
    if (addr.ss_family == AF_INET) {
      auto* a = reinterpret_cast<sockaddr_in*>(&addr);
      inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
      c->request.peer = std::string(host) + ":" + std::to_string(ntohs(a->sin_port));
    } else if (addr.ss_family == AF_INET6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
      inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
      c->request.peer = "[" + std::string(host) + "]:" + std::to_string(ntohs(a->sin6_port));
    }
    c->accepted_ns = MonotonicNs();
    c->deadline_ns = c->accepted_ns + options_.limits.header_timeout_ns;
    conns->push_back(std::move(c));
  }
}

void HttpServer::Respond(Connection* c, const HttpResponse& r) {
  c->out = "HTTP/1.1 " + std::to_string(r.status) + " " + Reason(r.status) + "\r\nContent-Type: " + r.content_type +
           "\r\nContent-Length: " + std::to_string(r.body.size()) + "\r\nConnection: close\r\n";
  if (r.status == 401) c->out += "WWW-Authenticate: Bearer\r\n";
  // Every answer, the server's own refusals (400, 411, 413, 431, ...) as much
  // as a handler's: a browser must not read an answer as another type than
  // it says (a refusal quotes parts of the request).
  c->out += "X-Content-Type-Options: nosniff\r\n";
  for (const auto& [name, value] : r.headers) {
    if (name.find_first_of("\r\n:") != std::string::npos || value.find_first_of("\r\n") != std::string::npos) continue;
    if (Lower(name) == "x-content-type-options") continue;  // said above
    c->out += name + ": " + value + "\r\n";
  }
  c->out += "\r\n";
  if (c->request.method != "HEAD") c->out += r.body;
  c->out_pos = 0;
  c->state = Connection::State::kWrite;
  c->deadline_ns = MonotonicNs() + options_.limits.write_timeout_ns;
  c->in.clear();
  c->request.body.clear();
  c->request.body.shrink_to_fit();
  c->request.body_sink.reset();  // a refused or answered body's file goes now
}

// Hands the whole request to the handler; its answer comes back through the
// mailbox (DeliverAnswers), even when given at once.
void HttpServer::Handle(Connection* c) {
  ++counts_.requests;
  c->state = Connection::State::kHandling;
  c->deadline_ns = MonotonicNs() + options_.limits.handle_timeout_ns;
  c->request.gone = std::make_shared<std::atomic<bool>>(false);
  std::weak_ptr<Mailbox> weak = mailbox_;
  const uint64_t id = c->id;
  Responder respond = [weak, id](HttpResponse r) {
    std::shared_ptr<Mailbox> box = weak.lock();
    if (!box) return;
    {
      std::lock_guard<std::mutex> lock(box->mu);
      if (box->stopped) return;
      box->answers.emplace_back(id, std::move(r));
    }
    box->Wake();
  };
  std::string body = std::move(c->request.body);  // moved, never copied (an upload may be large)
  HttpRequest request = c->request;
  request.body = std::move(body);
  handle_(std::move(request), std::move(respond));
}

void HttpServer::DeliverAnswers(std::vector<std::unique_ptr<Connection>>* conns) {
  char drain[256];
  while (read(mailbox_->wake[0], drain, sizeof(drain)) > 0) {
  }
  std::vector<std::pair<uint64_t, HttpResponse>> answers;
  {
    std::lock_guard<std::mutex> lock(mailbox_->mu);
    answers.swap(mailbox_->answers);
  }
  for (const auto& [id, response] : answers) {
    for (const auto& c : *conns) {
      if (c->id == id && c->state == Connection::State::kHandling) Respond(c.get(), response);
    }
  }
}

namespace {

// The request line and headers of `head` (without the final CRLF CRLF).
struct RequestHead {
  std::string method, target, authorization, content_type, transfer_encoding, expect, host, origin, fetch_site;
  bool has_length = false;
  uint64_t content_length = 0;
};

// The request line and headers into `r`; an error ("" = none) for a
// malformed head, a header that may appear once given twice (Host,
// Authorization, Origin, Sec-Fetch-Site: which one counts would differ
// between a proxy and this server) or an HTTP/1.1 request without Host
// (RFC 9112 3.2: both 400).
std::string ParseHead(const std::string& head, RequestHead* r) {
  size_t eol = head.find("\r\n");
  const std::string line = head.substr(0, eol);
  const size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
  if (sp1 == std::string::npos || sp2 == sp1 || line.compare(sp2 + 1, 7, "HTTP/1.") != 0) return "malformed request";
  r->method = line.substr(0, sp1);
  r->target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const bool http11 = line.compare(sp2 + 1, std::string::npos, "HTTP/1.0") != 0;
  bool seen_host = false, seen_authorization = false, seen_origin = false, seen_fetch_site = false;
  auto once = [](bool* seen) { return !std::exchange(*seen, true); };
  while (eol != std::string::npos) {
    const size_t start = eol + 2;
    eol = head.find("\r\n", start);
    const std::string h = head.substr(start, eol == std::string::npos ? std::string::npos : eol - start);
    const size_t colon = h.find(':');
    if (colon == std::string::npos || colon == 0) return "malformed request";
    const std::string name = Lower(h.substr(0, colon)), value = Trim(h.substr(colon + 1));
    if (name == "content-length") {
      if (value.empty() || value.size() > 18 || value.find_first_not_of("0123456789") != std::string::npos) {
        return "malformed request";
      }
      if (r->has_length && std::stoull(value) != r->content_length) return "malformed request";
      r->has_length = true;
      r->content_length = std::stoull(value);
    } else if (name == "transfer-encoding") {
      r->transfer_encoding = Lower(value);
    } else if (name == "authorization") {
      if (!once(&seen_authorization)) return "two Authorization headers";
      r->authorization = value;
    } else if (name == "content-type") {
      r->content_type = value;
    } else if (name == "expect") {
      r->expect = Lower(value);
    } else if (name == "host") {
      if (!once(&seen_host)) return "two Host headers";
      r->host = value;
    } else if (name == "origin") {
      if (!once(&seen_origin)) return "two Origin headers";
      r->origin = value;
    } else if (name == "sec-fetch-site") {
      if (!once(&seen_fetch_site)) return "two Sec-Fetch-Site headers";
      r->fetch_site = Lower(value);
    }
  }
  if (http11 && !seen_host) return "an HTTP/1.1 request without a Host header";
  return "";
}

}  // namespace

// The request line and headers, once they are all in: asks admit_ whether
// to answer at once, else prepares the body's reading (or hands a request
// without one to the handler). True when there is more to parse.
bool HttpServer::OnHead(Connection* c) {
  const HttpLimits& lim = options_.limits;
  using State = Connection::State;
  const size_t end = c->in.find("\r\n\r\n");
  const bool complete = end != std::string::npos;
  if ((complete ? end + 4 : c->in.size()) > lim.max_header_bytes) {
    Respond(c, TextResponse(431, "request line and headers over " + std::to_string(lim.max_header_bytes) + " bytes\n"));
    return false;
  }
  if (!complete) return false;
  RequestHead h;
  if (const std::string bad = ParseHead(c->in.substr(0, end), &h); !bad.empty()) {
    Respond(c, TextResponse(400, bad + "\n"));
    return false;
  }
  c->in.erase(0, end + 4);
  HttpRequest& req = c->request;
  req.method = h.method;
  const size_t q = h.target.find('?');
  req.path = h.target.substr(0, q);
  req.query = q == std::string::npos ? "" : h.target.substr(q + 1);
  req.authorization = h.authorization;
  req.content_type = h.content_type;
  req.host = h.host;
  req.origin = h.origin;
  req.fetch_site = h.fetch_site;
  req.content_length = h.has_length ? std::optional<uint64_t>(h.content_length) : std::nullopt;
  c->max_body_bytes = lim.max_body_bytes;
  if (std::optional<HttpResponse> answer = admit_(req, &c->max_body_bytes)) {
    Respond(c, *answer);
    return false;
  }
  if (!HasBody(req.method)) {
    Handle(c);
    return false;
  }
  c->chunked = h.transfer_encoding == "chunked";
  if (!h.transfer_encoding.empty() && !c->chunked) {
    Respond(c, TextResponse(501, "Transfer-Encoding " + h.transfer_encoding + " is not supported\n"));
    return false;
  }
  if (c->chunked && h.has_length) {
    Respond(c, TextResponse(400, "both Content-Length and Transfer-Encoding\n"));
    return false;
  }
  if (!c->chunked && !h.has_length && req.method == "DELETE") {  // no body (RFC 9112 6.3): curl -X DELETE sends none
    Handle(c);
    return false;
  }
  if (!c->chunked && !h.has_length) {
    Respond(c, TextResponse(411, req.method + " " + req.path + " needs Content-Length or chunked encoding\n"));
    return false;
  }
  if (h.content_length > c->max_body_bytes) {
    Respond(c, TextResponse(413, "body over " + std::to_string(c->max_body_bytes) + " bytes\n"));
    return false;
  }
  if (options_.open_body_sink) {
    StatusOr<std::shared_ptr<BodySink>> sink = options_.open_body_sink(req);
    if (!sink.ok()) {
      Respond(c, TextResponse(500, sink.status().message() + "\n"));
      return false;
    }
    req.body_sink = std::move(*sink);
  }
  if (h.expect == "100-continue") (void)!send(c->fd, "HTTP/1.1 100 Continue\r\n\r\n", 25, MSG_NOSIGNAL);
  c->content_length = h.content_length;
  c->state = c->chunked ? State::kChunkSize : State::kBody;
  c->deadline_ns = MonotonicNs() + lim.body_timeout_ns;
  if (!c->chunked && c->content_length == 0) {
    Handle(c);
    return false;
  }
  return true;
}

// Moves `take` bytes of the body from `in` to the request's body or its
// sink; false (and a 500 answer) when the sink fails.
bool HttpServer::TakeBody(Connection* c, size_t take) {
  if (c->request.body_sink) {
    if (Status s = c->request.body_sink->Write(std::string_view(c->in).substr(0, take)); !s.ok()) {
      Respond(c, TextResponse(500, s.message() + "\n"));
      return false;
    }
  } else {
    c->request.body.append(c->in, 0, take);
  }
  c->request.body_bytes += take;
  c->in.erase(0, take);
  return true;
}

bool HttpServer::OnReadable(Connection* c) {
  char buf[16384];
  for (;;) {
    const ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
    if (n == 0) return !c->reading() && c->state != Connection::State::kLinger;  // peer done sending
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK;
    }
    if (c->state == Connection::State::kLinger) continue;  // dropped
    if (!c->reading()) continue;  // past the request: dropped
    c->in.append(buf, static_cast<size_t>(n));
    using State = Connection::State;
    // Parse as far as the bytes go; `in` keeps only what is not parsed yet.
    for (bool progress = true; progress && c->reading();) {
      progress = false;
      switch (c->state) {
        case State::kHead:
          progress = OnHead(c);
          break;
        case State::kBody: {
          const size_t take = std::min<uint64_t>(c->in.size(), c->content_length - c->request.body_bytes);
          if (!TakeBody(c, take)) break;
          if (c->request.body_bytes == c->content_length) Handle(c);
          break;
        }
        case State::kChunkSize:
        case State::kTrailer: {
          const size_t eol = c->in.find("\r\n");
          if (eol == std::string::npos) {
            if (c->in.size() > kMaxChunkLineBytes) Respond(c, TextResponse(400, "malformed chunked body\n"));
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
            Respond(c, TextResponse(400, "malformed chunk size\n"));
            break;
          }
          const uint64_t size = std::stoull(hex, nullptr, 16);
          if (size > c->max_body_bytes - c->request.body_bytes) {
            Respond(c, TextResponse(413, "body over " + std::to_string(c->max_body_bytes) + " bytes\n"));
            break;
          }
          c->chunk_left = size;
          c->state = size == 0 ? State::kTrailer : State::kChunkData;
          break;
        }
        case State::kChunkData: {
          const size_t take = std::min<uint64_t>(c->in.size(), c->chunk_left);
          if (!TakeBody(c, take)) break;
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
            Respond(c, TextResponse(400, "malformed chunked body\n"));
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

void HttpServer::Serve() {
  std::vector<std::unique_ptr<Connection>> conns;
  std::vector<pollfd> fds;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mailbox_->mu);
      if (mailbox_->stopped) break;
    }
    const int64_t now = MonotonicNs();
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
    fds.push_back(pollfd{mailbox_->wake[0], POLLIN, 0});
    fds.push_back(pollfd{listen_fd_, POLLIN, 0});
    int64_t next_deadline = now + 1'000'000'000;
    for (const auto& c : conns) {
      // While the handler works only the client's leaving counts: its FIN
      // (POLLRDHUP, once), a reset (POLLHUP, POLLERR: always reported).
      const short want = c->state == Connection::State::kWrite      ? POLLOUT
                         : c->state == Connection::State::kHandling ? (c->peer_closed ? 0 : POLLRDHUP)
                                                                     : POLLIN;
      fds.push_back(pollfd{c->fd, want, 0});
      next_deadline = std::min(next_deadline, c->deadline_ns);
    }
    const int wait_ms = static_cast<int>(std::max<int64_t>(1, (next_deadline - now + 999'999) / 1'000'000));
    if (poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) break;
    std::vector<bool> keep(conns.size(), true);
    for (size_t i = 0; i < conns.size(); ++i) {
      Connection* c = conns[i].get();
      const short ev = fds[i + 2].revents;
      if (!ev) continue;
      if (c->state == Connection::State::kHandling) {
        if (ev & (POLLRDHUP | POLLHUP | POLLERR)) c->PeerClosed(&counts_);
        keep[i] = !(ev & (POLLHUP | POLLERR));  // the connection broke: its answer will be dropped
        continue;
      }
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
          c->deadline_ns = MonotonicNs() + kLingerNs;
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
    if (fds[0].revents) DeliverAnswers(&conns);
    if (fds[1].revents & POLLIN) Accept(&conns);
  }
  // Stopping: answers given before the stop (a query the stop cancelled
  // answers 503) are still sent, for up to a second in all.
  DeliverAnswers(&conns);
  const int64_t until = MonotonicNs() + 1'000'000'000;
  for (const auto& c : conns) {
    while (c->state == Connection::State::kWrite && c->out_pos < c->out.size()) {
      const int64_t left_ms = (until - MonotonicNs()) / 1'000'000;
      pollfd p{c->fd, POLLOUT, 0};
      if (left_ms <= 0 || poll(&p, 1, static_cast<int>(left_ms)) <= 0) break;
      const ssize_t n = send(c->fd, c->out.data() + c->out_pos, c->out.size() - c->out_pos, MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
      if (n <= 0) break;
      c->out_pos += static_cast<size_t>(n);
    }
  }
  for (const auto& c : conns) close(c->fd);
}

}  // namespace aiprof
