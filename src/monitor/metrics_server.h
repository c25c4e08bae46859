// `--metrics-listen HOST:PORT`: serves the window in Prometheus's text
// format on GET /metrics and takes an Alertmanager webhook on POST /alert as
// an external trigger (cpp-httplib, Debian's libcpp-httplib-dev).
#ifndef AIPROF_SRC_MONITOR_METRICS_SERVER_H_
#define AIPROF_SRC_MONITOR_METRICS_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "src/base/status.h"

namespace httplib {
class Server;
}

namespace aiprof {

// "9100" -> 127.0.0.1:9100 (loopback unless a host is given), "HOST:PORT",
// "[::1]:PORT". Port 0 picks a free port.
Status ParseListenAddress(const std::string& text, std::string* host, int* port);

// The firing alerts of an Alertmanager webhook body (version 4): one
// "alertname" (or "external") per alert whose status is "firing". An error
// when the body is not such JSON. Visible for testing.
StatusOr<std::vector<std::string>> ParseAlertmanagerWebhook(const std::string& body);

class MetricsServer {
 public:
  using MetricsFn = std::function<std::string()>;
  // Called from the server's thread with the firing alerts' names.
  using TriggerFn = std::function<void(const std::vector<std::string>& names)>;

  // Binds HOST:PORT and starts serving on a thread of its own.
  static StatusOr<std::unique_ptr<MetricsServer>> Start(const std::string& host, int port, MetricsFn metrics,
                                                        TriggerFn trigger);
  ~MetricsServer();  // stops serving
  int port() const { return port_; }

 private:
  MetricsServer() = default;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_MONITOR_METRICS_SERVER_H_
