// Closed-loop load generator for test/monitor/service.cc: C connections to
// 127.0.0.1:PORT, each sending one request and waiting for its answer, for D
// seconds (or until the service goes away). Prints one JSON line:
//   {"requests": N, "seconds": S, "throughput": N/S, "errors": E, "p50_ms": .., "p99_ms": ..}
// (latencies as this client measured them, nearest rank).
//
//   load PORT CONNECTIONS SECONDS [ERROR_EVERY] [reconnect|http]
// ERROR_EVERY k > 0: every k-th request asks for an error answer.
// reconnect: a new connection for every request (the service starts a
// thread per connection: thread churn).
// http: "GET / HTTP/1.0" on a new connection per request, the answer read to
// its end, an error unless it starts "HTTP/1.0 200" (ERROR_EVERY ignored;
// test/monitor/python_http_service.py).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace {

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: load PORT CONNECTIONS SECONDS [ERROR_EVERY] [reconnect]\n");
    return 2;
  }
  const int port = std::atoi(argv[1]);
  const int conns = std::atoi(argv[2]);
  const double seconds = std::atof(argv[3]);
  const long error_every = argc > 4 ? std::atol(argv[4]) : 0;
  const bool http = argc > 5 && std::strcmp(argv[5], "http") == 0;
  const bool reconnect = http || (argc > 5 && std::strcmp(argv[5], "reconnect") == 0);
  std::mutex latencies_mu;
  std::vector<double> latencies_ms;
  std::atomic<long> total{0}, errors{0};
  const double start = Now();
  std::vector<std::thread> threads;
  auto open_connection = [port]() {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      close(fd);
      return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
  };
  for (int c = 0; c < conns; ++c) {
    threads.emplace_back([&] {
      int fd = open_connection();
      if (fd < 0) return;
      long n = 0;
      char buf[8];
      std::vector<double> mine;
      while (Now() - start < seconds) {
        const double t0 = Now();
        if (http) {
          static const char kGet[] = "GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
          if (fd < 0 || write(fd, kGet, sizeof(kGet) - 1) != static_cast<ssize_t>(sizeof(kGet) - 1)) break;
          char head[16] = {}, chunk[512];
          size_t got = 0;
          for (ssize_t r; (r = read(fd, chunk, sizeof(chunk))) > 0; got += static_cast<size_t>(r)) {
            if (got < sizeof(head)) std::memcpy(head + got, chunk, std::min(sizeof(head) - got, static_cast<size_t>(r)));
          }
          if (got == 0) break;
          mine.push_back((Now() - t0) * 1e3);
          ++n;
          if (std::strncmp(head, "HTTP/1.0 200", 12) != 0) errors.fetch_add(1);
          close(fd);
          fd = open_connection();
          continue;
        }
        const bool fail = error_every > 0 && (n + 1) % error_every == 0;
        if (fd < 0 || write(fd, fail ? "e\n" : "r\n", 2) != 2) break;
        ssize_t got = 0;
        while (got < 3) {
          ssize_t r = read(fd, buf + got, 3 - static_cast<size_t>(got));
          if (r <= 0) break;
          got += r;
        }
        if (got < 3) break;
        mine.push_back((Now() - t0) * 1e3);
        ++n;
        if (buf[0] == 'e') errors.fetch_add(1);
        if (reconnect) {
          close(fd);
          fd = open_connection();
        }
      }
      total.fetch_add(n);
      if (fd >= 0) close(fd);
      std::lock_guard<std::mutex> lock(latencies_mu);
      latencies_ms.insert(latencies_ms.end(), mine.begin(), mine.end());
    });
  }
  for (std::thread& t : threads) t.join();
  const double took = Now() - start;
  auto rank = [&](double q) {
    if (latencies_ms.empty()) return 0.0;
    size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(latencies_ms.size())));
    k = k == 0 ? 0 : k - 1;
    std::nth_element(latencies_ms.begin(), latencies_ms.begin() + static_cast<long>(k), latencies_ms.end());
    return latencies_ms[k];
  };
  const double p50 = rank(0.5), p99 = rank(0.99);
  std::printf("{\"requests\": %ld, \"seconds\": %.3f, \"throughput\": %.1f, \"errors\": %ld, \"p50_ms\": %.4f, "
              "\"p99_ms\": %.4f}\n",
              total.load(), took, static_cast<double>(total.load()) / took, errors.load(), p50, p99);
  return 0;
}
