// libFuzzer harness for the HTTP/1.1 server of `aiprof serve` and `aiprof
// monitor` (src/base/http_server.h), the parser that a network client
// reaches first: each input is sent by a client over loopback to a real
// server (one, started at the first input, with small limits), in pieces
// whose size the first byte chooses (the parser resumes wherever a piece
// ends: a header line, a chunk size or CRLF cut in two), then the client's
// half of the connection is closed and the answer read to its end. The
// server's admit applies RefuseFromOtherSites and a 4 KiB body limit; its
// handler answers from another thread, as serve's workers do. The same bytes
// go through the query-string helpers (QueryParam, PercentDecode,
// PercentEncode).
//
// Properties checked (a failure aborts, and libFuzzer keeps the input): an
// answer, when there is one (after an interim 100 Continue), is a whole HTTP/1.1 response head (status line
// with a 3-digit status, headers ended by CRLF CRLF) that says
// `X-Content-Type-Options: nosniff` and `Content-Length`, and whose body
// is exactly that long (none after a HEAD; the server answers one request
// per connection and closes); PercentDecode(PercentEncode(x)) == x.
// Seeds: requests of serve's API and monitor's webhook, a chunked upload
// and malformed heads (scripts/fuzz.sh).
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "src/base/http_server.h"

namespace aiprof {
namespace {

[[noreturn]] void Fail(const char* what, std::string_view answer) {
  std::fprintf(stderr, "http_server_fuzzer: %s\n--- answer (%zu bytes) ---\n%.*s\n", what, answer.size(),
               static_cast<int>(std::min<size_t>(answer.size(), 2000)), answer.data());
  std::abort();
}

HttpServer* Server() {
  static std::unique_ptr<HttpServer> server = [] {
    HttpServer::Options o;
    o.host = "127.0.0.1";
    o.limits.max_header_bytes = 4 << 10;
    o.limits.max_body_bytes = 4 << 10;
    o.limits.header_timeout_ns = 2'000'000'000;
    o.limits.body_timeout_ns = 2'000'000'000;
    auto admit = [](const HttpRequest& head, size_t* max_body) -> std::optional<HttpResponse> {
      if (std::optional<HttpResponse> refused = RefuseFromOtherSites(head, /*tokens=*/true)) return refused;
      if (head.path == "/small") *max_body = 16;
      if (head.path == "/refuse") return TextResponse(403, "refused " + head.path.substr(0, 64) + "\n");
      return std::nullopt;
    };
    auto handle = [](HttpRequest request, HttpServer::Responder respond) {
      // Answered from another thread, as serve's worker pool does.
      std::thread([request = std::move(request), respond = std::move(respond)] {
        std::string decoded;
        const bool ok = PercentDecode(request.query, &decoded);
        respond(TextResponse(200, request.method + " " + request.path + " " + std::to_string(request.body_bytes) +
                                      (ok ? " query ok\n" : " query bad\n")));
      }).detach();
    };
    StatusOr<std::unique_ptr<HttpServer>> s = HttpServer::Start(o, admit, handle);
    if (!s.ok()) {
      std::fprintf(stderr, "http_server_fuzzer: cannot listen: %s\n", s.status().message().c_str());
      std::abort();
    }
    return std::move(*s);
  }();
  return server.get();
}

// Sends `bytes` in pieces of `piece` bytes, closes the sending half, and
// reads the answer until the server closes (at most ~5 s).
std::string Exchange(int port, std::string_view bytes, size_t piece) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return {};
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    for (size_t at = 0; at < bytes.size();) {
      const ssize_t n = send(fd, bytes.data() + at, std::min(piece, bytes.size() - at), MSG_NOSIGNAL);
      if (n <= 0) break;  // the server answered and closed early
      at += static_cast<size_t>(n);
    }
    shutdown(fd, SHUT_WR);
    char buf[4096];
    for (int waits = 0; waits < 50;) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) {
        ++waits;
        continue;
      }
      const ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      answer.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  return answer;
}

// `head_request`: the input's request line names HEAD, whose answer has no
// body (if its head parsed; a malformed one is answered with a body).
void CheckAnswer(std::string_view answer, bool head_request) {
  // An interim "100 Continue" (the request said Expect: 100-continue) is a
  // status line alone; the final answer, if any, follows it.
  constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  if (answer.starts_with(kContinue)) answer.remove_prefix(kContinue.size());
  if (answer.empty()) return;  // closed without an answer (a client that sent nothing whole)
  if (answer.size() < 12 || answer.substr(0, 9) != "HTTP/1.1 " || answer[12] != ' ' ||
      answer.find_first_not_of("0123456789", 9) != 12) {
    Fail("the answer does not start with an HTTP/1.1 status line", answer);
  }
  const size_t end = answer.find("\r\n\r\n");
  if (end == std::string_view::npos) Fail("the answer's head does not end with CRLF CRLF", answer);
  const std::string_view head = answer.substr(0, end + 2);
  if (head.find("\r\nX-Content-Type-Options: nosniff\r\n") == std::string_view::npos) {
    Fail("the answer does not say X-Content-Type-Options: nosniff", answer);
  }
  const size_t cl = head.find("\r\nContent-Length: ");
  if (cl == std::string_view::npos) Fail("the answer has no Content-Length", answer);
  const size_t digits = cl + 18;
  const size_t digits_end = head.find("\r\n", digits);
  const std::string length(head.substr(digits, digits_end - digits));
  if (length.empty() || length.find_first_not_of("0123456789") != std::string::npos) {
    Fail("the answer's Content-Length is not a number", answer);
  }
  const size_t body = answer.size() - end - 4;
  if (std::strtoull(length.c_str(), nullptr, 10) != body && !(head_request && body == 0)) {
    Fail("the answer's body is not Content-Length bytes long", answer);
  }
}

}  // namespace
}  // namespace aiprof

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aiprof;
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t piece = 1 + data[0] % 64;  // 1..64 bytes a send
  CheckAnswer(Exchange(Server()->port(), bytes, piece), bytes.starts_with("HEAD "));

  const std::string text(bytes.substr(0, 1024));
  std::string decoded;
  if (PercentDecode(PercentEncode(text), &decoded) == false || decoded != text) {
    Fail("PercentDecode(PercentEncode(x)) is not x", text);
  }
  (void)QueryParam(text, "name");
  (void)PercentDecode(text, &decoded);
  return 0;
}
