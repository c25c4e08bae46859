// `--metrics-listen HOST:PORT`: serves the window in Prometheus's text
// format on GET /metrics and takes an Alertmanager webhook on POST /alert as
// an external trigger.
//
// A small HTTP/1.1 server of its own (one thread, poll(), one request per
// connection) rather than cpp-httplib 0.11 (Debian 12's): that one gives each
// connection a pool thread for as long as the client keeps sending, with no
// deadline for the whole header, so eight clients sending a header line a
// second blocked /metrics, and it did not apply its body limit to chunked
// bodies. Here every limit is explicit (HttpLimits): a deadline for the
// request line and headers and one for the body, a cap on connections (when
// full, the connection that has waited longest for its request is closed to
// make room), header and body sizes (chunked bodies decoded as they arrive
// and held to the same limit), so memory per connection is bounded and a
// slow client costs a slot, never the server.
#ifndef AIPROF_SRC_MONITOR_METRICS_SERVER_H_
#define AIPROF_SRC_MONITOR_METRICS_SERVER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "src/base/status.h"

namespace aiprof {

// "9100" -> 127.0.0.1:9100 (loopback unless a host is given), "HOST:PORT",
// "[::1]:PORT". Port 0 picks a free port.
Status ParseListenAddress(const std::string& text, std::string* host, int* port);
// 127.0.0.0/8, ::1, localhost.
bool IsLoopbackHost(const std::string& host);

// The firing alerts of an Alertmanager webhook body (version 4): the
// "alertname" label of each alert whose status is "firing". An error naming
// the place when the body is not such JSON: no "alerts" array, an alert
// without a status of "firing" or "resolved", or without a non-empty string
// labels.alertname. Visible for testing.
StatusOr<std::vector<std::string>> ParseAlertmanagerWebhook(const std::string& body);

struct HttpLimits {
  int max_connections = 64;
  int64_t header_timeout_ns = 5'000'000'000;  // request line + headers, from accept
  int64_t body_timeout_ns = 10'000'000'000;   // the whole body, from the end of the headers
  int64_t write_timeout_ns = 10'000'000'000;  // the whole response
  size_t max_header_bytes = 16 << 10;
  size_t max_body_bytes = 1 << 20;
};

// What the server saw (tests, and the monitor's stderr at exit).
struct HttpCounts {
  std::atomic<uint64_t> requests{0}, rejected{0}, timed_out{0}, evicted{0};
};

class MetricsServer {
 public:
  using MetricsFn = std::function<std::string()>;
  // Called from the server's thread with the firing alerts' names and the
  // peer's address ("127.0.0.1:53412").
  using TriggerFn = std::function<void(const std::vector<std::string>& names, const std::string& peer)>;

  struct Options {
    std::string host;
    int port = 0;
    std::string webhook_token;  // "": POST /alert needs no token (loopback only)
    HttpLimits limits;
  };

  // Binds HOST:PORT and starts serving on a thread of its own. Refuses a
  // non-loopback host without a webhook token.
  static StatusOr<std::unique_ptr<MetricsServer>> Start(const Options& options, MetricsFn metrics, TriggerFn trigger);
  ~MetricsServer();  // stops serving
  int port() const { return port_; }
  const HttpCounts& counts() const { return counts_; }

 private:
  struct Connection;
  MetricsServer() = default;
  void Serve();
  void Accept(std::vector<std::unique_ptr<Connection>>* conns);
  // Reads what arrived; false when the connection is to be closed.
  bool OnReadable(Connection* c);
  bool OnHead(Connection* c);
  void Respond(Connection* c, int status, const std::string& body, const char* content_type);
  void Handle(Connection* c);

  Options options_;
  MetricsFn metrics_;
  TriggerFn trigger_;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  int port_ = 0;
  std::thread thread_;
  HttpCounts counts_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_MONITOR_METRICS_SERVER_H_
