#include "src/monitor/metrics_server.h"

#include <simdjson.h>

namespace aiprof {

namespace {

// An Alertmanager group rarely holds more than a few dozen alerts.
inline constexpr size_t kMaxWebhookAlerts = 1000;
inline constexpr size_t kMaxAlertNameBytes = 1024;

}  // namespace

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

StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(const Options& options, MetricsFn metrics,
                                                              TriggerFn trigger) {
  if (!IsLoopbackHost(options.host) && options.webhook_token.empty()) {
    return ErrStatus("--metrics-listen " + options.host +
                     ": not a loopback address; POST /alert would start deep "
                     "traces for anyone who can reach it: give --webhook-token-file (Alertmanager's "
                     "http_config.authorization.credentials_file), or listen on 127.0.0.1");
  }
  std::unique_ptr<MetricsServer> s(new MetricsServer());
  s->options_ = options;
  s->metrics_ = std::move(metrics);
  s->trigger_ = std::move(trigger);
  HttpServer::Options http;
  http.host = options.host;
  http.port = options.port;
  http.flag = "--metrics-listen";
  http.limits = options.limits;
  MetricsServer* self = s.get();
  ASSIGN_OR_RETURN(s->http_,
                   HttpServer::Start(
                       http, [self](const HttpRequest& head, size_t*) { return self->Admit(head); },
                       [self](HttpRequest request, HttpServer::Responder respond) { respond(self->Handle(request)); }));
  return s;
}

MetricsServer::~MetricsServer() = default;

// Who may ask, and for what, before any body is read.
std::optional<HttpResponse> MetricsServer::Admit(const HttpRequest& head) const {
  if (head.path != "/metrics" && head.path != "/alert")
    return TextResponse(404, "not found: GET /metrics, POST /alert\n");
  // HEAD: health checkers. A 405 says in Allow what the path answers.
  const std::string_view allow = head.path == "/metrics" ? "GET, HEAD" : "POST";
  if (!MethodAllowed(head.method, allow)) {
    return MethodNotAllowed(allow, TextResponse(405, "use " + std::string(allow) + " on " + head.path + "\n"));
  }
  if (std::optional<HttpResponse> refused = RefuseFromOtherSites(head, !options_.webhook_token.empty())) return refused;
  if (head.method == "POST" && !options_.webhook_token.empty() &&
      !SameSecret(BearerToken(head.authorization), options_.webhook_token)) {
    return TextResponse(401, "POST /alert needs Authorization: Bearer <the --webhook-token-file token>\n");
  }
  return std::nullopt;
}

HttpResponse MetricsServer::Handle(const HttpRequest& request) {
  if (request.path == "/metrics") {
    std::optional<std::string> exposition = metrics_();
    if (!exposition) return TextResponse(503, "the watched process has not attached yet\n");
    HttpResponse r = TextResponse(200, std::move(*exposition));
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return r;
  }
  StatusOr<std::vector<std::string>> names = ParseAlertmanagerWebhook(request.body);
  if (!names.ok()) return TextResponse(400, names.status().message() + "\n");
  if (!names->empty()) trigger_(*names, request.peer);
  return TextResponse(200, std::to_string(names->size()) + " firing alert(s) accepted\n");
}

}  // namespace aiprof
