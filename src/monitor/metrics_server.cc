#include "src/monitor/metrics_server.h"

#include <httplib.h>
#include <simdjson.h>

#include <thread>

namespace aiprof {

// Alertmanager bodies are a few kB; anything much larger is refused.
inline constexpr size_t kMaxWebhookBytes = 1 << 20;

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

StatusOr<std::vector<std::string>> ParseAlertmanagerWebhook(const std::string& body) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(body).get(doc) != simdjson::SUCCESS) return ErrStatus("the body is not JSON");
  simdjson::dom::array alerts;
  if (doc["alerts"].get_array().get(alerts) != simdjson::SUCCESS) {
    return ErrStatus("not an Alertmanager webhook: no \"alerts\" array");
  }
  std::vector<std::string> firing;
  for (simdjson::dom::element a : alerts) {
    std::string_view status;
    if (a["status"].get_string().get(status) != simdjson::SUCCESS || status != "firing") continue;
    std::string_view name;
    if (a["labels"]["alertname"].get_string().get(name) != simdjson::SUCCESS || name.empty()) name = "external";
    firing.emplace_back(name);
  }
  return firing;
}

StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& host, int port, MetricsFn metrics,
                                                              TriggerFn trigger) {
  std::unique_ptr<MetricsServer> s(new MetricsServer());
  s->server_ = std::make_unique<httplib::Server>();
  httplib::Server& srv = *s->server_;
  srv.set_payload_max_length(kMaxWebhookBytes);
  srv.Get("/metrics", [metrics](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics(), "text/plain; version=0.0.4; charset=utf-8");
  });
  srv.Post("/alert", [trigger](const httplib::Request& req, httplib::Response& res) {
    StatusOr<std::vector<std::string>> names = ParseAlertmanagerWebhook(req.body);
    if (!names.ok()) {
      res.status = 400;
      res.set_content(names.status().message() + "\n", "text/plain");
      return;
    }
    if (!names->empty()) trigger(*names);
    res.set_content(std::to_string(names->size()) + " firing alert(s) accepted\n", "text/plain");
  });
  if (port == 0) {
    s->port_ = srv.bind_to_any_port(host);
    if (s->port_ < 0) return ErrStatus("--metrics-listen: cannot bind " + host + " to a free port");
  } else {
    if (!srv.bind_to_port(host, port)) {
      return ErrStatus("--metrics-listen: cannot bind " + host + ":" + std::to_string(port) + " (in use, or not an address of this host)");
    }
    s->port_ = port;
  }
  s->thread_ = std::thread([server = s->server_.get()] { server->listen_after_bind(); });
  return s;
}

MetricsServer::~MetricsServer() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace aiprof
