#include "src/base/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace aiprof {
namespace {

TEST(HttpServerHelpersTest, QueryParamsAreDecoded) {
  EXPECT_EQ(QueryParam("a=1&sql=SELECT%20x+FROM%20t&b", "sql"), "SELECT x FROM t");
  EXPECT_EQ(QueryParam("a=1&b", "b"), "");
  EXPECT_EQ(QueryParam("a=1", "c"), std::nullopt);
  EXPECT_EQ(QueryParam("q=%3Cscript%3E", "q"), "<script>");
  EXPECT_EQ(QueryParam("q=%zz", "q"), std::nullopt) << "a malformed escape is no value";
  EXPECT_EQ(QueryParam("q=%4", "q"), std::nullopt);
  std::string out;
  EXPECT_FALSE(PercentDecode("%", &out));
  EXPECT_TRUE(PercentDecode("a%2Fb", &out));
  EXPECT_EQ(out, "a/b");
}

TEST(HttpServerHelpersTest, BearerTokensAndSecrets) {
  EXPECT_EQ(BearerToken("Bearer abc"), "abc");
  EXPECT_EQ(BearerToken("bearer   abc  "), "abc");
  EXPECT_EQ(BearerToken("Basic abc"), "");
  EXPECT_EQ(BearerToken("Bearer"), "");
  EXPECT_TRUE(SameSecret("0123456789abcdef", "0123456789abcdef"));
  EXPECT_FALSE(SameSecret("0123456789abcdeg", "0123456789abcdef"));
  EXPECT_FALSE(SameSecret("0123456789abcdef0", "0123456789abcdef"));
  EXPECT_FALSE(SameSecret("", ""));
}

TEST(HttpServerHelpersTest, MethodsAreMatchedAgainstTheAllowList) {
  EXPECT_TRUE(MethodAllowed("GET", "GET, HEAD"));
  EXPECT_TRUE(MethodAllowed("HEAD", "GET, HEAD"));
  EXPECT_TRUE(MethodAllowed("POST", "POST"));
  EXPECT_FALSE(MethodAllowed("get", "GET, HEAD")) << "method names are case-sensitive";
  EXPECT_FALSE(MethodAllowed("GE", "GET, HEAD"));
  EXPECT_FALSE(MethodAllowed("", "GET, HEAD"));
  EXPECT_FALSE(MethodAllowed("", ""));
  EXPECT_FALSE(MethodAllowed("GET, HEAD", "GET, HEAD")) << "one method, not the list";
  HttpResponse body = TextResponse(400, "use POST on /alert\n");
  body.headers.emplace_back("allow", "stale");
  const HttpResponse r = MethodNotAllowed("POST", body);
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.body, "use POST on /alert\n");
  ASSERT_EQ(r.headers.size(), 1u) << "one Allow header, the one given";
  EXPECT_EQ(r.headers[0].first, "Allow");
  EXPECT_EQ(r.headers[0].second, "POST");
}

// What a page of another site can send through the user's browser: a Host
// of its own name (DNS rebinding to 127.0.0.1) to a listener without
// tokens, and simple cross-origin POSTs (no preflight) to any listener.
TEST(HttpServerHelpersTest, RequestsFromOtherSitesAreRefused) {
  auto status = [](const std::string& method, const std::string& host, const std::string& origin,
                   const std::string& fetch_site, bool tokens) {
    HttpRequest r;
    r.method = method;
    r.host = host;
    r.origin = origin;
    r.fetch_site = fetch_site;
    std::optional<HttpResponse> a = RefuseFromOtherSites(r, tokens);
    return a ? a->status : 0;
  };
  // Loopback names pass, with or without a port; a client without Host too.
  for (const char* host : {"127.0.0.1:8080", "localhost:9", "LOCALHOST", "[::1]:8080", "127.0.0.2", ""}) {
    EXPECT_EQ(status("GET", host, "", "", false), 0) << host;
  }
  EXPECT_EQ(status("GET", "attacker.example:8080", "", "", false), 421);
  EXPECT_EQ(status("GET", "[::1", "", "", false), 421);
  EXPECT_EQ(status("GET", "attacker.example", "", "", true), 0) << "with tokens the token decides";
  // POST from the listener's own pages passes; from another origin not.
  EXPECT_EQ(status("POST", "127.0.0.1:8080", "http://127.0.0.1:8080", "same-origin", false), 0);
  EXPECT_EQ(status("POST", "127.0.0.1:8080", "", "", false), 0) << "curl, push: no Origin";
  EXPECT_EQ(status("POST", "127.0.0.1:8080", "http://evil.example", "", false), 403);
  EXPECT_EQ(status("POST", "127.0.0.1:8080", "null", "", false), 403);
  EXPECT_EQ(status("POST", "127.0.0.1:8080", "", "cross-site", true), 403);
  EXPECT_EQ(status("POST", "localhost:8080", "http://localhost:3000", "same-site", false), 403);
  EXPECT_EQ(status("GET", "127.0.0.1:8080", "http://evil.example", "cross-site", false), 0)
      << "a cross-site GET reads nothing: no CORS header lets the page see the answer";
}

// The whole origin counts: another web app on another port of the same
// host, or another scheme, is another site (D5 of the serve trial).
TEST(HttpServerHelpersTest, OriginMustMatchSchemeHostAndPort) {
  auto status = [](const std::string& host, const std::string& origin) {
    HttpRequest r;
    r.method = "POST";
    r.host = host;
    r.origin = origin;
    std::optional<HttpResponse> a = RefuseFromOtherSites(r, false);
    return a ? a->status : 0;
  };
  EXPECT_EQ(status("127.0.0.1:8080", "http://127.0.0.1:8080"), 0);
  EXPECT_EQ(status("LOCALHOST:8080", "http://localhost:8080"), 0);
  EXPECT_EQ(status("[::1]:8080", "http://[::1]:8080"), 0);
  EXPECT_EQ(status("127.0.0.1", "http://127.0.0.1:80"), 0) << "port 80 is http's default";
  EXPECT_EQ(status("127.0.0.1:8080", "http://127.0.0.1:1"), 403);
  EXPECT_EQ(status("127.0.0.1:8080", "http://127.0.0.1"), 403);
  EXPECT_EQ(status("127.0.0.1:8080", "https://127.0.0.1:8080"), 403);
  EXPECT_EQ(status("127.0.0.1:8080", "http://localhost:8080"), 403) << "another host name is another origin";
  EXPECT_EQ(status("127.0.0.1:8080", "http://127.0.0.1:8080x"), 403);
}

// A live server on loopback whose handler keeps each request unanswered
// (as serve's query workers do while a query runs), for the `gone` flag.
struct GoneFlagServer {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<HttpRequest> requests;
  std::vector<HttpServer::Responder> responders;
  std::unique_ptr<HttpServer> server;

  explicit GoneFlagServer(int64_t handle_timeout_ns = 300'000'000'000) {
    HttpServer::Options o;
    o.host = "127.0.0.1";
    o.limits.handle_timeout_ns = handle_timeout_ns;
    StatusOr<std::unique_ptr<HttpServer>> s = HttpServer::Start(
        o, [](const HttpRequest&, size_t*) { return std::optional<HttpResponse>(); },
        [this](HttpRequest r, HttpServer::Responder respond) {
          std::lock_guard<std::mutex> lock(mu);
          requests.push_back(std::move(r));
          responders.push_back(std::move(respond));
          cv.notify_all();
        });
    EXPECT_TRUE(s.ok()) << s.status().message();
    if (s.ok()) server = std::move(*s);
  }
  // Connects and sends a whole GET; the socket (-1 on failure).
  int Send() const {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return -1;
    const std::string head = "GET /work HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    if (send(fd, head.data(), head.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(head.size())) return -1;
    return fd;
  }
  // Waits (up to 30 s: a bound on a stuck test, not a timing assertion)
  // for `n` requests handed to the handler.
  bool WaitForRequests(size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(30), [&] { return requests.size() >= n; });
  }
};

// Polls `flag` until set, up to 30 s (the server's thread sets it).
bool WaitUntilGone(const std::atomic<bool>& flag) {
  for (int i = 0; i < 3000 && !flag.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return flag.load();
}

// trial_limits: serve ran queries whose clients had hung up; the server saw
// the hang-up and could not tell the handler.
TEST(HttpServerGoneTest, ClientThatClosesWhileHandledIsGone) {
  GoneFlagServer g;
  ASSERT_TRUE(g.server);
  const int stays = g.Send();
  ASSERT_GE(stays, 0);
  ASSERT_TRUE(g.WaitForRequests(1));
  const int leaves = g.Send();
  ASSERT_GE(leaves, 0);
  ASSERT_TRUE(g.WaitForRequests(2));
  std::shared_ptr<std::atomic<bool>> a, b;
  {
    std::lock_guard<std::mutex> lock(g.mu);
    a = g.requests[0].gone;
    b = g.requests[1].gone;
  }
  ASSERT_TRUE(a && b) << "every handled request carries the flag";
  EXPECT_FALSE(a->load());
  EXPECT_FALSE(b->load());
  close(leaves);
  EXPECT_TRUE(WaitUntilGone(*b)) << "the request whose client closed is gone";
  EXPECT_FALSE(a->load()) << "the one whose client waits is not";
  EXPECT_EQ(g.server->counts().gone.load(), 1u);
  // The one still connected gets its answer; the gone one's answer is dropped.
  {
    std::lock_guard<std::mutex> lock(g.mu);
    for (auto& respond : g.responders) respond(TextResponse(200, "done\n"));
  }
  char buf[256];
  std::string answer;
  for (ssize_t n; (n = recv(stays, buf, sizeof(buf), 0)) > 0;) answer.append(buf, static_cast<size_t>(n));
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK")) << answer;
  close(stays);
}

// Half-closed (shutdown SHUT_WR): taken as gone, but the answer still goes
// out to a client that reads it.
TEST(HttpServerGoneTest, HalfClosedClientIsGoneYetGetsItsAnswer) {
  GoneFlagServer g;
  ASSERT_TRUE(g.server);
  const int fd = g.Send();
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(g.WaitForRequests(1));
  shutdown(fd, SHUT_WR);
  std::shared_ptr<std::atomic<bool>> gone;
  {
    std::lock_guard<std::mutex> lock(g.mu);
    gone = g.requests[0].gone;
  }
  ASSERT_TRUE(gone);
  EXPECT_TRUE(WaitUntilGone(*gone));
  {
    std::lock_guard<std::mutex> lock(g.mu);
    g.responders[0](TextResponse(503, "not run\n"));
  }
  char buf[256];
  std::string answer;
  for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) answer.append(buf, static_cast<size_t>(n));
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 503")) << answer;
  close(fd);
}

// Past the answer deadline the connection is closed: no one will read the
// answer, so the request is gone though its client still waits.
TEST(HttpServerGoneTest, AnswerDeadlinePassedIsGone) {
  GoneFlagServer g(/*handle_timeout_ns=*/1'000'000);
  ASSERT_TRUE(g.server);
  const int fd = g.Send();
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(g.WaitForRequests(1));
  std::shared_ptr<std::atomic<bool>> gone;
  {
    std::lock_guard<std::mutex> lock(g.mu);
    gone = g.requests[0].gone;
  }
  ASSERT_TRUE(gone);
  EXPECT_TRUE(WaitUntilGone(*gone));
  EXPECT_EQ(g.server->counts().gone.load(), 0u) << "the client did not leave";
  close(fd);
}

// A request answered before its client closes is not gone; one still
// handled when the server stops is.
TEST(HttpServerGoneTest, AnsweredIsNotGoneStoppedIs) {
  auto g = std::make_unique<GoneFlagServer>();
  ASSERT_TRUE(g->server);
  const int answered = g->Send();
  ASSERT_GE(answered, 0);
  ASSERT_TRUE(g->WaitForRequests(1));
  {
    std::lock_guard<std::mutex> lock(g->mu);
    g->responders[0](TextResponse(200, "ok\n"));
  }
  char buf[256];
  std::string answer;
  for (ssize_t n; (n = recv(answered, buf, sizeof(buf), 0)) > 0;) answer.append(buf, static_cast<size_t>(n));
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK")) << answer;
  close(answered);
  const int waits = g->Send();
  ASSERT_GE(waits, 0);
  ASSERT_TRUE(g->WaitForRequests(2));
  std::shared_ptr<std::atomic<bool>> first, second;
  {
    std::lock_guard<std::mutex> lock(g->mu);
    first = g->requests[0].gone;
    second = g->requests[1].gone;
  }
  g->server.reset();
  EXPECT_FALSE(first->load()) << "answered, then the client closed: not gone";
  EXPECT_TRUE(second->load()) << "the server stopped while it was handled";
  close(waits);
}

}  // namespace
}  // namespace aiprof
