// `--metrics-listen HOST:PORT`: serves the window in Prometheus's text
// format on GET (and HEAD) /metrics and takes an Alertmanager webhook on POST /alert as
// an external trigger.
//
// Served by the shared poll() server (src/base/http_server.h: explicit
// limits on headers, bodies, deadlines and connections).
#ifndef AIPROF_SRC_MONITOR_METRICS_SERVER_H_
#define AIPROF_SRC_MONITOR_METRICS_SERVER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/base/http_server.h"
#include "src/base/status.h"

namespace aiprof {

// The firing alerts of an Alertmanager webhook body (version 4): the
// "alertname" label of each alert whose status is "firing". An error naming
// the place when the body is not such JSON: no "alerts" array, an alert
// without a status of "firing" or "resolved", or without a non-empty string
// labels.alertname. Visible for testing.
StatusOr<std::vector<std::string>> ParseAlertmanagerWebhook(const std::string& body);

class MetricsServer {
 public:
  // The exposition; nullopt while there is none yet (answered 503).
  using MetricsFn = std::function<std::optional<std::string>()>;
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
  int port() const { return http_->port(); }
  const HttpCounts& counts() const { return http_->counts(); }

 private:
  MetricsServer() = default;
  std::optional<HttpResponse> Admit(const HttpRequest& head) const;
  HttpResponse Handle(const HttpRequest& request);

  Options options_;
  MetricsFn metrics_;
  TriggerFn trigger_;
  std::unique_ptr<HttpServer> http_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_MONITOR_METRICS_SERVER_H_
