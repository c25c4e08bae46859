// A small HTTP/1.1 server (one thread, poll(), one request per connection),
// shared by the front ends that listen: `aiprof monitor` (/metrics and the
// Alertmanager webhook, src/monitor/metrics_server.h) and `aiprof serve`
// (src/serve/).
//
// Written rather than cpp-httplib 0.11 (Debian 12's): that one gives each
// connection a pool thread for as long as the client keeps sending, with no
// deadline for the whole header, so eight clients sending a header line a
// second blocked the server, and it did not apply its body limit to chunked
// bodies. Here every limit is explicit (HttpLimits): a deadline for the
// request line and headers and one for the body, a cap on connections (when
// full, the connection that has waited longest for its request is closed to
// make room), header and body sizes (chunked bodies decoded as they arrive
// and held to the same limit), so memory per connection is bounded and a
// slow client costs a slot, never the server.
//
// Requests are answered in two steps, both called on the server's thread:
// `admit` sees the request line and headers and may answer at once (a 404,
// a 401, a 413) or set the body limit of this request; `handle` gets the
// whole request and a Responder, which may be called later from any thread
// (a worker pool), so a slow page never blocks the other connections.
#ifndef AIPROF_SRC_BASE_HTTP_SERVER_H_
#define AIPROF_SRC_BASE_HTTP_SERVER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "src/base/status.h"

namespace aiprof {

// "9100" -> 127.0.0.1:9100 (loopback unless a host is given), "HOST:PORT",
// "[::1]:PORT". Port 0 picks a free port. `flag` names the option in the
// error, a usage error (exit 2: a flag value that does not parse).
Status ParseListenAddress(const std::string& text, std::string* host, int* port,
                          const std::string& flag = "--metrics-listen");
// 127.0.0.0/8, ::1, localhost.
bool IsLoopbackHost(const std::string& host);
// Compares a presented secret with the expected one without leaking where
// they differ through timing; false when either is empty.
bool SameSecret(const std::string& presented, const std::string& expected);
// The token of an "Authorization: Bearer TOKEN" header value ("" if none).
std::string BearerToken(const std::string& authorization);
// The shortest secret a listener takes (serve's tokens, monitor's webhook
// token): shorter ones are refused at start.
inline constexpr size_t kMinTokenBytes = 16;

struct HttpRequest;
struct HttpResponse;
// Refuses what a web page of another site may send to a listener through
// the user's browser, for a front end's admit: without tokens (a loopback
// listener), a Host that is not a loopback name (421: DNS rebinding, where
// another site's name resolves to 127.0.0.1); and any request but GET and
// HEAD that a browser marks as from another site (Sec-Fetch-Site
// cross-site or same-site) or whose Origin's host is not the Host (403:
// a simple cross-origin POST needs no preflight). Clients that are not
// browsers send neither header and pass.
std::optional<HttpResponse> RefuseFromOtherSites(const HttpRequest& head, bool tokens);

struct HttpLimits {
  int max_connections = 64;
  int64_t header_timeout_ns = 5'000'000'000;  // request line + headers, from accept
  int64_t body_timeout_ns = 10'000'000'000;   // the whole body, from the end of the headers
  int64_t write_timeout_ns = 10'000'000'000;  // the whole response
  int64_t handle_timeout_ns = 300'000'000'000;  // from the whole request to the handler's answer
  size_t max_header_bytes = 16 << 10;
  size_t max_body_bytes = 1 << 20;  // the default; admit may set another per request
};

// What the server saw (tests, and the front ends' stderr at exit).
struct HttpCounts {
  std::atomic<uint64_t> requests{0}, rejected{0}, timed_out{0}, evicted{0};
  // Requests whose client closed or broke its connection before the
  // handler answered (HttpRequest::gone set for it).
  std::atomic<uint64_t> gone{0};
};

// Where a request's body goes instead of HttpRequest::body (an upload
// written to disk as it arrives, so the server never holds it whole). Write
// is called on the server's thread with each piece, in order; an error
// answers 500 with its message. The sink travels with the request to the
// handler (HttpRequest::body_sink), and is dropped with a connection that
// breaks off.
class BodySink {
 public:
  virtual ~BodySink() = default;
  virtual Status Write(std::string_view bytes) = 0;
};

struct HttpRequest {
  std::string method;  // "GET"
  std::string path;    // "/api/runs" (the target without its query)
  std::string query;   // "a=1&b=2" (after '?', still percent-encoded)
  std::string authorization, content_type;
  std::string host, origin, fetch_site;  // Host, Origin, Sec-Fetch-Site (lower case) headers
  std::string peer;    // "127.0.0.1:53412"
  std::string body;    // empty for GET and HEAD, and when the body went to body_sink
  std::shared_ptr<BodySink> body_sink;  // set by Options::open_body_sink
  uint64_t body_bytes = 0;  // the body's length (decoded, for chunked bodies)
  // The Content-Length header, for admit (an upload over a front end's limit
  // refused in its own words, naming its flag); absent for chunked bodies,
  // which the server stops at the limit as they arrive.
  std::optional<uint64_t> content_length;
  // Set (never cleared) once no one is likely to read the answer: the
  // client closed its connection, or only its sending side (taken as gone,
  // as Go's net/http and nginx take it: HTTP/1.1 clients do not half-close
  // to wait for an answer), or the connection broke, or the answer deadline
  // (handle_timeout_ns) passed, or the server stopped. A handler with long
  // work checks it to skip or stop that work. An answer is still sent when
  // the connection is open (a client that did half-close gets it). Set by
  // the server for every request it hands to `handle`; a handler may set it
  // too (serve does when it stops, to stop its queries through one flag).
  std::shared_ptr<std::atomic<bool>> gone;
};

// Every answer carries X-Content-Type-Options: nosniff (the server adds it;
// a handler's own is not repeated).
struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers (no CR or LF in them)
};

class HttpServer {
 public:
  struct Options {
    std::string host;
    int port = 0;
    std::string flag = "--listen";  // names the option in errors
    HttpLimits limits;
    // Called (on the server's thread) for an admitted request with a body
    // once its length passed the limit: a sink receives the body instead of
    // HttpRequest::body; nullptr keeps it in memory; an error answers 500.
    std::function<StatusOr<std::shared_ptr<BodySink>>(const HttpRequest& head)> open_body_sink;
  };
  // Called once the request line and headers are in: a response answers at
  // once (the body is not read); nullopt reads the body (if the method has
  // one) up to *max_body_bytes (preset to limits.max_body_bytes).
  using AdmitFn = std::function<std::optional<HttpResponse>(const HttpRequest& head, size_t* max_body_bytes)>;
  // Answers a request; callable once, from any thread, even after the
  // server stopped (then the answer is dropped).
  using Responder = std::function<void(HttpResponse)>;
  using HandleFn = std::function<void(HttpRequest request, Responder respond)>;

  // Binds HOST:PORT and starts serving on a thread of its own. Whether a
  // non-loopback host is acceptable is the caller's decision.
  static StatusOr<std::unique_ptr<HttpServer>> Start(const Options& options, AdmitFn admit, HandleFn handle);
  ~HttpServer();  // stops serving
  int port() const { return port_; }
  const HttpCounts& counts() const { return counts_; }

 private:
  struct Connection;
  struct Mailbox;
  HttpServer() = default;
  void Serve();
  void Accept(std::vector<std::unique_ptr<Connection>>* conns);
  void DeliverAnswers(std::vector<std::unique_ptr<Connection>>* conns);
  bool OnReadable(Connection* c);
  bool TakeBody(Connection* c, size_t take);
  bool OnHead(Connection* c);
  void Respond(Connection* c, const HttpResponse& r);
  void Handle(Connection* c);

  Options options_;
  AdmitFn admit_;
  HandleFn handle_;
  std::shared_ptr<Mailbox> mailbox_;
  int listen_fd_ = -1;
  int port_ = 0;
  uint64_t next_id_ = 1;
  std::thread thread_;
  HttpCounts counts_;
};

// A plain-text response ("status reason" pages of the front ends).
HttpResponse TextResponse(int status, std::string body);
// Whether `method` is one of `allow`, a list as the Allow header gives it
// ("GET, HEAD, POST"; exact, case-sensitive names: RFC 9110 9.1).
bool MethodAllowed(std::string_view method, std::string_view allow);
// `refusal` (a front end's own body: text, or serve's JSON for its API)
// made a 405 with the Allow header RFC 9110 (15.5.6) requires of one: the
// front ends that listen refuse a method through it.
HttpResponse MethodNotAllowed(std::string_view allow, HttpResponse refusal);
// The value of `key` in an application/x-www-form-urlencoded string
// ("a=1&b=x%20y"), decoded; nullopt when absent.
std::optional<std::string> QueryParam(const std::string& query, const std::string& key);
// Percent-decoding ('+' is a space); false on a malformed escape.
bool PercentDecode(const std::string& in, std::string* out);
// Percent-encodes a query-string value: all but RFC 3986's unreserved
// characters (A-Z a-z 0-9 - . _ ~).
std::string PercentEncode(std::string_view in);

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_HTTP_SERVER_H_
